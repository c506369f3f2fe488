"""Convergence pictures: valid PNGs for long, one-pass and gap-less runs, overlays, CLI."""

import csv
import shutil

import click
import numpy as np
import pytest
from matplotlib.image import imread

from metricopt import pipeline
from metricopt.cli.pipelines import COMMANDS
from metricopt.exceptions import InputError
from metricopt.plotting import plot_convergence, read_iterations

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A 30-pass run, a one-pass run, and a run of another backend."""
    root = tmp_path_factory.mktemp("plot-runs")
    specs = {"long": ("dykstra", {"max_iter": 20, "polish": False}),
             "one": ("dykstra", {"max_iter": 1}),
             "pf": ("project-forget", {"max_iter": 4})}
    for name, (method, options) in specs.items():
        with pytest.warns(Warning):  # iteration limits are reached on purpose
            pipeline.run("karate", "cc", method=method, solver_options={**options, "seed": 0},
                         out=root / name)
    return root


def assert_png(path):
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 20_000
    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 400 and image.shape[1] > 600
    assert np.ptp(image[..., :3]) > 0.5  # not a blank canvas


def copy_run(src, dst, edit_rows):
    shutil.copytree(src, dst)
    path = dst / "iterations.csv"
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(edit_rows(rows))
    return dst


def test_plot_one_run(runs):
    path = plot_convergence(runs / "long")
    assert path == runs / "long" / "convergence.png"
    assert_png(path)


def test_plot_one_pass_run(runs, tmp_path):
    data, report = read_iterations(runs / "one")
    assert len(data["iteration"]) == 1
    assert_png(plot_convergence(runs / "one", tmp_path / "one.png"))


def test_plot_nan_gaps_and_missing_records(runs, tmp_path):
    no_gap = copy_run(runs / "long", tmp_path / "no-gap", lambda rows: [{**r, "gap": ""} for r in rows])
    data, _ = read_iterations(no_gap)
    assert np.isnan(data["gap"]).all() and np.isfinite(data["max_violation"]).all()
    assert_png(plot_convergence(no_gap, tmp_path / "no-gap.png"))
    empty = copy_run(runs / "long", tmp_path / "empty", lambda rows: [])
    data, report = read_iterations(empty)
    assert data["iteration"].tolist() == [report["iterations"]]  # one point from the report
    assert_png(plot_convergence(empty, tmp_path / "empty.png"))


def test_compare_overlays_runs(runs, tmp_path):
    path = plot_convergence([runs / "long", runs / "one", runs / "pf"], tmp_path / "cmp.png")
    assert_png(path)
    with pytest.raises(InputError, match="give an output file"):
        plot_convergence([runs / "long", runs / "pf"])


def test_not_a_run_directory(tmp_path):
    with pytest.raises(InputError, match="not a run directory"):
        plot_convergence(tmp_path)


def test_cli_plot(runs, runner, tmp_path, monkeypatch):
    cli = click.Group("metricopt", commands={c.name: c for c in COMMANDS})
    out = tmp_path / "c.png"
    result = runner.invoke(cli, ["plot", str(runs / "long"), "--compare", str(runs / "pf"), "-o", str(out)],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out)
    assert_png(out)
    result = runner.invoke(cli, ["plot", str(runs / "long"), str(runs / "pf"), "-o", str(out)])
    assert result.exit_code == 2
    result = runner.invoke(cli, ["plot", str(tmp_path)])
    assert result.exit_code == 1 and result.stderr.startswith("Error: ")


# ------------------------------------------------------------ what the plot claims
def test_plot_draws_the_reported_end_point_and_starts_time_at_zero(runs):
    from metricopt.io.reports import read_report_json
    from metricopt.plotting import convergence_figure

    run = runs / "long"
    data, report = read_iterations(run)
    fig = convergence_figure([(run, data, report)])
    gap_pass, gap_time, viol_pass, viol_time = fig.axes[:4]
    finals = [line for line in viol_pass.lines if line.get_label() == "reported (final)"]
    assert len(finals) == 1
    assert finals[0].get_ydata()[0] == pytest.approx(read_report_json(run / "report.json")
                                                     ["max_violation"])
    assert gap_time.get_xlim()[0] == 0.0 and viol_time.get_xlim()[0] == 0.0
    assert viol_pass.get_xlabel() == "pass"
    assert "passes" in fig.get_suptitle()


def test_highs_title_counts_its_own_iterations(tmp_path):
    from metricopt.plotting import convergence_figure

    run = tmp_path / "h"
    pipeline.run("karate", "cc", method="highs", out=run)
    fig = convergence_figure([(run, *read_iterations(run))])
    assert "simplex/IPM/QP iterations" in fig.get_suptitle() and "pass" not in fig.get_suptitle()


@pytest.mark.parametrize("damage", [  # each 2 s (three plots): two in the default run
    "empty iterations", pytest.param("header only", marks=pytest.mark.slow),
    pytest.param("garbage iterations", marks=pytest.mark.slow), "truncated report",
    pytest.param("empty report", marks=pytest.mark.slow)])
def test_damaged_runs_are_skipped_or_explained(runs, tmp_path, runner, damage):
    from metricopt.cli import cli

    bad = tmp_path / "bad"
    shutil.copytree(runs / "long", bad)
    if damage == "empty iterations":
        (bad / "iterations.csv").write_text("")
    elif damage == "header only":
        text = (bad / "iterations.csv").read_text().splitlines()[0]
        (bad / "iterations.csv").write_text(text + "\n")
    elif damage == "garbage iterations":
        (bad / "iterations.csv").write_bytes(b'"unterminated\n\xff\xfe,1,2\n')
    elif damage == "truncated report":
        (bad / "report.json").write_text((bad / "report.json").read_text()[:100])
    else:
        (bad / "report.json").write_text("")
    alone = runner.invoke(cli, ["plot", str(bad)])
    assert "Traceback" not in alone.stderr and alone.exception is None or \
        isinstance(alone.exception, SystemExit), alone.exception
    if alone.exit_code != 0:
        lines = [line for line in alone.stderr.splitlines() if line.strip()]
        assert alone.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error: ")
    both = runner.invoke(cli, ["plot", str(runs / "one"), str(bad)])
    assert both.exit_code == 0, both.output
    report = runner.invoke(cli, ["report", str(runs / "one"), str(bad), "--csv",
                                 str(tmp_path / "r.csv")])
    assert report.exit_code == 0, report.output
    if "report" in damage:
        assert "skipped" in report.stderr and "skipped" in both.stderr
