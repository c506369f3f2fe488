"""The LP polish (:mod:`.core.polish`) over the support-sized layout's run pairs.

The restricted LP's columns are run pairs (positions in the state's pair list), made as
rows need them; a pair without a column sits at its target in the restricted LP (its
optimum there, cost 0), and a pair not in the run at the bulk value 1 (its target: a
bulk pair). Separation is the support scan (:mod:`metricopt.problems._support_scan`) of
the restricted optimum: the most violated inequality of each long side, bulk pairs among
its sides joining the run first. The certificate is the restricted LP's dual
(:meth:`.core.exact_lp.RestrictedModel.certified_bound`): a pair without a column, listed
or not, is free in the restricted LP at cost 0, so the dual bounds the whole LP.
"""

from types import SimpleNamespace

import numpy as np

from .._threads import thread_count
from ..problems._support_scan import support_neighbours, table_lookup
from ..problems.support import SupportPoint
from ._support_kernels import row_keys
from ._support_local import LocalSupportScan

__all__ = ["SupportSpace"]


class SupportSpace:
    """The run pairs of a support-sized state as the polish's variables."""

    def __init__(self, problem, st):
        self.problem, self.st = problem, st

    def columns(self):
        return _SupportColumns(self.problem, self.st)

    def separator(self, tol):
        return _SupportSeparator(self.st, tol)


class _SupportColumns:
    """:class:`.core.exact_lp._Columns` for run pairs (the table grows with the run)."""

    restricted = True

    def __init__(self, problem, st):
        self.problem, self.st = problem, st
        self._of = np.full(st.nvar, -1, dtype=np.int64)
        self.pairs = np.empty(0, dtype=np.int64)
        self.xcol = np.empty(0, dtype=np.int64)

    @property
    def of(self):
        grow = self.st.nvar - self._of.shape[0]
        if grow > 0:
            self._of = np.concatenate([self._of, np.full(grow, -1, dtype=np.int64)])
        return self._of

    def weights(self, pairs):
        """The LP weights of run pairs (explicit ones the problem's, the others their
        bulk weight, never the QP's floor)."""
        p, st = self.problem, self.st
        k = p.pairs.shape[0]
        w = np.empty(pairs.size)
        mine = pairs < k
        w[mine] = p.weights[pairs[mine]]
        other = pairs[~mine]
        w[~mine] = p.bulk.pair_weights(st.pi[other], st.pj[other])
        return w

    def objective(self, pairs):
        from .core.lp_matrix import objective_model

        p = self.problem
        view = SimpleNamespace(objective=p.objective, lower=p.lower, upper=p.upper,
                               constant=0.0, cost=None, weights=self.weights(pairs),
                               target=self.st.delta[pairs])
        return objective_model(view, np.arange(pairs.size, dtype=np.int64), pairs.size)

    def bring_in(self, ids):
        ids = np.unique(np.asarray(ids, dtype=np.int64).ravel())
        return ids[self.of[ids] < 0]

    def full_x(self, z):
        st = self.st
        x = st.delta.copy()
        x[self.pairs] = z[self.xcol]
        return SupportPoint(st.n, np.stack([st.pi, st.pj], axis=1), x, float(st.bulk.value))


class _SupportSeparator:
    """:class:`.core.separation.Separator` by the support scan."""

    def __init__(self, st, tol):
        self.st, self.tol = st, tol
        self.keys = np.empty(0, dtype=np.int64)
        self.pending = None

    def separate(self, x):
        from .core import lp_matrix as lpm

        st = self.st
        n, bulk = st.n, float(st.bulk.value)
        vals = x.values
        csr = support_neighbours(st.pi, st.pj, vals, n, bulk)
        # the run's scan on the threads (the serial scan's rows, in its order)
        rows, worst = LocalSupportScan(thread_count())(st.pi, st.pj, vals, n, bulk, st.table,
                                                       csr, self.tol)
        count = rows.shape[0]
        rows = rows.astype(np.int64)
        a, b, c, side = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]
        pair_key = np.stack([a * n + b, a * n + c, b * n + c], axis=1)
        long_key = pair_key[np.arange(count), side]
        viol = _violation(rows, pair_key, st, vals, bulk)
        # the most violated new row of each long side (as the dense separator keeps)
        keys = row_keys(rows, n)
        fresh = np.flatnonzero(~np.isin(keys, self.keys))
        order = fresh[np.lexsort((-viol[fresh], long_key[fresh]))]
        first = np.ones(order.size, dtype=bool)
        first[1:] = long_key[order[1:]] != long_key[order[:-1]]
        sel = np.sort(order[first])
        self.pending = np.unique(keys[sel])
        pos = self._positions(pair_key[sel].ravel()).reshape(-1, 3)
        s = side[sel]
        long = pos[np.arange(sel.size), s]
        short = np.where(s[:, None] == 0, pos[:, [1, 2]],
                         np.where(s[:, None] == 1, pos[:, [0, 2]], pos[:, [0, 1]]))
        tri = np.column_stack([long, short])
        return [lpm.triangle_rows(tri)], max(float(worst), 0.0)

    def _positions(self, keys):
        st = self.st
        pos = table_lookup(*st.table, keys)
        missing = np.unique(keys[pos < 0])
        if missing.size:
            st.grow(missing)
            pos = table_lookup(*st.table, keys)
        return pos

    def commit(self):
        self.keys = np.union1d(self.keys, self.pending)
        self.pending = None


def _violation(rows, pair_key, st, vals, bulk):
    """Violation of each row at the values ``vals`` of the run pairs (bulk elsewhere)."""
    pos = table_lookup(*st.table, pair_key.ravel()).reshape(-1, 3)
    v = np.where(pos >= 0, vals[np.maximum(pos, 0)] if vals.size else bulk, bulk)
    s = rows[:, 3]
    long = v[np.arange(v.shape[0]), s]
    return 2.0 * long - v.sum(axis=1)
