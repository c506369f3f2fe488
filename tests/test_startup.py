"""Quick commands stay quick: no numba, pandas, scipy or matplotlib behind them.

Each command runs in a fresh interpreter that prints which heavy modules it loaded.
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("numba", "pandas", "matplotlib", "scipy")
_PROBE = """
import json, sys
from metricopt.cli import main
try:
    main({args!r})
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["--help"], ["solve", "--help"], ["solvers"],
                                  ["solvers", "dykstra"], ["datasets", "list"], ["--version"]])
def test_quick_commands_import_no_heavy_module(args):
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(args=args, heavy=HEAVY)],
                          capture_output=True, text=True, timeout=120)
    loaded = json.loads(proc.stderr.strip().splitlines()[-1])
    assert loaded == [], (args, loaded)


def test_solve_reports_compile_time_apart_from_solve_time(tmp_path):
    # a fresh interpreter loads (or compiles) the kernels: that time must be in
    # compile_seconds, not in the first pass or the solve time
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "metricopt", "solve", "cc", "karate",
                           "--method", "dykstra", "--out", str(out), "--quiet"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    first = float((out / "iterations.csv").read_text().splitlines()[1].split(",")[1])
    assert report["compile_seconds"] > 0.0
    assert first < report["compile_seconds"] and report["solve_seconds"] < 5.0


def test_subpackages_are_attributes_imported_on_first_use():
    # the README's ``import metricopt; metricopt.pipeline.run(...)``, in a fresh interpreter
    probe = ("import sys, metricopt; before = 'metricopt.pipeline' in sys.modules; "
             "run = metricopt.pipeline.run; print(before, callable(run), "
             "callable(metricopt.io.read_graph))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "True"]
