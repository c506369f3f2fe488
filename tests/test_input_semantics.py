"""How the input's weights are used is stated, never silently reinterpreted."""

import pytest

from metricopt import build_problem, read_graph
from metricopt.exceptions import MetricOptWarning


def _graph(tmp_path, text, name="g.txt"):
    path = tmp_path / name
    path.write_text(text)
    return read_graph(str(path))


SIGNED = "1 2 1\n2 3 -1\n3 4 1\n4 1 1\n1 3 -2\n"
POSITIVE = "1 2 2\n2 3 1\n3 4 1\n4 1 1\n1 3 3\n"


@pytest.mark.parametrize("kind", ["sc", "cd"])
def test_unused_weight_column_is_announced(tmp_path, kind):
    g = _graph(tmp_path, SIGNED)
    with pytest.warns(MetricOptWarning, match=f"{kind} ignores the weight column.*2 of them "
                                              f"negative"):
        build_problem(kind, g)


def test_signed_choice_is_announced_and_explicit_choice_is_quiet(tmp_path, recwarn):
    g = _graph(tmp_path, SIGNED)
    with pytest.warns(MetricOptWarning, match="negative weights: solving signed"):
        problem = build_problem("cc", g)
    assert problem.params["weights"] == "signed"
    recwarn.clear()
    build_problem("cc", g, weights="signed")
    assert not [w for w in recwarn if issubclass(w.category, MetricOptWarning)]


def test_positive_weights_for_cc_are_announced_as_ignored(tmp_path):
    g = _graph(tmp_path, POSITIVE)
    with pytest.warns(MetricOptWarning, match="no negative weight.*--weights signed"):
        problem = build_problem("cc", g)
    assert problem.params["weights"] == "jaccard"


def test_unweighted_input_gives_no_weight_warning(recwarn):
    build_problem("sc", read_graph("karate"))
    assert not [w for w in recwarn if issubclass(w.category, MetricOptWarning)]


def test_conflicting_duplicates_are_counted_with_the_rule(tmp_path):
    with pytest.warns(MetricOptWarning, match=r"2 pairs listed more than once with different "
                                              r"weights, 1 of them with opposite signs; each "
                                              r"pair gets the mean"):
        g = _graph(tmp_path, "1 2 1\n2 1 -1\n2 3 1\n3 2 3\n3 4 1\n3 4 1\n4 1 -1\n")
    summary = g.summary
    assert summary["duplicates"] == 3
    assert summary["conflicting_duplicates"] == 2 and summary["opposite_sign_duplicates"] == 1
    assert "2 with different weights, averaged; 1 of opposite signs" in summary["message"]
    weights = dict(zip(map(tuple, g.edges.tolist()), g.weights.tolist()))
    assert weights[(0, 1)] == 0.0 and weights[(1, 2)] == 2.0


def test_cli_prints_each_semantics_warning_once(runner, tmp_path):
    from metricopt.cli import cli

    path = tmp_path / "s.txt"
    path.write_text(SIGNED)
    result = runner.invoke(cli, ["bound", "sc", str(path), "--method", "highs", "--quiet"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if "ignores the weight column" in line]
    assert len(lines) == 1 and lines[0].startswith("Warning: ")
