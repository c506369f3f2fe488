"""Project and Forget: an active-set Bregman method for metric-constrained QPs.

The backend ``"project-forget"`` (Sonthalia & Gilbert [1]_, Alg. 1-3, App. 8 Alg. 6-7)
minimises the same quadratic regularisation of the LP as the ``dykstra`` backend,
``c'v + (1/2 gamma) (v - delta)' W (v - delta)`` (V §6), but never visits the whole
constraint family. Each outer iteration

1. calls a separation **oracle** that returns violated metric constraints together with
   the exact largest violation of the current ``x``;
2. appends them to a flat **active list** (offsets, variable ids, duals, types: numpy
   arrays grown by doubling, never one Python object per constraint) and makes several
   Hildreth **projection passes** over it (PF §1.3: with the quadratic divergence the
   step is ``c = min(violation / sum(1/w), z)`` in the paper's sign convention), each
   followed by one pass over the per-variable constraints (``f >= |x - d|``, bounds,
   the sparsest-cut sum) whose duals are kept densely and never forgotten;
3. **forgets** the constraints whose dual returned to zero.

Oracles by problem structure:

``"sparse"`` (MET(G): signed ``cc``, ``mn`` from a weighted edge list)
    Two tiers (:class:`_CycleOracle`). First the graph's triangles, listed once (three
    inequalities each): while one is violated by more than ``tol`` their violated
    inequalities are the answer, at most 10 calls in a row. Then path searches: for
    every edge ``e = (a, b)`` a bidirectional Dijkstra with the current ``x`` as
    lengths (negative values count as 0, zero lengths are kept), bounded by ``x_e``
    itself, edges dealt to the threads with per-thread buffers; when
    ``x_e > dist(a, b)`` the cycle ``e`` + path is returned (PF §2.1 returns the same
    cycles from one full Dijkstra per source; two half-radius balls per edge are far
    smaller than one ball per source in a small-world graph,
    :func:`metricopt.problems._cycles.separate_edges`). Far from feasibility (the last
    search found violations above ``10 tol``) a search takes the first path of length
    at most ``x_e / 4`` it meets; then it proves the shortest path, and only such an
    exact call ends a QP stage. Passes per oracle call: ``5 min(t, 15)`` at iteration
    ``t`` (75 from t = 15 on, as PF Alg. 7).
``"edges"`` (``cd``)
    A scan of the problem's explicit triangle and wedge lists.
``"dense"`` (``K_n``: Jaccard ``cc``, dense ``mn``, ``sc``)
    A read-only scan of all triangles in the ``dykstra`` backend's diagonal order and
    pair layout, split over the threads (:mod:`._pf_scan`); it returns the exact
    largest violation and merges every inequality violated by more than
    ``0.01 tol`` into the remembered list (20 bytes per constraint: three int32 pair
    positions, the side in two spare bits, a float64 dual; no duplicates). Then one
    pass over every pair's own constraints, and passes over the remembered list and
    the pairs it touches only (gathered into contiguous arrays), forgetting after each,
    until a pass changes no dual (relative ``1e-13``), 1000 passes, or until the passes
    have done as much work as the scan (``sc``, whose sum constraint couples all pairs,
    passes over all pairs). Work is counted in operations, never measured by the clock
    (:func:`_scan_work`, :func:`_pass_work`), so a run repeats exactly on any machine,
    load and thread count.
    The remembered list holds only constraints whose dual stayed positive, so it is
    small: about 1.5e5 constraints (3 MB) at convergence on ca-GrQc (n = 4158).
    PF Alg. 6 projects while it scans; a serial projecting scan in this order was
    measured at 37 CPU seconds per scan on ca-GrQc with violation 0.225 left after
    three scans, while the read-only scan runs on all threads and, with the passes
    converged in between, reaches violation 0.01 in 7 scans (``benchmarks/README.md``).

Stopping: a QP stage ends when the oracle's exact violation is at most ``tol`` and the
relative QP primal-dual gap at most ``gap_tol``; the run is ``optimal`` when the
certified LP gap is at most ``gap_tol`` too (:mod:`.core.stage`: certificate, then the LP
polish on the remembered constraints, then a larger ``gamma``).
The default ``tol = 1e-4`` is tighter than the 0.01 of the papers' benchmarks (PF §4.2,
App. 8), which the benchmarks pass explicitly.

Certified lower bound on the LP optimum (``lower_bound``): the best of the dual bound
``(D(y) - offset) / (1 + A)`` (V §6) and V Thm 5 / Cor 6 at a self-certified budget,
both computed by :mod:`metricopt.bounds` from the same full-precision pair ``(x, z)``
at the end of the run, as in the ``dykstra`` backend (see :func:`._pf_strategy.certify_iterate`, which also
states why the Thm 5 box is valid for MET(G)). On ca-GrQc (Jaccard ``cc``,
``gamma = 1``) it certifies ``fun / lower_bound = 1.11``.

References
----------
.. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving large-scale
       metric constrained problems. arXiv:2005.03853.
.. [2] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355. https://doi.org/10.1137/18M1217152
.. [3] Hildreth, C. (1957). A quadratic programming procedure. Naval Res. Logist. Q.
       4(1), 79-85.
"""

from ._base import Solver
from ._pf_oracles import estimate_memory
from ._pf_strategy import drive as _drive_layouts
from .core import options as opt

__all__ = ["ProjectForgetSolver", "solve_project_forget"]


# ------------------------------------------------------------------------ driver
#: The options of :func:`solve_project_forget`, declared once (:mod:`.core.options`).
OPTIONS = (
    opt.GAMMA.replace(doc="Regularisation c'x + (1/2 gamma) x'Wx: default 10 with proximal "
                          "(cc, mn p = 1), else 1 (cd, and those with proximal=0), 5 (sc); "
                          "ignored for mn with p = 2."),
    opt.LAM.replace(doc="Sparsest cut: weight of the non-edges in W (default 1/n)."),
    opt.TOL.replace(default=1e-4, doc="Largest allowed violation of any constraint by the "
                                      "returned x (measured exactly)."),
    opt.GAP_TOL.replace(default=1e-4, doc="Largest allowed certified LP gap (c'x - "
                                          "lower_bound) / |lower_bound| of an optimal answer."),
    opt.MAX_ITER.replace(default=10000, doc="Oracle calls (outer iterations); a run that "
                                             "stops progressing ends by the stall watch."),
    opt.TIME_LIMIT.replace(doc="Seconds; checked after every projection pass."),
    opt.Option("passes", "int", low=1, none=True,
               doc="Projection passes over the active list per oracle call (default: "
                   "5 min(t, 15) at iteration t; dense: until converged, at most 1000)."),
    opt.THREADS.replace(doc="Threads of the shortest-path oracle and of the dense scan "
                            "(default: all cores)."),
    opt.SEED.replace(doc="Accepted for interface compatibility; the method is deterministic."),
    opt.MAX_MEMORY.replace(doc="Bytes allowed: the run is refused beyond it, and stops with "
                               "status limit when the active list outgrows it."),
    opt.CALLBACK,
    opt.VERBOSE,
    opt.CHECKPOINT.replace(doc="Path of a checkpoint (x, the pair and sum duals, the active "
                               "list), written every checkpoint_every seconds, at the end and "
                               "on KeyboardInterrupt."),
    opt.CHECKPOINT_EVERY.replace(doc="Seconds between two checkpoints (the clock decides "
                                     "only when one is written)."),
    opt.RESUME.replace(doc="Checkpoint to continue from (same problem, backend and gamma)."),
    opt.POLISH.replace(doc="When a converged QP stage misses gap_tol, solve the LP restricted "
                           "to the constraints holding a positive dual exactly and certify it "
                           "from its LP dual. Unless false, a rounding within gap_tol of the "
                           "bound may be the answer."),
    opt.GAMMA_GROWTH,
    opt.SCHEDULER.replace(doc="Sparse problems (MET(G)) and the support-sized layout: run "
                              "the shortest-path oracle or the support scan on this Dask "
                              "cluster (a scheduler address such as tcp://host:8786, or a "
                              "client)."),
    opt.Option("proximal", "int", low=0, none=True,
               doc="Complete-graph l1 problems (cc, mn with p = 1; dense or support-sized): "
                   "oracle calls between two recentrings of the QP at the iterate (proximal "
                   "point on the LP at a fixed gamma, default gamma 10, no growth; polish "
                   "of at most 20,000 rows); a call's passes recentre every 5 passes too. "
                   "0: off. Default: 1 for those problems."),
)


@opt.takes_options(OPTIONS)
def solve_project_forget(problem, *, gamma, lam, tol, gap_tol, max_iter, time_limit, passes,
                         threads, seed, max_memory, callback, verbose, checkpoint,
                         checkpoint_every, resume, polish, gamma_growth, scheduler, proximal):
    """Solve the quadratic regularisation of a metric LP by Project and Forget.

    Parameters
    ----------
    problem : MetricProblem
        Sparse (MET(G)), edge-list (``cd``) or dense problem.
    gamma : float or None
        Regularisation ``c'x + (1/2 gamma) x'Wx``: default 10 with ``proximal`` (``cc``,
        ``mn`` p = 1), else 1 (``cd``), 5 (``sc``); ignored for ``mn`` with p = 2.
    lam : float or None
        Sparsest cut: weight of the non-edges in ``W`` (default ``1/n``).
    tol : float, default=1e-4
        Largest allowed violation of any constraint by the returned ``x`` (measured
        exactly: shortest paths, the explicit lists, or a full triangle check).
    gap_tol : float, default=1e-4
        Largest allowed certified LP gap ``(c'x - lower_bound) / |lower_bound|`` of an
        ``optimal`` answer, at an ``x`` violating nothing by more than ``tol``. A QP
        stage ends when its own relative gap ``|P - D| / max(|P|, |D|)`` (V §5.3) is
        within ``gap_tol`` too; then the point is certified (:mod:`.core.stage`), and if
        the LP gap is missed the run polishes and/or raises ``gamma`` (see ``polish``
        and ``gamma_growth``). The QP gap is reported as ``qp_gap``.
    max_iter : int, default=10000
        Oracle calls (outer iterations). A safety net, not the stopping rule: a run whose
        QP stops progressing goes to the certificate and the polish by the stall watch
        (:mod:`.core.stage`), and sparsest cut on sparse graphs can need more than a
        thousand calls (G(200, 0.035): 1,133 at gap_tol 1e-4, 1,780 at 1e-6).
    time_limit : float or None
        Seconds; checked after every projection pass.
    passes : int or None
        Projection passes over the active list per oracle call; default ``5 min(t, 15)``
        at iteration ``t`` (sparse and edges); dense: until converged, at most 1000
        (see the module docstring); the support-sized layout: 100.
    threads : int or None
        Threads of the shortest-path oracle and of the dense scan (default: all
        cores). The result does not depend on it.
    seed : None
        Accepted for interface compatibility; the method is deterministic.
    max_memory : int or None
        Bytes allowed: the run is refused (``MemoryLimitError``) when the estimate
        exceeds it, and stops with status ``limit`` when the active list outgrows it.
    callback : callable or None
        Called once per outer iteration with its record (see ``history``).
    verbose : bool
        Accepted for interface compatibility (the library does not print).
    checkpoint : str or None
        Path of a checkpoint (:mod:`metricopt.solvers._checkpoint`: an ``.npz`` of numbers
        with a JSON header, bound to this problem instance by a digest, never pickled)
        written every ``checkpoint_every`` seconds, at the end and on
        ``KeyboardInterrupt``: x, the pair and sum duals, and the active list (node ids
        and duals), about 24 bytes per variable plus the active list.
    checkpoint_every : float, default=60.0
        Seconds between two checkpoints (the clock decides only when one is written).
    resume : str or None
        Checkpoint to continue from (same problem, backend and ``gamma``); a file that is
        not such a checkpoint raises :class:`~metricopt.exceptions.InputError`.
    polish : bool or "auto", default="auto"
        When a converged QP stage misses ``gap_tol``, solve the LP restricted to the
        constraints holding a positive dual exactly (HiGHS; violated rows are separated
        and added until none is left) and certify it from its LP dual
        (:mod:`.core.polish`). ``"auto"``: when the restricted LP fits in memory, except
        for sparsest cut (its restricted LP needed over 30 separation rounds on jazz and
        USAir97, where gamma growth certifies a gap of 1e-5 in 1.5 s and 9 s). Once a
        polish has reached the LP optimum it is not repeated.
    gamma_growth : float, default=10.0
        Factor by which ``gamma`` grows when a converged QP stage misses ``gap_tol``
        and the polish did not close it; the duals (and ``x - delta``, ``f``) are scaled
        exactly (:func:`._pf_strategy.rescale`, as in ``dykstra``), so the next stage
        starts where this one ended
        (exact regularisation: beyond some ``gamma`` the QP solution is an LP
        solution). ``gamma`` stops growing at ``1e8``.
    scheduler : str, distributed.Client or None
        Sparse problems (MET(G)) and the support-sized layout: run the shortest-path
        oracle, or the support scan, on this Dask cluster (a scheduler address such as
        ``tcp://host:8786``, or a client). The graph is sent to the workers once (the
        run pairs once per call), ``x`` once per oracle call; the projections and the
        polish stay here. The rows found, and so the result, are those of a local run
        (:mod:`._dask_oracle`, :mod:`._dask_support`).
    proximal : int or None
        Complete-graph l1 problems (``cc``, ``mn`` with p = 1, dense or support-sized):
        every ``proximal`` oracle calls the QP's centre moves to the iterate before the
        passes, keeping the duals (:func:`._regularised.recentre`, as dykstra's), and
        within the passes every 5 passes (:mod:`._pf_passes`): the proximal point method
        on the LP at a fixed ``gamma`` (default 10 here; no growth; the polish only from at
        most 20,000 rows). The bound is certified from the same
        duals. Default (None): 1 for those problems, else off; 0: off. Jaccard cc at the
        defaults: polblogs certified 3.5e-4 at 300 s against 1.1e-2, ca-GrQc optimal in
        83 s against 123-197 s (``benchmarks/README.md``).

    Returns
    -------
    dict
        ``x``, ``fun`` (LP objective of ``x``; for ``mn`` with p = 2 the QP objective),
        ``lower_bound`` (the best certified bound met in the run), ``bound_details``,
        ``gap`` (certified LP gap), ``polish``, ``certificates``, ``certify_seconds``,
        ``lp_approx_ratio``, ``qp_primal``, ``qp_dual``, ``qp_gap``, ``max_violation``,
        ``status``, ``message``, ``nit``,
        ``history`` (per iteration: iteration, seconds, primal, dual, gap,
        max_violation, full_check, active_constraints, memory_bytes,
        constraints_found, remembered, oracle_seconds, passes), ``gamma``, ``lam``,
        ``peak_memory``, ``active_constraints``, ``memory_estimate``, ``elapsed``.

    References
    ----------
    .. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving
           large-scale metric constrained problems. arXiv:2005.03853.
    """
    options = {k: v for k, v in locals().items() if k != "problem"}
    from .core.result import complete

    return complete(problem, drive(problem, **options), backend="project-forget", tol=tol,
                    gap_tol=gap_tol)


def drive(problem, **options):
    """Run project-forget on ``problem``: the support-sized layout's strategy
    (:mod:`._support_strategy`) or the others' (:mod:`._pf_strategy`)."""
    if problem.structure == "support":
        from ._support_strategy import drive_support

        return drive_support(problem, **options)
    return _drive_layouts(problem, **options)


class ProjectForgetSolver(Solver):
    """Project and Forget: active-set Bregman projections (Sonthalia & Gilbert 2020)."""

    name = "project-forget"
    description = ("Project and Forget active-set projections: shortest-path cycle oracle on "
                   "MET(G), triangle/wedge scans (cd), parallel triangle scans (dense)")
    REQUIRED_MODULES = ("numba",)
    structures = ("dense", "sparse", "edges", "support")
    objectives = ("linear", "l1", "l2")
    options = OPTIONS
    public = "solve_project_forget"
    driver = staticmethod(drive)

    def estimate_memory(self, problem):
        """Estimated peak bytes (see :func:`estimate_memory`)."""
        if problem.structure == "support":
            from ._support_strategy import estimate_support_memory

            return estimate_support_memory(problem)
        return estimate_memory(problem)

    def warm_up_kernels(self, problem):
        """The dense mode's support scan and exact violation (:func:`._pf_list.warm_up`)."""
        if problem.structure == "dense":
            from ._pf_list import warm_up

            warm_up()

    def cite(self):
        """Reference of the method."""
        return ("Sonthalia & Gilbert (2020), Project and Forget: solving large-scale metric "
                "constrained problems, arXiv:2005.03853")

