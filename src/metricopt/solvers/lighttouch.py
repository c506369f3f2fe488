"""LightTouch: stochastic constraint sampling for heavily constrained problems.

The backend ``"lighttouch"`` (Cotter, Gupta & Pfeifer [1]_, "LT") minimises the exact
penalty form of the LP (LT eq. 3)

    h(x) = f(x) + penalty * max(0, max_G g_G(x))

over a simple set ``W`` (a box holding an LP optimum, :func:`metricopt.bounds.optimum_box`;
for sparsest cut the hyperplane ``sum(x) = n``) by stochastic subgradient steps, where
``f`` is the LP objective (the QP objective for ``mn`` with ``p = 2``) and ``g_G`` the
largest violation in a *constraint group* (LT §5.1, :mod:`._lighttouch_kernels`: all
triangle inequalities whose long side is one of a block of pairs; for ``cd`` a block of
its explicit triangle and wedge rows), so that the distribution has O(n^2) entries.
Each iteration (practical LightTouch, LT Alg. 4)

* samples ``k_f = 2`` blocks of the objective and ``k_g`` groups ``i ~ p``, and takes a
  step along their stochastic subgradients, projected on ``W``;
* checks ``k_p`` uniformly drawn groups, refreshes their cached violations ``mu``, and
  moves ``p`` multiplicatively along the centred estimate
  ``penalty * mu + (penalty m / k_p) sum_S e_j (max(0, g_j) - mu_j)``;
* chooses ``k_g`` and ``k_p`` from averaged sample variances and costs (LT §5.2), the
  costs counted in constraint checks, never timed, so that a run repeats exactly.

Steps decay as ``eta_w / sqrt(1 + t/t0)``, or ``eta_w / (1 + t/t0)`` for the strongly
convex ``mn`` with ``p = 2`` (LT Alg. 3, MidTouch's ``1/(lambda t)`` rule, in Alg. 4's
form), and the answer is the average of the iterates. ``touch="full"`` is FullTouch
(LT Alg. 1): every group checked at every step, the subgradient of the most violated;
``touch="mid"`` is MidTouch's two phases (LT Alg. 3): FullTouch for ``full_rounds``
rounds, then LightTouch from their average, with ``p`` uniform again and the cached
violations of that average.

The average is feasible only approximately. The finishing stage (``finish="certify"``)
makes it an answer of the same contract as every backend: for LP objectives, the shared
LP polish (:class:`.core.stage.LPStage`) solves the LP restricted to the inequalities
most active at the average exactly, adds violated ones until none is left, and certifies
the result from the LP dual; when that is not possible or does not close the gap, for
dense problems without a sum row (``cc``, ``mn`` with p = 1: their average lies far
inside the polytope, and its rows would leave the separation to rebuild the active set
round by round; ``POLISH_DENSE_AVERAGE`` in :mod:`._lighttouch_run`), and always for the
QP of ``mn`` with ``p = 2``, the ``dykstra`` backend solves the problem from the registry with
the time left. Dykstra's Hildreth passes start from duals, which the stochastic phase
does not have, so it is not warm-started by the average. ``finish="project"`` is LT Alg.
4's last line: the Euclidean projection of the average onto the metric polytope (dense
``cc`` and ``mn``), computed by ``dykstra`` as the ``mn`` problem with ``p = 2`` whose
targets are the average: feasible, not certified. ``finish="none"`` returns the raw
average with its measured violation and no certificate.

Sparse (MET(G)) problems are refused: their cycle inequalities have no group structure
here; ``project-forget``, ``highs`` and ``highs-lazy`` solve them.

References
----------
.. [1] Cotter, A., Gupta, M. R., & Pfeifer, J. (2016). A Light Touch for Heavily
       Constrained SGD. COLT 2016, PMLR 49, 729-771. arXiv:1512.04960
.. [2] Mahdavi, M., Yang, T., Jin, R., Zhu, S., & Yi, J. (2012). Stochastic gradient
       descent with only one projection. NIPS 25.
"""

from ._base import Solver
from ._lighttouch_run import _SPARSE, FINISHES, TOUCHES, drive
from ._lighttouch_run import _memory as _round_memory
from .core import options as opt

__all__ = ["LightTouchSolver", "solve_lighttouch", "TOUCHES", "FINISHES"]

# -------------------------------------------------------------------------- driver
def _positive(name, doc):
    return opt.Option(name, "float", low=0, low_open=True, none=True, doc=doc)


def _count(name, doc, default=None):
    return opt.Option(name, "int", default=default, low=1, none=default is None, doc=doc)


#: The options of :func:`solve_lighttouch`, declared once (:mod:`.core.options`).
OPTIONS = (
    opt.TOL.replace(default=1e-6, doc="Largest allowed constraint violation of an optimal "
                                      "answer (full check)."),
    opt.GAP_TOL.replace(default=1e-4, doc="Largest allowed certified LP gap of an optimal "
                                          "answer (the finishing stage certifies it)."),
    opt.MAX_ITER.replace(default=100, doc="Rounds of the stochastic phase; one round is "
                                          "steps iterations and one record of history."),
    opt.TIME_LIMIT.replace(doc="Seconds for the whole run; checked after every round and "
                               "passed on to the finishing stage."),
    opt.SEED.replace(doc="Seed of the sampling (None means 0): the same seed gives the same "
                         "run, on any thread count."),
    opt.THREADS.replace(doc="Threads of the O(n^3) violation checks and of the finishing "
                            "stage; the sampled steps are serial."),
    opt.MAX_MEMORY.replace(doc="Bytes allowed, for the stochastic phase and the finishing "
                               "stage."),
    opt.CALLBACK,
    opt.VERBOSE,
    opt.CHECKPOINT.replace(doc="Path of a checkpoint of the stochastic phase, written every "
                               "checkpoint_every seconds, at the end of the phase and on "
                               "KeyboardInterrupt."),
    opt.CHECKPOINT_EVERY.replace(doc="Seconds between two checkpoints (the clock decides "
                                     "only when one is written)."),
    opt.RESUME.replace(doc="Path of a checkpoint to continue from (same problem and "
                           "options)."),
    _positive("penalty", "The penalty gamma of LT eq. 3 on the largest group violation "
                         "(default: a quarter of the objective's scale)."),
    _positive("eta_w", "Step size of the iterate (default: a sampled entry first moves about "
                       "5% of the variables' scale)."),
    _positive("eta_p", "Step size of the multiplicative update of the group distribution p "
                       "(default: 4 / (groups * penalty * scale))."),
    _count("group_size", "Pairs per constraint group, or explicit rows per group for cd "
                         "(default: round(sqrt(n / 8)) pairs; cd: one group per edge)."),
    opt.Option("touch", "choice", default="light", choices=TOUCHES,
               doc="light: LightTouch (LT Alg. 4); full: FullTouch (LT Alg. 1); mid: "
                   "MidTouch (LT Alg. 3)."),
    _count("steps", "Iterations per round (default: as many as take 1e7 units of work)."),
    opt.CHECK_EVERY.replace(default=5, doc="Rounds between full O(n^3) violation checks of "
                                           "the average."),
    opt.Option("finish", "choice", default="certify", choices=FINISHES,
               doc="certify: the LP polish, then dykstra if needed; project: the Euclidean "
                   "projection of the average (not certified); none: the raw average."),
    opt.Option("finish_at", "float", default=1e-2, low=0, low_open=True,
               doc="The stochastic phase ends at a full check where the average violates "
                   "nothing by more than this."),
    opt.POLISH.replace(doc="The LP polish of the finishing stage, as in dykstra (\"auto\": "
                           "when the restricted LP fits in memory, not for sparsest cut; unless "
                           "false, a rounding within gap_tol of the bound may be the answer)."),
    opt.Option("penalty_growth", "float", default=2.0, low=1,
               doc="Factor of the penalty at a full check where the average's violation "
                   "fell by less than half since the previous one; 1 keeps it fixed."),
    _count("full_rounds", "Rounds of MidTouch's first phase (touch=\"mid\" only).", default=5),
)


@opt.takes_options(OPTIONS)
def solve_lighttouch(problem, *, tol, gap_tol, max_iter, time_limit, seed, threads, max_memory,
                     callback, verbose, checkpoint, checkpoint_every, resume, penalty, eta_w,
                     eta_p, group_size, touch, steps, check_every, finish, finish_at, polish,
                     penalty_growth, full_rounds):
    """Solve a metric LP (or the l2 QP) by LightTouch, then finish the average.

    Parameters
    ----------
    problem : MetricProblem
        A dense (``cc``, ``sc``, ``mn``) or edge-structured (``cd``) problem.
    tol : float, default=1e-6
        Largest allowed constraint violation of an ``optimal`` answer (full check).
    gap_tol : float, default=1e-4
        Largest allowed certified LP gap of an ``optimal`` answer (the finishing stage
        certifies it).
    max_iter : int, default=100
        Rounds of the stochastic phase; one round is ``steps`` iterations and one record
        of ``history``.
    time_limit : float or None
        Seconds for the whole run; checked after every round and passed on to the
        finishing stage. A run stopped in the stochastic phase returns the average with
        its violation and no finishing.
    seed : int or None
        Seed of the sampling (None means 0): the same seed gives the same run, on any
        thread count.
    threads : int or None
        Threads of the O(n^3) violation checks and of the finishing stage; the sampled
        steps are serial.
    max_memory : int or None
        Bytes allowed; the stochastic phase's arrays (:meth:`LightTouchSolver.estimate_memory`)
        are refused beyond it, and the finishing stage gets the same allowance.
    callback : callable or None
        Called with each round's record.
    verbose : bool
        Accepted for interface compatibility (the library does not print).
    checkpoint : str or None
        Path of a checkpoint of the stochastic phase (iterate, running sums of the
        average, distribution, cached violations, variance estimates, RNG state; 24 bytes
        per variable and 32 per group), written every ``checkpoint_every`` seconds, at the end of
        the phase and on ``KeyboardInterrupt``.
    checkpoint_every : float, default=60.0
        Seconds between two checkpoints (the clock decides only when one is written).
    resume : str or None
        Path of a checkpoint to continue from (same problem and options).
    penalty : float or None
        The penalty ``gamma`` of LT eq. 3 on the largest group violation; default (None):
        a quarter of the objective's scale, the sum of the absolute weights or costs
        (times the targets' scale for ``p = 2``; :data:`PENALTY_FRACTION`). LT Lemma 1
        makes the penalty exact for ``gamma > L_f / rho``, with ``rho`` the smallest
        subgradient norm of the largest violation on the feasible set's boundary, tiny
        where many inequalities are tight: in practice it must exceed the sum of the LP
        multipliers.
    eta_w : float or None
        Step size of the iterate, ``eta_w / sqrt(1 + t / t0)`` at iteration ``t``
        (``eta_w / (1 + t / t0)`` for the strongly convex ``mn`` with ``p = 2``), ``t0``
        the number of objective blocks; default (None): a sampled entry first moves
        about 5% of the variables' scale, and for ``p = 2`` ``1 / (lambda t0)`` with
        ``lambda`` twice the smallest weight (MidTouch's ``1 / (lambda t)``).
    eta_p : float or None
        Step size of the multiplicative update of the group distribution ``p``; default
        (None): ``4 / (groups * penalty * scale)``, ``scale`` the largest target (1 for
        ``cd``, ``n / N`` for ``sc``).
    group_size : int or None
        Pairs per constraint group (a group holds the ``n - 2`` triangle inequalities
        with each of its pairs as the long side), or explicit rows per group for ``cd``;
        default (None): ``round(sqrt(n / 8))`` pairs, which balances the O(groups)
        arithmetic of an iteration against its checks (LT §5.1), and for ``cd`` as many
        groups as edges.
    touch : {"light", "full", "mid"}, default="light"
        ``"light"``: LightTouch (LT Alg. 4); ``"full"``: FullTouch (LT Alg. 1), every
        group checked at every step, for comparison; ``"mid"``: MidTouch (LT Alg. 3),
        ``full_rounds`` rounds of FullTouch, then LightTouch from their average.
    steps : int or None
        Iterations per round; default (None): as many as take :data:`ROUND_WORK` (1e7)
        units of work (constraint checks, the O(groups) arithmetic of ``p`` and the
        objective terms), or 1,000 passes' worth where that is less (dense problems
        below about 30 nodes, cluster deletion on small graphs), counted, not timed;
        a FullTouch round is then at least one iteration.
    check_every : int, default=5
        Rounds between full O(n^3) violation checks of the average.
    finish : {"certify", "project", "none"}, default="certify"
        ``"certify"``: make the average a certified answer, by the LP polish from the
        inequalities most active at it (LP objectives), then, if needed, dykstra on the
        problem with the time left; ``"project"``: the Euclidean projection of the average
        onto the metric polytope by dykstra (LT Alg. 4 line 17; dense ``cc`` and ``mn``),
        feasible, not certified; ``"none"``: the raw average, its violation measured, no
        certificate.
    finish_at : float, default=1e-2
        The stochastic phase ends at a full check where the average violates nothing by
        more than this.
    polish : bool or "auto", default="auto"
        The LP polish of the finishing stage, as in dykstra (``"auto"``: when the
        restricted LP fits in memory, not for sparsest cut).
    penalty_growth : float, default=2.0
        Factor of the penalty at a full check where the average's violation fell by
        less than half since the previous one (a penalty below the LP multipliers' sum
        leaves a violated equilibrium); the average then restarts, and ``eta_p`` shrinks
        by the same factor so that ``eta_p * penalty`` stays fixed. 1 keeps it fixed.
    full_rounds : int, default=5
        Rounds of MidTouch's first phase (``touch="mid"`` only).

    Returns
    -------
    dict
        ``x``, ``fun``, ``status``, ``message``, ``nit`` (rounds), ``max_violation``,
        ``lower_bound`` (certified; None without a finishing stage), ``gap``,
        ``history`` (per round: iteration, seconds, primal, max_violation, full_check,
        active_constraints, constraints_checked, k_f, k_g, k_p, p_max, p_entropy),
        ``constraints_checked``, ``average_violation`` and ``average_value`` (of the
        stochastic phase's average), ``finish_stage`` (what ran), ``penalty``,
        ``eta_w``, ``eta_p``, ``group_size``, ``groups``.

    References
    ----------
    .. [1] Cotter, A., Gupta, M. R., & Pfeifer, J. (2016). A Light Touch for Heavily
           Constrained SGD. COLT 2016, PMLR 49, 729-771. arXiv:1512.04960
    """
    options = {k: v for k, v in locals().items() if k != "problem"}
    from .core.result import complete

    return complete(problem, drive(problem, **options), backend="lighttouch", tol=tol,
                    gap_tol=gap_tol)


class LightTouchSolver(Solver):
    """LightTouch stochastic constraint sampling (LT Alg. 2-4) with a finishing stage."""

    name = "lighttouch"
    description = ("LightTouch: sampled constraint groups and penalised SGD, then the LP "
                   "polish or dykstra (dense and edge-list problems)")
    REQUIRED_MODULES = ("numba",)
    structures = ("dense", "edges")
    objectives = ("linear", "l1", "l2")
    options = OPTIONS
    public = "solve_lighttouch"
    driver = staticmethod(drive)

    def supports(self, problem):
        """Dense and edge-list problems; not the cycle inequalities of MET(G)."""
        if problem.structure == "sparse":
            return False, _SPARSE
        return super().supports(problem)

    def estimate_memory(self, problem):
        """Bytes of the stochastic phase (73 per variable, 89 per pair of a dense
        problem, and 32 per group) or of the finishing stage's dykstra run, whichever
        is larger."""
        if problem.structure == "sparse":
            return None
        own = _round_memory(problem, None)
        fin = self.other("dykstra").estimate_memory(problem) or 0
        return int(max(own, fin))

    def warm_up_options(self, problem, options):
        """The same sampling and finishing options, a few rounds."""
        opts = dict(options)
        opts.pop("steps", None)
        opts["steps"] = 8
        return opts

    def cite(self):
        """Reference of the method."""
        return ("Cotter, Gupta & Pfeifer (2016), A Light Touch for Heavily Constrained SGD, "
                "COLT 2016, PMLR 49")
