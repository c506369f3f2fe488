"""How a ``metricopt solve`` answers SIGINT, SIGTERM and SIGHUP, two revisions side by side.

Usage::

    python benchmarks/bench_signals.py BEFORE [AFTER] [--signals INT,TERM,HUP]
        [--scenarios warm-up,solve] [--repeat 1]

Each row starts a fresh ``python -m metricopt solve ... --out DIR --checkpoint FILE`` of
the revision (its ``src`` first on ``PYTHONPATH``; revisions as in :mod:`compare_revisions`,
temporary git worktrees, AFTER defaults to the working tree) and sends the signal when a
line of its standard error shows the phase:

- ``warm-up``: Jaccard ``cc`` on karate with project-forget, at the line "Loading the
  kernels" (the kernels are loaded or compiled then);
- ``solve``: sparsest cut on USAir97 with dykstra, one second after the first
  iteration line.

It reports the seconds from the signal to the process's exit, the exit code, the status in
``report.json`` (``-``: none written), whether the checkpoint exists and whether the run
directory's lock file was left behind, as a markdown table. Each revision runs once
before the timed rows (its numba cache is then warm, as on a user's machine after the
first run). The data file is looked up in ``$METRICOPT_DATA``, else ``../shared/data``.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from _data import data_dir
from compare_revisions import revision_trees

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = str(data_dir())
LOCK = ".metricopt-run.lock"

SCENARIOS = {
    # name: (arguments after "solve", stderr line that starts the clock, delay in s)
    "warm-up": (["cc", "karate", "--method", "project-forget"], "Loading the kernels", 0.0),
    "solve": (["sc", os.path.join(DATA, "USAir97.txt"), "--method", "dykstra"], "iter ", 1.0),
}


def _reset_signals():
    # a benchmark started in the background inherits SIGINT ignored; the child must not
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def signalled_run(src, scenario, signame, tmp):
    """One run of ``scenario`` sent ``SIG<signame>``; a dict of what came out."""
    args, marker, delay = SCENARIOS[scenario]
    out = os.path.join(tmp, f"{scenario}-{signame}")
    ck = out + ".ck.npz"
    env = dict(os.environ, PYTHONPATH=src)
    proc = subprocess.Popen([sys.executable, "-m", "metricopt", "solve", *args, "--out", out,
                             "--checkpoint", ck, "--force"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=env, preexec_fn=_reset_signals)
    sent = None
    for line in proc.stderr:
        if marker in line:
            time.sleep(delay)
            sent = time.perf_counter()
            proc.send_signal(getattr(signal, f"SIG{signame}"))
            break
    proc.stderr.read()
    code = proc.wait()
    latency = time.perf_counter() - sent if sent is not None else float("nan")
    status = "-"
    report = os.path.join(out, "report.json")
    if os.path.exists(report):
        with open(report) as f:
            status = json.load(f).get("status_name", "?")
    return dict(latency=latency, code=code, status=status, checkpoint=os.path.exists(ck),
                lock=os.path.exists(os.path.join(out, LOCK)), marker=sent is not None)


def _cell(r):
    if not r["marker"]:
        return "phase not seen"
    code = r["code"]
    code = f"{128 - code} (killed)" if code < 0 else str(code)  # as a shell reports it
    return (f"{r['latency']:.2f} s, exit {code}, report {r['status']}, "
            f"checkpoint {'yes' if r['checkpoint'] else 'no'}, "
            f"lock {'left' if r['lock'] else 'released'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after", nargs="?", default=None)
    ap.add_argument("--signals", default="INT,TERM,HUP")
    ap.add_argument("--scenarios", default="warm-up,solve")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    sigs = args.signals.split(",")
    scenarios = args.scenarios.split(",")
    with revision_trees(args.before, args.after) as (before, after), \
            tempfile.TemporaryDirectory() as tmp:
        srcs = [os.path.join(before, "src"), os.path.join(after, "src")]
        for src in srcs:  # compile (or load) every kernel once, as a user's first run does
            for scenario in scenarios:
                subprocess.run([sys.executable, "-m", "metricopt", "solve",
                                *SCENARIOS[scenario][0], "--quiet", "--time-limit", "5"],
                               env=dict(os.environ, PYTHONPATH=src),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"| scenario | signal | before ({args.before}) | after "
              f"({args.after or 'working tree'}) |")
        print("|---|---|---|---|")
        for scenario in scenarios:
            for signame in sigs:
                for k in range(args.repeat):
                    cells = []
                    for which, src in enumerate(srcs):
                        with tempfile.TemporaryDirectory(dir=tmp) as sub:
                            cells.append(_cell(signalled_run(src, scenario, signame, sub)))
                    print(f"| {scenario} | SIG{signame} | {cells[0]} | {cells[1]} |",
                          flush=True)


if __name__ == "__main__":
    main()
