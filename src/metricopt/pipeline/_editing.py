"""The editing step of a run with ``relaxation="editing"``: ``cc`` with unit weights
(cluster editing) and ``cd`` (cluster deletion).

The LP solved is the problem's full LP, as without the option. After it, for cluster
editing, two certified additions of :mod:`metricopt.solvers.editing_lp` and
:mod:`metricopt.rounding.editing_search`:

- the *editing bound*: components split, critical cliques merged (Guo 2009), components
  of few cliques solved by exhaustion, the others by the triangle LP with Grötschel and
  Wakabayashi's star 2-partition rows (HiGHS, certified by weak duality). It is never
  above the optimum, and at least the triangle LP's value up to its own stopping point;
- the *editing search* from the rounded clustering: exact on the small components,
  iterated local search on the others, within a budget counted in iterations (the same
  command gives the same clustering). It never returns a costlier clustering.

For cluster deletion (:mod:`metricopt.solvers.deletion_lp`): the *deletion bound*, the LP
with the neighbourhood independent-set rows (a clique cluster keeps at most one edge from a
node to a set of its pairwise non-adjacent neighbours), certified by weak duality, and the
rounding of that LP's point (the cd pivot rounding and the local search), kept when it
costs less than the run's clustering.

The run's certified ratio is the clustering's cost over the larger of the LP's certified
bound and the editing bound; the report says which (``editing.bound_source``).
"""

import time

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["check_editing", "editing_step", "lp_params"]


def check_editing(kind, params):
    """Refuse ``relaxation="editing"`` where it does not apply: other than ``cc`` with
    unit weights and ``cd``."""
    if params.get("relaxation") != "editing" or kind == "cd":
        return
    if kind != "cc" or params.get("weights") != "unit":
        what = f"problem {kind!r}" if kind != "cc" else f"weights={params.get('weights', 'auto')!r}"
        raise InvalidParameterError(
            f"relaxation='editing' (the cluster-editing or cluster-deletion bound and search) "
            f"is for cc with weights='unit' (cluster editing) or cd (cluster deletion); got "
            f"{what}", parameter="relaxation", value="editing",
            requirement="used with cd, or cc and weights 'unit'")


def lp_params(params):
    """The :func:`metricopt.build_problem` parameters of the LP of a run with ``params``:
    with ``relaxation="editing"``, the full LP."""
    params = dict(params)
    if params.get("relaxation") == "editing":
        params["relaxation"] = "full"
    return params


def editing_step(data, problem, rounded, *, seed=0, time_limit=None, search=True):
    """The editing search (given a rounding) and the editing bound; ``rounded`` takes
    the searched clustering when it costs less, and the bound's LP of a component stops
    once it reaches that clustering's cost there (the clustering is then optimal).

    Parameters
    ----------
    data : Graph
        The graph the problem was built from (its nodes in the problem's order).
    problem : MetricProblem
        The unit-weight ``cc`` problem (its objective scores the clustering).
    rounded : Rounding or None
        Updated in place (``labels``, ``objective``, ``n_clusters``) when the search
        improves it.
    seed : int, default=0
        The search's seed (the rounding's).
    time_limit : float or None
        Seconds for each component's LP of the bound (None: its rounds and stall rule
        stop it, so the bound does not depend on the clock).
    search : bool, default=True

    Returns
    -------
    dict
        ``bound`` (int, certified), ``lp_value``, ``exact`` (the bound is the optimum),
        ``relaxations`` (components per relaxation that gave their bound), ``seconds``,
        and ``search`` (``objective_before``, ``objective``, ``exact_components``,
        ``searched_components``, ``iterations``, ``seconds``; None without a rounding).
    """
    if problem.kind == "cd":
        return _deletion_step(problem, rounded, seed=seed, time_limit=time_limit, search=search)
    from ..rounding import evaluate
    from ..rounding.editing_search import search_cluster_editing
    from ..solvers.editing_lp import cluster_editing_bound

    summary = None
    if rounded is not None and search:
        # the search first: the bound's LPs stop once they reach its clustering's cost
        found = search_cluster_editing(data.n, data.edges, rounded["labels"], seed=int(seed))
        cost = float(evaluate(problem, labels=found.labels))
        summary = {"objective_before": float(rounded["objective"]), "objective": cost,
                   "exact_components": int(found.exact_components),
                   "searched_components": int(found.searched_components),
                   "iterations": int(found.iterations), "seconds": float(found.seconds)}
        if cost < float(rounded["objective"]):
            rounded["labels"] = np.asarray(found.labels, dtype=np.int64)
            rounded["objective"] = cost
            rounded["n_clusters"] = int(found.labels.max()) + 1 if found.labels.size else 0
    labels = None if rounded is None else rounded["labels"]
    res = cluster_editing_bound(data.n, data.edges, time_limit=time_limit, clustering=labels)
    return {"bound": int(res.bound), "lp_value": float(res.lp_value), "exact": bool(res.exact),
            "relaxations": dict(res.relaxations), "seconds": float(res.seconds),
            "search": summary}


def _deletion_step(problem, rounded, *, seed, time_limit, search):
    """:func:`editing_step` for cluster deletion: the deletion bound, and the rounding
    of its LP point. ``exact`` is True when a clustering reaches the bound (it is then the
    optimum); ``time_limit`` is for the whole bound."""
    from ..rounding import round_solution
    from ..solvers.deletion_lp import cluster_deletion_bound

    res = cluster_deletion_bound(problem.n, problem.pairs, time_limit=time_limit)
    out = {"bound": int(res.bound), "lp_value": float(res.lp_value), "exact": False,
           "relaxations": {res.relaxation: 1}, "seconds": float(res.seconds), "search": None}
    if rounded is None or not search:
        return out
    t0 = time.perf_counter()
    found = round_solution(problem, res.x, seed=int(seed))
    cost = float(found.objective)
    out["search"] = {"objective_before": float(rounded["objective"]), "objective": cost,
                     "exact_components": 0, "searched_components": 1,
                     "iterations": int(found.n_tries), "seconds": time.perf_counter() - t0}
    if cost < float(rounded["objective"]):
        rounded["labels"] = np.asarray(found.labels, dtype=np.int64)
        rounded["objective"] = cost
        rounded["n_clusters"] = int(found.n_clusters)
    out["exact"] = bool(min(cost, float(rounded["objective"])) <= res.bound)
    return out
