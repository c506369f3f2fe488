"""Certified lower bounds for the QP regularisations of metric-constrained LPs.

Projection methods solve ``min c'x + (1/2 gamma) x'Wx`` instead of the LP ``min c'x``
(Veldt et al. 2019, V §4-7). This subpackage turns their primal-dual iterates into
numbers that provably bound the LP optimum ``LP*`` (or, where labelled, the NP-hard
optimum) from below:

* a-priori: :func:`apriori_term` / :func:`dual_bound`, ``(D(y) - offset) / (1 + A)``
  (V §6; certified for any ``y >= 0``);
* a-posteriori ratio: :func:`posterior_ratio` (V §7.1; only for the exact QP optimum,
  not certified for an iterate);
* V Thm 5 / Cor 6: :func:`theorem5_bound` and the wrappers
  :func:`sparsest_cut_bound`, :func:`correlation_clustering_bound`,
  :func:`cluster_deletion_bound`, whose inner LPs (a box with one or two linear
  constraints) are solved without an LP solver by :mod:`metricopt.bounds.inner`;
* LP duality: :func:`lp_dual_bound`, weak duality from any row multipliers of an LP
  (an LP solver's duals), over a box known to contain an optimum.

Everything here is pure numerics on arrays and scalars: no solver imports.
"""

from .apriori import (
    AprioriTerm,
    PosteriorRatio,
    apriori_term,
    dual_bound,
    posterior_ratio,
)
from .boxes import optimum_box
from .certificates import (
    BoundResult,
    cluster_deletion_bound,
    correlation_clustering_bound,
    minus_b_dot_y_from_dual,
    sparsest_cut_bound,
    theorem5_bound,
    theorem5_fixed_point_bound,
)
from .driver import RegularisedIterate, certify
from .inner import (
    InfeasibleInnerProblemError,
    InnerSolution,
    TwoConstraintSolution,
    box_maximum,
    box_upper,
    lagrangian_upper_bound,
    max_linear_box_equality,
    max_linear_box_knapsack,
    max_linear_box_two_constraints,
)
from .lp_dual import lp_dual_bound

__all__ = [
    "RegularisedIterate",
    "certify",
    "optimum_box",
    "AprioriTerm",
    "BoundResult",
    "InfeasibleInnerProblemError",
    "InnerSolution",
    "PosteriorRatio",
    "TwoConstraintSolution",
    "apriori_term",
    "box_maximum",
    "box_upper",
    "cluster_deletion_bound",
    "correlation_clustering_bound",
    "dual_bound",
    "lagrangian_upper_bound",
    "lp_dual_bound",
    "max_linear_box_equality",
    "max_linear_box_knapsack",
    "max_linear_box_two_constraints",
    "minus_b_dot_y_from_dual",
    "posterior_ratio",
    "sparsest_cut_bound",
    "theorem5_bound",
    "theorem5_fixed_point_bound",
]
