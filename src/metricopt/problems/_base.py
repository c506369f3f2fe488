"""The solver-free description of a metric-constrained relaxation."""

from dataclasses import dataclass, field

import numpy as np

from .._choices import PROBLEM_KINDS, STRUCTURES
from ._pairs import n_pairs, pair_arrays

__all__ = ["MetricProblem", "PROBLEM_KINDS", "STRUCTURES"]


#: Variables per chunk of :meth:`MetricProblem.objective_value`.
_OBJECTIVE_CHUNK = 1 << 20


@dataclass(eq=False)
class MetricProblem:
    """A metric-constrained LP or QP over pair variables ``x``.

    Objective (``objective`` selects the form)::

        linear:  cost @ x + constant
        l1:      sum(weights * |x - target|) + constant
        l2:      sum(weights * (x - target)**2) + constant

    subject to ``lower <= x <= upper``, ``sum(x) == sum_value`` when it is not
    ``None`` (sparsest cut), and the metric constraints of ``structure``:

    ``"dense"``
        Variables are all pairs ``i < j`` in packed order (see ``problems._pairs``);
        constraints are the ``3 * C(n, 3)`` triangle inequalities (never stored), or,
        when ``rows`` is given, only the inequalities ``x_a <= x_b + x_c`` of its rows
        ``(a, b, c)`` (a relaxation: the open-wedge LP of correlation clustering).
    ``"sparse"``
        Variables are the graph's pairs ``pairs[v] = (i, j)``; constraints are the cycle
        inequalities of MET(G): ``x_e <= sum of x over the rest of any cycle through e``
        (exponentially many; separated by shortest paths).
    ``"support"``
        Correlation clustering stored by its support (:mod:`metricopt.problems.support`):
        ``pairs``, ``weights`` and ``target`` list the explicit pairs; every other pair
        has target ``bulk.value`` and the weight of ``bulk``
        (:class:`~metricopt.problems.support.SupportBulk`). Constraints are all triangle
        inequalities of ``K_n``; points are
        :class:`~metricopt.problems.support.SupportPoint` objects.
    ``"edges"``
        Cluster deletion: variables are the edges ``pairs[v]``; for every triangle row
        ``(a, b, c)`` of ``triangles`` the three inequalities ``x_a <= x_b + x_c``,
        ``x_b <= x_a + x_c``, ``x_c <= x_a + x_b``; for every wedge row ``(a, b)`` of
        ``wedges`` the inequality ``x_a + x_b >= 1``.

    Attributes
    ----------
    kind : {"cc", "sc", "mn", "cd"}
    n : int
        Number of nodes.
    labels : ndarray of shape (n,), dtype object
        Original node labels.
    structure : {"dense", "sparse", "edges", "support"}
    objective : {"linear", "l1", "l2"}
    cost, weights, target : ndarray of shape (n_variables,) or None
    constant : float
    lower, upper : float
        Bounds applied to every variable (``-inf`` / ``inf`` when absent).
    sum_value : float or None
    pairs : ndarray of shape (n_variables, 2) or None
        Node pairs of the variables (``None`` for dense problems: implicit packed order).
    triangles : ndarray of shape (t, 3) or None
    wedges : ndarray of shape (w, 2) or None
    rows : ndarray of shape (r, 3) or None
        Dense problems only: packed pair indices ``(a, b, c)`` of the inequalities
        ``x_a <= x_b + x_c`` that replace the full triangle family (``None``: all of
        them). Only backends that declare ``explicit_rows`` solve such a problem.
    bulk : SupportBulk or None
        The pairs a ``"support"`` problem does not list.
    graph : Graph or None
        The graph the problem was built from (rounding and reports use it).
    params : dict
        The builder's parameters, recorded in reports.
    name : str
    units : dict
        Other units of the objective, ``name -> (scale, offset)``: a clustering whose
        objective is ``D`` has ``scale * D + offset`` in that unit (e.g. the modularity
        of a correlation-clustering problem with modularity weights). A lower bound on
        ``D`` maps to a lower bound in that unit when ``scale > 0`` and to an upper
        bound when ``scale < 0``. Empty for most problems.
    """

    kind: str
    n: int
    labels: np.ndarray
    structure: str
    objective: str
    cost: np.ndarray | None = None
    weights: np.ndarray | None = None
    target: np.ndarray | None = None
    constant: float = 0.0
    lower: float = 0.0
    upper: float = np.inf
    sum_value: float | None = None
    pairs: np.ndarray | None = None
    triangles: np.ndarray | None = None
    wedges: np.ndarray | None = None
    rows: np.ndarray | None = None
    bulk: object = None
    graph: object = None
    params: dict = field(default_factory=dict)
    name: str = "problem"
    units: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ sizes
    @property
    def n_variables(self):
        """Number of pair variables."""
        if self.structure == "dense":
            return n_pairs(self.n)
        return int(self.pairs.shape[0])

    @property
    def is_qp(self):
        """True for problems that are already quadratic (metric nearness, p = 2)."""
        return self.objective == "l2"

    def constraint_families(self):
        """Describe the constraint families without materialising them.

        Returns
        -------
        list of dict
            Each with ``name``, ``count`` (``None`` when exponential: cycle
            inequalities) and ``description``.
        """
        n = self.n
        fams = []
        if self.structure == "dense" and self.rows is not None:
            fams.append(
                dict(name="open wedge", count=int(len(self.rows)),
                     description="x_ij <= x_ik + x_jk for every open wedge i-k-j (ik, jk "
                                 "edges, ij not); the other triangle inequalities are dropped")
            )
        elif self.structure in ("dense", "support"):
            fams.append(
                dict(name="triangle", count=3 * (n * (n - 1) * (n - 2) // 6),
                     description="x_ij <= x_ik + x_kj for all i, j, k")
            )
        elif self.structure == "sparse":
            fams.append(
                dict(name="cycle", count=None,
                     description="x_e <= sum of the other edges of any cycle through e (MET(G))")
            )
        else:
            fams.append(
                dict(name="triangle", count=3 * len(self.triangles),
                     description="x_ij <= x_ik + x_jk on every triangle of G")
            )
            fams.append(
                dict(name="wedge", count=len(self.wedges),
                     description="x_ik + x_jk >= 1 on every open wedge i-k-j")
            )
        if self.sum_value is not None:
            fams.append(dict(name="sum", count=1, description=f"sum of x = {self.sum_value:g}"))
        if np.isfinite(self.lower) or np.isfinite(self.upper):
            fams.append(
                dict(name="bounds", count=self.n_variables,
                     description=f"{self.lower:g} <= x <= {self.upper:g}")
            )
        return fams

    @property
    def n_constraints(self):
        """Number of metric and linear constraint rows (``None`` for cycle families).

        Variable bounds are not counted.
        """
        total = 0
        for fam in self.constraint_families():
            if fam["name"] == "bounds":
                continue
            if fam["count"] is None:
                return None
            total += fam["count"]
        return total

    # ------------------------------------------------------------- variables
    def pair_nodes(self):
        """Arrays ``(i, j)`` of the node pairs of all variables."""
        if self.structure == "dense":
            return pair_arrays(self.n)
        return self.pairs[:, 0], self.pairs[:, 1]

    def objective_value(self, x):
        """Objective value of ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_variables,)

        Returns
        -------
        float
        """
        if self.structure == "support":
            from .support import point_objective

            return point_objective(self, x)
        x = np.asarray(x, dtype=np.float64)
        if self.objective == "linear":
            return float(self.cost @ x + self.constant)
        # by chunks: the temporaries stay small at the dense scale (one chunk below it)
        w, d = np.asarray(self.weights), np.asarray(self.target)
        total = 0.0
        for lo in range(0, x.size, _OBJECTIVE_CHUNK):
            e = x[lo:lo + _OBJECTIVE_CHUNK] - d[lo:lo + _OBJECTIVE_CHUNK]
            e = np.abs(e, out=e) if self.objective == "l1" else np.square(e, out=e)
            total += float(w[lo:lo + _OBJECTIVE_CHUNK] @ e)
        return float(total + self.constant)

    def bound_violation(self, x):
        """Largest violation of the variable bounds and the sum row (metric rows excluded).

        O(n_variables); the cheap part of :meth:`max_violation`.
        """
        if self.structure == "support":
            from .support import point_bound_violation

            return point_bound_violation(self, x)
        x = np.asarray(x, dtype=np.float64)
        worst = 0.0
        if x.size:
            # from the extremes: no temporary of the size of x
            if np.isfinite(self.lower):
                worst = max(worst, float(self.lower - x.min()))
            if np.isfinite(self.upper):
                worst = max(worst, float(x.max() - self.upper))
        if self.sum_value is not None:
            worst = max(worst, abs(float(x.sum()) - self.sum_value))
        return worst

    def max_violation(self, x):
        """Largest violation of any constraint (metric, sum and bounds) by ``x``.

        Triangle families are scanned in O(n^3) time without storing them (explicit
        ``rows`` in O(len(rows))); cycle
        inequalities are checked exactly by shortest paths.
        """
        from ._cycles import max_cycle_violation
        from ._triangles import max_triangle_violation

        if self.structure == "support":
            from .support import point_violation

            return point_violation(self, x)
        x = np.asarray(x, dtype=np.float64)
        worst = self.bound_violation(x)
        if self.structure == "dense" and self.rows is not None:
            if len(self.rows):
                r = self.rows
                worst = max(worst, float(np.max(x[r[:, 0]] - x[r[:, 1]] - x[r[:, 2]])))
        elif self.structure == "dense":
            worst = max(worst, max_triangle_violation(x, self.n))
        elif self.structure == "sparse":
            worst = max(worst, max_cycle_violation(x, self.n, self.pairs))
        else:
            if len(self.triangles):
                a, b, c = (x[self.triangles[:, t]] for t in range(3))
                worst = max(worst, float(np.max(a - b - c)), float(np.max(b - a - c)),
                            float(np.max(c - a - b)))
            if len(self.wedges):
                worst = max(worst, float(np.max(1.0 - x[self.wedges[:, 0]] - x[self.wedges[:, 1]])))
        return max(worst, 0.0)

    def __repr__(self):
        ncons = self.n_constraints
        cons = "cycle family" if ncons is None else f"{ncons} constraints"
        return (f"MetricProblem(kind={self.kind!r}, name={self.name!r}, n={self.n}, "
                f"structure={self.structure!r}, objective={self.objective!r}, "
                f"{self.n_variables} variables, {cons})")
