"""The closed sets of names the command line offers, in a module that imports nothing.

The command line builds its choices (problems, input formats, weight modes, rounding
methods, parameter ranges) from these; the modules that implement them import the same
names from here, so there is one definition of each. Keeping them apart from the
implementations keeps ``metricopt --help`` and ``metricopt solvers`` free of numba,
pandas and scipy imports.
"""

__all__ = ["PROBLEM_KINDS", "STRUCTURES", "LAYOUTS", "FORMATS", "WEIGHT_MODES", "RELAXATIONS",
           "LP_RELAXATIONS", "MN_SOURCES", "WEDGE_WEIGHTS", "ROUNDING_METHODS", "ROUNDING_AUTO",
           "REFINE_METHODS", "DELTA_RANGE", "EPSILON_MIN"]

PROBLEM_KINDS = {
    "cc": "correlation clustering",
    "sc": "sparsest cut (Leighton-Rao)",
    "mn": "metric nearness",
    "cd": "cluster deletion",
}

STRUCTURES = {
    "dense": "all pairs of K_n; triangle inequalities x_ij <= x_ik + x_kj",
    "sparse": "the graph's pairs only; cycle inequalities of MET(G)",
    "edges": "edges only; triangle inequalities on the graph's triangles, x_ik + x_jk >= 1 on open wedges",
    "support": "cc stored by its support: the pairs away from the bulk value 1, the rest in closed form",
}

#: Pair layouts of correlation clustering: every pair, or the support-sized one
#: (:mod:`metricopt.problems.support`); ``"auto"`` picks by size.
LAYOUTS = ("auto", "dense", "support")

#: Input formats of :func:`metricopt.io.read_graph` (the reader table of
#: :mod:`metricopt.io._readers` has one entry for each, in this order).
FORMATS = ("edgelist", "mtx", "gml", "pajek", "mat", "npy", "matrix-csv")

#: Pair weights of correlation clustering.
WEIGHT_MODES = ("auto", "jaccard", "unit", "signed", "lambda", "lambda-degree", "modularity")

#: Constraint sets of the correlation-clustering LP: every triangle inequality, or only
#: those of the graph's open wedges (Veldt 2022's STC+ LP; cc with 0/1 targets
#: ``1 - adjacency``, i.e. unit or lambda weights).
RELAXATIONS = {
    "full": "every triangle inequality (the cc LP)",
    "wedges": "open-wedge relaxation: x_ij <= x_ik + x_jk only where ik, jk are edges and ij is not",
    "editing": "cluster editing (cc, unit weights) and cluster deletion (cd): the full LP, "
               "then a stronger certified bound (cc: critical cliques, exhaustive search, "
               "2-partition rows; cd: independent-set rows) and a search of the clustering; "
               "a run option (metricopt.run, solve, bound, evaluate)",
}

#: The relaxations :func:`metricopt.build_problem` builds as an LP; ``"editing"`` is the
#: full LP plus what a run adds (:mod:`metricopt.pipeline._editing`).
LP_RELAXATIONS = ("full", "wedges")

#: Weight modes whose targets are ``d = 1 - adjacency`` (edges toward together, every
#: non-edge toward apart): the ones the open-wedge relaxation is defined for.
WEDGE_WEIGHTS = ("unit", "lambda")

#: Where metric nearness takes its dissimilarities from.
MN_SOURCES = ("auto", "matrix", "weighted", "jaccard")

#: Rounding methods per problem kind; ``"auto"`` runs the ones in :data:`ROUNDING_AUTO`.
ROUNDING_METHODS = {
    "cc": ("pivot", "threshold", "region-growing", "kwikcluster", "leiden"),
    "sc": ("sweep", "spectral"),
    "cd": ("pivot",),
}
ROUNDING_AUTO = {
    "cc": ("pivot", "threshold", "region-growing"),
    "sc": ("sweep", "spectral"),
    "cd": ("pivot",),
}

#: Local-search refinement after a rounding (``"auto"`` is ``"local"``; ``"none"``: off).
REFINE_METHODS = ("auto", "local", "none")

#: ``delta`` of the Jaccard transform lies strictly inside this interval: ``J - delta``
#: must stay in (-1, 1) for every Jaccard coefficient ``J`` in [0, 1], or the log-odds
#: score is infinite or NaN.
DELTA_RANGE = (0.0, 1.0)
#: Smallest ``epsilon`` (the offset moves a score away from 0, never toward it).
EPSILON_MIN = 0.0
