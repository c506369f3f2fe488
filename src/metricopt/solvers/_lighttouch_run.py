"""LightTouch as a strategy of the iterative driver (:mod:`.core.driver`).

One iteration is one round of stochastic steps (:func:`._lighttouch_kernels.lt_steps`);
the rounds have no LP stage: the run's answer is the average of the iterates, and the
finishing stage after the loop (:func:`finish`: the LP polish of :mod:`.core.stage`, then
dykstra; or the Euclidean projection) makes it an answer of the same contract as every
backend. This module holds the problem in the kernels' terms (:class:`Instance`), the
state of the stochastic phase, the finishing stage, the checkpoint and the strategy.
"""

import dataclasses
import math
import time
import warnings

import numpy as np

from .._memory import check_memory
from ..exceptions import ConvergenceWarning, InvalidParameterError, UnsupportedProblemError
from ..result import Status
from ._checkpoint import (
    header_field,
    header_history,
    problem_digest,
    read_checkpoint,
    state_array,
    write_checkpoint,
)
from .core.driver import Answer, Measure, Strategy, iterate
from .core.stage import LPStage

__all__ = ["LightTouchStrategy", "drive", "TOUCHES", "FINISHES"]

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
#: ... but never more than this many passes' worth of work (a pass: every constraint
#: checked and every objective term touched once, :func:`round_work`), so that a round of
#: a tiny problem is not millions of steps: a 2-node ``mn`` took 7 s for 3 rounds. Dense
#: problems from about 30 nodes on are unchanged; ``cd``'s edge rows are few (karate 7.3
#: -> 0.5 s, lesmis 7.5 -> 4.9 s, the same LP; ``benchmarks/README.md``).
ROUND_PASSES = 1000


def round_work(inst):
    """Work of one round: :data:`ROUND_WORK`, or :data:`ROUND_PASSES` passes if less."""
    one_pass = inst.total_checks + 2 * inst.nvar + inst.ngroups
    return float(min(ROUND_WORK, ROUND_PASSES * max(one_pass, 1)))


#: The polish starts from inequalities whose value at the average is at least this
#: fraction of the variables' scale below tight.
ACTIVE_SLACK = 0.05
#: Dense problems without a sum row (``cc``, ``mn`` with p = 1) finish with ``dykstra``,
#: not with the polish from the average's active inequalities: the average lies far
#: inside the polytope (Jaccard cc, its value over the LP's: lesmis 1.15, football 1.54,
#: jazz 8.6, celegansneural 2.8) and its rows leave the separation to rebuild the active
#: set round by round (jazz: 3 rows for 19,503 pairs, 14 rounds, 175 s; USAir97: 109,892
#: rows, not in 600 s), where ``dykstra`` with its own polish takes 7 and 60 s.
#: ``cd`` (edge rows) keeps the polish from the average.
POLISH_DENSE_AVERAGE = False

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


@dataclasses.dataclass(eq=False)
class LightTouchState:
    """The stochastic phase's state (the kernels' arrays, :mod:`._lighttouch_kernels`).

    Attributes
    ----------
    y : ndarray
        The iterate (up to the lazy shift ``st[ST["shift"]]``).
    acc, last : ndarray
        The running sum of the iterates and the step each entry was last added at.
    logp, cdf : ndarray
        The groups' log-weights and the cumulative weights of the sampling.
    mu : ndarray
        The cached group violations.
    perm : ndarray
        The groups' order for the checks.
    st, ct : ndarray
        The kernel's float and int scalars (``ST``, ``CT``).
    rng : ndarray
        The generator's state.
    """

    y: np.ndarray
    acc: np.ndarray
    last: np.ndarray
    logp: np.ndarray
    cdf: np.ndarray
    mu: np.ndarray
    perm: np.ndarray
    st: np.ndarray
    ct: np.ndarray
    rng: np.ndarray


def _state(inst, problem, seed):
    """Fresh state of the stochastic phase (cached violations of the start included)."""
    from . import _lighttouch_kernels as K

    y = inst.start(problem)
    g = np.empty(inst.ngroups)
    K.group_violations(y, 0.0, inst.structure, inst.n, inst.base, inst.prow, inst.pcol,
                       inst.tri, inst.wed, inst.gsz, inst.nmem, inst.ngroups, g)
    ss = np.random.SeedSequence(0 if seed is None else int(seed))
    return LightTouchState(
        y=y, acc=np.zeros(inst.nvar), last=np.zeros(inst.nvar, dtype=np.int64),
        logp=np.zeros(inst.ngroups), cdf=np.arange(1, inst.ngroups + 1, dtype=np.float64),
        mu=np.maximum(g, 0.0), perm=np.arange(inst.ngroups, dtype=np.int64),
        st=np.zeros(len(K.ST)), ct=np.zeros(len(K.CT), dtype=np.int64),
        rng=ss.generate_state(4, dtype=np.uint64))


_STATE = ("y", "acc", "last", "logp", "cdf", "mu", "perm", "st", "ct", "rng")


def _average(inst, s):
    from . import _lighttouch_kernels as K

    t, t0 = int(s.ct[K.CT["t"]]), int(s.ct[K.CT["t_start"]])
    if t == t0:
        return s.y + s.st[K.ST["shift"]]
    out = np.empty(inst.nvar)
    K.average(s.y, s.acc, s.last, t, t0, s.st[K.ST["shift_acc"]], out)
    return out


def _restart_average(s):
    """Average the iterates from now on (after a change of the penalty)."""
    from . import _lighttouch_kernels as K

    t = int(s.ct[K.CT["t"]])
    s.acc[:] = 0.0
    s.last[:] = t
    s.st[K.ST["shift_acc"]] = 0.0
    s.ct[K.CT["t_start"]] = t


def _second_phase(inst, s):
    """MidTouch's switch (LT Alg. 3 lines 7-9): the iterate becomes the first phase's
    average, ``p`` uniform, ``mu`` the group violations there; a new average starts."""
    from . import _lighttouch_kernels as K

    x = _average(inst, s)
    s.y[:] = x
    s.st[K.ST["shift"]] = 0.0
    _restart_average(s)
    s.logp[:] = 0.0
    s.cdf[:] = np.arange(1, inst.ngroups + 1, dtype=np.float64)
    g = np.empty(inst.ngroups)
    K.group_violations(s.y, 0.0, inst.structure, inst.n, inst.base, inst.prow, inst.pcol,
                       inst.tri, inst.wed, inst.gsz, inst.nmem, inst.ngroups, g)
    s.mu[:] = np.maximum(g, 0.0)


def _p_summary(logp):
    """``max p`` and the entropy of ``p`` (nats) from the log-weights."""
    w = np.exp(logp - logp.max())
    p = w / w.sum()
    nz = p[p > 0]
    return float(p.max()), float(-np.sum(nz * np.log(nz)))


# ------------------------------------------------------------------ finishing stage
def _active_rows(problem, inst, x):
    """The inequalities most active at ``x`` (:class:`.core.polish.ActiveRows`), as many
    as the polish keeps (:func:`.core.polish.polish_rows`)."""
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
        # sparsest cut's polish solves its path rows, whatever the average is
        far = inst.dense and problem.sum_value is None and not POLISH_DENSE_AVERAGE
        if far:
            lp_stage.polishes.append(dict(
                skipped="the average of a dense problem is too far from the LP's active "
                        "set to start the polish from: dykstra finishes",
                gamma=penalty))
        else:
            out["finish_stage"].append("polish")
        if not far and lp_stage.try_polish(lambda: _active_rows(problem, inst, x_avg),
                                           deadline, penalty):
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
    from ._base import Solver

    out["finish_stage"].append("dykstra")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = Solver.other("dykstra").run(problem, tol=tol, gap_tol=gap_tol,
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
    from ._base import Solver

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
        res = Solver.other("dykstra").run(proj, tol=tol, gap_tol=gap_tol,
                                        time_limit=None if left is None else round(left, 3),
                                        threads=threads, max_memory=max_memory)
    return dict(x=res["x"], status=Status.LIMIT, finish_stage=["projection"],
                finish_passes=int(res.get("nit", 0)),
                message=f"the Euclidean projection of the average (dykstra: "
                        f"{Status.NAMES.get(res['status'], res['status'])}), not certified")


# ---------------------------------------------------------------- checkpoint / resume
def _write(path, s, counters, options, problem, digest):
    arrays = {k: getattr(s, k) for k in _STATE if k != "rng"}
    arrays["rng"] = s.rng.view(np.int64)
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
    bounds = {"perm": (0, s.perm.shape[0]), "last": (0, None), "ct": (0, None)}
    for k in _STATE:
        like = getattr(s, k)
        dtype = np.int64 if k == "rng" else like.dtype
        low, high = bounds.get(k, (None, None))
        arr = state_array(path, data, k, dtype=dtype, shape=like.shape, low=low, high=high)
        setattr(s, k, arr.view(np.uint64).copy() if k == "rng" else arr.copy())
    return dict(iteration=int(meta["iteration"]), seconds=float(meta["seconds"]),
                history=header_history(path, meta),
                penalty_now=header_field(path, meta, "penalty_now", "positive"),
                previous_violation=header_field(path, meta, "previous_violation",
                                                "real_or_none"))


# ------------------------------------------------------------------- the strategy
class LightTouchStrategy(Strategy):
    """The rounds of one lighttouch run (see :func:`.lighttouch.solve_lighttouch`)."""

    name = "lighttouch"
    unit = "rounds"
    stages = False  # the average is finished after the loop

    def __init__(self, problem, inst, s, *, counters, options, work_arrays, touch,
                 full_rounds, check_every, finish_at, penalty, penalty_growth, eta_w, eta_p,
                 t0, kmax, max_steps, max_work, checkpoint, digest):
        self.problem, self.inst, self.s = problem, inst, s
        self.counters, self.options, self.work = counters, options, work_arrays
        self.touch, self.full_rounds, self.check_every = touch, full_rounds, check_every
        self.finish_at, self.penalty, self.penalty_growth = finish_at, penalty, penalty_growth
        self.eta_w, self.eta_p, self.t0, self.kmax = eta_w, eta_p, t0, kmax
        self.max_steps, self.max_work = max_steps, max_work
        self.checkpoint, self.digest = checkpoint, digest
        self.avg_viol = np.inf
        self.reached = False  # the average reached finish_at

    def measure(self, loop):
        from . import _lighttouch_kernels as K

        inst, s, it, w = self.inst, self.s, loop.it, self.work
        if self.touch == "mid" and it == self.full_rounds + 1:
            _second_phase(inst, s)
        full = self.touch == "full" or (self.touch == "mid" and it <= self.full_rounds)
        self.pen = pen = self.counters["penalty_now"]
        K.lt_steps(s.y, s.acc, s.last, s.logp, s.cdf, s.mu, s.perm,
                   s.st, s.ct, s.rng, w["gbuf"], w["hbuf"], w["mark"], w["touched"],
                   w["sel"], inst.structure, inst.n, inst.base, inst.prow, inst.pcol, inst.tri,
                   inst.wed, inst.gsz, inst.nmem, inst.ngroups, inst.vsz, inst.objective,
                   inst.coef, inst.target, inst.wts, inst.lo, inst.hi, inst.has_sum, pen,
                   self.eta_w, self.eta_p * self.penalty / pen, self.t0, inst.strong, full,
                   self.kmax, VARIANCE_DECAY, float(inst.vsz), inst.cost_g, self.max_steps,
                   self.max_work)
        if not np.all(np.isfinite(s.y)):
            return Measure(numerical="non-finite iterate")
        full_check = it % self.check_every == 0
        x_avg = _average(inst, s)
        if full_check:
            viol = float(self.problem.max_violation(x_avg))
            self.avg_viol = viol
        else:
            viol = float(s.mu.max(initial=0.0))  # cached, of recent iterates
        return Measure(primal=float(self.problem.objective_value(x_avg)), violation=viol,
                       full=full_check)

    def record(self, m, outcome, loop):
        from . import _lighttouch_kernels as K

        s, ck = self.s, K.CT
        pmax, ent = _p_summary(s.logp)
        ct = s.ct
        return dict(
            iteration=loop.it, seconds=loop.elapsed(), primal=m.primal, gap=np.nan,
            max_violation=m.violation, full_check=bool(m.full),
            active_constraints=int(np.count_nonzero(s.mu > 0.0)),
            constraints_checked=int(ct[ck["checks"]]), k_f=int(ct[ck["kf"]]),
            k_g=int(ct[ck["kg"]]), k_p=int(ct[ck["kp"]]), p_max=pmax, p_entropy=ent,
            steps=int(ct[ck["t"]]), penalty=self.pen)

    def after(self, m, outcome, loop):
        viol, counters = m.violation, self.counters
        prev = counters["previous_violation"]
        if m.full and viol > self.finish_at and prev is not None \
                and viol > STALL_RATIO * prev and self.penalty_growth > 1:
            counters["penalty_now"] = self.pen * self.penalty_growth
            _restart_average(self.s)
            viol = None  # the next average starts afresh
        if m.full:
            counters["previous_violation"] = viol
        if m.full and viol is not None and viol <= self.finish_at:
            self.reached = True
            return Status.LIMIT, (f"the average violates nothing by more than "
                                  f"finish_at = {self.finish_at:g} after {loop.it} rounds")
        return None

    def save(self):
        _write(self.checkpoint, self.s, self.counters, self.options, self.problem,
               self.digest)

    def answer(self, status, loop, lp_stage, final):
        from . import _lighttouch_kernels as K

        s, ck = self.s, K.CT
        x_avg = _average(self.inst, s)
        history = loop.history
        if not (history and history[-1]["full_check"]
                and self.counters["previous_violation"] is not None):
            self.avg_viol = float(self.problem.max_violation(x_avg))
        fields = dict(constraints_checked=int(s.ct[ck["checks"]]),
                      average_violation=self.avg_viol,
                      average_value=float(self.problem.objective_value(x_avg)),
                      penalty=self.counters["penalty_now"], eta_w=self.eta_w,
                      eta_p=self.eta_p, group_size=self.inst.gsz, groups=self.inst.ngroups,
                      steps=int(s.ct[ck["t"]]), finish_stage=[])
        return self._finish(status, loop, lp_stage, x_avg, fields)

    def _finish(self, status, loop, lp_stage, x_avg, fields):
        """The finishing stage after the rounds (module docstring of :mod:`.lighttouch`):
        the polish, then dykstra, or the projection; its status and message end the
        run, and its point gets one more record."""
        o, problem = self.finishing, self.problem
        message, history, it = loop.message, loop.history, loop.it
        x, viol = x_avg, self.avg_viol
        stopped_by_clock = status == Status.LIMIT and not self.reached and it < o["max_iter"]
        if o["finish"] != "none" and status not in (Status.INTERRUPTED, Status.NUMERICAL) \
                and not stopped_by_clock:
            t_fin = loop.elapsed()
            if o["finish"] == "certify":
                fin = _finish(problem, self.inst, x_avg, lp_stage,
                              penalty=self.counters["penalty_now"], tol=o["tol"],
                              gap_tol=o["gap_tol"], deadline=loop.deadline,
                              threads=o["threads"], max_memory=o["max_memory"],
                              polish=o["polish"])
            else:
                fin = _project(problem, x_avg, tol=o["tol"], gap_tol=o["gap_tol"],
                               deadline=loop.deadline, threads=o["threads"],
                               max_memory=o["max_memory"])
            fields["finish_stage"] = fin["finish_stage"]
            if "finish_passes" in fin:
                fields["finish_passes"] = fin["finish_passes"]
            if fin["x"] is not None:
                x = fin["x"]
                viol = float(problem.max_violation(x))
            status, message = fin["status"], f"{message}; {fin['message']}"
            value = problem.objective_value(x)
            history.append(dict(iteration=it + 1, seconds=loop.elapsed(),
                                primal=float(value), gap=lp_stage.gap(value),
                                max_violation=viol, full_check=True,
                                finish_seconds=loop.elapsed() - t_fin))
        elif o["finish"] == "none" and status == Status.LIMIT:
            message += " (finish='none': the raw average, not certified)"
        return Answer(x=x, violation=viol, fields=fields, status=status, message=message)


# ------------------------------------------------------------------------- the run
def drive(problem, *, tol, gap_tol, max_iter, time_limit, seed, threads, max_memory,
          callback, verbose, checkpoint, checkpoint_every, resume, penalty, eta_w, eta_p,
          group_size, touch, steps, check_every, finish, finish_at, polish, penalty_growth,
          full_rounds):
    """Set up and run a lighttouch solve (the options of
    :func:`.lighttouch.solve_lighttouch`, checked): the rounds, then the finishing stage;
    the raw answer for :func:`.core.result.complete`."""
    if finish == "project" and (problem.structure != "dense" or problem.sum_value is not None):
        raise InvalidParameterError(
            "finish='project' projects onto the metric polytope: dense cc and mn problems "
            "only (no sum row, no edge lists)")
    if problem.structure == "sparse":
        raise UnsupportedProblemError(_SPARSE)
    import numba

    check_memory(_memory(problem, group_size), what="the lighttouch iterate and group arrays",
                 max_memory=max_memory)
    inst = _Instance(problem, group_size)
    penalty, eta_w, eta_p, t0 = _defaults(inst, penalty, eta_w, eta_p)
    # a round: ``steps`` iterations, or by default round_work(inst) of counted work
    max_steps, max_work = ((int(steps), np.inf) if steps is not None
                           else (2 ** 62, round_work(inst)))
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
    strategy = LightTouchStrategy(
        problem, inst, s, counters=counters, options=options, work_arrays=work_arrays,
        touch=touch, full_rounds=full_rounds, check_every=check_every, finish_at=finish_at,
        penalty=penalty, penalty_growth=penalty_growth, eta_w=eta_w, eta_p=eta_p, t0=t0,
        kmax=kmax, max_steps=max_steps, max_work=max_work, checkpoint=checkpoint,
        digest=digest)
    lp_stage = LPStage(problem, tol=tol, gap_tol=gap_tol, polish=polish, threads=want,
                       max_memory=max_memory)
    strategy.finishing = dict(finish=finish, tol=tol, gap_tol=gap_tol, threads=want,
                              max_memory=max_memory, polish=polish, max_iter=max_iter)
    return iterate(strategy, problem, lp_stage, counters, tol=tol, gap_tol=gap_tol,
                   max_iter=max_iter, time_limit=time_limit, callback=callback, threads=want,
                   checkpoint=checkpoint, checkpoint_every=checkpoint_every)
