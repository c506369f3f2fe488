"""The command line, the main job (metricopt.pipeline) and the run-output files."""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from metricopt import pipeline
from metricopt.cli import _render, cli
from metricopt.cli._options import collect_solver_options
from metricopt.exceptions import InputError
from metricopt.io import read_graph
from metricopt.io.reports import (
    ITERATION_COLUMNS,
    atomic_write,
    read_clusters,
    read_cut,
    write_clusters_csv,
    write_cut_csv,
    write_iterations_csv,
    write_report_json,
)
from metricopt.problems import build_problem
from metricopt.solvers import get_solver, registered_solvers

EXACT = "highs"


def invoke(runner, args, **kw):
    return runner.invoke(cli, [str(a) for a in args], **kw)


def ok(runner, args):
    result = invoke(runner, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output + result.stderr
    return result


def fails(runner, args, code=1):
    result = invoke(runner, args)
    assert result.exit_code == code, (result.exit_code, result.output, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.stderr.strip().splitlines()[-1]


def load_report(out):
    with open(out / "report.json") as fh:
        return json.load(fh)


def read_rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def labels_from_csv(path, graph, column):
    index = {str(lab): i for i, lab in enumerate(graph.labels)}
    values = np.empty(graph.n, dtype=np.int64)
    rows = read_rows(path)
    assert sorted(index[r["node"]] for r in rows) == list(range(graph.n))
    for r in rows:
        values[index[r["node"]]] = int(r[column])
    return values


# ------------------------------------------------------------------ solve runs
@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One solve per problem kind on karate with the exact backend, shared by the tests."""
    from click.testing import CliRunner

    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    base = tmp_path_factory.mktemp("runs")
    out = {}
    for kind in ("cc", "sc", "cd"):
        target = base / kind
        result = runner.invoke(cli, ["solve", kind, "karate", "--method", EXACT, "--seed", "0",
                                     "--out", str(target), "--json"], catch_exceptions=False)
        assert result.exit_code == 0, result.output + result.stderr
        out[kind] = (target, result)
    return out


def test_solve_cc_report(runs):
    out, result = runs["cc"]
    summary = json.loads(result.stdout)
    report = load_report(out)
    assert list(report) == list(pipeline.REPORT_FIELDS)
    assert summary == {k: v for k, v in report.items() if k not in pipeline.SUMMARY_OMIT}
    assert report["graph"]["n"] == 34 and report["graph"]["m"] == 78
    assert report["problem"]["params"]["weights"] == "jaccard"
    assert report["method"] == EXACT and report["success"] is True
    assert report["lp_value"] == pytest.approx(21.6704, abs=1e-3)  # V §8.4, paper rule
    # certified from HiGHS's duals: at most the optimum, equal to it up to rounding
    assert report["lp_value"] * (1 - 1e-9) <= report["lower_bound"] <= report["lp_value"]
    assert report["lp_approx_ratio"] == pytest.approx(1.0, abs=1e-9)
    ratio = report["rounded_objective"] / report["lower_bound"]
    assert report["approximation_ratio"] == pytest.approx(ratio, rel=1e-12)
    assert report["approximation_ratio"] >= 1.0 - 1e-9
    assert report["rounding"]["n_tries"] == 20
    assert set(report["files"]) == {"report", "iterations", "clusters", "solution"}
    assert report["command"][:3] == ["metricopt", "solve", "cc"]
    for name in report["files"].values():
        assert (out / name).is_file()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp files left


def test_solve_cc_clusters_roundtrip(runs):
    out, _ = runs["cc"]
    report = load_report(out)
    graph = read_graph("karate")
    problem = build_problem("cc", graph)
    labels = labels_from_csv(out / "clusters.csv", graph, "cluster")
    i, j = problem.pair_nodes()
    x = (labels[i] != labels[j]).astype(float)  # the clustering as an integral metric
    assert problem.objective_value(x) == pytest.approx(report["rounded_objective"], rel=1e-12)
    assert len(set(labels)) == report["rounding"]["n_clusters"]


def test_solve_outputs_are_well_formed(runs):
    out, _ = runs["cc"]
    with open(out / "iterations.csv", newline="") as fh:
        header = next(csv.reader(fh))
    assert tuple(header[: len(ITERATION_COLUMNS)]) == ITERATION_COLUMNS
    with np.load(out / "solution.npz") as npz:
        assert npz["x"].shape == (561,)
        assert str(npz["kind"]) == "cc" and str(npz["structure"]) == "dense"
        assert int(npz["n"]) == 34 and "pairs" not in npz.files
        assert npz["labels"].tolist() == [str(v) for v in read_graph("karate").labels]


def test_solve_sc_cut_roundtrip(runs):
    out, _ = runs["sc"]
    report = load_report(out)
    assert "cut" in report["files"] and "clusters" not in report["files"]
    graph = read_graph("karate")
    side = labels_from_csv(out / "cut.csv", graph, "in_cut").astype(bool)
    size = side.sum()
    crossing = np.sum(side[graph.edges[:, 0]] != side[graph.edges[:, 1]])
    phi = graph.n * crossing / (size * (graph.n - size))
    assert phi == pytest.approx(report["rounded_objective"], rel=1e-12)
    assert report["lower_bound"] <= phi + 1e-9


def test_solve_cd_clusters_are_cliques(runs):
    out, _ = runs["cd"]
    report = load_report(out)
    graph = read_graph("karate")
    labels = labels_from_csv(out / "clusters.csv", graph, "cluster")
    edges = {tuple(e) for e in graph.edges.tolist()}
    for c in set(labels.tolist()):
        members = np.flatnonzero(labels == c)
        assert all((a, b) in edges for k, a in enumerate(members) for b in members[k + 1:])
    cut = np.sum(labels[graph.edges[:, 0]] != labels[graph.edges[:, 1]])
    assert cut == pytest.approx(report["rounded_objective"])


def test_evaluate_with_report_matches_solve(runner, runs):
    out, _ = runs["cc"]
    report = load_report(out)
    result = ok(runner, ["evaluate", "cc", "karate", out / "clusters.csv", "--report", out, "--json"])
    data = json.loads(result.stdout)
    assert data["objective"] == pytest.approx(report["rounded_objective"], rel=1e-12)
    assert data["approximation_ratio"] == pytest.approx(report["approximation_ratio"], rel=1e-12)
    assert "certified ratio" in result.stderr


def test_evaluate_report_parameters_must_agree(runner, runs):
    out, _ = runs["cc"]
    line = fails(runner, ["evaluate", "cc", "karate", out / "clusters.csv", "--report", out,
                          "--weights", "unit"])
    assert line == (f"Error: {out / 'report.json'}: the lower bound is for weights='jaccard', "
                    "not weights='unit'")


def test_evaluate_cut_whitespace_file(runner, runs, tmp_path):
    out, _ = runs["sc"]
    report = load_report(out)
    rows = read_rows(out / "cut.csv")
    path = tmp_path / "cut.txt"
    path.write_text("# node side\n" + "".join(f"{r['node']} {r['in_cut']}\n" for r in rows))
    lb = report["lower_bound"]
    data = json.loads(ok(runner, ["evaluate", "sc", "karate", path, "--lower-bound", lb, "--json"]).stdout)
    assert data["objective"] == pytest.approx(report["rounded_objective"], rel=1e-12)
    assert data["approximation_ratio"] == pytest.approx(report["rounded_objective"] / lb)


def test_bound_has_no_rounding(runner, out_dir):
    result = ok(runner, ["bound", "cd", "karate", "--method", EXACT, "--out", out_dir, "--json",
                         "--quiet"])
    assert result.stderr == ""
    report = json.loads(result.stdout)
    assert report["rounding"] is None and report["rounded_objective"] is None
    assert report["approximation_ratio"] is None
    assert report["lower_bound"] == pytest.approx(report["lp_value"])
    assert sorted(p.name for p in out_dir.iterdir()) == ["iterations.csv", "report.json", "solution.npz"]


def test_bound_metric_nearness_p1_equals_cc_lp(runner, runs):
    """V Thm 1: the Jaccard metric-nearness LP (p = 1) has the cc LP's value."""
    cc = load_report(runs["cc"][0])
    data = json.loads(ok(runner, ["bound", "mn", "karate", "--p", "1", "--method", EXACT, "--json",
                                  "--quiet"]).stdout)
    assert data["lower_bound"] == pytest.approx(cc["lower_bound"], rel=1e-6)


def test_solve_shows_progress_and_summary(runner):
    result = ok(runner, ["solve", "cc", "karate", "--method", EXACT, "--seed", "1"])
    assert result.stdout == ""
    assert "Read karate: 34 nodes, 78 edges" in result.stderr
    assert f"Solving with {EXACT}" in result.stderr
    assert "certified ratio" in result.stderr


def test_solve_shows_the_polish_rounds_on_stderr(runner):
    # dolphins at tol 1e-8: project-forget's QP stalls and the polish ends the run
    result = ok(runner, ["solve", "cc", "dolphins", "--method", "project-forget", "--tol",
                         "1e-8", "--gap-tol", "1e-6", "--threads", "1", "--seed", "0"])
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    start = [k for k, line in enumerate(lines) if line.startswith("polish ")
             and "the exact LP on" in line]
    rounds = [line for line in lines if line.startswith("polish round 1 ")]
    assert start and rounds, result.stderr
    assert "(a lower bound)" in rounds[0] and "rows " in rounds[0]
    assert lines.index(rounds[0]) > start[0]


def test_auto_method_records_reason(runner):
    data = json.loads(ok(runner, ["bound", "cd", "karate", "--json", "--quiet"]).stdout)
    assert data["method"] in registered_solvers()
    assert data["auto_reason"]


def test_seed_makes_runs_reproducible(runner):
    args = ["solve", "cc", "lesmis", "--method", EXACT, "--seed", "3", "--weights", "unit", "--json",
            "--quiet"]
    first, second = (json.loads(ok(runner, args).stdout) for _ in range(2))
    for rep in (first, second):  # the wall-clock seconds are the only difference
        assert rep["rounding"]["refine"].pop("seconds") >= 0.0
        assert rep["rounding"].pop("seconds") >= 0.0
    assert first["rounding"] == second["rounding"]


# ------------------------------------------------------------------ other commands
def test_info(runner):
    result = ok(runner, ["info", "karate", "--json"])
    data = json.loads(result.stdout)
    assert data["graph"]["n"] == 34
    assert [p["kind"] for p in data["problems"]] == ["cc", "sc", "mn", "cd"]
    cc = data["problems"][0]
    assert cc["n_variables"] == 561 and cc["n_constraints"] == 3 * 5984
    assert [b["method"] for b in cc["backends"]] == registered_solvers()
    assert "Relaxations" not in result.stderr + result.stdout.split("{", 1)[0]


def test_info_tables_are_the_answer_on_stdout(runner):
    # metricopt info football > f fills f; only progress and warnings go to stderr
    result = ok(runner, ["info", "football", "--problem", "cc"])
    assert "Relaxations" in result.stdout and "Estimated memory" in result.stdout
    assert "football: n=115" in result.stdout
    assert "Relaxations" not in result.stderr


def test_standard_input_as_graph(runner):
    edges = "a b\nb c\nc a\nc d\nd e\ne f\nf d\n"
    result = runner.invoke(cli, ["solve", "cc", "-", "--method", "highs", "--seed", "0",
                                 "--json", "--quiet"], input=edges)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["graph"]["n"] == 6 and report["graph"]["m"] == 7
    assert report["graph"]["name"] == "stdin"
    result = runner.invoke(cli, ["info", "-", "--json"], input="1 2\n2 3\n")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["graph"]["n"] == 3
    result = runner.invoke(cli, ["bound", "cc", "-"], input="1 2\n2 oops 3 4\n")
    assert result.exit_code == 1 and "<stdin>, line 2" in result.stderr, result.stderr


def test_info_one_problem_and_budget(runner):
    data = json.loads(ok(runner, ["info", "karate", "--problem", "cd", "--max-memory", "1K",
                                  "--json"]).stdout)
    assert [p["kind"] for p in data["problems"]] == ["cd"]
    assert data["memory_budget"] == 1024
    assert "needs about" in data["problems"][0]["error"]


def test_solvers(runner):
    result = ok(runner, ["solvers", "--json"])
    rows = json.loads(result.stdout)
    assert [r["name"] for r in rows] == registered_solvers()
    exact = next(r for r in rows if r["name"] == EXACT)
    assert exact["available"] and exact["exact"]
    one = json.loads(ok(runner, ["solvers", EXACT, "--json"]).stdout)
    assert one["options"] == {k: v for k, v in get_solver(EXACT).default_options().items()
                              if k != "callback"}


def test_version_and_python_m():
    proc = subprocess.run([sys.executable, "-m", "metricopt", "--version"], capture_output=True,
                          text=True, check=True)
    assert proc.stdout.startswith("metricopt, version ")


# ------------------------------------------------------------------ errors (exit 1)
@pytest.fixture
def bad_inputs(tmp_path):
    files = {
        "unparsable": "1 2\n2 x y z\n",
        "empty": "# nothing here\n",
        "nan": "1 2 nan\n2 3 1\n",
        "one_node": "1 1\n",
    }
    out = {}
    for name, text in files.items():
        out[name] = tmp_path / f"{name}.txt"
        out[name].write_text(text)
    return out


@pytest.mark.parametrize("command", ["solve", "bound"])
def test_bad_input_files(runner, bad_inputs, tmp_path, command):
    run = [command, "cc"]
    missing = tmp_path / "missing.txt"
    assert fails(runner, [*run, missing]) == f"Error: File not found: {missing}"
    assert fails(runner, [*run, bad_inputs["unparsable"]]) == (
        f"Error: {bad_inputs['unparsable']}, line 2: cannot parse '2 x y z'")
    assert fails(runner, [*run, bad_inputs["empty"]]) == f"Error: {bad_inputs['empty']}: no edges found"
    assert fails(runner, [*run, bad_inputs["nan"]]) == (
        f"Error: {bad_inputs['nan']}, line 1: weight is not finite")
    assert fails(runner, [*run, bad_inputs["one_node"]]) == (
        f"Error: {bad_inputs['one_node']}: the largest connected component has only one node")


def test_unknown_backend_option(runner):
    result = runner.invoke(cli, ["solve", "cc", "karate", "--method", EXACT, "--option",
                                 "no_such=1"])
    assert result.exit_code == 2
    assert (f"Error: --option no_such does not apply to method '{EXACT}' (its options: "
            in result.stderr)


def test_memory_allowance_error(runner):
    line = fails(runner, ["solve", "sc", "karate", "--method", EXACT, "--max-memory", "1K"])
    assert line.startswith("Error: sparsest cut on 34 nodes (561 pair variables) needs about ")
    assert line.endswith("raise --max-memory")


def test_signed_weights_need_a_signed_graph(runner):
    line = fails(runner, ["solve", "cc", "karate", "--weights", "signed", "--method", EXACT])
    assert line == ("Error: weights='signed' needs a signed edge list (u v weight), "
                    "but the graph has no weights")


def test_output_directory_error(runner, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    line = fails(runner, ["bound", "cd", "karate", "--method", EXACT, "--out", blocker / "sub"])
    assert line == f"Error: cannot create output directory {blocker / 'sub'}: Not a directory"


def test_evaluate_errors(runner, runs, tmp_path):
    out, _ = runs["cc"]
    rows = read_rows(out / "clusters.csv")
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("node,cluster\n" + "".join(f"{r['node']},{r['cluster']}\n" for r in rows)
                       + "zzz,1\n")
    assert fails(runner, ["evaluate", "cc", "karate", unknown]) == (
        f"Error: {unknown}: line 36: unknown node 'zzz' (not in the graph)")
    missing = tmp_path / "missing.csv"
    missing.write_text("node,cluster\n" + "".join(f"{r['node']},{r['cluster']}\n" for r in rows[:-3]))
    last = rows[-3]["node"]
    assert fails(runner, ["evaluate", "cc", "karate", missing]) == (
        f"Error: {missing}: node {last!r} and 2 more missing")
    twice = tmp_path / "twice.txt"
    twice.write_text("".join(f"{r['node']} {r['cluster']}\n" for r in rows) + f"{rows[0]['node']} 0\n")
    assert fails(runner, ["evaluate", "cc", "karate", twice]) == (
        f"Error: {twice}: line 35: node {rows[0]['node']!r} listed twice (first on line 1)")
    nowhere = tmp_path / "nowhere.csv"
    assert fails(runner, ["evaluate", "cc", "karate", nowhere]) == f"Error: File not found: {nowhere}"
    assert fails(runner, ["evaluate", "cc", "karate", out / "clusters.csv", "--report", tmp_path]) == (
        f"Error: File not found: {tmp_path / 'report.json'}")
    assert fails(runner, ["evaluate", "mn", "karate", out / "clusters.csv"]).startswith(
        "Error: rounding is not defined for metric nearness")


def test_evaluate_report_without_bound(runner, tmp_path, runs):
    out, _ = runs["cc"]
    report = load_report(out)
    report["lower_bound"] = None
    path = tmp_path / "report.json"
    write_report_json(report, path)
    assert fails(runner, ["evaluate", "cc", "karate", out / "clusters.csv", "--report", path]) == (
        f"Error: {path}: the report has no lower bound")


# ------------------------------------------------------------------ usage errors (exit 2)
@pytest.mark.parametrize("args, message", [
    (["solve", "sc", "karate", "--weights", "unit"], "Error: --weights does not apply to sc"),
    (["solve", "cc", "karate", "--p", "1"], "Error: --p does not apply to cc"),
    (["solve", "cc", "karate", "--method", "nope"],
     "Error: Invalid value for '--method': 'nope' is not one of "
     + ", ".join(repr(m) for m in ["auto", *registered_solvers()]) + "."),
    (["solve", "cc", "karate", "--max-memory", "12Q"],
     "Error: Invalid value for '--max-memory': '12Q' is not a size (examples: 8G, 512M, 1048576)"),
    (["solve", "cc", "karate", "--option", "gamma"],
     "Error: Invalid value for '--option': 'gamma' is not KEY=VALUE (example: --option gamma=5)"),
    (["solve", "cc", "karate", "--seed", "1", "--option", "seed=2"],
     "Error: option 'seed' given twice (--seed and --option seed=...)"),
    (["solve", "xx", "karate"],
     "Error: Invalid value for 'PROBLEM': 'xx' is not a problem; choose one of cc "
     "(correlation-clustering), sc (sparsest-cut), mn (metric-nearness), cd (cluster-deletion)"),
    (["solvers", "nope"], None),
])
def test_usage_errors(runner, args, message):
    line = fails(runner, args, code=2)
    if message is not None:
        assert line == message


def test_evaluate_bound_sources_are_exclusive(runner, runs):
    out, _ = runs["cc"]
    line = fails(runner, ["evaluate", "cc", "karate", out / "clusters.csv", "--lower-bound", "1",
                          "--report", out], code=2)
    assert line == "Error: use either --lower-bound or --report, not both"


# ------------------------------------------------------------------ Ctrl-C
def _keyboard_interrupt():
    raise KeyboardInterrupt


def _wrapped_interrupt():
    """What Ctrl-C looks like when it lands as compiled numba code returns."""
    try:
        _keyboard_interrupt()
    except KeyboardInterrupt as exc:
        raise SystemError("returned a result with an exception set") from exc


@pytest.mark.parametrize("raiser", [_keyboard_interrupt, _wrapped_interrupt])
def test_ctrl_c_exits_130(runner, monkeypatch, raiser):
    def interrupted(*args, **kwargs):
        raiser()

    monkeypatch.setattr(pipeline, "run", interrupted)
    result = invoke(runner, ["solve", "cc", "karate"])
    assert result.exit_code == 130
    assert result.stderr.strip() == "Error: interrupted by the user"


def test_ctrl_c_during_iterations(runner, monkeypatch, out_dir):
    """Ctrl-C inside a backend's progress callback: exit 130 and no half-written file."""
    problem = build_problem("cc", read_graph("karate"))
    rows = [r for r in pipeline.solver_table() if r["available"] and "callback" in
            get_solver(r["name"]).default_options()]
    method = next((r["name"] for r in rows if get_solver(r["name"]).supports(problem)[0]), None)
    if method is None:
        pytest.skip("no available backend reports progress")

    def interrupt(self, record):
        raise KeyboardInterrupt

    monkeypatch.setattr(_render.RunProgress, "iteration", interrupt)
    result = invoke(runner, ["solve", "cc", "karate", "--method", method, "--out", out_dir])
    assert result.exit_code == 130
    assert result.stderr.strip().splitlines()[-1].startswith("Error: interrupted by the user")
    assert not [p for p in out_dir.iterdir() if p.name.startswith(".")]


# ------------------------------------------------------------------ library pieces
def test_only_given_solver_options_are_forwarded():
    none = dict(gamma=None, lam=None, tol=None, gap_tol=None, max_iter=None, time_limit=None,
                threads=None, seed=None, max_memory=None, checkpoint=None, resume=None,
                extra_options=())
    assert collect_solver_options(none) == {}
    given = dict(none, time_limit=2.5, max_memory=2**30, extra_options=(("gamma", 5),))
    assert collect_solver_options(given) == {"time_limit": 2.5, "max_memory": 2**30, "gamma": 5}


@pytest.mark.parametrize("numerator, lower_bound, expected", [
    (3.0, 2.0, 1.5), (0.0, 0.0, 1.0), (0.0, -1.0, 1.0), (0.0, 1.0, None), (5.0, 0.0, None),
    (5.0, -1.0, None),
    (None, 1.0, None), (1.0, None, None), (1.0, float("nan"), None),
])
def test_ratio_is_honest_at_zero(numerator, lower_bound, expected):
    from metricopt.pipeline._common import _ratio

    assert _ratio(numerator, lower_bound) == expected


def test_pipeline_run_library_call(tmp_path):
    outcome = pipeline.run("karate", "cc", method=EXACT, problem_params={"weights": "unit"},
                           rounding={"method": "pivot", "n_tries": 3, "seed": 7}, out=tmp_path)
    assert outcome.report["rounding"]["method"] == "pivot"
    assert outcome.report["rounding"]["n_tries"] == 3
    assert outcome.report["lower_bound"] == pytest.approx(outcome.result.fun)
    assert outcome.files["report"] == tmp_path / "report.json"
    assert outcome.report["command"] is None


def test_clusters_and_cut_files_roundtrip(tmp_path):
    labels = np.array(["a", "b", "c", "d"], dtype=object)
    write_clusters_csv(labels, [2, 2, 5, 0], tmp_path / "c.csv")
    assert read_clusters(tmp_path / "c.csv", labels).tolist() == [0, 0, 1, 2]
    write_cut_csv(labels, [True, False, False, True], tmp_path / "s.csv")
    assert read_cut(tmp_path / "s.csv", labels).tolist() == [True, False, False, True]
    (tmp_path / "w.txt").write_text("% comment\nd x\nc y\nb y\na x\n")
    assert read_clusters(tmp_path / "w.txt", labels).tolist() == [0, 1, 1, 0]
    (tmp_path / "bad.csv").write_text("node,in_cut\na,1\nb,2\nc,0\nd,0\n")
    with pytest.raises(InputError, match=r"line 3: in_cut must be 0 or 1, got '2'"):
        read_cut(tmp_path / "bad.csv", labels)
    (tmp_path / "three.csv").write_text("a,1,2\n")
    with pytest.raises(InputError, match=r"line 1: expected 2 fields \(node cluster\), got 3"):
        read_clusters(tmp_path / "three.csv", labels)


def test_iterations_csv_columns(tmp_path):
    history = [{"iteration": 1, "seconds": 0.5, "primal": 1.0, "zeta": 3, "full_check": True},
               {"iteration": 2, "alpha": float("nan"), "full_check": False}]
    write_iterations_csv(history, tmp_path / "it.csv")
    lines = (tmp_path / "it.csv").read_text().splitlines()
    assert lines[0] == ",".join([*ITERATION_COLUMNS, "alpha", "zeta"])
    assert lines[1] == "1,0.5,1.0,,,,1,,,3"
    assert lines[2] == "2,,,,,,0,,,"


def test_report_json_has_no_nan(tmp_path):
    write_report_json({"a": float("nan"), "b": np.float64(2.5), "c": np.arange(2)}, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text()) == {"a": None, "b": 2.5, "c": [0, 1]}


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(path) as fh:
        fh.write("half")
        raise RuntimeError("disk full")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["report.json"]


def test_problem_names_written_out_are_accepted(runner):
    from metricopt.cli._options import KINDS

    assert KINDS.convert("sparsest-cut", None, None) == "sc"
    assert KINDS.convert("Correlation_Clustering", None, None) == "cc"
    assert KINDS.convert("cd", None, None) == "cd"
    assert "sparsest-cut" in fails(runner, ["bound", "cut", "karate"], code=2)
    result = ok(runner, ["bound", "metric-nearness", "karate", "--quiet", "--json"])
    assert json.loads(result.stdout)["problem"]["kind"] == "mn"
