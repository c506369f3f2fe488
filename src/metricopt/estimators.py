"""Estimators in the scikit-learn style: ``CorrelationClustering().fit(G).labels_``.

Each estimator runs the same job as ``metricopt solve`` (:func:`metricopt.pipeline.run`)
with the same options: read the graph, build the relaxation, solve it, round it, refine
the answer, certify the ratio. With the same options and seed it gives the same labels
and bound as the command line. Parameters are checked when ``fit`` runs, by the
library's own checks (the ones the command line ends in), as scikit-learn's convention
has it; ``__init__`` only stores them.

``get_params`` / ``set_params`` follow scikit-learn's protocol, so ``sklearn.base.clone``
and grid searches work; scikit-learn itself is not needed (nothing here imports it).

Examples
--------
>>> import networkx as nx, metricopt
>>> est = metricopt.CorrelationClustering(weights="unit", method="highs", seed=0)
>>> est.fit(nx.barbell_graph(4, 0)).labels_
array([0, 0, 0, 0, 1, 1, 1, 1])
>>> round(est.ratio_, 6)
1.0
"""

import inspect

import numpy as np

from .exceptions import InvalidParameterError, MetricOptError

__all__ = ["CorrelationClustering", "ClusterDeletion", "SparsestCut"]

#: Estimator parameter -> solver option (as ``metricopt solve``'s flags pass them on).
_SOLVER_PARAMS = ("gamma", "lam", "tol", "gap_tol", "max_iter", "time_limit", "threads",
                  "seed", "max_memory")


class _MetricClustering:
    """What the three estimators share: parameters, ``fit``, the fitted attributes."""

    #: Problem code of :func:`metricopt.pipeline.run`.
    _kind = None

    # -------------------------------------------------------------- sklearn protocol
    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind == p.KEYWORD_ONLY)

    def get_params(self, deep=True):
        """The estimator's parameters, by name.

        Parameters
        ----------
        deep : bool, default=True
            Unused (no parameter is itself an estimator); kept for scikit-learn.

        Returns
        -------
        dict
        """
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set parameters by name; returns the estimator.

        Raises
        ------
        InvalidParameterError
            A name that is not a parameter of this estimator.
        """
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise InvalidParameterError(
                    f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                    f"Valid parameters are: {', '.join(valid)}.")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__)
                    .parameters.values() if p.name != "self"}
        shown = [f"{k}={v!r}" for k, v in self.get_params().items()
                 if not _same(v, defaults.get(k))]
        return f"{type(self).__name__}({', '.join(shown)})"

    def __sklearn_tags__(self):
        """scikit-learn's tags (called by scikit-learn only, which is then installed)."""
        from sklearn.utils import Tags, TargetTags

        tags = Tags(estimator_type="clusterer", target_tags=TargetTags(required=False))
        tags.input_tags.pairwise = False
        tags.input_tags.two_d_array = False
        return tags

    # -------------------------------------------------------------- fitting
    def _run_arguments(self):
        """The arguments of :func:`metricopt.pipeline.run`, as ``metricopt solve`` builds
        them from its flags."""
        from .pipeline import problem_parameters

        params = self.get_params()
        accepted = problem_parameters(self._kind)
        problem = {k: params[k] for k in sorted(accepted - {"max_memory"})
                   if params.get(k) is not None}
        if params.get("max_memory") is not None and "max_memory" in accepted:
            problem["max_memory"] = params["max_memory"]
        solver = {k: params[k] for k in _SOLVER_PARAMS if params.get(k) is not None}
        extra = params.get("solver_options") or {}
        if not isinstance(extra, dict):
            raise InvalidParameterError(
                f"The 'solver_options' parameter of {type(self).__name__} must be a dict or "
                f"None. Got {type(extra).__name__} instead.")
        twice = sorted(set(extra) & set(solver))
        if twice:
            raise InvalidParameterError(
                f"option(s) {', '.join(twice)} given twice (as a parameter and in "
                f"solver_options)")
        solver.update(extra)
        rounding = {"method": params["round_method"], "n_tries": params["n_tries"],
                    "seed": params.get("seed"), "refine": params["refine"]}
        read = {}
        if params.get("fmt") is not None:
            read["fmt"] = params["fmt"]
        if params.get("keep_all_components"):
            read["keep_all_components"] = True
        method = params["method"].lower() if isinstance(params["method"], str) else params["method"]
        return dict(method=method, problem_params=problem, solver_options=solver,
                    rounding=rounding, read_options=read)

    def fit(self, X, y=None, *, out=None, callback=None):
        """Solve the relaxation on graph ``X``, round it and certify the answer.

        Parameters
        ----------
        X : str, os.PathLike or graph object
            Anything :func:`metricopt.read_graph` reads: a file, a bundled dataset name,
            a networkx or igraph graph, a scipy.sparse or numpy adjacency matrix, a
            pandas edge list.
        y : None
            Ignored (scikit-learn's signature).
        out : str or os.PathLike or None, default=None
            Also write the run's files there, as ``metricopt solve --out`` does.
        callback : callable or None
            Called with each iteration record of the solve.

        Returns
        -------
        self

        Raises
        ------
        MetricOptError
            A bad parameter (checked as ``metricopt solve`` checks it), input or option,
            or a backend that returned no solution.
        KeyboardInterrupt
            The solve was interrupted (Ctrl-C).
        """
        from .pipeline import run

        outcome = run(X, self._kind, out=out, callback=callback, **self._run_arguments())
        if outcome.interrupted:
            raise KeyboardInterrupt
        if outcome.rounding is None:
            report = outcome.report
            raise MetricOptError(f"{report['method']} returned no solution "
                                 f"({report['status_name']}): {report['message']}")
        rounding = outcome.rounding
        if self._kind == "sc":
            self.labels_ = np.asarray(rounding["in_cut"], dtype=np.int64)
        else:
            self.labels_ = np.asarray(rounding["labels"], dtype=np.int64)
        report = outcome.summary
        self.n_clusters_ = int(np.unique(self.labels_).size)
        self.lower_bound_ = report["lower_bound"]
        self.lp_value_ = report["lp_value"]
        self.objective_ = report["rounded_objective"]
        self.ratio_ = report["approximation_ratio"]
        self.report_ = report
        self.node_labels_ = np.asarray(outcome.problem.labels, dtype=object)
        self.result_ = outcome
        return self

    def fit_predict(self, X, y=None, **fit_params):
        """``fit(X)`` and return ``labels_``."""
        return self.fit(X, y, **fit_params).labels_

    def clusters_by_label(self):
        """The fitted answer as ``{node label: cluster}`` (``SparsestCut``: 1 for S)."""
        self._check_fitted()
        return self.result_.clusters_by_label()

    def plot(self, out, **kwargs):
        """Write the pictures of the fitted answer into directory ``out``
        (:func:`metricopt.pictures.plot_clusters`)."""
        from .pictures import plot_clusters

        self._check_fitted()
        return plot_clusters(self, out, **kwargs)

    def _check_fitted(self):
        if not hasattr(self, "result_"):
            raise InvalidParameterError(f"This {type(self).__name__} is not fitted yet; call "
                                        f"fit(graph) first.")


def _same(a, b):
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return a is b


_COMMON_DOC = """
    method : str, default="auto"
        A registered backend (``metricopt solvers``) or ``"auto"``.
    seed : int or None, default=None
        Seed of the backend and the rounding (None: fresh entropy, recorded in
        ``report_``).
    gamma, tol, gap_tol, max_iter, time_limit, threads, max_memory : default=None
        The solver options of ``metricopt solve``'s flags of the same names (None: the
        backend's default).
    solver_options : dict or None, default=None
        Further backend options (``--option KEY=VALUE``).
    round_method : str, default="auto"
        Rounding method (``--round``).
    n_tries : int, default=20
        Seeded tries per randomised rounding method (``--round-tries``).
    refine : {"auto", "local", "none"}, default="auto"
        Local search after the rounding (``--refine``).
    fmt : str or None, default=None
        Input format of a file (``--format``; default: from the suffix).
    keep_all_components : bool, default=False
        Keep every connected component (default: only the largest).

    Attributes
    ----------
    labels_ : ndarray of int64, shape (n,)
        {labels}
    n_clusters_ : int
    lower_bound_ : float
        Certified lower bound on the optimum.
    lp_value_ : float
        The relaxation's objective at the returned solution.
    objective_ : float
        The answer's objective (after the refinement).
    ratio_ : float or None
        Certified approximation ratio ``objective_ / lower_bound_``.
    report_ : dict
        The run's report (as ``metricopt solve --json`` prints it).
    node_labels_ : ndarray of object, shape (n,)
        The node of each entry of ``labels_`` (nodes of other components are dropped
        unless ``keep_all_components``).
    result_ : metricopt.pipeline.RunOutcome
        Everything the run produced (graph, problem, solution, rounding).
"""


def _common_doc(labels):
    return _COMMON_DOC.replace("{labels}", labels)


class CorrelationClustering(_MetricClustering):
    _kind = "cc"

    def __init__(self, *, weights="auto", resolution=None, delta=None, epsilon=None,
                 relaxation=None, method="auto", seed=None, gamma=None, tol=None,
                 gap_tol=None, max_iter=None, time_limit=None, threads=None,
                 max_memory=None, solver_options=None, round_method="auto", n_tries=20,
                 refine="auto", fmt=None, keep_all_components=False):
        self.weights = weights
        self.resolution = resolution
        self.delta = delta
        self.epsilon = epsilon
        self.relaxation = relaxation
        self.method = method
        self.seed = seed
        self.gamma = gamma
        self.tol = tol
        self.gap_tol = gap_tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.threads = threads
        self.max_memory = max_memory
        self.solver_options = solver_options
        self.round_method = round_method
        self.n_tries = n_tries
        self.refine = refine
        self.fmt = fmt
        self.keep_all_components = keep_all_components


CorrelationClustering.__doc__ = """Correlation clustering with a certified approximation ratio.

    ``metricopt solve cc`` as an estimator.

    Parameters
    ----------
    weights : str, default="auto"
        Pair weights (``--weights``): jaccard, unit, signed, lambda, lambda-degree,
        modularity; auto is jaccard for unsigned graphs, signed for signed ones.
    resolution, delta, epsilon : float or None, default=None
        ``--resolution``, ``--delta``, ``--epsilon`` (None: the builder's default).
    relaxation : {"full", "wedges", "editing"} or None, default=None
        ``--relaxation`` (None: full; ``"editing"``: unit weights, the cluster-editing
        bound and search after the full LP, see :mod:`metricopt.pipeline._editing`).""" + _common_doc(
    "Cluster of each node, 0..k-1 in order of first appearance.")


class ClusterDeletion(_MetricClustering):
    _kind = "cd"

    def __init__(self, *, method="auto", seed=None, gamma=None, tol=None, gap_tol=None,
                 max_iter=None, time_limit=None, threads=None, max_memory=None,
                 solver_options=None, round_method="auto", n_tries=20, refine="auto",
                 fmt=None, keep_all_components=False):
        self.method = method
        self.seed = seed
        self.gamma = gamma
        self.tol = tol
        self.gap_tol = gap_tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.threads = threads
        self.max_memory = max_memory
        self.solver_options = solver_options
        self.round_method = round_method
        self.n_tries = n_tries
        self.refine = refine
        self.fmt = fmt
        self.keep_all_components = keep_all_components


ClusterDeletion.__doc__ = """Cluster deletion (every cluster a clique) with a certified ratio.

    ``metricopt solve cd`` as an estimator.

    Parameters
    ----------""" + _common_doc("Cluster of each node (each a clique of the graph), 0..k-1.")


class SparsestCut(_MetricClustering):
    _kind = "sc"

    def __init__(self, *, method="auto", seed=None, lam=None, gamma=None, tol=None,
                 gap_tol=None, max_iter=None, time_limit=None, threads=None,
                 max_memory=None, solver_options=None, round_method="auto", n_tries=20,
                 refine="auto", fmt=None, keep_all_components=False):
        self.method = method
        self.seed = seed
        self.lam = lam
        self.gamma = gamma
        self.tol = tol
        self.gap_tol = gap_tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.threads = threads
        self.max_memory = max_memory
        self.solver_options = solver_options
        self.round_method = round_method
        self.n_tries = n_tries
        self.refine = refine
        self.fmt = fmt
        self.keep_all_components = keep_all_components


SparsestCut.__doc__ = """Sparsest cut (Leighton-Rao) with a certified ratio.

    ``metricopt solve sc`` as an estimator; ``labels_`` is the side of the cut.

    Parameters
    ----------
    lam : float or None, default=None
        ``--lambda``: QP weight of the non-edge pairs (projection methods).""" + \
    _common_doc("1 for the nodes of the side S of the cut, 0 for the others.")
