"""The documentation agrees with the code: command help, README, docstrings, .ci/run."""

import inspect
import re
from pathlib import Path

import click
import pytest

from metricopt import _atomic, pipeline
from metricopt.cli import cli
from metricopt.io import read_graph, reports
from metricopt.problems import build_problem
from metricopt.solvers import registered_solvers

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands(group=cli, prefix=()):
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


COMMANDS = list(_commands())
IDS = [" ".join(path) for path, _ in COMMANDS]


@pytest.mark.parametrize("command", [c for _, c in COMMANDS], ids=IDS)
def test_commands_have_help(command):
    assert command.help, f"{command.name} is missing its help"
    for param in command.params:
        if isinstance(param, click.Option) and param.name not in ("help", "version"):
            assert param.help, f"{command.name} {param.opts[0]} is missing its help"


@pytest.mark.parametrize("command", [c for p, c in COMMANDS if len(p) == 1 and p[0] in (
    "solve", "bound", "evaluate", "info", "solvers")], ids=lambda c: c.name)
def test_command_help_ends_with_an_example(command):
    assert "Example:" in command.help
    assert command.help.strip().splitlines()[-1].strip().startswith("metricopt ")


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS if len(p) == 1], ids=lambda p: p[0])
def test_commands_are_documented(path):
    assert f"metricopt {path[0]}" in README, f"metricopt {path[0]} is not in README.md"


def test_readme_first_screen_has_install_and_test_commands():
    first = "\n".join(README.splitlines()[:12])
    assert "pip install -e . && metricopt solve cc karate" in first
    assert "pip install -e '.[dev]' && python -m pytest" in first


def test_ci_runs_the_readme_commands():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in script
    for line in ("pip install -e .", "metricopt solve cc karate --out", "pip install -e '.[dev]'",
                 "python -m pytest"):
        assert line in script


def test_report_fields_are_documented():
    for field in pipeline.REPORT_FIELDS:
        assert f"`{field}`" in README, f"report field {field} is not in README.md"


# ------------------------------------------------------------------ problems x methods
def _variants(tmp_path):
    signed = tmp_path / "signed.txt"
    signed.write_text("1 2 1\n2 3 -1\n3 1 1\n3 4 -1\n4 1 2\n")
    weighted = tmp_path / "weighted.txt"
    weighted.write_text("1 2 0.5\n2 3 1.5\n3 1 2.5\n3 4 1.0\n")
    karate = read_graph("karate")
    return [
        ("cc", "graph (Jaccard or unit weights)", build_problem("cc", karate)),
        ("cc", "graph, `--relaxation wedges`", build_problem("cc", karate, weights="unit",
                                                             relaxation="wedges")),
        ("cc", "graph, `--layout support`", build_problem("cc", karate, layout="support")),
        ("cc", "signed edge list", build_problem("cc", read_graph(signed))),
        ("sc", "graph", build_problem("sc", karate)),
        ("mn", "matrix or graph, p = 1", build_problem("mn", karate, p=1, source="jaccard")),
        ("mn", "matrix or graph, p = 2", build_problem("mn", karate, p=2, source="jaccard")),
        ("mn", "weighted edge list, p = 1", build_problem("mn", read_graph(weighted), p=1)),
        ("mn", "weighted edge list, p = 2", build_problem("mn", read_graph(weighted), p=2)),
        ("cd", "graph", build_problem("cd", karate)),
    ]


def _expected_table(tmp_path):
    from metricopt.pipeline import solver_table

    rows = {r["name"]: r for r in solver_table()}
    lines = ["| problem | input | structure, objective | " + " | ".join(rows) + " |",
             "|---|---|---|" + "---|" * len(rows)]
    from metricopt.solvers import get_solver

    for kind, what, problem in _variants(tmp_path):
        cells = []
        for name in rows:
            try:
                cells.append("yes" if get_solver(name).supports(problem)[0] else "no")
            except ImportError:
                cells.append("?")
        lines.append(f"| `{kind}` | {what} | {problem.structure}, {problem.objective} | "
                     + " | ".join(cells) + " |")
    return lines


def test_readme_method_table_matches_the_registry(tmp_path):
    expected = _expected_table(tmp_path)
    start = README.index("| problem | input | structure, objective |")
    actual = README[start:].splitlines()[: len(expected)]
    assert actual == expected, "README problems x methods table is stale; expected:\n" + "\n".join(expected)
    for name in registered_solvers():
        assert f"- **{name}**" in README, f"backend {name} is not described in README.md"


# ------------------------------------------------------------------ docstrings
def _documented_params(doc):
    match = re.search(r"\n\s*Parameters\n\s*-+\n(.*?)(?:\n\s*\n\s*[A-Z][a-z]+\n\s*-+\n|\Z)", doc, re.S)
    if not match:
        return []
    indent = None
    names = []
    for line in match.group(1).splitlines():
        if not line.strip():
            continue
        width = len(line) - len(line.lstrip())
        indent = width if indent is None else indent
        if width == indent:
            head = line.strip().split(" : ")[0]
            names += [n.strip().lstrip("*") for n in head.split(",")]
    return names


PUBLIC = [
    f for module in (pipeline, reports, _atomic) for name in module.__all__
    if inspect.isfunction(f := getattr(module, name)) and f.__module__.startswith(module.__name__)
]


@pytest.mark.parametrize("func", PUBLIC, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_docstring_parameters_match_signature(func):
    doc = inspect.getdoc(func)
    assert doc, f"{func.__name__} has no docstring"
    params = [p for p in inspect.signature(func).parameters]
    if params:
        assert _documented_params("\n" + doc) == params


def test_readme_python_example_runs(capsys):
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    lower, objective, ratio = map(float, capsys.readouterr().out.split())
    assert lower <= objective + 1e-9 and ratio == pytest.approx(objective / lower)
