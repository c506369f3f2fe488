"""Ctrl-C, SIGTERM and SIGHUP stop a run alike: partial report, checkpoint, lock released,
exit 128 + the signal's number; the warm-up (kernels being compiled) included."""

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import metricopt
from metricopt import _signals
from metricopt.io._rundir import LOCK_NAME
from metricopt.result import Status
from metricopt.solvers.core.loop import IterationLoop, interrupt_deferred

SRC = str(Path(metricopt.__file__).resolve().parents[1])
WAIT_S = 240  # generous: a loaded two-core machine, kernels loaded from numba's cache
SIGNALS = [s for s in _signals.SIGNALS]


def _default_sigint():
    """The child starts with SIGINT at its default (a background test runner may have it
    ignored), so that Python installs its KeyboardInterrupt handler, and with SIGHUP at
    its default (a runner started by ``nohup`` has it ignored, and the command line then
    leaves it ignored, as it should)."""
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_DFL)


def _start(args, cwd):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_default_sigint)
    lines = queue.Queue()

    def read():
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return proc, lines


def _wait_for(lines, marker):
    """Read stderr lines until one contains ``marker``; return everything read."""
    seen = []
    while True:
        line = lines.get(timeout=WAIT_S)
        if line is None:
            raise AssertionError(f"the run ended before printing {marker!r}:\n{''.join(seen)}")
        seen.append(line)
        if marker in line:
            return seen


def _finish(proc, lines, seen):
    try:
        proc.wait(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    while True:
        line = lines.get(timeout=WAIT_S)
        if line is None:
            return "".join(seen)
        seen.append(line)


def _error_line(stderr):
    errors = [line for line in stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, stderr
    return errors[0]


def _solve_args(*extra):
    # a tolerance no run reaches: the run is still iterating when the signal comes
    return [sys.executable, "-m", "metricopt", "solve", "cc", "football", "--method",
            "dykstra", "--tol", "1e-13", "--gap-tol", "1e-13", "--max-iter", "1000000",
            "--out", "run", "--checkpoint", "ck.npz", *extra]


@pytest.mark.parametrize("signum", SIGNALS, ids=[_signals.signal_name(s) for s in SIGNALS])
def test_signal_during_iterations_keeps_the_run(tmp_path, signum):
    proc, lines = _start(_solve_args(), tmp_path)
    seen = _wait_for(lines, "iter ")
    os.kill(proc.pid, signum)
    stderr = _finish(proc, lines, seen)
    assert proc.returncode == 128 + signum, stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["status"] == Status.INTERRUPTED
    assert report["status_name"] == "interrupted"
    assert (tmp_path / "ck.npz").is_file()
    assert not (tmp_path / "run" / LOCK_NAME).exists()
    assert not [p for p in (tmp_path / "run").iterdir() if p.name.startswith(".")]
    who = "the user" if signum == signal.SIGINT else _signals.signal_name(signum)
    error = _error_line(stderr)
    assert error.startswith(f"Error: interrupted by {who}; partial results in run"), error
    assert "--resume ck.npz --out run --force" in error


_SLOW_WARM_UP = textwrap.dedent("""
    # The first iteration of the first loop (the warm-up's) takes as long as compiling
    # kernels does on a first run; a signal must not wait for its end.
    import contextlib, sys, time
    from metricopt.solvers.core import loop as _core
    from metricopt.cli.main import main

    original = _core.IterationLoop.iteration
    loops = []

    @contextlib.contextmanager
    def patched(self):
        with original(self) as held:
            if not loops:
                loops.append(self)
            if self is loops[0] and self.it == 1:
                print("compiling (simulated)", file=sys.stderr, flush=True)
                for _ in range(6000):
                    time.sleep(0.05)
            yield held

    _core.IterationLoop.iteration = patched
    sys.exit(main(sys.argv[1:]))
""")


def test_signal_during_warm_up_stops_at_once(tmp_path):
    script = tmp_path / "slow_warm_up.py"
    script.write_text(_SLOW_WARM_UP)
    args = [sys.executable, str(script), *_solve_args()[3:]]
    proc, lines = _start(args, tmp_path)
    seen = _wait_for(lines, "compiling (simulated)")
    assert any("Loading the kernels" in line for line in seen)
    os.kill(proc.pid, signal.SIGTERM)
    stderr = _finish(proc, lines, seen)
    assert proc.returncode == 143, stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["status_name"] == "interrupted"
    assert report["message"].startswith("interrupted by SIGTERM before the solve had an iterate")
    assert report["iterations"] == 0
    assert not (tmp_path / "run" / LOCK_NAME).exists()
    assert not (tmp_path / "ck.npz").exists()  # nothing to save yet, and none claimed
    assert "checkpoint" not in _error_line(stderr)


# ------------------------------------------------------------------ in-process pieces
@pytest.fixture
def answered():
    """The command line's handlers, installed for the test: also where the suite runs as
    a shell's background job, which starts with SIGINT ignored (and an ignored signal
    stays ignored, by design)."""
    before = {s: signal.getsignal(s) for s in SIGNALS}
    for signum, handler in before.items():
        if handler is signal.SIG_IGN:
            signal.signal(signum, signal.SIG_DFL)
    try:
        with _signals.signals_interrupt():
            yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


@pytest.mark.parametrize("signum", SIGNALS, ids=[_signals.signal_name(s) for s in SIGNALS])
def test_deferred_signal_is_raised_after_the_block(answered, signum):
    done = []
    with pytest.raises(_signals.Interrupted) as info:
        with interrupt_deferred() as held:
            signal.raise_signal(signum)
            assert held == [signum]
            done.append(True)
    assert done and info.value.signum == signum
    assert _signals.exit_code(info.value) == 128 + signum
    assert _signals.last_signal() == signum


def test_sigterm_is_not_touched_without_a_handler():
    """A library user's process keeps its own SIGTERM disposition."""
    before = signal.getsignal(signal.SIGTERM)
    with interrupt_deferred():
        assert signal.getsignal(signal.SIGTERM) is before
    assert signal.getsignal(signal.SIGTERM) is before


def test_ignored_signal_stays_ignored():
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with _signals.signals_interrupt():
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_iteration_loop_names_the_signal(answered):
    counters = dict(iteration=0, seconds=0.0)
    saved = []
    loop = IterationLoop("passes", counters, max_iter=10, save=lambda: saved.append(1))
    with loop:
        while loop.next():
            with loop.iteration():
                signal.raise_signal(signal.SIGTERM)
                loop.record(dict(iteration=loop.it))
    assert loop.status == Status.INTERRUPTED
    assert loop.message == "interrupted by SIGTERM after 1 passes"
    assert saved == [1]


def test_plain_keyboard_interrupt_is_sigint():
    assert _signals.exit_code(KeyboardInterrupt()) == 130
    assert _signals.interrupted_by(KeyboardInterrupt()) == "the user"


def test_interrupt_during_the_editing_bound_keeps_the_solve_and_rounding(tmp_path, monkeypatch):
    """A signal in the cluster-editing step: the solve's and the rounding's answers, and a
    report marked interrupted."""
    from metricopt import pipeline
    from metricopt.pipeline import _run

    def editing(*args, **kwargs):
        raise _signals.Interrupted(signal.SIGTERM)

    monkeypatch.setattr(_run, "editing_step", editing)
    outcome = pipeline.run("karate", "cc", problem_params=dict(weights="unit", relaxation="editing"),
                           out=tmp_path / "run")
    assert outcome.interrupted and outcome.rounding is not None and outcome.editing is None
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["message"].startswith("interrupted by SIGTERM during the editing bound; the "
                                        "solve had ended: ")
    assert report["editing"] is None and report["rounded_objective"] is not None
    assert (tmp_path / "run" / "clusters.csv").is_file()


def test_interrupt_during_the_rounding_keeps_the_solve(tmp_path, monkeypatch):
    """A signal in the rounding: the solve's answer and a report marked interrupted."""
    from metricopt import pipeline
    from metricopt.pipeline import _run

    def rounding(*args, **kwargs):
        raise _signals.Interrupted(signal.SIGTERM)

    monkeypatch.setattr(_run, "_round", rounding)
    outcome = pipeline.run("karate", "cc", method="highs", out=tmp_path / "run")
    assert outcome.interrupted and outcome.rounding is None
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["status_name"] == "interrupted"
    assert report["message"].startswith("interrupted by SIGTERM during the rounding; the "
                                        "solve had ended: ")
    assert report["lp_value"] is not None
    assert (tmp_path / "run" / "solution.npz").is_file()
    assert not (tmp_path / "run" / LOCK_NAME).exists()
