"""The result type shared by every backend, and the status vocabulary."""

from typing import Any

import numpy as np

__all__ = ["RichResult", "SolveResult", "Status", "STATUS_MESSAGES", "COMMON_FIELDS"]


class Status:
    """Integer status codes shared by all backends (scipy-style)."""

    OPTIMAL = 0  #: converged to the requested tolerances (exact backends: optimal)
    LIMIT = 1  #: iteration or time limit reached
    INFEASIBLE = 2
    UNBOUNDED = 3
    NUMERICAL = 4  #: numerical trouble in the backend
    STALLED = 5  #: no progress any more, tolerances not met
    INTERRUPTED = 6  #: stopped by the user (Ctrl-C)

    NAMES = {
        0: "optimal",
        1: "limit_reached",
        2: "infeasible",
        3: "unbounded",
        4: "numerical_trouble",
        5: "stalled",
        6: "interrupted",
    }


STATUS_MESSAGES = {
    0: "Converged to the requested tolerances.",
    1: "Iteration or time limit reached before convergence.",
    2: "The problem is infeasible.",
    3: "The problem is unbounded.",
    4: "The backend ran into numerical difficulties.",
    5: "The method stalled before reaching the requested tolerances.",
    6: "Interrupted by the user.",
}


class RichResult(dict[str, Any]):
    """A dict that also allows attribute access, with a readable aligned repr.

    The common base of :class:`SolveResult`, the rounding result and the bound
    certificates (after scipy's ``OptimizeResult``).
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(name) from exc

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __dir__(self) -> list[str]:
        return list(self.keys())

    def __repr__(self) -> str:
        if not self:
            return f"{type(self).__name__}()"
        width = max(map(len, self.keys())) + 1
        lines = []
        for key, value in self.items():
            if isinstance(value, np.ndarray):
                text = f"array(shape={value.shape}, dtype={value.dtype})"
            elif isinstance(value, list) and len(value) > 3:
                text = f"[... {len(value)} items]"
            else:
                text = repr(value)
            lines.append(f"{key.rjust(width)}: {text}")
        return "\n".join(lines)


class SolveResult(RichResult):
    """Outcome of :func:`metricopt.solve`: a dict that also allows attribute access.

    Common fields (every backend)
    -----------------------------
    x : ndarray of shape (n_variables,) or None
        The relaxation's solution, in the problem's variable order (None when a run
        ended before it had one to report).
    fun : float
        Objective value of ``x`` (for exact backends, the LP/QP optimum).
    lower_bound : float
        A certified lower bound on the LP/QP optimum (exact backends: ``fun``).
    status : int
        One of :class:`Status`; ``success`` is ``status == 0``.
    status_name, message : str
    nit : int
        Iterations (passes, or lazy rounds for ``highs-lazy``).
    max_violation : float
        Largest violation of any constraint by ``x``.
    elapsed : float
        Wall-clock seconds.
    method : str
    history : list of dict
        One record per iteration (written to ``iterations.csv``).
    options : dict
        Every option the backend ran with, defaults included.

    Backends may add documented extras (e.g. ``peak_memory``, ``constraints_added``); the
    dispatcher adds ``gap``, ``auto_reason``, ``lp_approx_ratio`` and ``compile_seconds``.
    :data:`COMMON_FIELDS` names all but the extras. The annotations below type the
    attribute access to the common fields and those the dispatcher adds.
    """

    x: np.ndarray | None
    fun: float
    lower_bound: float | None
    status: int
    status_name: str
    success: bool
    message: str
    nit: int
    max_violation: float
    elapsed: float
    method: str
    history: list[dict[str, Any]]
    options: dict[str, Any]
    gap: float
    auto_reason: str
    lp_approx_ratio: float | None
    compile_seconds: float


#: Fields of a :class:`SolveResult` that are not a backend's extras: the common fields
#: and those the dispatcher adds (a run report's ``solver_extras`` are the others).
COMMON_FIELDS = frozenset({
    "x", "fun", "lower_bound", "status", "status_name", "success", "message", "nit",
    "max_violation", "elapsed", "method", "history", "options", "gap", "auto_reason",
    "lp_approx_ratio", "compile_seconds",
})
