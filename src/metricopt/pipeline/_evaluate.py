"""``metricopt evaluate``: score a clustering or cut file and certify its ratio."""

import warnings

import numpy as np

from ..exceptions import InputError, InvalidParameterError, MetricOptWarning
from ..io.reports import read_clusters, read_cut, read_report_json, to_jsonable
from ._common import _ratio, _source_text, bound_exceeds, objective_scores, problem_parameters
from ._editing import check_editing, editing_step, lp_params

__all__ = ["evaluate_file"]


def evaluate_file(source, kind, path, *, problem_params=None, read_options=None,
                  lower_bound=None, report=None, refine="none", seed=None, refined_out=None,
                  editing_bound=False, editing_time_limit=None):
    """Score a clustering or cut file and, given a lower bound, certify its ratio.

    Parameters
    ----------
    source : str or os.PathLike
        The graph (path or bundled dataset name).
    kind : {"cc", "sc", "cd"}
    path : str or os.PathLike
        A clustering (``node,cluster``) or, for ``sc``, a cut (``node,in_cut``) file;
        CSV or whitespace-separated.
    problem_params, read_options : dict or None
        As for :func:`run`.
    lower_bound : float or None
        A certified lower bound on the optimum.
    report : str or os.PathLike or None
        A ``report.json``; its lower bound and problem parameters are used (parameters
        given explicitly must agree with it), and its graph size must match.
    refine : {"none", "local", "auto"}, default="none"
        Also improve the clustering or cut by local search
        (:func:`metricopt.rounding.refine_clustering`, :func:`~metricopt.rounding.refine_cut`)
        and report the refined answer beside the given one.
    seed : int or None
        Seeds the refinement's node orders.
    refined_out : str or os.PathLike or None
        Write the refined clustering (``node,cluster``) or cut (``node,in_cut``) here.
    editing_bound : bool, default=False
        ``cc`` with unit weights and ``cd`` only (``problem_params`` with ``relaxation="editing"``
        sets it): also compute the cluster-editing bound of
        :func:`metricopt.solvers.editing_lp.cluster_editing_bound` (exact search on small
        components, the triangle LP with 2-partition rows on the others) and certify with
        the larger of it and ``lower_bound`` (both are certified lower bounds).
    editing_time_limit : float or None
        Seconds for each component's LP of the editing bound.

    Returns
    -------
    dict
        ``graph``, ``problem``, ``file``, ``objective``, ``lower_bound``,
        ``approximation_ratio`` (null without a usable bound), ``scores`` (the
        objective and bound in the problem's other units, e.g. the modularity; null
        when it has none; see :func:`objective_scores`) and ``n_clusters``
        (``cut_size``, the number of nodes in ``S``, for ``sc``); with ``editing_bound``,
        ``editing_bound`` (its ``bound``, ``lp_value``, ``exact``, ``relaxations`` and
        ``seconds``) and ``bound_source`` (``"editing"`` or ``"given"``).
    """
    from ..io import read_input
    from ..problems import build_problem
    from ..rounding import evaluate
    from ..rounding.refine import check_refine_method

    refine = check_refine_method(refine)
    if refined_out is not None and refine == "none":
        raise InvalidParameterError("refined_out needs refine='local'")
    params = dict(problem_params or {})
    read_options = dict(read_options or {})
    rep = None
    if report is not None:
        if lower_bound is not None:
            raise InvalidParameterError("give either a lower bound or a report, not both")
        rep = read_report_json(report)
        params = _params_from_report(rep, kind, params, report)
        lower_bound = rep.get("lower_bound")
        if lower_bound is None:
            raise InputError(f"{report}: the report has no lower bound")
    if params.get("relaxation") == "editing":  # the full LP's problem, and the editing bound
        check_editing(kind, params)
        params, editing_bound = lp_params(params), True
    data = read_input(source, kind, **read_options)
    if rep is not None:
        _check_same_graph(rep, data, report)
    problem = build_problem(kind, data, **params)
    out = {"graph": {"name": data.name, "source": _source_text(source, data), "n": int(data.n),
                     "m": int(data.m) if hasattr(data, "m") else None},
           "problem": {"kind": kind, "params": dict(problem.params)}, "file": str(path)}
    if kind == "sc":
        in_cut = read_cut(path, problem.labels)
        objective = evaluate(problem, in_cut=in_cut)
        out["cut_size"] = int(np.count_nonzero(in_cut))
    else:
        labels = read_clusters(path, problem.labels)
        objective = evaluate(problem, labels=labels)
        out["n_clusters"] = int(labels.max()) + 1 if labels.size else 0
    if lower_bound is not None and not np.isfinite(float(lower_bound)):
        raise InvalidParameterError(f"the lower bound {lower_bound!r} is not a finite number")
    if editing_bound:
        lower_bound = _editing_section(out, problem, data, lower_bound, editing_time_limit)
    if bound_exceeds(objective, lower_bound):
        warnings.warn(f"the given lower bound {float(lower_bound):.10g} exceeds this "
                      f"{'cut' if kind == 'sc' else 'clustering'}'s objective "
                      f"{float(objective):.10g}: it is not a valid lower bound for this "
                      f"problem and its parameters, so no ratio is certified",
                      MetricOptWarning, stacklevel=2)
    out.update(objective=float(objective), lower_bound=lower_bound,
               approximation_ratio=_ratio(objective, lower_bound),
               scores=objective_scores(problem, objective, lower_bound))
    if refine != "none":
        out["refined"] = _refined_section(problem, in_cut if kind == "sc" else labels, seed,
                                          lower_bound, refined_out)
    return to_jsonable(out)


def _editing_section(out, problem, data, lower_bound, time_limit):
    """Add the cluster-editing (cc) or cluster-deletion (cd) bound to ``out``; return the
    bound to certify with."""
    if problem.kind != "cd" and (problem.kind != "cc" or problem.params.get("weights") != "unit"):
        raise InvalidParameterError("the editing bound is for cc with unit weights (cluster "
                                    "editing) or cd (cluster deletion)")
    res = editing_step(data, problem, None, time_limit=time_limit)
    res.pop("search")
    out["editing_bound"] = res
    if lower_bound is None or res["bound"] >= float(lower_bound):
        out["bound_source"] = "editing"
        return float(res["bound"])
    out["bound_source"] = "given"
    return lower_bound


def _refined_section(problem, answer, seed, lower_bound, refined_out):
    """Refine a given clustering or cut and describe the result (``evaluate --refine``)."""
    from ..io.reports import write_clusters_csv, write_cut_csv
    from ..rounding import refine_clustering, refine_cut

    if problem.kind == "sc":
        res = refine_cut(problem, answer)
        size = {"cut_size": int(np.count_nonzero(res.in_cut))}
    else:
        res = refine_clustering(problem, answer, seed=seed)
        size = {"n_clusters": res.n_clusters}
    if refined_out is not None:
        if problem.kind == "sc":
            write_cut_csv(problem.labels, res.in_cut, refined_out)
        else:
            write_clusters_csv(problem.labels, res.labels, refined_out)
    return {"objective": res.objective, "approximation_ratio": _ratio(res.objective, lower_bound),
            "scores": objective_scores(problem, res.objective, lower_bound), **size,
            "moves": res.moves, "merges": res.merges, "sweeps": res.sweeps, "stopped": res.stopped,
            "seconds": res.elapsed, "file": None if refined_out is None else str(refined_out)}


def _params_from_report(report, kind, params, path):
    rep_problem = report.get("problem") or {}
    if rep_problem.get("kind") != kind:
        raise InputError(f"{path}: the report is for problem {rep_problem.get('kind')!r}, not {kind!r}")
    accepted = problem_parameters(kind)
    merged = {k: v for k, v in (rep_problem.get("params") or {}).items() if k in accepted}
    for key, value in params.items():
        if key in merged and merged[key] != value:
            raise InputError(
                f"{path}: the lower bound is for {key}={merged[key]!r}, not {key}={value!r}"
            )
        merged[key] = value
    return merged


def _check_same_graph(rep, data, path):
    graph = rep.get("graph") or {}
    m = int(data.m) if hasattr(data, "m") else None
    if graph.get("n") != data.n or graph.get("m") != m:
        raise InputError(
            f"{path}: the report is for a graph with n={graph.get('n')}, m={graph.get('m')}, "
            f"but {data.name} has n={data.n}, m={m}"
        )
