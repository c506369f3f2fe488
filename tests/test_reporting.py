"""One row per run: flattening report.json, CSV round trip with the documented dtypes."""

import json
import re
from pathlib import Path

import click
import pandas as pd
import pytest

from metricopt import pipeline
from metricopt.cli.pipelines import COMMANDS
from metricopt.exceptions import InputError
from metricopt.reporting import (
    DYNAMIC_PREFIXES,
    REPORT_COLUMNS,
    find_runs,
    load_report_csv,
    markdown_table,
    report_table,
    write_report_csv,
)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "pipelines.md"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three real runs under one parent, one of them nested a level deeper."""
    root = tmp_path_factory.mktemp("runs")
    specs = [
        # (no LP polish: it would end these short runs optimal)
        ("karate-cc", "karate", "cc", {"max_iter": 20, "gamma": 2.0, "seed": 0,
                                       "polish": False}, {}),
        ("dolphins-sc", "dolphins", "sc", {"max_iter": 10, "seed": 0}, {}),
        ("nested/karate-unit", "karate", "cc", {"max_iter": 5, "seed": 1, "polish": False},
         {"weights": "unit"}),
    ]
    for out, graph, kind, options, params in specs:
        with pytest.warns(Warning):  # the iteration limit is reached on purpose
            pipeline.run(graph, kind, method="dykstra", solver_options=options,
                         problem_params=params, out=root / out)
    return root


def test_report_table_has_one_row_per_run_with_documented_dtypes(runs):
    table = report_table([runs])
    assert list(table["run"]) == [str(runs / "dolphins-sc"), str(runs / "karate-cc"),
                                  str(runs / "nested" / "karate-unit")]
    assert list(table.columns[:len(REPORT_COLUMNS)]) == list(REPORT_COLUMNS)
    for name, dtype in REPORT_COLUMNS.items():
        assert str(table[name].dtype) == dtype, name
    dynamic = list(table.columns[len(REPORT_COLUMNS):])
    assert dynamic == sorted(dynamic)
    assert all(c.startswith(DYNAMIC_PREFIXES) for c in dynamic)


def test_row_values_come_from_the_report(runs):
    table = report_table([runs / "karate-cc", runs / "nested"]).set_index("graph_source")
    rep = json.loads((runs / "karate-cc" / "report.json").read_text())
    row = report_table([runs / "karate-cc"]).iloc[0]
    assert (row["n"], row["m"], row["problem"], row["method"]) == (34, 78, "cc", "dykstra")
    assert row["lp_value"] == rep["lp_value"] and row["iterations"] == rep["iterations"] == 20
    assert row["status_name"] == rep["status_name"] and row["success"] == rep["success"]
    assert row["option_gamma"] == 2.0 and row["option_max_iter"] == 20
    assert row["param_weights"] == "jaccard" and row["version_numpy"] == rep["versions"]["numpy"]
    assert row["peak_memory_bytes"] == rep["peak_memory_bytes"]
    assert row["rounding_seed"] == str(rep["rounding"]["seed"])
    assert len(table) == 2


def test_csv_round_trip_with_documented_dtypes(runs, tmp_path):
    table = report_table([runs])
    path = tmp_path / "report.csv"
    write_report_csv(table, path)
    back = load_report_csv(path)
    pd.testing.assert_frame_equal(back, table)
    # the documented dtypes also work with plain pandas
    plain = pd.read_csv(path, dtype=REPORT_COLUMNS)
    for name, dtype in REPORT_COLUMNS.items():
        assert str(plain[name].dtype) == dtype, name
    pd.testing.assert_series_equal(plain["lp_value"], table["lp_value"])
    pd.testing.assert_series_equal(plain["success"], table["success"])
    pd.testing.assert_series_equal(plain["n"], table["n"])


def test_markdown_table(runs):
    text = markdown_table(report_table([runs]))
    lines = text.strip().splitlines()
    assert lines[0].startswith("| run | graph | n | m | problem | method |")
    assert len(lines) == 2 + 3 and all(line.count("|") == lines[0].count("|") for line in lines)
    assert "| karate-cc | karate | 34 | 78 | cc | dykstra |" in text


def test_find_runs_errors(tmp_path):
    with pytest.raises(InputError, match="no such run directory"):
        find_runs([tmp_path / "nope"])
    with pytest.raises(InputError, match="no report.json in this directory or below"):
        find_runs([tmp_path])


def test_find_runs_accepts_report_files_and_deduplicates(runs):
    found = find_runs([runs / "karate-cc" / "report.json", runs / "karate-cc", runs])
    assert found[0] == runs / "karate-cc" and len(found) == 3


def test_cli_report(runs, runner, tmp_path):
    cli = click.Group("metricopt", commands={c.name: c for c in COMMANDS})
    csv_path = tmp_path / "out.csv"
    result = runner.invoke(cli, ["report", str(runs), "--csv", str(csv_path), "--markdown", "-"],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("| run | graph |")
    assert len(load_report_csv(csv_path)) == 3
    result = runner.invoke(cli, ["report", str(tmp_path / "empty")])
    assert result.exit_code == 2  # click: the path does not exist
    (tmp_path / "empty").mkdir()
    result = runner.invoke(cli, ["report", str(tmp_path / "empty")])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {tmp_path / 'empty'}: no report.json in this directory or below"


def test_every_column_is_documented():
    text = DOCS.read_text(encoding="utf-8")
    for name, dtype in REPORT_COLUMNS.items():
        assert re.search(rf"\| `{re.escape(name)}` \| `{dtype}` \|", text), name
