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


_LOAD_PROBE = """
import json, sys
from numba.core.dispatcher import Dispatcher
from metricopt.cli import main
from metricopt.solvers import _warmup
from metricopt.solvers.core.loop import IterationLoop

inside, warm, late, loops = [False], [False], [], [0]
warm_up = _warmup.warm_up
def warmed(*args, **kwargs):
    try:
        return warm_up(*args, **kwargs)
    finally:
        warm[0] = True
_warmup.warm_up = warmed
compile_ = Dispatcher.compile  # compiles a kernel, or loads it from the cache
def watched(self, sig):
    if inside[0]:
        late.append(self.py_func.__module__ + "." + self.py_func.__name__)
    return compile_(self, sig)
Dispatcher.compile = watched
enter, leave = IterationLoop.__enter__, IterationLoop.__exit__
def entered(self):
    inside[0] = warm[0]  # the real solve's loop, not the warm-up's
    loops[0] += warm[0]
    return enter(self)
def left(self, *exc):
    inside[0] = False
    return leave(self, *exc)
IterationLoop.__enter__, IterationLoop.__exit__ = entered, left
try:
    main({args!r})
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(dict(late=late, loops=loops[0])), file=sys.stderr)
"""


@pytest.mark.parametrize("method", ["dykstra", "project-forget"])
def test_kernels_are_loaded_before_the_solve_clock_starts(tmp_path, method):
    # a fresh interpreter loads (or compiles) the kernels in the warm-up, counted in
    # compile_seconds: none is loaded inside the iteration loop (its first pass)
    out = tmp_path / "run"
    args = ["solve", "cc", "karate", "--method", method, "--out", str(out), "--quiet"]
    proc = subprocess.run([sys.executable, "-c", _LOAD_PROBE.format(args=args)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stderr.strip().splitlines()[-1])
    assert seen["loops"] >= 1  # the probe watched the solve's loop
    assert seen["late"] == []
    report = json.loads((out / "report.json").read_text())
    assert report["compile_seconds"] > 0.0


def test_subpackages_are_attributes_imported_on_first_use():
    # the README's ``import metricopt; metricopt.pipeline.run(...)``, in a fresh interpreter
    probe = ("import sys, metricopt; before = 'metricopt.pipeline' in sys.modules; "
             "run = metricopt.pipeline.run; print(before, callable(run), "
             "callable(metricopt.io.read_graph))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "True"]
