"""Active-set polish: the LP restricted to the constraints a projection method found.

A projection method (``dykstra``, ``project-forget``) solving the regularised QP of a
metric LP learns which constraints matter long before its iterate is an LP solution:
the rows with a positive dual. Handing exactly those rows to an exact LP solver (HiGHS)
gives the optimum of a relaxation of the LP; if that point violates no other
constraint it is an LP optimum, otherwise the violated rows are separated and added
(the lazy method of V §8.1.1, started from the projection method's active set rather
than from nothing). Its LP dual, certified by :func:`metricopt.bounds.lp_dual_bound`,
is the tight lower bound the QP dual cannot give (the QP's Lagrangian bound lags by
``O(1/gamma)``).

Measured on Jaccard correlation clustering (2 threads), the polish started after 30
dykstra passes at ``gamma = 1`` from the strongest 5,875 (lesmis) and 12,601 (football)
active rows reaches the LP optimum in 4 rounds and 0.12 s, against 5 s and 20 s for
HiGHS's simplex method on the full LP and 1.8 s and 14 s for its PDLP
(``benchmarks/README.md``).

The restricted LP is a :class:`~.exact_lp.RestrictedModel` (for dense l1 problems, columns
only for the pairs its rows touch), separated by :class:`~.separation.Separator`.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355, §8.1.1.
"""

import time

import numpy as np

from ...result import Status
from .exact_lp import RestrictedModel, model_bytes
from .separation import Separator

__all__ = ["ActiveRows", "polish", "polish_paths", "polish_rows", "shift_to_feasible"]

#: The polish starts from at most this many of the strongest active rows per column of
#: the restricted LP (a basic optimum has at most one row with a nonzero dual per
#: column), and at least :data:`MIN_ROWS`. Jaccard cc on jazz (18k columns, 382k
#: positive QP duals): all rows 7-24 s of HiGHS; the strongest 50k, 0.55 s, 3 rounds;
#: lesmis: the strongest 20k rows 0.45 s, 5k rows 0.14 s (4 rounds either way).
ROWS_PER_COLUMN = 2.0
#: The same for the support-sized layout, whose restricted LPs stay with the simplex
#: method (:data:`SUPPORT_SIMPLEX_ITERATIONS_PER_ROW`): round 1 takes about as many
#: iterations from half the rows, each of them cheaper. Jaccard cc, the rows of gamma
#: 10, the polish alone (``benchmarks/README.md``, "The support-sized layout's polish
#: starts from one row per column"): ca-GrQc 0.5 / 0.75 / 1 / 1.25 / 1.5 / 2 rows per
#: column 628 / 116 / 82 / 103 / 122 / 194 s (round 1 from 170,622 rows: 62k
#: iterations, 19 s; from 341,244: 66k iterations, 74-112 s); power 5.5 s against
#: 5.7 s. The dense layout keeps 2: celegansneural 338 s at 1 against 226 s, USAir97
#: 105 s against 89 s (its smaller simplex budget sends the smaller LPs to the
#: interior-point method).
SUPPORT_ROWS_PER_COLUMN = 1.0
MIN_ROWS = 5_000
#: Never more than this many starting rows (HiGHS's memory and time grow with them).
MAX_ROWS = 400_000
#: Separation rounds before the polish gives up (the caller then goes on iterating).
MAX_ROUNDS = 30
#: Dual simplex iterations per row (at least :data:`MIN_SIMPLEX_ITERATIONS`) before the
#: polish switches to HiGHS's interior-point method without crossover for the rest of its
#: rounds. The simplex method warm-starts between rounds and is exact, but degenerate
#: restricted LPs stall it; the interior-point method starts over every round but its
#: time per round grows slowly. Jaccard cc from project-forget's rows at gamma = 1
#: (tol 1e-3), to the LP optimum: jazz (36k rows) simplex only, 0.5 s; USAir97 (77k)
#: 29.9 s (switching to PDLP instead: 11.2 s; the simplex method alone: 171 s); power
#: (57k) 30.2 s (PDLP: about 300 s); ca-GrQc (176k) 290 s (PDLP: 474 s; the simplex
#: method alone: not done in 400 s). PDLP's time varies too much across the family.
#: Iteration counts, not seconds, decide, so the same run gives the same answer.
SIMPLEX_ITERATIONS_PER_ROW = 0.25
#: The same for the support-sized layout, whose restricted LPs keep columns only for the
#: pairs their rows touch. Its simplex iterations stay cheap where the dense layout's do
#: not: Jaccard cc, the rows of gamma 10, ca-HepTh (400k rows, 356k columns) needs 158k
#: iterations (0.40 per row) for round 1, then 1.5k-5.8k warm-started iterations (10-52 s)
#: per round, against 98-115 s per interior-point round from scratch (the polish 709 ->
#: about 320 s); ca-GrQc fits either budget. The dense layout's iterations cost 4-10 ms on
#: Harvard500 (195k rows, 125k columns: 56k iterations, 224 s, for round 1 and 23k, 226 s,
#: for round 2, against 41-48 s per interior-point round), so it keeps the smaller budget.
SUPPORT_SIMPLEX_ITERATIONS_PER_ROW = 1.0
MIN_SIMPLEX_ITERATIONS = 5_000
#: ... and never more than this many for the dense layout: on its large restricted LPs
#: each iteration costs milliseconds, so a budget of 0.25 per row is minutes spent before
#: the switch. Jaccard cc, the rows of the first polish, HiGHS's interior-point method
#: from the start against the budget of 0.25 per row (``benchmarks/README.md``, "The dense
#: polish's simplex budget"): celegans_metabolic round 1 (189k rows) 89 s against 253 s;
#: USAir97 61 s against 71 s for the polish; celegansneural 209 s against 216 s (but from
#: project-forget's USAir97 rows the uncapped budget was faster, 70 s against 83 s: the
#: later rounds differ by round 1's point). Smaller LPs (jazz: 36k rows, 9k iterations at
#: most) keep their budget.
DENSE_MAX_SIMPLEX_ITERATIONS = 10_000
#: The dense metric closure (O(n^3) time, :func:`.._repair.repair_dense`) is tried on a
#: round's optimum up to this many nodes: 1.1 s at 2,000 nodes on 2 cores, about 9 s at
#: 4,000, next to restricted LPs of millions of columns.
CLOSURE_MAX_NODES = 4_000


class ActiveRows:
    """Constraints a projection method keeps active, as LP rows in problem variables.

    Parameters
    ----------
    triangles : ndarray of shape (k, 3), optional
        Packed pair (or variable) indices ``(a, b, c)`` of ``x_a <= x_b + x_c``.
    cycles : tuple (offsets, members), optional
        Flat cycles, the long edge first (``x_e <= sum of the rest``).
    family : ndarray, optional
        Ids of an edge problem's triangle and wedge family
        (:func:`metricopt.solvers.core.lp_matrix.edge_family_rows`).
    wedges : ndarray of shape (k, 2), optional
        Covering rows ``x_a + x_b >= 1`` (cluster deletion's open wedges).
    duals : dict, optional
        The projection method's dual of each row, per form (same keys), used by
        :meth:`strongest` to keep the rows that matter most.
    space : object, optional
        The variables' numbering when it is a backend's own (the support-sized layout's
        run pairs): ``space.columns()`` makes the restricted LP's columns and
        ``space.separator(tol)`` its separator, in place of :class:`~.exact_lp._Columns`
        and :class:`~.separation.Separator`.
    """

    _FORMS = ("triangles", "cycles", "family", "wedges")

    def __init__(self, triangles=None, cycles=None, family=None, wedges=None, duals=None,
                 space=None):
        self.triangles = triangles
        self.cycles = cycles
        self.family = family
        self.wedges = wedges
        self.duals = duals or {}
        self.space = space

    def _count(self, form):
        data = getattr(self, form)
        if data is None:
            return 0
        return int(data[0].shape[0] - 1) if form == "cycles" else int(len(data))

    @property
    def n_rows(self):
        return sum(self._count(form) for form in self._FORMS)

    def strongest(self, k):
        """The ``k`` rows with the largest duals (all when there are at most ``k``, or
        when the duals are unknown).

        A basic optimal solution of an LP has at most as many rows with a nonzero dual
        as columns, while the QP's duals spread over many more rows (most of them
        tiny: Jaccard cc on jazz, 382k positive duals, median 5e-4 of a largest 0.44):
        its strongest rows are the LP's likely active set, and separation adds any row
        that was missed.
        """
        if self.n_rows <= k or not self.duals:
            return self
        values = np.concatenate([np.asarray(self.duals[f], dtype=np.float64)
                                 for f in self._FORMS if self._count(f)])
        cut = np.partition(values, values.size - k)[values.size - k]
        kept = {}
        for form in self._FORMS:
            if not self._count(form):
                continue
            keep = np.flatnonzero(np.asarray(self.duals[form]) >= cut)
            data = getattr(self, form)
            if form == "cycles":
                off, members = data
                lengths = np.diff(off)[keep]
                new_off = np.r_[0, np.cumsum(lengths)].astype(np.int64)
                pos = np.repeat(off[keep] - new_off[:-1], lengths) + np.arange(new_off[-1])
                kept[form] = (new_off, members[pos])
            else:
                kept[form] = data[keep]
        return ActiveRows(**kept, space=self.space)

    def blocks(self, problem):
        """The rows as :class:`~metricopt.solvers.core.lp_matrix.RowBlock` objects."""
        from . import lp_matrix as lpm

        out = []
        if self._count("triangles"):
            out.append(lpm.triangle_rows(self.triangles))
        if self._count("cycles"):
            out.append(lpm.cycle_rows(*self.cycles))
        if self._count("family"):
            out.extend(lpm.edge_family_rows(problem, self.family))
        if self._count("wedges"):
            out.append(lpm._uniform_block(np.asarray(self.wedges, dtype=np.int64),
                                          (1.0, 1.0), 1.0, np.inf))
        return out


def distinct_count(ids):
    """How many distinct values the integers ``ids`` hold: by a mask where they are
    non-negative and no larger than a few times their number (pair ids: polblogs' 2 million
    active rows in 0.03 s against 0.5 s for ``np.unique``), else by sorting."""
    ids = np.asarray(ids).ravel()
    if ids.size == 0:
        return 0
    top = int(ids.max())
    if top >= 4 * ids.size + 4096 or int(ids.min()) < 0:
        return int(np.unique(ids).size)
    seen = np.zeros(top + 1, dtype=bool)
    seen[ids] = True
    return int(np.count_nonzero(seen))


def restricted_columns(problem, rows):
    """The number of columns of the LP restricted to ``rows`` (:class:`ActiveRows`): the
    pairs its triangle rows touch (l1 problems of the dense and support-sized layouts),
    else every variable."""
    tri = rows.triangles
    if problem.structure in ("dense", "support") and problem.objective == "l1" \
            and tri is not None:
        return distinct_count(tri)
    return int(problem.n_variables)


def polish_rows(problem, active, max_memory=None):
    """The rows to start the polish from, or None when it is not worth trying.

    The strongest ``ROWS_PER_COLUMN`` rows per column (:data:`SUPPORT_ROWS_PER_COLUMN`
    for the support-sized layout; :meth:`ActiveRows.strongest`),
    between :data:`MIN_ROWS` and :data:`MAX_ROWS`, if the model fits in half the memory
    allowed (by the memory model of HiGHS's simplex or interior-point method, whichever
    is larger: the polish may switch to the latter).

    Returns
    -------
    rows : ActiveRows or None
    reason : str
        Why not, when ``rows`` is None.
    """
    from ..._memory import available_memory, format_bytes

    if problem.objective == "l2":
        return None, "a QP needs no LP polish"
    if problem.structure in ("dense", "support") and problem.objective == "l1":
        tri = active.triangles
        cols = distinct_count(tri) if tri is not None else 0
    else:
        cols = problem.n_variables
    per_column = SUPPORT_ROWS_PER_COLUMN if problem.structure == "support" else ROWS_PER_COLUMN
    k = int(min(max(per_column * cols, MIN_ROWS), MAX_ROWS))
    rows = active.strongest(k)
    if rows is not active and rows.triangles is not None and problem.objective == "l1" \
            and problem.structure in ("dense", "support"):
        # the restricted LP has columns only for the pairs its kept rows touch
        cols = distinct_count(rows.triangles)
    # the polish may switch to the interior-point method (SIMPLEX_ITERATIONS_PER_ROW),
    # whose memory grows faster with the columns: count the larger of the two
    need = max(model_bytes(algorithm, 2 * rows.n_rows + 2 * cols, 4 * rows.n_rows + 3 * cols,
                            2 * cols) for algorithm in ("simplex", "ipm"))
    budget = available_memory() if max_memory is None else max_memory
    if budget is not None and need > budget / 2:
        return None, f"the restricted LP needs about {format_bytes(need)}"
    return rows, ""


def polish(problem, active, *, tol, gap_tol=1e-4, deadline=None, threads=None,
           max_rounds=MAX_ROUNDS, callback=None, stopping=None):
    """Solve the LP on ``active`` rows exactly, separating violated rows until none is.

    Parameters
    ----------
    problem : MetricProblem
        An LP (linear or l1 objective).
    active : ActiveRows
    tol : float
        Largest violation accepted for the answer (HiGHS's own tolerances are 1e-9).
    gap_tol : float, default=1e-4
        The certified gap wanted; sets the interior-point method's optimality tolerance
        when the polish switches to it (see :data:`SIMPLEX_ITERATIONS_PER_ROW`).
    deadline : float or None
        ``time.perf_counter()`` value at which to stop.
    threads : int or None
    max_rounds : int
    callback : callable or None
        Called with ``(round, value, max_violation, rows)`` after each round.
    stopping : callable or None
        Asked before each round (the run's Ctrl-C, :meth:`.loop.IterationLoop.stopping`);
        when true, or when a held Ctrl-C stopped HiGHS in a round (model status
        kInterrupt), the polish ends there, ``abandoned`` set. A round that ends past the
        time limit is used as before.

    Returns
    -------
    dict
        ``status`` (OPTIMAL when the answer violates nothing by more than ``tol``),
        ``x`` (problem order; None if HiGHS gave no point), ``lower_bound`` (the largest
        certified bound of the rounds' LP duals, each valid for the full LP: the rows
        are a subset; None when no round ended), ``bound_details``,
        ``max_violation``, ``rounds``, ``rows``, ``columns``, ``seconds``, ``message``.
    """
    t0 = time.perf_counter()
    opts = dict(verbose=False, seed=0, tol=1e-9, threads=threads)
    space = active.space
    rm = RestrictedModel(problem, opts, columns=None if space is None else space.columns())
    rm.add_blocks(active.blocks(problem))
    sep = Separator(problem, max(tol, 1e-9), None) if space is None \
        else space.separator(max(tol, 1e-9))
    out = dict(status=Status.LIMIT, x=None, lower_bound=None, bound_details={},
               max_violation=np.inf, rounds=0, message="")
    for rnd in range(1, max_rounds + 1):
        if deadline is not None and time.perf_counter() >= deadline:
            out["message"] = "time limit reached in the polish"
            break
        if stopping is not None and stopping():
            out["message"], out["abandoned"] = "stopped in the polish", True
            break
        status, message, x, value = _solve(rm, tol, gap_tol, deadline)
        if status == Status.INTERRUPTED:  # HiGHS stopped at a held Ctrl-C
            out["message"], out["abandoned"] = "stopped in the polish", True
            break
        if status != Status.OPTIMAL or x is None:
            out["status"] = Status.LIMIT if status == Status.LIMIT else Status.NUMERICAL
            out["message"] = f"restricted LP: {message}"
            break
        out["rounds"] = rnd
        blocks, worst = sep.separate(x)
        worst = max(worst, problem.bound_violation(x))
        if rm.n_cols:
            # the bound of this round's relaxation, valid for the full LP: kept when a
            # later round is cut by the time limit (reading it costs a small share of a
            # round: HiGHS's duals go when rows are added)
            lb, details = rm.certified_bound()
            if np.isfinite(lb) and (out["lower_bound"] is None or lb > out["lower_bound"]):
                out["lower_bound"], out["bound_details"] = lb, details
        out["x"], out["max_violation"] = x, float(worst)
        if callback is not None:
            callback(rnd, value, worst, rm.model.n_rows)
        if worst <= tol:
            out["status"] = Status.OPTIMAL
            out["message"] = f"restricted LP optimal after {rnd} rounds"
            break
        feasible = _feasible_answer(problem, x, worst, out["lower_bound"], tol, gap_tol,
                                    lambda: _past(deadline) or bool(stopping and stopping()))
        if feasible is not None:
            out.update(feasible, status=Status.OPTIMAL,
                       message=f"restricted LP after {rnd} rounds (violation {worst:.2g}), "
                               f"{_repair_words(feasible)}")
            break
        if not any(b is not None and b.n_rows for b in blocks):
            if rm.algorithm == "ipm" and not rm.crossover:
                # the interior point meets the model's rows only to its own tolerance:
                # the same round again, with crossover to a vertex
                rm.crossover = True
                continue
            out["status"], out["message"] = Status.NUMERICAL, (
                f"violated rows (largest {worst:.3g}) are in the restricted LP already")
            break
        rm.add_blocks(blocks)
        sep.commit()
    else:
        out["message"] = f"no LP optimum after {max_rounds} separation rounds"
    out.update(rows=int(rm.model.n_rows), columns=int(rm.n_cols),
               seconds=time.perf_counter() - t0, lp_algorithm=rm.algorithm)
    return out


def shift_to_feasible(problem, x, violation):
    """``x`` moved towards a constant point just far enough that no row is violated.

    Every metric row holds with slack ``s`` at the point ``s 1`` (a triangle
    ``x_ab <= x_ac + x_bc`` as ``s <= 2 s``, a cycle of ``k >= 3`` edges as ``s <= (k - 1)
    s``, a wedge ``x_a + x_b >= 1`` as ``2 s >= 1`` for ``s >= 1``). So if ``x`` (clipped
    to the bounds) violates no row by more than ``v``, the point ``(1 - theta) x + theta s
    1`` with ``theta = v / (v + s)`` violates none: each row's residual is at most
    ``(1 - theta) v - theta s = 0``. Its cost exceeds that of ``x`` by about ``theta (f(s
    1) - f(x))``, small when ``v`` is: a restricted LP's optimum that misses ``tol`` can
    still meet the certified gap (the tail rounds of a tight polish chase violations of
    1e-7 that move the value by 1e-9).

    Parameters
    ----------
    problem : MetricProblem
        Without a sum row (sparsest cut's feasible points are its path repairs).
    x : ndarray or SupportPoint
    violation : float
        The largest violation of any metric row by ``x`` (bounds excluded).

    Returns
    -------
    (x, theta) or None
        None where the problem has a sum row, or no constant point ``s >= 1`` within its
        bounds (and equal to a support point's bulk value).
    """
    from ...problems.support import SupportPoint

    lo, hi = float(problem.lower), float(problem.upper)
    if problem.sum_value is not None or hi < 1.0 or lo > 1.0:
        return None
    if isinstance(x, SupportPoint):
        s = hi if np.isfinite(hi) else max(1.0, float(x.min_max()[1]))
        if x.bulk != s:
            return None
        theta = violation / (violation + s)
        values = (1.0 - theta) * np.clip(x.values, lo, hi) + theta * s
        return SupportPoint(x.n, x.pairs, np.minimum(values, hi), x.bulk), theta
    x = np.asarray(x, dtype=np.float64)
    s = hi if np.isfinite(hi) else max(1.0, float(x.max(initial=1.0)))
    theta = violation / (violation + s)
    return np.minimum((1.0 - theta) * np.clip(x, lo, hi) + theta * s, hi), theta


def feasible_points(problem, x, worst, stop=None):
    """The points made exactly feasible from ``x`` (whose largest violation is
    ``worst``): :func:`shift_to_feasible` and, where it applies, the metric closure
    (:func:`.._repair.repair_dense`, :func:`.._repair.repair_support`).

    stop : callable or None
        Asked during the support-sized closure (a minute or two on ca-AstroPh); once true
        the closure is not among the points.

    Returns
    -------
    list of dict
        ``x`` and either ``shift`` (its ``theta``) or ``repair`` (``"closure"``); their
        violations are not measured here.
    """
    from .. import _repair

    if not np.isfinite(worst):
        return []
    candidates = []
    # clipping to the bounds moves each of a row's entries by at most the bound violation
    shifted = shift_to_feasible(problem, x, worst + 3.0 * problem.bound_violation(x))
    if shifted is not None:
        candidates.append(dict(x=shifted[0], shift=shifted[1]))
    closed = None
    if problem.sum_value is None and isinstance(x, np.ndarray) \
            and problem.n <= CLOSURE_MAX_NODES:
        closed = _repair.repair_dense(problem, x)
    elif problem.structure == "support" and problem.upper == 1.0:
        closed = _repair.repair_support(x, stop=stop)
    if closed is not None:
        candidates.append(dict(x=closed, repair="closure"))
    return candidates


def _past(deadline):
    """Whether ``deadline`` (a ``perf_counter`` time, or None) has passed."""
    return deadline is not None and time.perf_counter() >= deadline


def _feasible_answer(problem, x, worst, lower_bound, tol, gap_tol, stop=None):
    """The cheaper of two exactly feasible points made from a round's optimum ``x``, if
    its cost meets ``gap_tol`` against ``lower_bound`` and its violation, measured,
    ``tol``; else the rounding of ``x`` (:mod:`.integral`) if it does; else None.

    The candidates: :func:`shift_to_feasible` (towards the all-ones point; cheap where the
    violation is small) and the metric closure (the largest metric below ``x``: only the
    long sides of violated triangles move, however large their violation) of
    :func:`.._repair.repair_dense` or, for the support-sized layout,
    :func:`.._repair.repair_support`. A restricted LP's optimum
    that violates rows by 0.25-1 can be that close to the LP: Jaccard cc on
    celegans_metabolic from the rows of gamma 1, round 5 (violation 0.5): the shift's gap
    0.78, the closure's 4.9e-4; round 8 (violation 0.25): 0.47 and 6.4e-5.

    Returns
    -------
    dict or None
        ``x``, ``max_violation`` and either ``shift`` (its ``theta``), ``repair``
        (``"closure"``) or ``integral`` (the rounding's fields).
    """
    from .gap import GAP_FLOOR, lp_gap, objective_scale
    from .integral import integral_candidate

    if lower_bound is None or not np.isfinite(worst):
        return None
    floor = GAP_FLOOR * objective_scale(problem)
    candidates = feasible_points(problem, x, worst, stop)
    passing = []
    for cand in candidates:
        fun = problem.objective_value(cand["x"])
        if lp_gap(fun, lower_bound, floor) <= gap_tol:
            passing.append((fun, cand))
    for _, cand in sorted(passing, key=lambda fc: fc[0]):
        cand["max_violation"] = float(problem.max_violation(cand["x"]))
        if cand["max_violation"] <= tol:
            return cand
    # the last resort, a rounding: where the LP's integrality gap is below gap_tol
    integral = integral_candidate(problem, x, lower_bound, tol=tol, gap_tol=gap_tol,
                                  floor=floor)
    if integral is not None:
        return dict(x=integral.pop("x"), max_violation=integral["max_violation"],
                    integral=integral)
    return None


def _repair_words(feasible):
    """How :func:`_feasible_answer` made its point, for the run's message."""
    if "integral" in feasible:
        return f"rounded ({feasible['integral']['rounding']['what']})"
    if "shift" in feasible:
        return f"moved towards the all-ones point by {feasible['shift']:.2g}"
    return "repaired by shortest paths (its metric closure)"


def simplex_budget(structure, n_rows):
    """Dual simplex iterations a restricted LP of ``n_rows`` rows gets before the polish
    switches to the interior-point method (:data:`SIMPLEX_ITERATIONS_PER_ROW`,
    :data:`SUPPORT_SIMPLEX_ITERATIONS_PER_ROW`, :data:`DENSE_MAX_SIMPLEX_ITERATIONS`)."""
    if structure == "support":
        return max(MIN_SIMPLEX_ITERATIONS, int(SUPPORT_SIMPLEX_ITERATIONS_PER_ROW * n_rows))
    budget = max(MIN_SIMPLEX_ITERATIONS, int(SIMPLEX_ITERATIONS_PER_ROW * n_rows))
    return budget if structure != "dense" else min(budget, DENSE_MAX_SIMPLEX_ITERATIONS)


def _solve(rm, tol, gap_tol, deadline):
    """One round: the dual simplex method within its iteration budget, else (from then
    on) the interior-point method without crossover."""
    h = rm.model.h
    if rm.n_cols and rm.algorithm == "ipm":
        h.setOptionValue("solver", "ipm")
        h.setOptionValue("run_crossover", "on" if rm.crossover else "off")
        h.setOptionValue("ipm_optimality_tolerance", max(min(1e-7, 0.01 * gap_tol), 1e-10))
        return rm.solve(deadline)
    if rm.n_cols and rm.algorithm == "simplex":
        h.setOptionValue("simplex_iteration_limit",
                         simplex_budget(rm.problem.structure, rm.model.n_rows))
        result = rm.solve(deadline)
        if result[0] != Status.LIMIT or (deadline is not None and time.perf_counter() >= deadline):
            return result
        rm.algorithm = "ipm"
        return _solve(rm, tol, gap_tol, deadline)
    return rm.solve(deadline)


def polish_paths(problem, *, tol, gap_tol=1e-4, deadline=None, threads=None, max_memory=None,
                 callback=None):
    """Sparsest cut's polish: the LP on its path rows, then the exact repair by shortest
    paths (:mod:`.._sc_paths`).

    The path rows hold the LP's optimum (the lemma of :mod:`.._sc_paths`), so one solve
    (HiGHS's interior-point method with crossover, every pair a column, the sum row)
    gives the LP optimum and its dual the certified bound; the shortest-path metric of
    its edge values makes ``x`` feasible to round-off at no higher cost. Separated
    triangle rows, the polish of the other problems, needed more than 30 rounds here
    (jazz, USAir97). Used by :class:`.stage.LPStage` when
    :func:`.._sc_paths.polish_rows` allows it.

    ``callback``, when given, is called with ``(0, rows)`` before the solve and with
    ``(1, rows, lower_bound, max_violation)`` after it (as :func:`polish`'s rounds).

    Returns
    -------
    dict
        As :func:`polish` (``rounds`` is 1); only ``skipped`` (why) when the model does
        not fit in half the memory allowed.
    """
    from ..._memory import available_memory, format_bytes
    from .. import _sc_paths
    from . import lp_matrix as lpm

    t0 = time.perf_counter()
    rows = _sc_paths.path_rows(problem)
    cols = problem.n_variables
    need = model_bytes("ipm", len(rows) + 1, 3 * len(rows) + cols, cols)
    budget = available_memory() if max_memory is None else max_memory
    if budget is not None and need > budget / 2:
        return dict(skipped=f"the path rows' LP needs about {format_bytes(need)}")
    rm = RestrictedModel(problem, dict(verbose=False, seed=0, tol=1e-9, threads=threads),
                         algorithm="ipm")
    rm.add_blocks([lpm.triangle_rows(rows)])
    h = rm.model.h
    h.setOptionValue("run_crossover", "on")
    h.setOptionValue("ipm_optimality_tolerance", max(min(1e-8, 0.01 * gap_tol), 1e-10))
    if callback is not None:
        callback(0, len(rows))
    out = dict(status=Status.LIMIT, x=None, lower_bound=None, bound_details={},
               max_violation=np.inf, rounds=0, rows=int(rm.model.n_rows),
               columns=int(rm.n_cols), lp_algorithm="ipm", message="")
    status, message, x, _ = rm.solve(deadline)
    if status == Status.OPTIMAL and x is not None:
        out["rounds"] = 1
        out["lower_bound"], out["bound_details"] = rm.certified_bound()
        xr = _sc_paths.repair_by_paths(problem, x)
        if xr is None:
            out.update(status=Status.NUMERICAL, x=x, max_violation=problem.max_violation(x),
                       message="path rows solved; the repair by shortest paths failed")
        else:
            out.update(status=Status.OPTIMAL, x=xr, max_violation=problem.max_violation(xr),
                       message=f"{len(rows)} path rows solved; x repaired by shortest paths")
        if callback is not None:
            callback(1, len(rows), out["lower_bound"], out["max_violation"])
    else:
        out["status"] = Status.LIMIT if status == Status.LIMIT else Status.NUMERICAL
        out["message"] = f"path rows' LP: {message}"
    out["seconds"] = time.perf_counter() - t0
    return out
