"""Every option value is checked before any input is read: exit 2, naming the flag.

GRAPH is a path that does not exist in every bad-value case, so a test that passes
shows that the refusal came before the file was opened.
"""

import json

import pytest

from metricopt.cli import cli

MISSING = "no-such-graph.txt"


@pytest.mark.parametrize("kind,args,flag", [
    ("cc", ["--tol", "-1"], "--tol"),
    ("cc", ["--tol", "nan"], "--tol"),
    ("cc", ["--gap-tol", "0"], "--gap-tol"),
    ("cc", ["--delta", "-5"], "--delta"),
    ("cc", ["--delta", "0"], "--delta"),
    ("cc", ["--epsilon", "nan"], "--epsilon"),
    ("cc", ["--time-limit", "inf"], "--time-limit"),
    ("cc", ["--seed", str(2**70)], "--seed"),
    ("cc", ["--gamma", "-inf"], "--gamma"),
    ("cc", ["--round", "sweep"], "--round"),
    ("mn", ["--round", "pivot"], "--round"),
    ("mn", ["--round-tries", "3"], "--round-tries"),
    ("cc", ["--lambda", "0.5"], "--lambda"),
    ("cc", ["--p", "2"], "--p"),
    ("sc", ["--delta", "0.1"], "--delta"),
    ("cc", ["--method", "dykstra", "--option", "bogus=1"], "--option bogus"),
    ("cc", ["--option", "bogus=1"], "--option bogus"),
    ("cc", ["--method", "highs", "--gamma", "5"], "--gamma"),
    ("cc", ["--method", "highs", "--checkpoint", "ck.npz"], "--checkpoint"),
    ("cc", ["--checkpoint-every", "5"], "--checkpoint-every"),
    ("cc", ["--max-iter", "0"], "--max-iter"),
    ("cc", ["--threads", "0"], "--threads"),
])
def test_bad_values_exit_2_naming_the_flag_before_reading(runner, kind, args, flag):
    result = runner.invoke(cli, ["solve", kind, MISSING, *args])
    assert result.exit_code == 2, (args, result.output)
    assert flag in result.stderr, result.stderr
    assert MISSING not in result.stderr.replace(f"'{MISSING}'", "")


def test_bound_checks_options_too(runner):
    result = runner.invoke(cli, ["bound", "cc", MISSING, "--tol", "nan"])
    assert result.exit_code == 2 and "--tol" in result.stderr


def test_evaluate_refuses_a_non_finite_lower_bound(runner, tmp_path):
    result = runner.invoke(cli, ["evaluate", "cc", MISSING, str(tmp_path / "c.csv"),
                                 "--lower-bound", "nan"])
    assert result.exit_code == 2 and "--lower-bound" in result.stderr


def test_auto_accepts_the_common_solver_options(runner):
    # on karate auto picks the exact LP, which has no gamma: dropped with a warning
    result = runner.invoke(cli, ["solve", "cc", "karate", "--method", "auto", "--gamma",
                                 "2", "--gap-tol", "1e-4", "--seed", "0", "--quiet", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["method"] == "highs"
    assert any("gamma" in w for w in report["warnings"])
    assert not any("gap_tol" in w for w in report["warnings"])


def test_library_checks_arguments_before_reading():
    from metricopt import pipeline
    from metricopt.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="sweep"):
        pipeline.run(MISSING, "cc", rounding={"method": "sweep"})
    with pytest.raises(InvalidParameterError, match="gamma"):
        pipeline.run(MISSING, "cc", method="highs", solver_options={"gamma": 5})
