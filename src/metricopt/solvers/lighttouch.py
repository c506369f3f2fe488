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
makes it an answer of the same contract as every backend: for LP objectives, the
shared LP polish (:class:`._core.LPStage`) solves the LP restricted to the inequalities
most active at the average exactly, adds violated ones until none is left, and
certifies the result from the LP dual; when that is not possible or does not close the
gap (and always for the QP of ``mn`` with ``p = 2``), the ``dykstra`` backend solves the
problem from the registry with the time left. Dykstra's Hildreth passes start from
duals, which the stochastic phase does not have, so it is not warm-started by the
average. ``finish="project"`` is LT Alg. 4's last line: the Euclidean projection of the
average onto the metric polytope (dense ``cc`` and ``mn``), computed by ``dykstra`` as the
``mn`` problem with ``p = 2`` whose targets are the average: feasible, not certified.
``finish="none"`` returns the raw average with its measured violation and no
certificate.

Sparse (MET(G)) problems are refused: their cycle inequalities have no group structure
here; ``project-forget``, ``highs`` and ``highs-lazy`` solve them.

References
----------
.. [1] Cotter, A., Gupta, M. R., & Pfeifer, J. (2016). A Light Touch for Heavily
       Constrained SGD. COLT 2016, PMLR 49, 729-771. arXiv:1512.04960
.. [2] Mahdavi, M., Yang, T., Jin, R., Zhu, S., & Yi, J. (2012). Stochastic gradient
       descent with only one projection. NIPS 25.
"""

import math
import time
import warnings

import numpy as np

from .._memory import check_memory
from ..exceptions import ConvergenceWarning, InvalidParameterError, \
    UnsupportedProblemError
from ..result import Status
from ._base import Solver
from ._checkpoint import (header_field, header_history, problem_digest, read_checkpoint,
                          state_array, write_checkpoint)
from ._core import IterationLoop, LPStage, bad_value, check_choice, check_options

__all__ = ["LightTouchSolver", "solve_lighttouch", "TOUCHES", "FINISHES"]

TOUCHES = ("light", "full", "mid")
FINISHES = ("certify", "project", "none")

#: Default penalty as a fraction of the objective's scale (sum of |weights| or |costs|;
#: times the targets' scale for ``p = 2``). LT Lemma 1's ``gamma > L_f / rho`` is exact
#: only with ``rho`` the smallest subgradient of ``max_G g_G`` on the boundary, which is
#: tiny where many inequalities are tight: the penalty must exceed the sum of the LP's
#: multipliers. Measured on karate Jaccard ``cc`` (30 rounds, fixed penalty): a quarter
#: of the scale (47) reaches violation 8e-3 at 5.8% above the LP optimum, the whole
#: scale (188) violation 0 at 16% above; ``2 L_f / sqrt 3`` (17.5) kept the average's
#: violation near 1. :data:`STALL_RATIO` and ``penalty_growth`` raise a penalty that
#: is too small.
PENALTY_FRACTION = 0.25
#: The penalty grows (``penalty_growth``) at a full check where the average's
#: violation did not fall below this fraction of the previous check's.
STALL_RATIO = 0.5
#: Largest minibatch ``k_g`` / ``k_p``.
MAX_BATCH = 256
#: Weight of the previous variance estimates (LT §6.1 used 0.999).
VARIANCE_DECAY = 0.999
#: Work of one recorded round (constraint checks, plus ``groups`` per LightTouch
#: iteration for the update of ``p``, plus the objective terms sampled).
ROUND_WORK = 1e7
#: The polish starts from inequalities whose value at the average is at least this
#: fraction of the variables' scale below tight.
ACTIVE_SLACK = 0.05

_SPARSE = ("lighttouch does not support sparse inputs (the cycle inequalities of MET(G)); "
           "use project-forget, highs-lazy or highs")


# ----------------------------------------------------------------------------- setup
class _Instance:
    """The problem in the kernels' terms: groups, objective form, box, scales."""

    def __init__(self, problem, group_size):
        from ..bounds import optimum_box
        from ..problems._pairs import pair_arrays
        from . import _lighttouch_kernels as K

        n = problem.n
        self.n = n
        self.nvar = nvar = problem.n_variables
        self.dense = problem.structure == "dense"
        empty2 = np.zeros((0, 2), dtype=np.int64)
        if self.dense:
            self.structure = 0
            self.prow, self.pcol = pair_arrays(n)
            self.base = K.pair_base(n)
            self.tri = np.zeros((0, 3), dtype=np.int64)
            self.wed = empty2
            self.nmem = nvar
            gsz = max(1, int(round(math.sqrt(n / 8.0)))) if group_size is None else group_size
            self.per_member = max(n - 2, 0)
        else:
            self.structure = 1
            self.prow = self.pcol = np.zeros(0, dtype=np.int64)
            self.base = np.zeros(max(n, 1), dtype=np.int64)
            self.tri = np.ascontiguousarray(problem.triangles, dtype=np.int64).reshape(-1, 3)
            self.wed = np.ascontiguousarray(problem.wedges, dtype=np.int64).reshape(-1, 2)
            self.nmem = 3 * self.tri.shape[0] + self.wed.shape[0]
            gsz = max(1, -(-self.nmem // max(nvar, 1))) if group_size is None else group_size
            self.per_member = 1
        self.gsz = int(gsz)
        self.ngroups = max(1, -(-self.nmem // self.gsz))
        self.vsz = max(1, int(round(nvar / self.ngroups)))
        self.nblocks = -(-nvar // self.vsz) if nvar else 1
        self.cost_g = float(max(self.gsz * self.per_member, 1))
        self.total_checks = self.nmem * self.per_member
        obj = problem.objective
        self.objective = {"linear": 0, "l1": 1, "l2": 2}[obj]
        z = np.zeros(nvar)
        self.coef = np.ascontiguousarray(problem.cost if obj == "linear" else z, dtype=np.float64)
        self.target = np.ascontiguousarray(problem.target if obj != "linear" else z,
                                           dtype=np.float64)
        self.wts = np.ascontiguousarray(problem.weights if obj != "linear" else z,
                                        dtype=np.float64)
        self.has_sum = problem.sum_value is not None
        if obj == "l2":
            lo, hi = float(problem.lower), float(problem.upper)
        else:
            lo, hi = optimum_box(problem)
        self.lo = lo if np.isfinite(lo) else -np.inf
        self.hi = hi if np.isfinite(hi) else np.inf
        coef = self.coef if obj == "linear" else self.wts
        nz = np.abs(coef[coef != 0])
        self.mean_coef = float(nz.mean()) if nz.size else 1.0
        if self.has_sum:
            self.scale = float(problem.sum_value) / max(nvar, 1)
        elif obj != "linear":
            self.scale = max(float(np.max(np.abs(self.target), initial=0.0)), 1e-12)
        else:
            self.scale = 1.0
        self.objective_scale = float(np.sum(np.abs(coef))) * (self.scale if obj == "l2" else 1.0)
        self.strong = obj == "l2"
        self.min_weight = float(self.wts.min(initial=1.0)) if obj == "l2" else 0.0

    def start(self, problem):
        """The first iterate: the targets in the box, ``n / N`` for sparsest cut, else 0."""
        if self.has_sum:
            return np.full(self.nvar, float(problem.sum_value) / max(self.nvar, 1))
        if self.objective != 0:
            return np.clip(self.target, self.lo, self.hi).astype(np.float64)
        return np.clip(np.zeros(self.nvar), self.lo, self.hi)

def _memory(problem, group_size):
    """Bytes of the stochastic phase, before anything is allocated: 9 float64 / int64
    arrays (the average included) and a byte per variable, the pair index arrays (dense
    problems), 4 arrays per group, and 4 KiB of small ones."""
    nvar = problem.n_variables
    dense = problem.structure == "dense"
    if dense:
        gsz = max(1, int(round(math.sqrt(problem.n / 8.0)))) if group_size is None else group_size
        groups = -(-nvar // gsz)
    else:
        nmem = 3 * len(problem.triangles) + len(problem.wedges)
        groups = nvar if group_size is None else -(-nmem // group_size)
    per_var = 8 * 9 + 1 + (16 if dense else 0)
    return int(per_var * nvar + 32 * max(groups, 1) + 8 * (problem.n + 1) + 4096)


def _defaults(inst, penalty, eta_w, eta_p):
    """The documented defaults of the step sizes and the penalty."""
    if penalty is None:
        penalty = PENALTY_FRACTION * inst.objective_scale
    t0 = float(inst.nblocks)
    if eta_w is None:
        if inst.strong:  # 1 / (lambda (t0 + t)), lambda = 2 min w
            eta_w = 1.0 / (2.0 * max(inst.min_weight, 1e-12) * t0)
        else:  # a sampled entry moves about 5% of its scale at the start
            eta_w = 0.1 * inst.scale / (inst.nblocks * inst.mean_coef)
    if eta_p is None:
        eta_p = 4.0 / (inst.ngroups * penalty * inst.scale)
    return float(penalty), float(eta_w), float(eta_p), t0


def _state(inst, problem, seed):
    """Fresh state of the stochastic phase (cached violations of the start included)."""
    from . import _lighttouch_kernels as K

    y = inst.start(problem)
    g = np.empty(inst.ngroups)
    K.group_violations(y, 0.0, inst.structure, inst.n, inst.base, inst.prow, inst.pcol,
                       inst.tri, inst.wed, inst.gsz, inst.nmem, inst.ngroups, g)
    ss = np.random.SeedSequence(0 if seed is None else int(seed))
    return dict(
        y=y, acc=np.zeros(inst.nvar), last=np.zeros(inst.nvar, dtype=np.int64),
        logp=np.zeros(inst.ngroups), cdf=np.arange(1, inst.ngroups + 1, dtype=np.float64),
        mu=np.maximum(g, 0.0), perm=np.arange(inst.ngroups, dtype=np.int64),
        st=np.zeros(len(K.ST)), ct=np.zeros(len(K.CT), dtype=np.int64),
        rng=ss.generate_state(4, dtype=np.uint64))


_STATE = ("y", "acc", "last", "logp", "cdf", "mu", "perm", "st", "ct", "rng")


def _average(inst, s):
    from . import _lighttouch_kernels as K

    t, t0 = int(s["ct"][K.CT["t"]]), int(s["ct"][K.CT["t_start"]])
    if t == t0:
        return s["y"] + s["st"][K.ST["shift"]]
    out = np.empty(inst.nvar)
    K.average(s["y"], s["acc"], s["last"], t, t0, s["st"][K.ST["shift_acc"]], out)
    return out


def _restart_average(s):
    """Average the iterates from now on (after a change of the penalty)."""
    from . import _lighttouch_kernels as K

    t = int(s["ct"][K.CT["t"]])
    s["acc"][:] = 0.0
    s["last"][:] = t
    s["st"][K.ST["shift_acc"]] = 0.0
    s["ct"][K.CT["t_start"]] = t


def _second_phase(inst, s):
    """MidTouch's switch (LT Alg. 3 lines 7-9): the iterate becomes the first phase's
    average, ``p`` uniform, ``mu`` the group violations there; a new average starts."""
    from . import _lighttouch_kernels as K

    x = _average(inst, s)
    s["y"][:] = x
    s["st"][K.ST["shift"]] = 0.0
    _restart_average(s)
    s["logp"][:] = 0.0
    s["cdf"][:] = np.arange(1, inst.ngroups + 1, dtype=np.float64)
    g = np.empty(inst.ngroups)
    K.group_violations(s["y"], 0.0, inst.structure, inst.n, inst.base, inst.prow, inst.pcol,
                       inst.tri, inst.wed, inst.gsz, inst.nmem, inst.ngroups, g)
    s["mu"][:] = np.maximum(g, 0.0)


def _p_summary(logp):
    """``max p`` and the entropy of ``p`` (nats) from the log-weights."""
    w = np.exp(logp - logp.max())
    p = w / w.sum()
    nz = p[p > 0]
    return float(p.max()), float(-np.sum(nz * np.log(nz)))


# ------------------------------------------------------------------ finishing stage
def _active_rows(problem, inst, x):
    """The inequalities most active at ``x`` (:class:`._polish.ActiveRows`), as many
    as the polish keeps (:func:`._polish.polish_rows`)."""
    from . import _lighttouch_kernels as K
    from .core.polish import MAX_ROWS, MIN_ROWS, ROWS_PER_COLUMN, ActiveRows

    cap = int(min(max(ROWS_PER_COLUMN * inst.nvar, MIN_ROWS), MAX_ROWS))
    score = np.empty(cap)
    rows = np.empty((cap, 3), dtype=np.int64)
    xs = np.ascontiguousarray(x, dtype=np.float64)
    cnt = K.top_active(xs, inst.structure, inst.n, inst.base, inst.prow, inst.pcol,
                       inst.tri, inst.wed, inst.nmem, -ACTIVE_SLACK * inst.scale, score, rows)
    order = np.argsort(-score[:cnt], kind="stable")
    score, rows = score[:cnt][order], rows[:cnt][order]
    # a positive "dual" per row, larger for more active rows (ActiveRows.strongest)
    duals = score - score.min(initial=0.0) + 1e-12
    if inst.dense:
        return ActiveRows(triangles=rows, duals=dict(triangles=duals))
    return ActiveRows(family=rows[:, 0].copy(), duals=dict(family=duals))


def _finish(problem, inst, x_avg, lp_stage, *, penalty, tol, gap_tol, deadline, threads,
            max_memory, polish):
    """The finishing stage (module docstring); returns a dict of result fields."""
    out = dict(finish_stage=[])
    if problem.objective != "l2" and lp_stage.may_polish(penalty):
        out["finish_stage"].append("polish")
        if lp_stage.try_polish(lambda: _active_rows(problem, inst, x_avg), deadline, penalty):
            x = lp_stage.x
            out.update(x=x, status=Status.OPTIMAL,
                       message="certified LP gap <= gap_tol after the LP polish from the "
                               "rows active at the average")
            return out
    left = None if deadline is None else deadline - time.perf_counter()
    if left is not None and left <= 0:
        out.update(x=None, status=Status.LIMIT, message="time limit reached in the finishing "
                                                        "stage")
        return out
    from . import get_solver

    out["finish_stage"].append("dykstra")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = get_solver("dykstra").run(problem, tol=tol, gap_tol=gap_tol,
                                        time_limit=None if left is None else round(left, 3),
                                        threads=threads, max_memory=max_memory, polish=polish)
    if res.get("lower_bound") is not None:
        lp_stage.offer_bound(res["lower_bound"], res.get("bound_details", {}), "dykstra")
    out.update(x=res["x"], status=res["status"], message=f"dykstra: {res['message']}",
               finish_passes=int(res.get("nit", 0)))
    return out


def _project(problem, x_avg, *, tol, gap_tol, deadline, threads, max_memory):
    """LT Alg. 4 line 17: the Euclidean projection of the average onto the metric
    polytope, by dykstra on the ``mn`` problem with ``p = 2`` and the average as targets
    (unit weights). The point is feasible within ``tol``; nothing certifies its LP gap."""
    from ..graph import Dissimilarity
    from ..problems import build_problem
    from ..problems._pairs import packed_to_square
    from . import get_solver

    left = None if deadline is None else deadline - time.perf_counter()
    if left is not None and left <= 0:
        return dict(x=None, status=Status.LIMIT, finish_stage=["projection"],
                    message="time limit reached before the projection")
    target = packed_to_square(np.maximum(x_avg, 0.0), problem.n)
    proj = build_problem("mn", Dissimilarity(values=target, labels=problem.labels,
                                             name=f"{problem.name}-average"),
                         p=2, source="matrix")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = get_solver("dykstra").run(proj, tol=tol, gap_tol=gap_tol,
                                        time_limit=None if left is None else round(left, 3),
                                        threads=threads, max_memory=max_memory)
    return dict(x=res["x"], status=Status.LIMIT, finish_stage=["projection"],
                finish_passes=int(res.get("nit", 0)),
                message=f"the Euclidean projection of the average (dykstra: "
                        f"{Status.NAMES.get(res['status'], res['status'])}), not certified")


# ---------------------------------------------------------------- checkpoint / resume
def _write(path, s, counters, options, problem, digest):
    arrays = {k: s[k] for k in _STATE if k != "rng"}
    arrays["rng"] = s["rng"].view(np.int64)
    meta = dict(counters)
    meta.update({f"opt_{k}": v for k, v in options.items()})
    return write_checkpoint(path, backend="lighttouch", problem=problem, digest=digest,
                            meta=meta, arrays=arrays)


def _read(path, s, problem, digest, options):
    meta, data = read_checkpoint(path, backend="lighttouch", problem=problem, digest=digest)
    for key, val in options.items():
        if meta.get(f"opt_{key}") != val:
            raise InvalidParameterError(
                f"checkpoint {path!r} was written with {key}={meta.get(f'opt_{key}')!r}; "
                f"resume with the same options")
    # every array checked against this problem (a kernel trusts them)
    bounds = {"perm": (0, s["perm"].shape[0]), "last": (0, None), "ct": (0, None)}
    for k in _STATE:
        dtype = np.int64 if k == "rng" else s[k].dtype
        low, high = bounds.get(k, (None, None))
        arr = state_array(path, data, k, dtype=dtype, shape=s[k].shape, low=low, high=high)
        s[k] = arr.view(np.uint64).copy() if k == "rng" else arr.copy()
    return dict(iteration=int(meta["iteration"]), seconds=float(meta["seconds"]),
                history=header_history(path, meta),
                penalty_now=header_field(path, meta, "penalty_now", "positive"),
                previous_violation=header_field(path, meta, "previous_violation",
                                                "real_or_none"))


# -------------------------------------------------------------------------- driver
def _positive_or_none(caller, **values):
    for name, val in values.items():
        if val is not None and (isinstance(val, bool) or not isinstance(val, (int, float))
                                or not np.isfinite(val) or not val > 0):
            raise bad_value(caller, name, val, "a float > 0 or None")


def _check_option_values(*, tol, gap_tol, max_iter, time_limit, threads, checkpoint_every,
                         check_every, polish, penalty, eta_w, eta_p, finish_at, penalty_growth,
                         group_size, steps, full_rounds, touch, finish, seed):
    """The checks of :func:`solve_lighttouch`'s options that need no problem."""
    caller = "solve_lighttouch"
    check_options(caller, tol=tol, gap_tol=gap_tol, max_iter=max_iter, time_limit=time_limit,
                  threads=threads, checkpoint_every=checkpoint_every, check_every=check_every,
                  polish=polish)
    _positive_or_none(caller, penalty=penalty, eta_w=eta_w, eta_p=eta_p, finish_at=finish_at)
    if isinstance(penalty_growth, bool) or not isinstance(penalty_growth, (int, float)) \
            or not np.isfinite(penalty_growth) or penalty_growth < 1:
        raise bad_value(caller, "penalty_growth", penalty_growth, "a float >= 1")
    if finish_at is None:
        raise bad_value(caller, "finish_at", finish_at, "a float > 0")
    for name, val in (("group_size", group_size), ("steps", steps),
                      ("full_rounds", full_rounds)):
        if val is not None and (not isinstance(val, (int, np.integer)) or isinstance(val, bool)
                                or val < 1):
            raise bad_value(caller, name, val, "an int >= 1 or None")
    check_choice(caller, "touch", touch, TOUCHES)
    check_choice(caller, "finish", finish, FINISHES)
    if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)
                             or seed < 0):
        raise bad_value(caller, "seed", seed, "an int >= 0 or None")


def solve_lighttouch(problem, *, tol=1e-6, gap_tol=1e-4, max_iter=100, time_limit=None,
                     seed=None, threads=None, max_memory=None, callback=None, verbose=False,
                     checkpoint=None, checkpoint_every=60.0, resume=None, penalty=None,
                     eta_w=None, eta_p=None, group_size=None, touch="light", steps=None,
                     check_every=5, finish="certify", finish_at=1e-2, polish="auto",
                     penalty_growth=2.0, full_rounds=5):
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
        objective terms), counted, not timed; a FullTouch round is then at least one
        iteration.
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
    _check_option_values(tol=tol, gap_tol=gap_tol, max_iter=max_iter, time_limit=time_limit,
                         threads=threads, checkpoint_every=checkpoint_every,
                         check_every=check_every, polish=polish, penalty=penalty, eta_w=eta_w,
                         eta_p=eta_p, finish_at=finish_at, penalty_growth=penalty_growth,
                         group_size=group_size, steps=steps, full_rounds=full_rounds,
                         touch=touch, finish=finish, seed=seed)
    if finish == "project" and (problem.structure != "dense" or problem.sum_value is not None):
        raise InvalidParameterError(
            "finish='project' projects onto the metric polytope: dense cc and mn problems "
            "only (no sum row, no edge lists)")
    if problem.structure == "sparse":
        raise UnsupportedProblemError(_SPARSE)
    import numba

    from . import _lighttouch_kernels as K

    check_memory(_memory(problem, group_size), what="the lighttouch iterate and group arrays",
                 max_memory=max_memory)
    inst = _Instance(problem, group_size)
    penalty, eta_w, eta_p, t0 = _defaults(inst, penalty, eta_w, eta_p)
    # a round: ``steps`` iterations, or by default ROUND_WORK of counted work
    max_steps, max_work = (int(steps), np.inf) if steps is not None else (2 ** 62, ROUND_WORK)
    kmax = int(min(MAX_BATCH, inst.ngroups))
    s = _state(inst, problem, seed)
    options = dict(penalty=penalty, eta_w=eta_w, eta_p=eta_p, group_size=inst.gsz,
                   touch=touch, steps=None if steps is None else int(steps),
                   seed=0 if seed is None else int(seed),
                   penalty_growth=float(penalty_growth), check_every=int(check_every),
                   full_rounds=int(full_rounds) if touch == "mid" else None)
    counters = dict(kind=problem.kind, n=problem.n, iteration=0, seconds=0.0,
                    penalty_now=penalty, previous_violation=None)
    digest = problem_digest(problem) if (checkpoint or resume) is not None else None
    if resume is not None:
        counters.update(_read(resume, s, problem, digest, options))
    want = numba.get_num_threads() if threads is None else min(
        int(threads), numba.config.NUMBA_NUM_THREADS)
    work_arrays = dict(gbuf=np.zeros(inst.nvar), hbuf=np.zeros(inst.nvar),
                       mark=np.zeros(inst.nvar, dtype=np.uint8),
                       touched=np.empty(2 * inst.vsz + 3 * max(kmax, 2) + 8, dtype=np.int64),
                       sel=np.empty(kmax + 1))
    loop = IterationLoop(
        "rounds", counters, max_iter=max_iter, time_limit=time_limit, callback=callback,
        threads=want, checkpoint_every=checkpoint_every,
        save=None if checkpoint is None else
        (lambda: _write(checkpoint, s, counters, options, problem, digest)))
    ck = K.CT
    avg_viol = np.inf
    reached = False
    with loop:
        while loop.next():
            it = loop.it
            with loop.iteration():
                if touch == "mid" and it == full_rounds + 1:
                    _second_phase(inst, s)
                full = touch == "full" or (touch == "mid" and it <= full_rounds)
                pen = counters["penalty_now"]
                K.lt_steps(s["y"], s["acc"], s["last"], s["logp"], s["cdf"], s["mu"],
                           s["perm"], s["st"], s["ct"], s["rng"], work_arrays["gbuf"],
                           work_arrays["hbuf"], work_arrays["mark"], work_arrays["touched"],
                           work_arrays["sel"], inst.structure, inst.n, inst.base, inst.prow,
                           inst.pcol, inst.tri, inst.wed, inst.gsz, inst.nmem, inst.ngroups,
                           inst.vsz, inst.objective, inst.coef, inst.target, inst.wts,
                           inst.lo, inst.hi, inst.has_sum, pen, eta_w, eta_p * penalty / pen, t0,
                           inst.strong, full, kmax, VARIANCE_DECAY, float(inst.vsz),
                           inst.cost_g, max_steps, max_work)
                if not np.all(np.isfinite(s["y"])):
                    loop.stop(Status.NUMERICAL, "non-finite iterate")
                    break
                full_check = it % check_every == 0
                x_avg = _average(inst, s)
                if full_check:
                    viol = float(problem.max_violation(x_avg))
                    avg_viol = viol
                else:
                    viol = float(s["mu"].max(initial=0.0))  # cached, of recent iterates
                pmax, ent = _p_summary(s["logp"])
                ct = s["ct"]
                loop.record(dict(
                    iteration=it, seconds=loop.elapsed(),
                    primal=float(problem.objective_value(x_avg)), gap=np.nan,
                    max_violation=viol, full_check=bool(full_check),
                    active_constraints=int(np.count_nonzero(s["mu"] > 0.0)),
                    constraints_checked=int(ct[ck["checks"]]), k_f=int(ct[ck["kf"]]),
                    k_g=int(ct[ck["kg"]]), k_p=int(ct[ck["kp"]]), p_max=pmax,
                    p_entropy=ent, steps=int(ct[ck["t"]]), penalty=pen))
                prev = counters["previous_violation"]
                if full_check and viol > finish_at and prev is not None \
                        and viol > STALL_RATIO * prev and penalty_growth > 1:
                    counters["penalty_now"] = pen * penalty_growth
                    _restart_average(s)
                    viol = None  # the next average starts afresh
                if full_check:
                    counters["previous_violation"] = viol
                if full_check and viol is not None and viol <= finish_at:
                    reached = True
                    loop.stop(Status.LIMIT, f"the average violates nothing by more than "
                                            f"finish_at = {finish_at:g} after {it} rounds")
                    break
                if loop.out_of_time():
                    break
                loop.checkpoint_if_due()
    status, message, history, it = loop.status, loop.message, loop.history, loop.it
    x_avg = _average(inst, s)
    if not (history and history[-1]["full_check"] and counters["previous_violation"] is not None):
        avg_viol = float(problem.max_violation(x_avg))
    avg_value = float(problem.objective_value(x_avg))
    lp_stage = LPStage(problem, tol=tol, gap_tol=gap_tol, polish=polish, threads=want,
                       max_memory=max_memory)
    out = dict(constraints_checked=int(s["ct"][ck["checks"]]), average_violation=avg_viol,
               average_value=avg_value, penalty=counters["penalty_now"], eta_w=eta_w, eta_p=eta_p,
               group_size=inst.gsz, groups=inst.ngroups, steps=int(s["ct"][ck["t"]]),
               finish_stage=[])
    x, viol = x_avg, avg_viol
    stopped_by_clock = status == Status.LIMIT and not reached and it < max_iter
    if finish != "none" and status not in (Status.INTERRUPTED, Status.NUMERICAL) \
            and not stopped_by_clock:
        t_fin = loop.elapsed()
        if finish == "certify":
            fin = _finish(problem, inst, x_avg, lp_stage, penalty=counters["penalty_now"],
                          tol=tol, gap_tol=gap_tol, deadline=loop.deadline, threads=want,
                          max_memory=max_memory, polish=polish)
        else:
            fin = _project(problem, x_avg, tol=tol, gap_tol=gap_tol, deadline=loop.deadline,
                           threads=want, max_memory=max_memory)
        out["finish_stage"] = fin["finish_stage"]
        if "finish_passes" in fin:
            out["finish_passes"] = fin["finish_passes"]
        if fin["x"] is not None:
            x = fin["x"]
            viol = float(problem.max_violation(x))
        status, message = fin["status"], f"{message}; {fin['message']}"
        history.append(dict(iteration=it + 1, seconds=loop.elapsed(),
                            primal=float(problem.objective_value(x)),
                            gap=lp_stage.gap(problem.objective_value(x)), max_violation=viol,
                            full_check=True, finish_seconds=loop.elapsed() - t_fin))
    elif finish == "none" and status == Status.LIMIT:
        message += " (finish='none': the raw average, not certified)"
    fun = float(problem.objective_value(x))
    gap = lp_stage.gap(fun)
    if status == Status.OPTIMAL and not (viol <= tol and gap <= gap_tol):
        status = Status.NUMERICAL
        message += f" (not optimal: violation {viol:.3g}, certified LP gap {gap:.3g})"
    lb = lp_stage.best_bound
    out.update(x=x, fun=fun, status=status, message=message, nit=it, max_violation=viol,
               history=history, lower_bound=lb, bound_details=lp_stage.best_details,
               gap=gap, polish=lp_stage.polishes, elapsed=loop.elapsed(),
               lp_approx_ratio=(fun / lb) if (lb is not None and lb > 0) else None)
    out.update(lp_stage.summary())
    if status not in (Status.OPTIMAL, Status.INTERRUPTED):
        warnings.warn(f"lighttouch: {out['message']}", ConvergenceWarning, stacklevel=3)
    return out


class LightTouchSolver(Solver):
    """LightTouch stochastic constraint sampling (LT Alg. 2-4) with a finishing stage."""

    name = "lighttouch"
    description = ("LightTouch: sampled constraint groups and penalised SGD, then the LP "
                   "polish or dykstra (dense and edge-list problems)")
    REQUIRED_MODULES = ("numba",)
    structures = ("dense", "edges")
    objectives = ("linear", "l1", "l2")
    check_values = staticmethod(_check_option_values)

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
        from . import get_solver

        own = _memory(problem, None)
        fin = get_solver("dykstra").estimate_memory(problem) or 0
        return int(max(own, fin))

    def warm_up_options(self, problem, options):
        """The same sampling and finishing options, a few rounds."""
        opts = dict(options)
        opts.pop("steps", None)
        opts["steps"] = 8
        return opts

    def run(self, problem, *, tol=1e-6, gap_tol=1e-4, max_iter=100, time_limit=None,
            seed=None, threads=None, max_memory=None, callback=None, verbose=False,
            checkpoint=None, checkpoint_every=60.0, resume=None, penalty=None, eta_w=None,
            eta_p=None, group_size=None, touch="light", steps=None, check_every=5,
            finish="certify", finish_at=1e-2, polish="auto", penalty_growth=2.0,
            full_rounds=5):
        """Solve ``problem``; see :func:`solve_lighttouch` for the options."""
        return solve_lighttouch(
            problem, tol=tol, gap_tol=gap_tol, max_iter=max_iter, time_limit=time_limit,
            seed=seed, threads=threads, max_memory=max_memory, callback=callback,
            verbose=verbose, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
            resume=resume, penalty=penalty, eta_w=eta_w, eta_p=eta_p,
            group_size=group_size, touch=touch, steps=steps, check_every=check_every,
            finish=finish, finish_at=finish_at, polish=polish, penalty_growth=penalty_growth,
            full_rounds=full_rounds)

    def cite(self):
        """Reference of the method."""
        return ("Cotter, Gupta & Pfeifer (2016), A Light Touch for Heavily Constrained SGD, "
                "COLT 2016, PMLR 49")
