"""A HiGHS LP over ``[0, 1]`` columns whose ``<=`` rows come and go between solves.

The certified bounds above the LP (:mod:`.editing_lp`, :mod:`.deletion_lp`) separate rows
lazily, solve, certify each solve by weak duality with HiGHS's row multipliers
(:func:`~metricopt.bounds.lp_dual_bound`) and delete the rows without weight.
:class:`LazyRowModel` holds what they share: the HiGHS model and its settings, a copy
of the rows as CSR for the certificate, and an interruptible solve.
"""

import time

import numpy as np

from .._stdout import native_stdout_to_stderr
from .core.exact_lp import ExactModel
from .core.loop import interrupt_deferred, signals_held_here

__all__ = ["LazyRowModel"]


class LazyRowModel:
    """HiGHS LP ``min cost @ x + offset`` over ``0 <= x <= 1`` with rows ``A x <= upper``.

    Solved by HiGHS's interior-point method without crossover (measured against the
    warm-started dual simplex method in :mod:`.editing_lp` and :mod:`.deletion_lp`).
    ``threads`` (None: HiGHS's default) sizes HiGHS's process-wide pool.
    """

    def __init__(self, threads=None):
        import highspy

        with native_stdout_to_stderr(discard=True):
            self.h = h = highspy.Highs()
            h.setOptionValue("output_flag", False)
        h.setOptionValue("solver", "ipm")
        h.setOptionValue("run_crossover", "off")
        h.setOptionValue("random_seed", 0)
        if threads is not None:
            h.setOptionValue("threads", int(threads))
            h.resetGlobalScheduler(True)  # HiGHS sizes one process-wide pool at its first solve
        self.at_vertex = False  # True once solved by the simplex method
        self.cost = np.empty(0)
        self.offset = 0.0
        self.r_indptr = np.zeros(1, dtype=np.int64)
        self.r_index = np.empty(0, dtype=np.int64)
        self.r_value = np.empty(0)
        self.r_upper = np.empty(0)
        self._csr = None

    def use_simplex(self):
        """Solve by the dual simplex method from now on: vertices, not interior points.

        An interior-point optimum lies inside the optimal face, where a greedy separation
        finds fewer violated rows than at a vertex of it (karate's editing LP: 47.58 where
        the vertices go on to 50); the cutting-plane loops end there.
        """
        self.h.setOptionValue("solver", "simplex")
        self.at_vertex = True

    @property
    def n_rows(self):
        return self.r_upper.size

    def add_columns(self, cost, offset=0.0):
        """Append columns in ``[0, 1]`` with objective ``cost``; add ``offset`` to the constant."""
        cost = np.asarray(cost, dtype=np.float64)
        empty_i = np.empty(0, dtype=np.int32)
        self.h.addCols(cost.size, cost, np.zeros(cost.size), np.ones(cost.size), 0, empty_i,
                       empty_i, np.empty(0))
        if offset:
            self.offset += float(offset)
            self.h.changeObjectiveOffset(self.offset)
        self.cost = np.concatenate([self.cost, cost])
        self._csr = None

    def add_rows(self, offsets, index, value, upper):
        """Append the rows ``value @ x[index] <= upper`` given as CSR pieces; returns their count."""
        n_new = offsets.size - 1
        if n_new == 0:
            return 0
        self.h.addRows(n_new, np.full(n_new, -np.inf), upper, index.size,
                       offsets[:-1].astype(np.int32), index.astype(np.int32), value)
        self.r_indptr = np.concatenate([self.r_indptr, self.r_indptr[-1] + offsets[1:]])
        self.r_index = np.concatenate([self.r_index, index])
        self.r_value = np.concatenate([self.r_value, value])
        self.r_upper = np.concatenate([self.r_upper, upper])
        self._csr = None
        return n_new

    def delete_rows(self, drop):
        """Delete the rows where the boolean mask ``drop`` holds; returns the mask kept."""
        gone = np.flatnonzero(drop)
        self.h.deleteRows(gone.size, gone.astype(np.int32))
        keep = ~drop
        lengths = np.diff(self.r_indptr)
        entries = np.repeat(keep, lengths)
        self.r_index, self.r_value = self.r_index[entries], self.r_value[entries]
        self.r_indptr = np.concatenate([[0], np.cumsum(lengths[keep])]).astype(np.int64)
        self.r_upper = self.r_upper[keep]
        self._csr = None
        return keep

    def matrix(self):
        """The rows as a scipy CSR matrix (cached until the rows or columns change)."""
        import scipy.sparse as sp

        if self._csr is None:
            # copies: scipy may sort a matrix's entries in place, and the model's rows must stay
            self._csr = sp.csr_matrix((self.r_value.copy(), self.r_index.copy(),
                                       self.r_indptr.copy()), shape=(self.n_rows, self.cost.size))
        return self._csr

    def solve(self, deadline):
        """Solve (stopping by ``deadline``, a ``perf_counter`` time or None); returns x."""
        h = self.h
        if deadline is not None:
            h.setOptionValue("time_limit", h.getRunTime() + max(deadline - time.perf_counter(), 0.0))
        # a Ctrl-C (SIGTERM, SIGHUP) is held while HiGHS runs, which stops at its next
        # iteration (the callbacks of ExactModel); the held signal then takes its course
        with interrupt_deferred() as held, native_stdout_to_stderr():
            self._held = held
            if signals_held_here():
                ExactModel._watch_interrupts(self)
            h.run()
        return np.array(h.getSolution().col_value, dtype=np.float64)

    def duals(self):
        """The last solve's row multipliers (None when HiGHS has none)."""
        sol = self.h.getSolution()
        if not (self.n_rows and sol.dual_valid):
            return None
        dual = np.array(sol.row_dual, dtype=np.float64)
        return dual if dual.shape == (self.n_rows,) else None

    def certified(self, y):
        """Weak duality with multipliers ``y`` (None: zero) over the box: a
        :class:`~metricopt.bounds.BoundResult` whose value never exceeds the LP's optimum."""
        from ..bounds import lp_dual_bound

        y = np.zeros(self.n_rows) if y is None else y
        return lp_dual_bound(self.cost, self.matrix(), np.full(self.n_rows, -np.inf), self.r_upper,
                             y, 0.0, 1.0, offset=self.offset)
