"""The listing commands print their tables on stdout, unwrapped when stdout is not a
terminal, and ``solvers METHOD`` describes every option from the backend's docstring."""

import json
import sys

import pytest

from metricopt._docstrings import first_sentence, parameter_docs
from metricopt.cli import cli
from metricopt.pipeline import option_help
from metricopt.solvers import get_solver, registered_solvers


def ok(runner, args):
    result = runner.invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output + result.stderr
    return result


@pytest.mark.parametrize("name", registered_solvers())
def test_solvers_method_describes_every_option(runner, name):
    options = [k for k in get_solver(name).default_options() if k != "callback"]
    result = ok(runner, ["solvers", name])
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    helps = option_help(get_solver(name))
    assert list(helps) == options
    for option in options:
        assert helps[option], f"{name}: option {option!r} has no description in its docstring"
        row = next(line for line in lines if line.startswith(f"│ {option} "))
        assert helps[option] in row  # whole, on the option's own line
    data = json.loads(ok(runner, ["solvers", name, "--json"]).stdout)
    assert data["option_help"] == helps


def test_option_help_comes_from_the_declarations():
    solver = get_solver("highs")
    assert option_help(solver)["time_limit"] == solver.option("time_limit").doc
    assert option_help(get_solver("dykstra"))["order"].startswith("Visiting order")
    assert first_sentence("Seconds; checked after every pass.\n\nMore.") == \
        "Seconds; checked after every pass."
    assert first_sentence("Uses ``x``. Then :func:`~a.b.solve` runs.") == "Uses x."


@pytest.mark.parametrize("name", registered_solvers())
def test_every_declared_option_is_documented_by_its_driver(name):
    # the one line of a declaration is the summary; the driver's docstring the whole story
    solver = get_solver(name)
    documented = solver.driver
    if solver.public:  # the backend's public function carries the whole story
        documented = getattr(sys.modules[type(solver).__module__], solver.public)
    docs = parameter_docs(documented)
    assert set(docs) - {"problem"} == {o.name for o in solver.options}
    for option in solver.options:
        assert option.doc and "\n" not in option.doc, option.name


@pytest.mark.parametrize("args", [["solvers"], ["solvers", "project-forget"],
                                  ["datasets", "list"]])
def test_listings_go_to_stdout_unwrapped(runner, args):
    result = ok(runner, args)
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) > 80  # not folded to the 80 columns of a non-terminal
    # every row of the table is one line: as many rows as entries
    rows = [line for line in lines if line.startswith("│ ")]
    if args == ["solvers"]:
        assert [r.split("│")[1].strip() for r in rows] == registered_solvers()
        description = get_solver("project-forget").description
        assert any(description in r for r in rows)
    elif args[0] == "solvers":
        assert len(rows) == len(get_solver("project-forget").default_options()) - 1
    else:
        from metricopt.datasets import registry

        assert [r.split("│")[1].strip() for r in rows] == list(registry())


def test_json_listings_carry_no_table(runner):
    for args in (["solvers", "--json"], ["solvers", "highs", "--json"],
                 ["datasets", "list", "--json"]):
        json.loads(ok(runner, args).stdout)
