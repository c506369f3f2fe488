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
scaled exactly. A stage below :data:`POLISH_GAMMA` that stalls
(:class:`.driver.ProgressWatch`) grows ``gamma`` before its active rows go to the
polish, and below it the polish takes only a small restricted LP
(:data:`SMALL_POLISH_ROWS`). Before either, a rounding of the point is offered (:mod:`.integral`): where
the LP's integrality gap is below ``gap_tol``, an integral point meets the contract.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2),
       333-355.
.. [2] Mangasarian, O. L., & Meyer, R. R. (1979). Nonlinear perturbation of linear
       programs. SIAM J. Control Optim. 17(6), 745-752 (exact regularisation).
"""

import time

import numpy as np

from ...result import Status
from .gap import GAP_FLOOR, lp_gap, objective_scale

__all__ = ["lp_gap", "objective_scale", "LPStage", "GAMMA_GROWTH", "MAX_GAMMA",
           "POLISH_QP_GAP", "POLISH_GAMMA", "SMALL_POLISH_ROWS", "GAP_FLOOR"]

#: Factor by which ``gamma`` grows when a converged QP stage misses the LP gap.
GAMMA_GROWTH = 10.0
#: ``gamma`` is not raised beyond this (the QP's conditioning degrades as ``gamma``).
MAX_GAMMA = 1e8
#: The polish is tried as soon as the QP's relative gap is below this at a full check:
#: it needs the active rows, not the QP optimum.
POLISH_QP_GAP = 1e-2
#: A stage that stalls below this ``gamma`` grows ``gamma`` before its active rows go to
#: the polish: the QP's active set nears the LP's as ``gamma`` grows (exact
#: regularisation [2]_), and the restricted LP then needs fewer, cheaper separation
#: rounds. Jaccard cc, project-forget, default tolerances: ca-GrQc's restricted LP from
#: the rows of gamma 1 starts at 2867.09 and needs 8 rounds (357 s), from those of gamma
#: 10 at 2901.06 and 6 rounds (155 s; the LP is 2903.24); celegansneural's first round
#: 702.90 -> 715.99 (the LP is 720.41; benchmarks/README.md).
POLISH_GAMMA = 10.0
#: Below :data:`POLISH_GAMMA` the polish runs only when its restricted LP starts from at
#: most this many rows: a restricted LP of that size costs seconds to a minute whatever
#: its gamma, a larger one is cheaper from the rows of a larger gamma. Jaccard cc,
#: dykstra, the rows of gamma 1: netscience 52,554, celegansneural 70,966, USAir97
#: 73,206 (from gamma 1, at the defaults: netscience 3.7 s, USAir97 91 s; from gamma 10:
#: 26 s and 202 s); celegans_metabolic 168,398 and Harvard500 194,912 (the latter's
#: polish took the whole 120 s limit at gap_tol 1e-2; benchmarks/README.md).
SMALL_POLISH_ROWS = 100_000
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
        #: Whether a rounding may be the answer (:meth:`try_integral`): not with
        #: ``polish=False``, which asks for the QP stages alone.
        self.rounds = polish is not False
        if self.polish and problem.sum_value is not None:
            from .. import _sc_paths

            self.polish = _sc_paths.polish_rows(problem) > 0
        self.growth = float(gamma_growth)
        self.threads, self.max_memory = threads, max_memory
        self.best_bound = None
        self.best_details = {}
        self.polishes = []
        self.polished = False  # a polish reached the LP optimum (no second try)
        self._tried = set()  # gammas at which the polish ran
        self.x = self.feasible_x = None
        self.feasible_value = np.inf
        #: The rounded clustering that met the contract (:mod:`.integral`), or None.
        self.integral = None
        #: The certified gap of the last stage that ended, and its gamma (the
        #: prediction of :meth:`wants_early_polish`).
        self.last_gap = self.last_gamma = None
        self.certificates = 0
        self.certify_seconds = 0.0
        self.floor = GAP_FLOOR * objective_scale(problem)
        #: Called with a record per polish event (:meth:`polish_record`), or None; the
        #: driver sets it to the run's progress callback.
        self.progress = None

    def polish_record(self, gamma, polish_round, rows, lp_value=None, violation=None):
        """Pass one polish event to :attr:`progress`: its start (``polish_round`` 0,
        ``rows`` the restricted LP's) or a round's end (the round's LP value, a certified
        lower bound on the full LP, and the violation of its optimum)."""
        if self.progress is None:
            return
        rec = dict(stage="polish", polish_round=int(polish_round), rows=int(rows),
                   gamma=float(gamma))
        if lp_value is not None:
            rec.update(lp_value=float(lp_value), max_violation=float(violation))
        self.progress(rec)

    def answer_at_limit(self, x, violation):
        """``(x, violation)`` to return from a run stopped by a limit: the iterate, unless
        it violates a constraint by more than ``tol`` and a stage ended at a point that
        does not (after a gamma change the iterate moves away from feasibility)."""
        if violation > self.tol and self.feasible_x is not None:
            return self.feasible_x, float(self.problem.max_violation(self.feasible_x))
        return x, violation

    def summary(self):
        """Scalars for the report: polish seconds, rounds and rows (0 when none ran)."""
        ran = [p for p in self.polishes if "seconds" in p]
        return dict(polish_seconds=float(sum(p["seconds"] for p in ran)),
                    polish_rounds=int(sum(p["rounds"] for p in ran)),
                    polish_rows=int(max((p["rows"] for p in ran), default=0)))

    def polish_how(self):
        """How the polish (or the rounding, :attr:`integral`) made the answer, for the
        run's message."""
        from .integral import integral_words

        ran = [p for p in self.polishes if "seconds" in p]
        if self.integral is not None:
            return integral_words(self.integral)
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

    def growth_predicted(self, gamma):
        """Whether the gamma growth planned at the last stage's end is still predicted
        to close the gap by the end of the stage after this one (the certified gap of a
        converged stage shrinks at least like ``1 / gamma``; see :meth:`finish`)."""
        if self.last_gap is None or self.growth <= 1.0:
            return False
        predicted = self.last_gap * self.last_gamma / (gamma * self.growth)
        return predicted <= self.gap_tol

    def wants_early_polish(self, gamma):
        """Whether a stage at ``gamma`` whose QP gap is already small should polish
        before it converges (``dykstra``): only when the gamma growth the last stage's
        end planned is not predicted to close the gap first (:meth:`growth_predicted`;
        below :data:`POLISH_GAMMA`, :meth:`try_polish` takes only a small restricted
        LP). Jaccard cc on celegans_metabolic, gap_tol 1e-2: the polish of gamma 10's
        189,136 rows took 90-120 s a round and still missed at 300 s; the stages alone
        end at gamma 10-100 in 67 s."""
        return self.may_polish(gamma) and not self.growth_predicted(gamma)

    def grow_before_polish(self, gamma):
        """The ``gamma`` a stalled stage should grow to before the polish (None: polish
        now): below :data:`POLISH_GAMMA` when the polish starts from the active rows
        (sparsest cut's path rows do not depend on them). A growth is recorded in
        :attr:`polishes` as a skipped polish, so the report says why none ran."""
        grow = gamma * self.growth
        if not self.may_polish(gamma) or self.problem.sum_value is not None \
                or gamma >= POLISH_GAMMA or self.growth <= 1.0 or grow > MAX_GAMMA:
            return None
        self.polishes.append(dict(skipped=f"the stage stalled at gamma {gamma:g}: the "
                                          f"polish waits for gamma {grow:g}", gamma=gamma))
        return grow

    def try_polish(self, active, deadline, gamma):
        """Run the polish once per ``gamma`` (:mod:`.polish`); True when its answer
        meets the LP gap (then ``self.x`` is it).

        It needs only the active rows, not a converged QP: ``dykstra`` calls it, for l1
        objectives, as soon as its QP gap is below :data:`POLISH_QP_GAP` at a full
        check; otherwise :meth:`finish` does at the end of the stage, when the
        certificate misses the gap. At most once per ``gamma``; below
        :data:`POLISH_GAMMA` only from at most :data:`SMALL_POLISH_ROWS` rows (else the
        polish waits for a larger gamma).
        """
        if not self.may_polish(gamma):
            return False
        from .polish import polish, polish_paths, polish_rows

        self._tried.add(gamma)
        if self.problem.sum_value is not None:
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
            if rows is not None and gamma < POLISH_GAMMA and rows.n_rows > SMALL_POLISH_ROWS:
                rows, why = None, (f"{rows.n_rows:,} rows at gamma {gamma:g}: the polish "
                                   f"waits for gamma {POLISH_GAMMA:g}")
            if rows is None:
                self.polishes.append(dict(skipped=why, gamma=gamma))
                return False
            self.polish_record(gamma, 0, rows.n_rows)
            res = polish(self.problem, rows, tol=self.tol, gap_tol=self.gap_tol,
                         deadline=deadline, threads=self.threads,
                         callback=lambda rnd, value, worst, n: self.polish_record(
                             gamma, rnd, n, value, worst))
            res["active_rows"] = every.n_rows
            res["start_rows"] = rows.n_rows
        res["gamma"] = gamma
        self.polishes.append({k: v for k, v in res.items() if k not in ("x",)})
        self.offer_bound(res["lower_bound"], res["bound_details"], "lp_polish")
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
            self.feasible_x, self.feasible_value = x, value
        t0 = time.perf_counter()
        lb, details = certify()
        self.certificates += 1
        self.certify_seconds += time.perf_counter() - t0
        self.offer_bound(lb, details)
        gap = self.gap(value)
        self.last_gap, self.last_gamma = gap, gamma
        if gap <= self.gap_tol:
            return True, None
        if self.try_integral(x):
            return True, None
        grow = None if (self.problem.objective == "l2" or gamma * self.growth > MAX_GAMMA) \
            else gamma * self.growth
        if grow is not None and gap / self.growth ** 2 <= self.gap_tol \
                and self.may_polish(gamma):
            # the certified gap of a converged stage shrinks at least like 1/gamma (the
            # QP's point and its Lagrangian bound are both O(1/gamma) from the LP, V Thm.
            # 5): when one or two more stages are predicted to close it, which costs a
            # few scans each, gamma grows first, while the restricted LP's cost grows
            # with its rows (ca-GrQc, gap_tol 2e-2: 150 s of gamma growth against 370 s
            # of polish; a 5,000-node signed graph, gap_tol 1e-2: gap 0.138, two stages
            # in 10 s against 79 s of polish that ended without a certificate;
            # benchmarks/README.md)
            self.polishes.append(dict(skipped=f"gamma {grow:g} is predicted to close the "
                                              f"gap ({gap:.2e} / {self.growth:g} per stage)",
                                      gamma=gamma))
            return False, grow
        if self.try_polish(active, deadline, gamma):
            return True, None
        return False, grow
