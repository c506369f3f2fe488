"""Estimators: the same answer as ``metricopt solve``, the scikit-learn parameter protocol."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import metricopt
from metricopt.cli import cli
from metricopt.estimators import ClusterDeletion, CorrelationClustering, SparsestCut
from metricopt.exceptions import InvalidParameterError
from metricopt.io.reports import read_clusters, read_cut, read_report_json

ESTIMATORS = (CorrelationClustering, ClusterDeletion, SparsestCut)


@pytest.mark.parametrize("kind, estimator, flags, params", [
    ("cc", CorrelationClustering, [], {}),
    ("cc", CorrelationClustering, ["--weights", "unit", "--method", "dykstra", "--tol", "1e-3",
                                   "--round", "pivot", "--round-tries", "5"],
     {"weights": "unit", "method": "dykstra", "tol": 1e-3, "round_method": "pivot",
      "n_tries": 5}),
    ("sc", SparsestCut, ["--method", "highs"], {"method": "highs"}),
    ("cd", ClusterDeletion, ["--refine", "none"], {"refine": "none"}),
])
def test_same_labels_and_bound_as_solve(kind, estimator, flags, params, runner, tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(cli, ["solve", kind, "karate", "--seed", "7", "--out", str(out),
                                 "--quiet", *flags])
    assert result.exit_code == 0, result.output
    report = read_report_json(out / "report.json")
    fitted = estimator(seed=7, **params).fit("karate")
    labels = fitted.node_labels_
    if kind == "sc":
        expected = read_cut(out / "cut.csv", labels).astype(np.int64)
    else:
        expected = read_clusters(out / "clusters.csv", labels)
    np.testing.assert_array_equal(fitted.labels_, expected)
    assert fitted.lower_bound_ == report["lower_bound"]
    assert fitted.lp_value_ == report["lp_value"]
    assert fitted.objective_ == report["rounded_objective"]
    assert fitted.ratio_ == report["approximation_ratio"]
    assert fitted.report_["method"] == report["method"]
    assert fitted.n_clusters_ == len(set(expected.tolist()))


@pytest.mark.parametrize("make", [
    lambda: nx.karate_club_graph(),
    lambda: sp.csr_matrix(nx.to_scipy_sparse_array(nx.karate_club_graph())),
    lambda: nx.to_numpy_array(nx.karate_club_graph()),
    lambda: metricopt.read_graph("karate"),
], ids=["networkx", "scipy", "numpy", "Graph"])
@pytest.mark.filterwarnings("ignore:cc ignores the weight column")
def test_accepts_what_read_graph_reads(make):
    est = CorrelationClustering(method="highs", seed=0).fit(make())
    assert est.labels_.shape == (34,) and est.ratio_ >= 1.0
    assert est.lower_bound_ <= est.objective_
    assert len(est.clusters_by_label()) == 34


def test_fit_predict_and_sparsest_cut_sides():
    est = SparsestCut(method="highs", seed=0)
    labels = est.fit_predict(nx.barbell_graph(5, 0))
    assert sorted(labels.tolist()) == [0] * 5 + [1] * 5 and est.n_clusters_ == 2
    assert set(labels[:5].tolist()) != set(labels[5:].tolist())


def test_get_and_set_params():
    est = CorrelationClustering(weights="jaccard", seed=3)
    params = est.get_params()
    assert params["weights"] == "jaccard" and params["seed"] == 3 and params["method"] == "auto"
    assert est.set_params(method="highs", n_tries=4) is est
    assert est.method == "highs" and est.n_tries == 4
    with pytest.raises(InvalidParameterError, match="Invalid parameter 'lam'"):
        est.set_params(lam=1.0)  # a sparsest-cut parameter
    assert "lam" in SparsestCut().get_params()
    assert repr(CorrelationClustering(seed=3)) == "CorrelationClustering(seed=3)"


@pytest.mark.parametrize("params, message", [
    ({"delta": 2.0}, "'delta' parameter"),
    ({"weights": "lambda"}, "resolution"),
    ({"method": "nope"}, "nope"),
    ({"tol": -1.0, "method": "dykstra"}, "'tol' parameter"),
    ({"round_method": "sweep"}, "does not apply to cc"),
    ({"refine": "global"}, "refine"),
    ({"n_tries": 0}, "n_tries"),
    ({"seed": -1}, "seed"),
    ({"solver_options": {"seed": 1}, "seed": 1}, "given twice"),
])
def test_parameters_are_checked_at_fit_by_the_library(params, message):
    est = CorrelationClustering(**params)  # __init__ only stores them
    with pytest.raises(metricopt.exceptions.MetricOptError, match=message):
        est.fit("karate")


def test_the_cli_refuses_the_same_values(runner):
    result = runner.invoke(cli, ["solve", "cc", "karate", "--delta", "2"])
    assert result.exit_code == 2
    with pytest.raises(InvalidParameterError, match="'delta' parameter"):
        CorrelationClustering(delta=2.0).fit("karate")


def test_scikit_learn_clone_and_parameter_checks():
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (optional)")
    from sklearn.base import clone
    from sklearn.utils.estimator_checks import (
        check_get_params_invariance,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_set_params,
    )

    for cls in ESTIMATORS:
        est = cls(seed=5, method="highs")
        twin = clone(est)
        assert twin is not est and twin.get_params() == est.get_params()
        name = cls.__name__
        check_get_params_invariance(name, est)
        check_set_params(name, est)
        check_parameters_default_constructible(name, est)
        check_no_attributes_set_in_init(name, est)
    fitted = clone(CorrelationClustering(method="highs", seed=0)).fit("karate")
    assert fitted.labels_.shape == (34,)


def test_the_estimators_do_not_import_scikit_learn():
    import subprocess
    import sys

    code = ("import sys, metricopt; metricopt.CorrelationClustering(seed=0).get_params(); "
            "print('sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_pictures_of_a_fitted_estimator(tmp_path):
    est = CorrelationClustering(method="highs", seed=0)
    with pytest.raises(InvalidParameterError, match="not fitted"):
        est.plot(tmp_path)
    written = est.fit("karate").plot(tmp_path, formats=("png",))
    assert written["clusters-matrix"] == [tmp_path / "clusters-matrix.png"]
    assert (tmp_path / "clusters-network.png").stat().st_size > 5_000
