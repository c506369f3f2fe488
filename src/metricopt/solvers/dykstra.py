"""Dykstra's projection method for the quadratic regularisations of metric LPs.

The backend ``"dykstra"`` (Veldt, Gleich, Wirth & Saunderson 2019, Alg. 1-2, §4-7)
minimises ``c'v + (1/2 gamma) (v - delta)' W (v - delta)`` over the LP's constraints by
cyclic Hildreth steps, one constraint at a time, keeping the triangle duals sparsely.
Problems and their regularisations:

``cc`` and ``mn`` with ``p = 1`` (V §6.2)
    Variables ``x`` and ``f >= |x - d|`` (as two half-spaces), ``W = diag(w, w)``,
    start ``x = d`` (``e = x - d = 0``) and ``f = -gamma``; the LP value is
    ``sum w |x - d|``; a priori ``LP* <= c'x_hat <= (1 + 1/gamma) LP*``.
``sc`` (V §6.3, eq. 14)
    ``W = 1`` on edges and ``lambda`` elsewhere (defaults ``gamma = 5``,
    ``lambda = 1/n``), ``sum x = n``, ``x >= 0``; start ``x = -gamma`` on edges.
``mn`` with ``p = 2``
    Already a QP: ``sum w (x - d)^2`` (internally ``gamma = 1/2``, no regularisation).
``cd`` (V §6.1)
    Edge variables, the explicit triangle and wedge lists of the problem, ``0 <= x <= 1``,
    ``W = I``.

Sparse-structure problems (cycle inequalities of MET(G)) belong to an active-set method
and are refused by :meth:`DykstraSolver.supports`.

Visiting orders (option ``order``): ``"diagonal"`` (serial, default), ``"lexicographic"``
(serial, the papers' order) and ``"parallel"`` (the anti-diagonal block schedule with two
logical workers; its iterates are exactly those of ``"lexicographic"``, because every two
triplets sharing a pair keep their lexicographic order). Passes to the default stopping
rule are listed in ``benchmarks/README.md``.

Beyond the papers' method, five things make the diagonal order fast on the problems that
fit in memory (each can be switched off, and each leaves the result certified):

* dense dual storage (``duals``): every triangle dual kept, so that a row of triplets is
  a branch-free vectorised loop (same iterates as the sparse lists of V §5.2);
* the sum constraint of sparsest cut revisited within a pass (``interleave``);
* a safeguarded extrapolation of all duals every few passes (``extrapolate``), kept
  only when it increases the dual objective;
* a metric repair test (``repair``): the shortest-path closure of the iterate is exactly
  feasible and ends the run as soon as its objective is within the gap of ``D(y)``.
* continuation in ``gamma`` (``continuation``, sparsest cut by default): the QP is first
  solved loosely with a smaller, better-conditioned ``gamma``, and its duals, scaled
  exactly, start the next stage.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355. https://doi.org/10.1137/18M1217152
.. [2] Ruggles, C., Veldt, N., & Gleich, D. F. (2020). A parallel projection method for
       metric constrained optimization. SIAM CSC 2020. arXiv:1901.10084
.. [3] Dax, A. (2003). On theory and practice of row relaxation methods. (dual bound of
       Hildreth iterates)
"""

from ._base import Solver
from ._dykstra_state import ALIASES as _ALIASES
from ._dykstra_state import DUALS, ORDERS
from ._dykstra_strategy import drive
from .core import options as opt

__all__ = ["DykstraSolver", "solve_dykstra", "ORDERS"]

_DEFAULT_ROUND = tuple(range(1, 13))


# -------------------------------------------------------------------------- driver
#: The options of :func:`solve_dykstra`, declared once (:mod:`.core.options`).
OPTIONS = (
    opt.GAMMA.replace(doc="Regularisation: the QP is c'x + (1/2 gamma) x'Wx."),
    opt.LAM.replace(doc="Sparsest cut only: weight of the non-edges in W (default 1/n)."),
    opt.TOL.replace(default=1e-6, doc="Largest allowed constraint violation of the returned "
                                      "x (a full O(n^3) check)."),
    opt.GAP_TOL.replace(default=1e-4, doc="Largest allowed certified LP gap (c'x - "
                                          "lower_bound) / |lower_bound| of an optimal answer."),
    opt.MAX_ITER.replace(default=10000, doc="Passes through all constraints."),
    opt.TIME_LIMIT.replace(doc="Seconds; checked after every pass."),
    opt.Option("order", "choice", default="diagonal", choices=(*ORDERS, *_ALIASES),
               doc="Visiting order of the triangle constraints."),
    opt.Option("block", "int", low=1, none=True,
               doc="Block width: s1-block of the diagonal order (default 16), node block of "
                   "the parallel order (default min(64, max(8, n // 8)))."),
    opt.CHECK_EVERY.replace(default=10, doc="Passes between full O(n^3) violation checks."),
    opt.Option("round_digits", "any", default=_DEFAULT_ROUND,
               doc="Decimals tried by the entrywise rounding test (V §5.4) at full checks "
                   "where the gap holds but the violation does not; empty to disable."),
    opt.THREADS.replace(doc="Threads of the \"parallel\" order (default: all cores); other "
                            "orders are serial."),
    opt.SEED.replace(doc="Accepted for interface compatibility; the method is deterministic."),
    opt.MAX_MEMORY.replace(doc="Bytes allowed for the duals."),
    opt.CALLBACK,
    opt.VERBOSE,
    opt.CHECKPOINT.replace(doc="Path of a checkpoint, written every checkpoint_every "
                               "seconds, at the end, and on KeyboardInterrupt."),
    opt.CHECKPOINT_EVERY.replace(doc="Seconds between two checkpoints (the clock decides "
                                     "only when one is written)."),
    opt.RESUME.replace(doc="Path of a checkpoint to continue from (same problem, backend and "
                           "options; the dual storage may differ)."),
    opt.Option("duals", "choice", default="auto", choices=DUALS,
               doc="Storage of the triangle duals of dense problems in the diagonal order."),
    opt.Option("interleave", "int", low=1, none=True,
               doc="Parts of the triangle pass between which the equality sum(x) = n of "
                   "sparsest cut is revisited (diagonal order only)."),
    opt.Option("extrapolate", "bool", none=True,
               doc="Now and then move all duals along their recent direction, kept only if "
                   "the dual objective increases (default: with dense duals)."),
    opt.Option("repair", "bool", default=True,
               doc="Dense problems: at full checks where the gap holds, also try the metric "
                   "repair of the iterate."),
    opt.Option("continuation", "any",
               doc="Warm start along the regularisation path: fractions of gamma solved "
                   "first (True: 0.02 and 0.2; default: on for sparsest cut)."),
    opt.POLISH.replace(doc="Solve the LP restricted to the constraints holding the largest "
                           "duals exactly and certify it from its LP dual; once per gamma. Unless "
                           "false, a rounding within gap_tol of the bound may be the answer."),
    opt.GAMMA_GROWTH,
    opt.Option("proximal", "int", low=0, none=True,
               doc="Dense l1 objectives (cc, mn with p = 1): passes between two recentrings "
                   "of the QP at the iterate (proximal point on the LP: gamma 3, then 10 "
                   "from a certified gap of 1e-4, unless gamma is given; no extrapolation, "
                   "no polish unless polish=True); 0: off. Default: 5 for those problems "
                   "unless extrapolate or continuation is asked for, else off."),
)


@opt.takes_options(OPTIONS)
def solve_dykstra(problem, *, gamma, lam, tol, gap_tol, max_iter, time_limit, order, block,
                  check_every, round_digits, threads, seed, max_memory, callback, verbose,
                  checkpoint, checkpoint_every, resume, duals, interleave, extrapolate, repair,
                  continuation, polish, gamma_growth, proximal):
    """Solve the quadratic regularisation of a metric LP by Dykstra's method.

    Parameters
    ----------
    problem : MetricProblem
        A dense (``cc``, ``sc``, ``mn``) or edge-structured (``cd``) problem.
    gamma : float or None
        The QP is ``c'x + (1/2 gamma) x'Wx``. Default 3 with ``proximal`` (then 10 from a
        certified gap of 1e-4), 1 for ``cd``, 5 for ``sc``; ignored for ``mn`` with p = 2.
    lam : float or None
        Sparsest cut only: weight of the non-edges in ``W`` (default ``1/n``).
    tol : float, default=1e-6
        Largest allowed violation of the returned ``x`` (a full O(n^3) check).
    gap_tol : float, default=1e-4
        Largest allowed certified LP gap ``(c'x - lower_bound) / |lower_bound|`` of an
        ``optimal`` answer, at an ``x`` violating nothing by more than ``tol``. A QP
        stage ends when its own relative gap ``|P - D| / max(|P|, |D|)`` (V §5.3) is
        within ``gap_tol`` too; then the point is certified (:mod:`.core.stage`), else
        the run goes on (``proximal``, ``polish``, ``gamma_growth``); ``qp_gap``.
    max_iter : int, default=10000
        Passes through all constraints.
    time_limit : float or None
        Seconds; checked after every pass.
    order : {"diagonal", "lexicographic", "parallel"}, default="diagonal"
        Visiting order of the triangle constraints. ``"diagonal"``: triplets ``(i, i+s1,
        i+s1+s2)`` by shape (serial); ``"lexicographic"``: ``i < j < k``, the papers'
        (serial); ``"parallel"`` (``"blocked"``): the conflict-free anti-diagonal block
        schedule on ``threads`` threads (the result does not depend on their count).
    block : int or None
        Block width: s1-block of the diagonal order (default 16), node block of the
        parallel order (default ``min(64, max(8, n // 8))``).
    check_every : int, default=10
        Passes between full O(n^3) violation checks; a full check also runs whenever
        the cheap per-pass estimate and the gap both meet their tolerances.
    round_digits : sequence of int
        Decimals tried by the entrywise rounding test (V §5.4) at full checks where the
        gap holds but the violation does not; empty to disable.
    threads : int or None
        Threads of the ``"parallel"`` order (default: all cores); other orders are serial.
    seed : None
        Accepted for interface compatibility; the method is deterministic.
    max_memory : int or None
        Bytes allowed for the duals: dense duals are not chosen beyond it (refused for
        ``duals="dense"``), and a run whose sparse lists grow beyond it stops with
        status ``limit``.
    callback : callable or None
        Called once per pass with the pass record (see ``history``).
    verbose : bool
        Accepted for interface compatibility (the library does not print).
    checkpoint : str or None
        Path of a checkpoint (:mod:`metricopt.solvers._checkpoint`: an ``.npz`` of numbers
        with a JSON header, bound to this problem instance by a digest, never pickled)
        written every ``checkpoint_every`` seconds, at the end, and on
        ``KeyboardInterrupt``. It holds x, the pair and sum duals and the triangle duals
        (dense ones stored as positions and values when mostly zero), twice with
        extrapolation (its reference point): at most about 50 bytes per pair plus
        24 bytes per triplet that holds a dual.
    checkpoint_every : float, default=60.0
        Seconds between two checkpoints (the clock decides only when one is written).
    resume : str or None
        Path of a checkpoint to continue from (same problem, backend and options; the
        dual storage may differ). A file that is not such a checkpoint raises
        :class:`~metricopt.exceptions.InputError`.
    duals : {"auto", "dense", "sparse"}, default="auto"
        Storage of the triangle duals of dense problems in the diagonal order.
        ``"sparse"``: the nonzero ones in visiting order (V §5.2), memory proportional
        to the active constraints. ``"dense"``: all ``3 C(n,3)`` of them (24 bytes per
        triplet), which makes every row a branch-free vectorised loop, about 2.6x faster
        per pass when many triplets hold a dual (sparsest cut). ``"auto"``: dense when it
        takes at most ``_config.DYKSTRA_DENSE_DUAL_BYTES`` and a quarter of the available
        memory. Both give the same iterates.
    interleave : int or None
        Parts of the triangle pass between which the equality ``sum(x) = n`` of sparsest
        cut is revisited (diagonal order only). Default 16 for problems with that
        constraint (it shortens the slow first phase: jazz 1360 -> 900 passes),
        else 1. Other orders always use 1.
    extrapolate : bool or None
        Every ``_config.DYKSTRA_EXTRAPOLATE_EVERY`` passes, move all duals along their
        recent direction and keep the move only if the dual objective increases (see
        :func:`_extrapolate`). Needs dense duals (and twice their memory); default: on
        whenever the duals are dense. Sparsest cut on jazz: 900 -> 380 passes.
    repair : bool, default=True
        Dense problems: at full checks where the gap holds, also try the metric repair
        of the iterate (clip to the bounds, shortest-path closure, rescale to
        ``sum(x) = n``); stop with the repaired, exactly feasible ``x`` when its QP
        objective is within ``gap_tol`` of ``D(y)`` (see :func:`_repair_test`).
    polish : bool or "auto", default="auto"
        Solve the LP restricted to the constraints holding the largest duals exactly
        (HiGHS; violated rows are separated and added until none is left) and certify
        it from its LP dual (:mod:`.core.polish`): for l1 objectives as soon as the QP gap
        is below 1e-2 at a full check, otherwise at the end of a converged QP stage that
        misses ``gap_tol``; once per ``gamma``. ``"auto"``: when the restricted LP fits in memory, except
        for sparsest cut (its restricted LP needed over 30 separation rounds on jazz and
        USAir97, where gamma growth certifies a gap of 1e-5 in 1.5 s and 9 s). Once a
        polish has reached the LP optimum it is not repeated. Unless False, a rounding
        within ``gap_tol`` of the bound may be the answer (:mod:`.core.integral`).
    gamma_growth : float, default=10.0
        Factor by which ``gamma`` grows when a converged QP stage misses ``gap_tol``
        and the polish did not close it; the duals (and ``x - delta``, ``f``) are scaled
        exactly (:func:`._dykstra_state.rescale`), so the next stage starts where this one ended
        (exact regularisation: beyond some ``gamma`` the QP solution is an LP
        solution). ``gamma`` stops growing at ``1e8``.
    proximal : int or None
        Dense l1 objectives (``cc``, ``mn`` with p = 1): passes between two recentrings of
        the QP at the iterate, keeping the duals (:mod:`._proximal`): the proximal point
        method on the LP at ``gamma`` 10 (no growth, no extrapolation, polish from at most
        20,000 rows), certified from the same duals. None: 5 for those problems unless
        ``extrapolate`` or ``continuation`` is asked for; 0: off.
    continuation : bool, sequence of float, or None
        Warm start along the regularisation path: first solve the QP with ``gamma``
        times each fraction (increasing, in (0, 1); ``True``: the fractions
        ``_config.DYKSTRA_CONTINUATION``, 0.02 and 0.2), each stage until its relative
        gap is below ``_config.DYKSTRA_CONTINUATION_GAP`` (1e-2), then scale the duals to
        the next ``gamma`` (:func:`._dykstra_state.rescale`, exact) and go on; only the last stage, with
        the requested ``gamma``, is tested against ``tol`` and ``gap_tol``. Smaller
        ``gamma`` is better conditioned and its duals are close to the final ones:
        sparsest cut on USAir97 810 -> 120 passes, netscience 2520 -> 340, Harvard500
        1280 -> 160 (``benchmarks/README.md``). Default: on for problems with the
        constraint ``sum(x) = n`` (sparsest cut), off otherwise; not for ``mn``, ``p = 2``.

    Returns
    -------
    dict
        ``x`` (packed problem order), ``fun`` (LP objective ``c'x`` of the returned x; for
        ``mn`` with p = 2 the QP objective), ``lower_bound`` (the best certified bound on
        the LP optimum met in the run, from :func:`metricopt.bounds.certify` or the
        polish's LP dual, ``None`` when unavailable), ``gap`` (certified LP gap),
        ``qp_gap``, ``polish`` (one record per polish tried), ``certificates``,
        ``certify_seconds``, ``lp_approx_ratio`` (``fun / lower_bound``), ``qp_primal``, ``qp_dual``, ``gap``,
        ``max_violation``, ``status``, ``nit``, ``history`` (per pass: iteration, seconds,
        primal, dual, gap, max_violation, full_check, active_constraints, memory_bytes),
        ``gamma`` (of the returned iterate: a warm-up stage's when stopped there),
        ``gammas`` (the stages), ``lam``, ``rounded_digits``, ``repaired`` (True when
        ``x`` is the repaired point), ``dual_memory_bytes``.

    References
    ----------
    .. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
           optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
           333-355. https://doi.org/10.1137/18M1217152
    """
    options = {k: v for k, v in locals().items() if k != "problem"}
    from .core.result import complete

    return complete(problem, drive(problem, **options), backend="dykstra", tol=tol,
                    gap_tol=gap_tol)


class DykstraSolver(Solver):
    """Dykstra / Hildreth cyclic projections with sparse duals (V Alg. 1-2)."""

    name = "dykstra"
    description = "Dykstra projections on the QP regularisation (dense triangle or edge lists)"
    REQUIRED_MODULES = ("numba",)
    structures = ("dense", "edges")
    objectives = ("linear", "l1", "l2")
    options = OPTIONS
    public = "solve_dykstra"
    driver = staticmethod(drive)

    def supports(self, problem):
        """Dense and edge-list problems; not the cycle inequalities of MET(G)."""
        if problem.structure == "sparse":
            return False, ("dykstra solves dense (all-pairs) and edge-list problems; "
                           "sparse MET(G) problems need an active-set method (project-forget)")
        return super().supports(problem)

    def warm_up_options(self, problem, options):
        """The dual storage the real solve will use, so that its kernels are the ones
        warmed up (a small instance would otherwise always get dense duals)."""
        from . import _dykstra_state as S

        opts = dict(options)
        if problem.structure == "dense":
            order = _ALIASES.get(opts.get("order", "diagonal"), opts.get("order", "diagonal"))
            try:
                dense = S.dense_duals(opts.get("duals", "auto"), order, True, problem.n,
                                      opts.get("extrapolate") is not False,
                                      opts.get("max_memory"))
            except Exception:  # the real solve reports a bad option
                return opts
            opts["duals"] = "dense" if dense else "sparse"
        return opts

    def estimate_memory(self, problem):
        """Bytes of the pair arrays plus the triangle duals: dense ones and their
        extrapolation reference (48 B per triplet) when ``duals="auto"`` would pick them,
        else a typical sparse list (2% of 3 C(n,3), 16 B each, two lists)."""
        from . import _dykstra_state as S

        nvar = problem.n_variables
        base = 8 * 10 * nvar
        if problem.structure == "dense":
            n = problem.n
            need = S.dense_dual_bytes(n)
            if S.auto_dense_fits(need):
                return int(base + need)
            return int(base + 2 * 16 * 0.02 * 3 * (n * (n - 1) * (n - 2) // 6))
        return int(base + 8 * (3 * len(problem.triangles) + len(problem.wedges)))

    def cite(self):
        """Reference of the method."""
        return ("Veldt, Gleich, Wirth & Saunderson (2019), Metric-constrained optimization for "
                "graph clustering algorithms, SIAM J. Math. Data Sci. 1(2)")
