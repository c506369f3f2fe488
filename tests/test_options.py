"""Options declared once (:mod:`metricopt.solvers.core.options`): the command line's flags
and help, ``metricopt solvers METHOD``, the checks, the Python signatures and the batch
keys are derived from the declarations, and the command line and batch manifests read a
value written as text the same way."""

import csv
import inspect
import json
import sys

import click
import pytest

from metricopt import solvers
from metricopt.batch import read_manifest
from metricopt.cli import cli
from metricopt.cli._options import collect_solver_options, flagged_options, solver_options
from metricopt.exceptions import InvalidParameterError
from metricopt.solvers import check_option_values, declared_options, get_solver, registered_solvers
from metricopt.solvers.core.options import Option, check_options, parse_value, takes_options
from metricopt.solvers.dykstra import DykstraSolver

MISSING = "no-such-graph.txt"


def _echo_command():
    """A command with the solver options of ``metricopt solve`` that prints what
    :func:`collect_solver_options` makes of them (built now, from the declarations now)."""
    @click.command()
    @solver_options
    def echo(**opts):
        click.echo(json.dumps(collect_solver_options(opts)))
    return echo


def _cli_values(runner, args):
    result = runner.invoke(_echo_command(), args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _manifest_values(tmp_path, method, params):
    path = tmp_path / "jobs.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["graph", "problem", "method", *params])
        writer.writerow([MISSING, "cc", method, *params.values()])
    (job,) = read_manifest(path)
    return job


# ------------------------------------------------------- a new option appears everywhere
class ShinySolver(DykstraSolver):
    """dykstra with two more options, one with a flag of its own."""

    name = "shiny"
    options = DykstraSolver.options + (
        Option("sparkle", "bytes", default=1024, low=0, low_open=True,
               doc="How much it sparkles."),
        Option("glow", "float", low=0, low_open=True, none=True, flag="--glow",
               doc="How bright it glows."),
    )

    @staticmethod
    def driver(problem, **options):
        return dict(x=None, seen=options)


@pytest.fixture
def shiny(monkeypatch):
    monkeypatch.setitem(solvers.SOLVER_SPECS, "shiny", (__name__, "ShinySolver"))
    monkeypatch.setitem(solvers._INSTANCES, "shiny", ShinySolver())
    return get_solver("shiny")


def test_a_declared_option_reaches_the_signature_and_the_checks(shiny):
    params = inspect.signature(shiny.run).parameters
    assert list(params)[:1] == ["problem"]
    assert params["sparkle"].default == 1024 and params["glow"].default is None
    assert shiny.default_options()["sparkle"] == 1024
    with pytest.raises(InvalidParameterError, match="'sparkle'") as info:
        check_option_values("shiny", {"sparkle": 0})
    assert info.value.requirement == "a number of bytes > 0"
    with pytest.raises(InvalidParameterError, match="'glow'"):
        check_option_values("auto", {"glow": -1.0})  # auto: every backend that takes it


def test_a_declared_option_reaches_the_command_line(runner, shiny):
    help_text = " ".join(runner.invoke(_echo_command(), ["--help"]).output.split())
    assert "--glow FLOAT How bright it glows." in help_text
    assert "sparkle" in help_text.split("--option KEY=VALUE")[1]
    assert _cli_values(runner, ["--method", "shiny", "--glow", "2", "--option",
                                "sparkle=2K"]) == {"glow": 2.0, "sparkle": 2048}
    bad = runner.invoke(_echo_command(), ["--option", "sparkle=lots"])
    assert bad.exit_code == 2 and "sparkle=lots: must be a number of bytes > 0" in bad.output


def test_a_declared_option_reaches_the_listing(runner, shiny):
    result = runner.invoke(cli, ["solvers", "shiny", "--json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["options"]["sparkle"] == 1024
    assert row["option_help"]["glow"] == "How bright it glows."
    assert row["option_values"]["glow"] == "a float > 0 or None"
    assert "callback" not in row["options"]  # hidden
    table = runner.invoke(cli, ["solvers", "shiny"]).stdout
    assert any(line.startswith("│ sparkle ") and "How much it sparkles." in line
               for line in table.splitlines())


def test_a_declared_option_reaches_the_batch_keys(tmp_path, shiny):
    job = _manifest_values(tmp_path, "shiny", {"sparkle": "1K", "glow": "3"})
    assert job.error is None, job.error
    assert job.solver_options == {"sparkle": 1024, "glow": 3.0}
    job = _manifest_values(tmp_path, "shiny", {"sparkle": "0"})
    assert "'sparkle'" in job.error


# ---------------------------------------------------- one parser for CLI and manifests
#: (method, option, text): every kind of value, flags and --option names.
TEXTS = [
    ("dykstra", "tol", "1e-5"),
    ("dykstra", "gamma", "5"),
    ("dykstra", "max_memory", "1.5G"),
    ("dykstra", "max_memory", "1048576"),
    ("highs", "seed", "7"),
    ("dykstra", "threads", "2"),
    ("dykstra", "time_limit", "none"),
    ("dykstra", "polish", "false"),
    ("dykstra", "polish", "auto"),
    ("dykstra", "order", "blocked"),
    ("dykstra", "check_every", "3"),
    ("dykstra", "extrapolate", "true"),
    ("dykstra", "round_digits", "[1, 2]"),
    ("dykstra", "continuation", "true"),
    ("lighttouch", "finish_at", "0.05"),
    ("lighttouch", "touch", "mid"),
    ("highs", "lp_algorithm", "pdlp"),
    ("highs", "verbose", "false"),
    ("project-forget", "scheduler", "tcp://127.0.0.1:8786"),
]


@pytest.mark.parametrize("method,name,text", TEXTS)
def test_command_line_and_manifest_read_text_alike(runner, tmp_path, method, name, text):
    via_option = _cli_values(runner, ["--method", method, "--option", f"{name}={text}"])
    job = _manifest_values(tmp_path, method, {name: text})
    assert job.error is None, job.error
    assert job.solver_options == via_option
    value = job.solver_options[name]
    assert type(value) is type(via_option[name])
    assert value == parse_value(text, get_solver(method).option(name))
    flag = flagged_options().get(name)
    if flag is not None and value is not None:  # the flag reads it alike
        assert _cli_values(runner, ["--method", method, flag.flag, text]) == via_option


def test_text_no_declaration_covers_is_read_as_json():
    assert parse_value("0.25") == 0.25 and parse_value("true") is True
    assert parse_value("jaccard") == "jaccard" and parse_value(3) == 3


# ------------------------------------------------------------------ the declarations
def test_backends_that_share_an_option_name_read_it_alike():
    kinds = {}
    for name in registered_solvers():
        for option in get_solver(name).options:
            kinds.setdefault(option.name, set()).add((option.kind, option.flag, option.hidden))
    assert {k: v for k, v in kinds.items() if len(v) > 1} == {}


@pytest.mark.parametrize("name", registered_solvers())
def test_signatures_are_derived_from_the_declarations(name):
    solver = get_solver(name)
    declared = [(o.name, o.default) for o in solver.options]
    params = inspect.signature(solver.run).parameters.values()
    assert [(p.name, p.default) for p in params][1:] == declared
    if solver.public:  # the public solve_X function
        public = getattr(sys.modules[type(solver).__module__], solver.public)
        params = inspect.signature(public).parameters.values()
        assert [(p.name, p.default) for p in params][1:] == declared


def test_public_function_checks_and_fills_in_defaults():
    from metricopt.solvers.dykstra import solve_dykstra

    with pytest.raises(InvalidParameterError, match="Unknown option.*bogus"):
        solve_dykstra(None, bogus=1)
    with pytest.raises(InvalidParameterError, match="'order' parameter of solve_dykstra"):
        solve_dykstra(None, order="sideways")


def test_a_driver_must_name_its_declared_options():
    with pytest.raises(TypeError, match="lacks"):
        @takes_options((Option("a", "int"), Option("b", "int")))
        def solve_toy(problem, *, a):
            return a


def test_shared_checks_keep_their_messages():
    with pytest.raises(InvalidParameterError) as info:
        check_options("solve_dykstra", tol=-1)
    assert str(info.value) == ("The 'tol' parameter of solve_dykstra must be a float > 0. "
                               "Got -1 instead.")
    with pytest.raises(InvalidParameterError, match=r"True, False or 'auto'\. Got 1.5"):
        check_options("solve_dykstra", polish=1.5)
    with pytest.raises(InvalidParameterError, match="an int >= 1 or None"):
        check_options("solve_project_forget", passes=0)
    check_options("solve_dykstra", threads=10_000, gamma=None, max_iter=3)


def test_every_declared_name_has_a_command_line_spelling(runner):
    help_text = runner.invoke(cli, ["solve", "--help"]).output
    others = " ".join(help_text.split("--option KEY=VALUE")[1].split("--round")[0].split())
    for name, option in declared_options().items():
        if option.flag is not None:
            assert option.flag in help_text
        else:
            assert name in others, name


def test_docstring_examples_run():
    import doctest

    from metricopt.solvers.core import options

    failures, tried = doctest.testmod(options)
    assert failures == 0 and tried > 0
