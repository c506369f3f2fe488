"""Separation for the exact LP: the violated metric rows of a point, each added once.

:class:`Separator` finds the rows a point violates (the most violated triangle of each
pair for dense problems, one cycle per edge for sparse ones, the triangle and wedge rows
of an edge problem, or a problem's given rows) and remembers which are in the model, for
the rounds of ``highs-lazy`` and of the LP polish (:mod:`.polish`).
"""

import numpy as np

__all__ = ["Separator"]

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix(v):
    """splitmix64 finaliser, elementwise on uint64 (wrap-around arithmetic)."""
    v = np.asarray(v, dtype=np.uint64)
    with np.errstate(over="ignore"):
        v = v + np.uint64(0x9E3779B97F4A7C15)
        v = (v ^ (v >> np.uint64(30))) * _MIX1
        v = (v ^ (v >> np.uint64(27))) * _MIX2
        return v ^ (v >> np.uint64(31))


class Separator:
    """Finds violated metric rows of a problem and remembers which are in the model.

    ``separate(x)`` returns the row blocks to add and the largest metric violation;
    ``commit()`` marks the rows of the last call as added. Rows already in the model
    are never added twice (a row HiGHS satisfies only to its own tolerance could
    otherwise come back every round).
    """

    def __init__(self, problem, tol, max_rows):
        from . import lp_matrix as lpm

        self.problem = problem
        self.tol = tol
        self.max_rows = max_rows
        self.keys = np.empty(0, dtype=np.uint64)
        self.pending = None
        if problem.rows is not None:
            self.in_model = np.zeros(len(problem.rows), dtype=bool)
        elif problem.structure == "edges":
            self.in_model = np.zeros(lpm.edge_family_size(problem)[0], dtype=bool)

    def _keep(self, keys, viol):
        """Indices of new rows to add, most violated first, capped at ``max_rows``."""
        fresh = np.flatnonzero((viol > self.tol) & ~np.isin(keys, self.keys))
        if self.max_rows is not None and fresh.size > self.max_rows:
            top = np.argpartition(-viol[fresh], self.max_rows - 1)[: self.max_rows]
            fresh = fresh[top]
        return fresh

    def separate(self, x):
        from ...problems._cycles import violated_cycles
        from ...problems._triangles import violated_triangles
        from . import lp_matrix as lpm

        p = self.problem
        if p.rows is not None:
            r = p.rows
            viol = x[r[:, 0]] - x[r[:, 1]] - x[r[:, 2]]
            worst = max(float(viol.max()), 0.0) if viol.size else 0.0
            fresh = np.flatnonzero((viol > self.tol) & ~self.in_model)
            # the most violated new row of each long side, as for the full family
            order = np.lexsort((-viol[fresh], r[fresh, 0]))
            fresh = fresh[order]
            first = np.ones(fresh.size, dtype=bool)
            first[1:] = r[fresh[1:], 0] != r[fresh[:-1], 0]
            fresh = fresh[first]
            if self.max_rows is not None and fresh.size > self.max_rows:
                fresh = fresh[np.argpartition(-viol[fresh], self.max_rows - 1)[: self.max_rows]]
            fresh.sort()
            self.pending = ("ids", fresh)
            return [lpm.triangle_rows(r[fresh])], worst
        if p.structure == "dense":
            rows, viol, _ = violated_triangles(x, p.n, 0.0)
            worst = float(viol.max()) if viol.size else 0.0
            bc = np.sort(rows[:, 1:], axis=1)
            keys = _mix(rows[:, 0].astype(np.uint64) ^ _mix(bc[:, 0].astype(np.uint64) ^ _mix(bc[:, 1])))
            sel = self._keep(keys, viol)
            self.pending = ("keys", keys[sel])
            return [lpm.triangle_rows(rows[sel])], worst
        if p.structure == "sparse":
            offsets, members, viol = violated_cycles(x, p.n, p.pairs, 0.0)
            worst = float(viol.max()) if viol.size else 0.0
            if viol.size == 0:
                self.pending = ("keys", np.empty(0, dtype=np.uint64))
                return [], worst
            with np.errstate(over="ignore"):
                member_hash = np.add.reduceat(_mix(members.astype(np.uint64)), offsets[:-1])
            keys = _mix(_mix(members[offsets[:-1]].astype(np.uint64)) ^ member_hash)
            sel = self._keep(keys, viol)
            self.pending = ("keys", keys[sel])
            lengths = np.diff(offsets)[sel]
            new_offsets = np.zeros(sel.size + 1, dtype=np.int64)
            np.cumsum(lengths, out=new_offsets[1:])
            # gather the members of the selected cycles without a Python loop
            pos = np.repeat(offsets[:-1][sel] - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
            return [lpm.cycle_rows(new_offsets, members[pos])], worst
        viol = lpm.edge_family_violations(p, x)
        worst = max(float(viol.max()), 0.0) if viol.size else 0.0
        fresh = np.flatnonzero((viol > self.tol) & ~self.in_model)
        if self.max_rows is not None and fresh.size > self.max_rows:
            fresh = fresh[np.argpartition(-viol[fresh], self.max_rows - 1)[: self.max_rows]]
        fresh.sort()
        self.pending = ("ids", fresh)
        return lpm.edge_family_rows(p, fresh), worst

    def commit(self):
        kind, data = self.pending
        if kind == "ids":
            self.in_model[data] = True
        else:
            self.keys = np.union1d(self.keys, data)
        self.pending = None

