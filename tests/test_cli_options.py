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


#: Backend option values and combinations refused from the option tables alone:
#: (problem, arguments, the flag named, the value shown).
BACKEND_VALUES = [
    ("cc", ["--method", "lighttouch", "--option", "touch=bogus"], "--option", "touch=bogus"),
    ("cc", ["--method", "lighttouch", "--option", "finish=later"], "--option", "finish=later"),
    ("cc", ["--method", "lighttouch", "--option", "penalty_growth=0.5"], "--option",
     "penalty_growth=0.5"),
    ("cc", ["--method", "lighttouch", "--option", "group_size=-1"], "--option", "group_size=-1"),
    ("cc", ["--method", "lighttouch", "--option", "eta_w=0"], "--option", "eta_w=0"),
    ("cc", ["--option", "touch=bogus"], "--option", "touch=bogus"),
    ("cc", ["--method", "dykstra", "--option", "check_every=abc"], "--option",
     "check_every=abc"),
    ("sc", ["--method", "dykstra", "--option", "check_every=0"], "--option", "check_every=0"),
    ("cc", ["--method", "dykstra", "--option", "order=sideways"], "--option", "order=sideways"),
    ("cc", ["--method", "dykstra", "--option", "duals=packed"], "--option", "duals=packed"),
    ("cc", ["--method", "dykstra", "--option", "interleave=0"], "--option", "interleave=0"),
    ("cc", ["--method", "dykstra", "--option", "extrapolate=2"], "--option", "extrapolate=2"),
    ("cc", ["--method", "dykstra", "--option", "polish=maybe"], "--option", "polish=maybe"),
    ("cc", ["--method", "dykstra", "--option", "gamma_growth=1"], "--option", "gamma_growth=1"),
    ("mn", ["--method", "project-forget", "--option", "passes=0"], "--option", "passes=0"),
    ("cc", ["--method", "project-forget", "--option", "polish=1.5"], "--option", "polish=1.5"),
    ("cc", ["--method", "highs", "--option", "lp_algorithm=magic"], "--option",
     "lp_algorithm=magic"),
    ("cc", ["--method", "highs-lazy", "--option", "lp_algorithm=pdlp"], "--option",
     "lp_algorithm=pdlp"),
    ("cc", ["--method", "highs-lazy", "--option", "max_rows_per_round=0"], "--option",
     "max_rows_per_round=0"),
    ("cc", ["--method", "highs", "--option", "verbose=3"], "--option", "verbose=3"),
    ("cc", ["--option", "lp_algorithm=magic"], "--option", "lp_algorithm=magic"),
    ("cc", ["--method", "dykstra", "--option", "tol=abc"], "--option", "tol=abc"),
    ("cc", ["--method", "highs", "--option", "seed=-3"], "--option", "seed=-3"),
    ("cc", ["--relaxation", "wedges"], "--relaxation", "wedges"),
    ("cc", ["--relaxation", "wedges", "--weights", "jaccard"], "--relaxation", "wedges"),
    ("cc", ["--relaxation", "wedges", "--weights", "signed"], "--relaxation", "wedges"),
    ("cc", ["--relaxation", "wedges", "--weights", "unit", "--method", "dykstra"],
     "--relaxation", "wedges"),
    ("cc", ["--relaxation", "wedges", "--weights", "lambda", "--resolution", "0.3",
            "--method", "project-forget"], "--relaxation", "wedges"),
]


@pytest.fixture
def input_never_read(monkeypatch):
    """Fail the test if the pipeline opens its input."""
    import metricopt.io

    def read_input(*args, **kwargs):
        raise AssertionError("the input was read")

    monkeypatch.setattr(metricopt.io, "read_input", read_input)


@pytest.mark.parametrize("command", ["solve", "bound"])
@pytest.mark.parametrize("kind,args,flag,shown", BACKEND_VALUES)
def test_backend_option_values_exit_2_naming_the_flag(runner, input_never_read, command, kind,
                                                      args, flag, shown):
    result = runner.invoke(cli, [command, kind, MISSING, *args])
    assert result.exit_code == 2, (args, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith(f"Error: Invalid value for '{flag}': {shown}"), errors[0]
    # the flag, never the backend function that checks the value
    assert "solve_" not in result.stderr and "parameter of" not in result.stderr


def test_valid_backend_option_values_pass_the_check():
    from metricopt.solvers import check_option_values

    check_option_values("lighttouch", {"touch": "mid", "finish": "none", "group_size": 4})
    check_option_values("dykstra", {"order": "blocked", "check_every": 3, "polish": False})
    check_option_values("highs", {"seed": 2**63 - 1, "lp_algorithm": "pdlp"})
    check_option_values("auto", {"tol": 1e-5, "seed": 7, "check_every": 2})


def test_highs_takes_every_seed_the_command_line_offers(runner):
    result = runner.invoke(cli, ["bound", "cc", "karate", "--weights", "unit", "--method",
                                 "highs", "--seed", str(2**62 + 3), "--quiet", "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["lp_value"] == pytest.approx(38.5)


def test_library_checks_option_values_before_reading(input_never_read):
    from metricopt import pipeline
    from metricopt.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="touch") as info:
        pipeline.run(MISSING, "cc", method="lighttouch", solver_options={"touch": "bogus"})
    assert info.value.parameter == "touch" and info.value.value == "bogus"
    with pytest.raises(InvalidParameterError, match="needs weights") as info:
        pipeline.run(MISSING, "cc", problem_params={"relaxation": "wedges"})
    assert info.value.parameter == "relaxation"
    with pytest.raises(InvalidParameterError, match="full triangle family"):
        pipeline.run(MISSING, "cc", method="dykstra",
                     problem_params={"relaxation": "wedges", "weights": "unit"})


def test_batch_manifest_option_values_checked_when_read(tmp_path, input_never_read):
    from metricopt.batch import read_manifest

    manifest = tmp_path / "jobs.csv"
    manifest.write_text("graph,problem,method,params\n"
                        f"{MISSING},cc,lighttouch,touch=bogus\n"
                        f"{MISSING},cc,dykstra,relaxation=wedges; weights=unit\n"
                        f"{MISSING},cc,dykstra,check_every=4\n")
    bogus, wedges, good = read_manifest(manifest)
    assert "'touch'" in bogus.error and "bogus" in bogus.error
    assert "full triangle family" in wedges.error
    assert good.error is None
