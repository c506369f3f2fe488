"""Compile (or load from numba's cache) a backend's kernels before its clock starts.

The numba kernels are compiled the first time they run and then cached on disk; loading
them from the cache still takes a noticeable fraction of a second per module. Without a
warm-up that cost lands inside the first pass of a solve, so the solve time, the
iteration records and the convergence plots would show it. :func:`warm_up` instead
solves a six-node instance of the same kind, structure, objective and parameters with
the same backend and kernel-selecting options, which compiles or loads every kernel the
real solve will call (same argument types), and returns the seconds it took.

Compiling takes seconds; a Ctrl-C, SIGTERM or SIGHUP meanwhile is not held for the end of
an iteration (:func:`.core.loop.interrupt_immediate`) but stops the warm-up, and the run, at
once.
"""

import time
import warnings

import numpy as np

__all__ = ["warm_up", "tiny_like"]

#: Options that do not select kernels (or that must not act on the small instance).
_DROPPED = ("checkpoint", "checkpoint_every", "resume", "time_limit", "max_iter",
            "max_memory", "callback", "verbose", "gamma", "lam", "tol", "gap_tol")

# two triangles joined by two edges: triangles, open wedges and a cycle
_EDGES = np.array([[0, 1], [0, 2], [1, 2], [2, 3], [3, 4], [3, 5], [4, 5], [0, 5]],
                  dtype=np.int64)
_SIGNS = np.array([1.0, 1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0])
_DISTANCES = np.array([1.0, 2.0, 0.5, 1.5, 1.0, 2.5, 0.7, 1.2])


def tiny_like(problem):
    """A six-node instance of ``problem``'s kind, structure, objective and parameters.

    Parameters
    ----------
    problem : MetricProblem

    Returns
    -------
    MetricProblem or None
        ``None`` when no such instance can be built (then nothing is warmed up).
    """
    from ..graph import Dissimilarity, Graph
    from ..problems import build_problem

    labels = np.array([str(i) for i in range(6)], dtype=object)
    params = dict(problem.params)
    kind = problem.kind
    if kind == "mn":
        source = params.get("source")
        if source == "matrix":
            rng = np.random.default_rng(0)
            a = np.triu(rng.uniform(0.0, 2.0, (6, 6)), 1)
            data = Dissimilarity(values=a + a.T, labels=labels, name="warm-up")
        elif source == "weighted":
            data = Graph(6, _EDGES.copy(), labels, _DISTANCES.copy(), name="warm-up")
        else:
            data = Graph(6, _EDGES.copy(), labels, name="warm-up")
    elif kind == "cc" and params.get("weights") == "signed":
        data = Graph(6, _EDGES.copy(), labels, _SIGNS.copy(), name="warm-up")
    else:
        data = Graph(6, _EDGES.copy(), labels, name="warm-up")
    try:
        tiny = build_problem(kind, data, **params)
    except Exception:  # a parameter this small instance cannot take: skip the warm-up
        return None
    if (tiny.structure, tiny.objective, tiny.sum_value is None) != (
            problem.structure, problem.objective, problem.sum_value is None):
        return None
    return tiny


def warm_up(solver, problem, options):
    """Run ``solver`` on a six-node instance like ``problem``; return the seconds taken.

    Parameters
    ----------
    solver : Solver
    problem : MetricProblem
    options : dict
        The options of the real solve; those that select kernels (order, dual storage,
        threads, ...) are passed on, the others dropped.

    Returns
    -------
    float
        Seconds spent (compiling or loading kernels, plus a negligible small solve).
    """
    start = time.perf_counter()
    tiny = tiny_like(problem)
    if tiny is None:
        return 0.0
    accepted = solver.default_options()
    opts = solver.warm_up_options(problem, options)
    opts = {k: v for k, v in opts.items() if k not in _DROPPED and k in accepted}
    if "max_iter" in accepted:
        opts["max_iter"] = 60
    from .._signals import interrupt_cause
    from .core.loop import interrupt_immediate

    with warnings.catch_warnings(), interrupt_immediate():
        warnings.simplefilter("ignore")
        try:
            # the tiny LP is integral: offered its rounding, the tiny run would end
            # before the stages and the polish that load their kernels
            from .core.stage import LPStage

            LPStage.offer_rounding = False
            try:
                res = solver.run(tiny, **opts)
            finally:
                LPStage.offer_rounding = True
            if "polish" in accepted and options.get("polish", "auto") is not False \
                    and tiny.objective != "l2":
                # the LP polish's first use loads HiGHS, scipy.sparse and the separation
                # kernels (about 0.5 s): load them here too, outside the clock
                from .core.integral import integral_candidate
                from .core.polish import ActiveRows, polish

                polish(tiny, ActiveRows(), tol=1e-9, max_rounds=3)
                # and a rounding offered as the answer, its kernels (and the rounding's)
                if res.get("x") is not None:
                    integral_candidate(tiny, res["x"], 0.0, tol=np.inf, gap_tol=np.inf)
            if tiny.structure == "dense":
                _support_kernels()
                _dense_check_kernels()
            solver.warm_up_kernels(tiny)  # what only this backend's runs may call
        except Exception as exc:  # the real solve reports any problem; a warm-up never fails it
            interrupt = interrupt_cause(exc)
            if interrupt is not None:  # a signal that landed in compiled code
                raise interrupt from None
    return time.perf_counter() - start


def _dense_check_kernels():
    """Load the full triangle checks of a dense point (the max-violation scan where
    the support is not sparse, and dykstra's early-exit test of its entrywise
    rounding): the tiny runs' points need neither."""
    from ..problems._triangles import _max_violation_kernel
    from ._triangle_sparse import triangle_violation_exceeds

    x = np.zeros(6)
    _max_violation_kernel(x, 4)
    triangle_violation_exceeds(x, 4, 1e-9)


def _support_kernels():
    """Load the support scan's kernels (:mod:`metricopt.problems._triangles`): six nodes
    are too few for a run to pick them."""
    from ..problems._triangles import _support_scan, support_csr

    n = 4
    x = np.ones(6)
    x[0] = 0.0
    indptr, indices, values, _ = support_csr(np.array([0]), np.array([1]), x[:1], n)
    empty_f, empty_i = np.empty(0), np.empty(0, dtype=np.int64)
    _support_scan(x, n, 0.0, indptr, indices, values, empty_i, 1.0, empty_f, empty_i, empty_i)
