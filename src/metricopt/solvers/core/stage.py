"""The stages of an iterative solve: from a converged QP to a certified LP answer.

Every iterative backend solves a ``gamma``-regularised QP of the LP
(:mod:`metricopt.bounds`, V §4-7) as a means to the LP. When a QP stage has converged
(its own QP gap and violation within tolerance), :meth:`LPStage.finish` certifies the
point; the run is ``optimal`` only if ``(lp_value - lower_bound) / |lower_bound| <=
gap_tol`` at a point violating nothing by more than ``tol`` (:func:`lp_gap`).
Otherwise the active constraints go to the LP polish (:mod:`.polish`: the LP restricted
to them, solved exactly, separated, and certified from its dual) and, if that does not
close the gap, ``gamma`` grows by ``growth`` (exact regularisation [2]_: beyond some
``gamma`` the QP solution is an LP solution) and the backend goes on from its duals,
scaled exactly. Growth is chosen when the gap's decay, measured over the stages
(:meth:`LPStage.decay`), predicts it to close the gap within two stages. A stage below
:data:`POLISH_GAMMA` that stalls (:class:`.driver.ProgressWatch`) grows ``gamma`` before
its active rows go to the polish, and below it the polish takes only a small restricted
LP (:data:`SMALL_POLISH_ROWS`); a stage above it that stalls measures its gap and grows
when that predicts so; a large restricted LP is polished only at a stall or a stage's
end, never early. Where it is wide, a stage's gap is measured every few checks too, and
the stage ends when it stops falling (:meth:`LPStage.at_floor`). Before either, a
rounding of the point is offered (:mod:`.integral`): where the LP's integrality gap is
below ``gap_tol``, an integral point meets the contract.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355.
.. [2] Mangasarian, O. L., & Meyer, R. R. (1979). Nonlinear perturbation of linear
       programs. SIAM J. Control Optim. 17(6), 745-752 (exact regularisation).
"""

import math
import time

import numpy as np

from ...result import Status
from .gap import GAP_FLOOR, lp_gap, objective_scale
from .loop import StepAbandoned, check_stopping

__all__ = ["lp_gap", "objective_scale", "LPStage", "GAMMA_GROWTH", "MAX_GAMMA",
           "POLISH_QP_GAP", "POLISH_GAMMA", "SMALL_POLISH_ROWS", "GAP_FLOOR"]

#: Factor by which ``gamma`` grows when a converged QP stage misses the LP gap.
GAMMA_GROWTH = 10.0
#: ``gamma`` is not raised beyond this (the QP's conditioning degrades as ``gamma``).
MAX_GAMMA = 1e8
#: The polish is tried once the QP's relative gap is below this: it needs the active rows.
POLISH_QP_GAP = 1e-2
#: A stage that stalls below this ``gamma`` grows ``gamma`` before its active rows go to
#: the polish: the QP's active set nears the LP's as ``gamma`` grows (exact
#: regularisation [2]_), and the restricted LP then needs fewer, cheaper separation
#: rounds. Jaccard cc, project-forget, default tolerances, ca-GrQc: from the rows of
#: gamma 1 8 rounds (357 s), from those of gamma 10 6 rounds (155 s; benchmarks/README.md).
POLISH_GAMMA = 10.0
#: Below :data:`POLISH_GAMMA` the polish runs only when its restricted LP starts from at
#: most this many rows (seconds to a minute whatever its gamma; a larger one is cheaper
#: from the rows of a larger gamma). Jaccard cc, dykstra, the rows of gamma 1: USAir97
#: 73,206 (91 s; from gamma 10: 202 s); Harvard500 194,912 (more than 120 s).
SMALL_POLISH_ROWS = 100_000
#: A stall above :data:`POLISH_GAMMA` decides by its certified gap only where the
#: restricted LP's columns cover more than this fraction of the variables
#: (:meth:`LPStage.after_stall`); else the polish runs. Set between measured graphs:
#: Harvard500 48% (238,428 rows on 60,477 of 124,750 pairs), celegans_metabolic above
#: half; ca-GrQc 2% (its polish from gamma 10 is the fast path).
WIDE_POLISH_FRACTION = 0.25
#: A stage stalled above :data:`POLISH_GAMMA` goes on while the certified gap at each
#: stall is at most this fraction of the last stall's (:meth:`LPStage.after_stall`).
STALL_GAP_FACTOR = 0.5
#: ... and at most this many times while its gap is still above the one predicted for
#: the stage's end (a bound on the wait, whose length is not known in advance).
MAX_STALLS_BEHIND = 8
#: A stage measured every few full checks (:meth:`LPStage.at_floor`) has reached the
#: floor its regularisation sets when its certified gap fell by less than this fraction
#: since the last measurement.
FLOOR_DROP = 0.1
#: A stage ended at its floor grows ``gamma`` while this many more stages are predicted to
#: close the gap (two after a converged stage): a wide restricted LP is slow to polish.
FLOOR_GROWTH_STAGES = 3
class LPStage:
    """Decides, at the end of a converged QP stage, whether the LP is reached.

    :attr:`offer_rounding` (class attribute, True) is False only during the warm-up's
    tiny run (:mod:`.._warmup`), which must pass through the stages it warms up.

    Parameters
    ----------
    problem : MetricProblem
    tol, gap_tol : float
        Largest violation and certified LP gap of an ``optimal`` answer.
    polish : bool or "auto"
        Try the active-set LP polish (:mod:`.polish`) when the certificate misses
        ``gap_tol``; ``"auto"``: when the restricted LP fits in memory. Unless False, a
        rounding of the point is offered as the answer too (:meth:`try_integral`). Problems with a
        sum row (sparsest cut) solve their path rows instead, where the lemma of
        :mod:`.._sc_paths` applies and they are few (:func:`.._sc_paths.polish_rows`);
        otherwise gamma growth alone closes their gap.
    gamma_growth : float
        Factor of the next stage's ``gamma`` when neither closes the gap.
    threads, max_memory : int or None
    """

    offer_rounding = True

    def __init__(self, problem, *, tol, gap_tol, polish="auto", gamma_growth=GAMMA_GROWTH,
                 threads=None, max_memory=None):
        self.problem = problem
        self.tol, self.gap_tol = float(tol), float(gap_tol)
        # problems with the row sum(x) = n (sparsest cut): the restricted LP needed more
        # than 30 separation rounds (jazz, USAir97), so their polish solves the path rows
        # (:func:`.polish.polish_paths`), and "auto" tries it only where they are few
        self.polish = polish if problem.objective != "l2" else False
        self.rounds = polish is not False  # a rounding may be the answer: not with polish=False
        if self.polish and problem.sum_value is not None:
            from .. import _sc_paths

            self.polish = _sc_paths.polish_rows(problem) > 0
        self.growth = float(gamma_growth)
        self.threads, self.max_memory, self.max_rows = threads, max_memory, None
        self.best_bound = None
        self.best_details = {}
        self.polishes = []
        self.polished = False  # a polish reached the LP optimum (no second try)
        self._tried = set()  # gammas at which the polish ran
        self.x = self.feasible_x = self.feasible_violation = None
        self.feasible_value = np.inf
        #: The rounded clustering that met the contract (:mod:`.integral`), or None.
        self.integral = None
        #: ``(gamma, certified gap)`` of every stage that ended, in order (the
        #: predictions of :meth:`decay` and :meth:`growth_predicted`).
        self.stage_gaps = []
        self._waited = set()  # gammas whose early polish waits for the stage's end
        self._stalls = {}  # gamma -> the certified gap at its stage's last stall
        self._behind = {}  # gamma -> its stalls with a gap above the predicted end
        #: The gamma of the stalled stage whose repaired point met the contract, or None.
        self.stall_point = None
        self._stall_x = self.measured_gap = None  # the last stall_gap's point and gap
        self.certificates = 0
        self.certify_seconds = 0.0
        self.floor = GAP_FLOOR * objective_scale(problem)
        #: Set by the driver: the progress callback of polish events (:meth:`polish_record`),
        #: the strategy's exact violation scan, and the loop's ``stopping`` (a stage decision's).
        self.progress, self.violation_of, self.stopping = None, problem.max_violation, None

    def polish_record(self, gamma, polish_round, rows, lp_value=None, violation=None):
        """Pass one polish event to :attr:`progress`: its start (``polish_round`` 0, ``rows``
        the restricted LP's) or a round's end (its LP value, a bound, its violation)."""
        if self.progress is None:
            return
        rec = dict(stage="polish", polish_round=int(polish_round), rows=int(rows), gamma=float(gamma))
        if lp_value is not None:
            rec.update(lp_value=float(lp_value), max_violation=float(violation))
        self.progress(rec)

    def answer_at_limit(self, x, violation):
        """``(x, violation)`` to return from a run stopped by a limit: the iterate, unless
        it violates a constraint by more than ``tol`` and a stage ended at a point that
        does not (after a gamma change the iterate moves away from feasibility)."""
        if violation > self.tol and self.feasible_x is not None:  # its violation: measured
            known = self.feasible_violation  # when made, or now (an O(n^3) scan)
            return self.feasible_x, float(self.violation_of(self.feasible_x)
                                          if known is None else known)
        return x, violation

    def summary(self):
        """Scalars for the report: polish seconds, rounds and rows (0 when none ran)."""
        ran = [p for p in self.polishes if "seconds" in p]
        return dict(polish_seconds=float(sum(p["seconds"] for p in ran)),
                    polish_rounds=int(sum(p["rounds"] for p in ran)),
                    polish_rows=int(max((p["rows"] for p in ran), default=0)))

    def polish_how(self):
        """How the polish (or the rounding, :attr:`integral`) made the answer (the message)."""
        from .integral import integral_words

        ran = [p for p in self.polishes if "seconds" in p]
        if self.integral is not None:
            return integral_words(self.integral)
        if self.stall_point is not None:
            return f" (x made feasible from the iterate of the stage at gamma {self.stall_point:g})"
        if self.problem.sum_value is not None:
            return " (x from the LP on the path rows, repaired by shortest paths)"
        if ran and "shift" in ran[-1]:
            return (" (x from the LP on the active constraints, moved towards the all-ones "
                    f"point by {ran[-1]['shift']:.2g})")
        if ran and "repair" in ran[-1]:
            return (" (x from the LP on the active constraints, repaired by shortest paths: "
                    "its metric closure)")
        return " (x from the LP on the active constraints)"

    def gap(self, value):
        """Certified LP gap of an LP value against the best bound so far."""
        return lp_gap(value, self.best_bound, self.floor)

    def offer_bound(self, value, details, name=None):
        """Keep the best certified bound seen (every one is valid for the LP).

        ``best_details`` holds the latest certificate's candidates, the polish's bound
        under ``"lp_polish"``, and in ``method`` the source of ``best_bound``.
        """
        if name is None:
            self.best_details.update(details)
        else:
            self.best_details[name] = value
            self.best_details[f"{name}_details"] = {
                k: v for k, v in details.items() if k in ("value", "certified", "note")}
        if value is not None and np.isfinite(value) and (
                self.best_bound is None or value > self.best_bound):
            self.best_bound = float(value)
            self.best_method = name or details.get("method", "certificate")
        if self.best_bound is not None:
            self.best_details["method"] = self.best_method

    def try_integral(self, x, time_limit=None):
        """Offer the rounding of ``x`` as the answer (:mod:`.integral`): True when its
        integral point meets ``tol`` and ``gap_tol`` against the best bound (then
        :attr:`x` is it and :attr:`integral` says how it was made)."""
        from .integral import integral_candidate

        if not (self.rounds and self.offer_rounding):
            return False
        cand = integral_candidate(self.problem, x, self.best_bound, tol=self.tol,
                                  gap_tol=self.gap_tol, floor=self.floor,
                                  time_limit=time_limit)
        if cand is None:
            return False
        self.x = cand.pop("x")
        self.integral = cand
        return True

    def may_polish(self, gamma):
        """Whether a polish is still to be tried at this ``gamma``."""
        return bool(self.polish) and not self.polished and gamma not in self._tried

    def restore_gaps(self, state, where="the checkpoint"):
        """Continue from the :attr:`stage_gaps` of a checkpoint's header (None: none),
        so that a resumed run predicts as the uninterrupted one does; refuse a
        malformed one."""
        if state is None:
            return
        from ...exceptions import InputError

        def pair(p):
            return isinstance(p, (list, tuple)) and len(p) == 2 and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)
                for v in p)
        if not isinstance(state, list) or not all(pair(p) for p in state):
            raise InputError(f"cannot resume from {where}: its header field 'stage_gaps' "
                             f"is not a list of [gamma, gap] pairs: {state!r:.80}")
        self.stage_gaps = [(float(g), float(v)) for g, v in state]

    def decay(self, gaps=None):
        """The factor by which the certified gap is predicted to shrink per stage (one
        growth of ``gamma``), from ``gaps`` (default :attr:`stage_gaps`).

        Measured between the last two stages that ended (scaled to one growth, at most
        ``growth ** 2``); before two have, ``growth``: the certified gap of a converged
        stage shrinks at least like ``1 / gamma`` once ``gamma`` is large (the QP's point
        and its Lagrangian bound are both O(1 / gamma) from the LP, V Thm. 5), but how
        fast it shrinks before that depends on the graph. Jaccard cc, dykstra, tol 1e-4:
        celegans_metabolic's gap falls from 0.138 at gamma 1 to 9.2e-3 at gamma 10 (15x)
        and the stage at gamma 100 ends at the LP; benchmarks/README.md.
        """
        if self.growth <= 1.0:
            return 1.0
        ended = [(g, v) for g, v in (self.stage_gaps if gaps is None else gaps) if v > 0]
        if len(ended) >= 2 and ended[-1][0] > ended[-2][0]:
            (g0, v0), (g1, v1) = ended[-2], ended[-1]
            per_stage = math.log(self.growth) / math.log(g1 / g0)
            return float(min(max(v0 / v1, 1.0) ** per_stage, self.growth ** 2))
        return self.growth

    def expected_gap(self, gamma):
        """The certified gap predicted for the end of the stage at ``gamma`` from the
        last stage's at the rate of :meth:`decay` (inf before a stage has ended)."""
        if not self.stage_gaps:
            return np.inf
        last_gamma, last_gap = self.stage_gaps[-1]
        if self.growth <= 1.0 or gamma <= last_gamma:
            return last_gap
        stages = math.log(gamma / last_gamma) / math.log(self.growth)
        return last_gap / self.decay() ** stages

    def growth_predicted(self, gamma):
        """Whether the gamma growth planned at the last stage's end is still predicted
        to close the gap by the end of the stage after this one (at the rate of
        :meth:`decay`; see :meth:`finish`)."""
        if not self.stage_gaps or self.growth <= 1.0:
            return False
        last_gamma, last_gap = self.stage_gaps[-1]
        stages = math.log(gamma * self.growth / last_gamma) / math.log(self.growth)
        return last_gap / self.decay() ** stages <= self.gap_tol

    def wants_early_polish(self, gamma):
        """Whether a stage at ``gamma`` whose QP gap is already small should polish
        before it converges (``dykstra``): only when the gamma growth the last stage's
        end planned is not predicted to close the gap first (:meth:`growth_predicted`),
        and only from a restricted LP of at most :data:`SMALL_POLISH_ROWS` rows (a larger
        one waits for the stage's end, whose certified gap decides between the polish
        and the growth: :meth:`try_polish` with ``early``). Jaccard cc on
        celegans_metabolic, gap_tol 1e-2: the polish of gamma 10's 189,136 rows took
        90-120 s a round and still missed at 300 s; the stages alone end at gamma 10-100
        in 67 s."""
        return self.may_polish(gamma) and gamma not in self._waited \
            and not self.growth_predicted(gamma)

    def grow_before_polish(self, gamma, x=None, violation=None, certify=None, active=None,
                           how="stalled"):
        """The ``gamma`` a stalled stage should grow to before the polish (None: polish
        now): below :data:`POLISH_GAMMA` when the polish starts from the active rows
        (sparsest cut's path rows do not depend on them). A growth is recorded in
        :attr:`polishes` as a skipped polish, so the report says why none ran. Where the
        restricted LP from ``active()`` is wide (:meth:`wide_polish`), the stage's
        certified gap at the stall (:meth:`stall_gap` of ``x``, ``violation``,
        ``certify``) goes to :attr:`stage_gaps`: the stage ends there. Where it is
        narrow, stalls are not measured and the polish from gamma 10 is the fast path
        (ca-GrQc: measured, the decay from the stall of gamma 1 predicted growth, and
        the stages took 3x the polish's time)."""
        grow = gamma * self.growth
        if not self.may_polish(gamma) or self.problem.sum_value is not None \
                or gamma >= POLISH_GAMMA or self.growth <= 1.0 or grow > MAX_GAMMA:
            return None
        gap = None
        if x is not None and self.wide_polish(active):
            gap = self.stall_gap(x, violation, certify)
        if gap is not None:
            self.stage_gaps.append((float(gamma), float(gap)))
        self.polishes.append(dict(skipped=f"the stage {how} at gamma {gamma:g}: the "
                                          f"polish waits for gamma {grow:g}", gamma=gamma))
        return grow

    def wide_polish(self, active):
        """Whether the LP restricted to the polish's rows from ``active()`` has columns
        for more than :data:`WIDE_POLISH_FRACTION` of the LP's variables (every pair of
        the dense and support-sized layouts; True also when the polish would be
        refused)."""
        from ...problems._pairs import n_pairs
        from .polish import polish_rows, restricted_columns

        rows, _ = polish_rows(self.problem, active(), self.max_memory)
        every = n_pairs(self.problem.n) if self.problem.structure in ("dense", "support") \
            else self.problem.n_variables
        return rows is None or restricted_columns(self.problem, rows) \
            > WIDE_POLISH_FRACTION * every

    def _certify(self, certify):
        """Offer the bound of the certificate ``certify()``, counted and timed."""
        t0 = time.perf_counter()
        self.offer_bound(*certify())
        self.certificates += 1
        self.certify_seconds += time.perf_counter() - t0

    def stall_gap(self, x, violation, certify):
        """The certified gap of a stalled stage: of the cheapest point made exactly
        feasible from its iterate ``x()`` (violation ``violation``;
        :func:`.polish.feasible_points`), kept as :attr:`feasible_x` when the best so far,
        against the certificate ``certify()`` of its duals. None when no point is made
        (a problem with a sum row, an l2 objective, or no point within ``tol``)."""
        from .polish import feasible_points

        if self.problem.sum_value is not None or self.problem.objective == "l2":
            return None
        points = [p["x"] for p in feasible_points(self.problem, x(), violation, self.stopping)]
        values = [self.problem.objective_value(p) for p in points]
        for best in np.argsort(values, kind="stable"):  # each scan is O(n^3): cheapest first
            check_stopping(self.stopping)
            viol = float(self.violation_of(points[best]))
            if viol <= self.tol:
                break
        else:
            return None
        self._stall_x, value = points[best], values[best]
        if value < self.feasible_value:
            self.feasible_x, self.feasible_value, self.feasible_violation = self._stall_x, value, viol
        check_stopping(self.stopping)
        self._certify(certify)
        self.measured_gap = self.gap(value)
        return self.measured_gap

    def _measured_met(self, gamma, gap):
        """Whether the last :meth:`stall_gap`'s point or its rounding is the answer."""
        if gap <= self.gap_tol:
            self.x, self.stall_point = self._stall_x, gamma
            return True
        check_stopping(self.stopping)
        return self.try_integral(self._stall_x)

    def after_stall(self, gamma, x, violation, certify, active):
        """What a stage stalled at ``gamma >= POLISH_GAMMA`` does instead of the polish,
        once an earlier stage's certified gap is known, when its restricted LP (from the
        rows ``active()``) is wide: its columns cover more than
        :data:`WIDE_POLISH_FRACTION` of the problem's variables. Such an LP has several
        rows per column, is highly degenerate, and slow: Jaccard cc, celegans_metabolic
        and Harvard500 70-134 s a round, violation 1 after round 1 at gamma 10 and at
        gamma 100; ca-GrQc's (2% of the pairs) ends at the LP from gamma 10 in 6 rounds,
        155 s, faster than the stages (benchmarks/README.md).

        The stall's certified gap is measured as at a stage's end (:meth:`stall_gap`).
        A stall counts violations and QP gaps; this gap is what the contract asks for:

        - within ``gap_tol``: the point is the answer (:attr:`x`), or its rounding
          where that is (:meth:`try_integral`, as at a stage's end);
        - a gap above the one predicted for the stage's end (:meth:`expected_gap`), up
          to :data:`MAX_STALLS_BEHIND` times: the stage goes on (right after a growth
          the iterate is far from the stage's point, and the certified gap of the
          point made from it falls late: celegans_metabolic at gamma 100, 1.4e-2,
          1.2e-2, 8.9e-3 at its first three stalls, 4.6e-5 at its end);
        - the stage's first stall, or a gap at most :data:`STALL_GAP_FACTOR` of the last
          stall's: the stage goes on (it converges slowly, not stalls);
        - else gamma grows when two more stages are predicted to close the gap
          (:meth:`decay`, from the stages' gaps and this one);
        - else the polish runs.

        Returns
        -------
        "met", "continue", a float (the next gamma) or None (polish now)
        """
        if not self.stage_gaps or not self.may_polish(gamma) or gamma < POLISH_GAMMA:
            return None
        if not self.wide_polish(active):
            return None
        gap = self.stall_gap(x, violation, certify)
        if gap is None:
            return None
        last = self._stalls.get(gamma)
        self._stalls[gamma] = gap
        if self._measured_met(gamma, gap):
            return "met"
        behind = self._behind.get(gamma, 0)
        if gap > self.expected_gap(gamma) and behind < MAX_STALLS_BEHIND:
            self._behind[gamma] = behind + 1
            return "continue"
        if last is None or gap <= STALL_GAP_FACTOR * last:
            return "continue"
        grow = gamma * self.growth
        decay = self.decay(self.stage_gaps + [(float(gamma), float(gap))])
        if self.growth <= 1.0 or grow > MAX_GAMMA or gap / decay ** 2 > self.gap_tol:
            return None
        self.stage_gaps.append((float(gamma), float(gap)))  # the stage ends here
        self.polishes.append(dict(skipped=f"the stage stalled at gamma {gamma:g} with gap "
                                          f"{gap:.2e}: gamma {grow:g} is predicted to close "
                                          f"it ({decay:.3g} per stage)", gamma=gamma))
        return grow

    def at_floor(self, gamma, last, x, violation, certify, active):
        """Whether a stage at ``gamma`` has reached its floor: the certified gap its
        regularisation allows, which more iterations do not lower. Only for the
        complete-graph LPs (dense or support-sized ``cc`` and ``mn``) with a wide
        restricted LP (:meth:`wide_polish`), where a stage's gap is measured rather than
        polished; called every few full checks (``Strategy.floor_checks``).

        The gap is measured as at a stall (:meth:`stall_gap`). A stage ends at its floor
        when the gap fell by less than :data:`FLOOR_DROP` since the stage's last
        measurement ``last``, and, once a stage has ended, is within the one predicted
        for this stage's end (:meth:`expected_gap`: a gap that pauses above it, as in
        the stage that reaches the LP, goes on). Jaccard cc, dykstra, every 50 passes:
        celegans_metabolic at gamma 1 0.155, 0.141, 0.139, ..., 0.138 at its end (440
        passes); at gamma 10 0.055, 0.022, 0.016, 0.012, 0.011, ..., 9.2e-3 (580 passes);
        polblogs, project-forget, gamma 1, every 2 calls: 0.165, 0.148, 0.146, ...,
        0.142 at call 26 (benchmarks/README.md).

        Returns ``(decision, gap)``: "met" (:attr:`x`, the point or its rounding, meets
        the contract), "floor" (the stage ended at ``gap``, now in :attr:`stage_gaps`) or
        None (go on), and the gap measured (None: none was).
        """
        if self.problem.structure not in ("dense", "support") or not self.polish \
                or self.polished or not self.wide_polish(active):
            return None, None
        gap = self.stall_gap(x, violation, certify)
        if gap is None:
            return None, None
        if self._measured_met(gamma, gap):
            return "met", gap
        if last is None or gap < (1.0 - FLOOR_DROP) * last or gap > self.expected_gap(gamma) \
                or self.growth <= 1.0 or gamma * self.growth > MAX_GAMMA:
            return None, gap
        self.stage_gaps.append((float(gamma), float(gap)))
        return "floor", gap

    def try_polish(self, active, deadline, gamma, early=False):
        """Run the polish once per ``gamma`` (:mod:`.polish`); True when its answer
        meets the LP gap (then ``self.x`` is it).

        It needs only the active rows, not a converged QP: ``dykstra`` calls it, for l1
        objectives, once its QP gap is below :data:`POLISH_QP_GAP` at a full check;
        else :meth:`finish` at the stage's end, when the certificate misses the gap. At
        most once per ``gamma``, from at most :attr:`max_rows` rows; below
        :data:`POLISH_GAMMA`, and when ``early`` (before the stage converged; the gamma
        stays untried), from at most :data:`SMALL_POLISH_ROWS`.
        """
        if not self.may_polish(gamma):
            return False
        from .polish import polish, polish_paths, polish_rows

        if self.problem.sum_value is not None:
            self._tried.add(gamma)
            res = polish_paths(self.problem, tol=self.tol, gap_tol=self.gap_tol,
                               deadline=deadline, threads=self.threads,
                               max_memory=self.max_memory,
                               callback=lambda *a: self.polish_record(gamma, *a))
            if "skipped" in res:
                self.polishes.append(dict(skipped=res["skipped"], gamma=gamma))
                return False
        else:
            every = active()
            rows, why = polish_rows(self.problem, every, self.max_memory)
            if early and rows is not None and rows.n_rows > SMALL_POLISH_ROWS:
                self._waited.add(gamma)
                self.polishes.append(dict(skipped=f"{rows.n_rows:,} rows at gamma "
                                                  f"{gamma:g}: the polish waits for the "
                                                  "stage's certified gap", gamma=gamma))
                return False
            self._tried.add(gamma)
            if rows is not None and gamma < POLISH_GAMMA and rows.n_rows > SMALL_POLISH_ROWS:
                rows, why = None, (f"{rows.n_rows:,} rows at gamma {gamma:g}: the polish "
                                   f"waits for gamma {POLISH_GAMMA:g}")
            elif rows is not None and rows.n_rows > (self.max_rows or np.inf):
                rows, why = None, f"{rows.n_rows:,} rows: more than {self.max_rows:,}"
            if rows is None:
                self.polishes.append(dict(skipped=why, gamma=gamma))
                return False
            self.polish_record(gamma, 0, rows.n_rows)
            res = polish(self.problem, rows, tol=self.tol, gap_tol=self.gap_tol,
                         deadline=deadline, threads=self.threads, stopping=self.stopping,
                         callback=lambda rnd, value, worst, n: self.polish_record(
                             gamma, rnd, n, value, worst))
            res["active_rows"] = every.n_rows
            res["start_rows"] = rows.n_rows
        res["gamma"] = gamma
        self.polishes.append({k: v for k, v in res.items() if k not in ("x",)})
        self.offer_bound(res["lower_bound"], res["bound_details"], "lp_polish")
        if res.get("abandoned"):  # a Ctrl-C: its bound is kept, the iteration dropped
            raise StepAbandoned
        if res["status"] != Status.OPTIMAL:
            return False
        if "integral" in res:
            self.integral = res["integral"]
        self.polished = True
        if self.gap(self.problem.objective_value(res["x"])) <= self.gap_tol:
            self.x = res["x"]
            return True
        return False

    def finish(self, x, certify, active, deadline, gamma):
        """Certify a converged stage's point ``x``; polish if needed.

        Parameters
        ----------
        x : ndarray
            The stage's answer (problem order), violating nothing by more than ``tol``.
        certify : callable
            ``certify() -> (lower_bound, details)`` for the backend's current iterate.
        active : callable
            ``active() -> ActiveRows`` of the current duals (for the polish).
        deadline : float or None
        gamma : float
            The stage's regularisation (to decide whether it may grow).

        Returns
        -------
        done : bool
            The LP gap is met: the run is optimal with ``self.x``.
        next_gamma : float or None
            When not done: the next stage's ``gamma`` (None: no further stage).
        """
        # the best point met so far that violates nothing by more than tol: what a run
        # stopped later by a limit returns when its iterate is worse (replaced before
        # the certificate runs, so that two stages' points are not held through it)
        self.x = x
        value = self.problem.objective_value(x)
        if self.feasible_x is None or value < self.feasible_value:
            self.feasible_x, self.feasible_value, self.feasible_violation = x, value, None
        self._certify(certify)
        gap = self.gap(value)
        self.stage_gaps.append((float(gamma), float(gap)))
        if gap <= self.gap_tol:
            return True, None
        if self.try_integral(x):
            return True, None
        return self.next_stage(gap, gamma, active, deadline)

    def next_stage(self, gap, gamma, active, deadline, stages=2):
        """After a stage that ended at certified gap ``gap`` above ``gap_tol``: grow
        ``gamma`` when at most ``stages`` more stages are predicted to close the gap, else
        polish, else grow; ``(done, next_gamma)`` as :meth:`finish`."""
        grow = None if (self.problem.objective == "l2" or gamma * self.growth > MAX_GAMMA) \
            else gamma * self.growth
        decay = self.decay()
        if grow is not None and gap / decay ** stages <= self.gap_tol \
                and self.may_polish(gamma):
            # a few scans a stage against a restricted LP whose cost grows with its rows
            # (ca-GrQc, gap_tol 2e-2: 150 s of growth against 370 s of polish; a
            # 5,000-node signed graph, 1e-2: 10 s against 79 s; benchmarks/README.md)
            self.polishes.append(dict(skipped=f"gamma {grow:g} is predicted to close the "
                                              f"gap ({gap:.2e} / {decay:.3g} per stage)",
                                      gamma=gamma))
            return False, grow
        if self.try_polish(active, deadline, gamma):
            return True, None
        return False, grow
