"""How soon a Ctrl-C ends a project-forget run on a generated signed graph, two revisions.

Usage::

    python benchmarks/bench_interrupt.py BEFORE [AFTER] [--nodes 20000] [--at 20,50,80]
        [--threads 2] [--graph polblogs] [--in-floor-check] [--method highs]
    python benchmarks/bench_interrupt.py --overhead 20000,80000 --dense-overhead 2000

For every time in ``--at`` (seconds after the solve starts) and each revision, a fresh
process solves signed ``cc`` on the Slashdot-shaped graph of ``--nodes`` nodes
(:func:`bench_signed_graphs.generated_problem`; violation and certified LP gap 1e-2, as
that benchmark) with ``metricopt.solve(method="project-forget")`` after a warm-up solve,
and gets SIGINT at that time; with ``--graph NAME`` the problem is Jaccard ``cc`` on that
bundled graph (path or name, as ``metricopt.read_graph``) at the default tolerances (a
dense run: its answer is the last point made within tol, or the iterate measured exactly);
``--method`` picks the backend (default project-forget). Two latencies from the signal: to
the end of the iteration loop (taken by wrapping ``IterationLoop.__exit__``; a backend
without the loop, such as ``highs``: its return), and to the solve's return, which adds
what every stopped run does (the exact violation of the answer, one more path search, and
its certified lower bound). Revisions as in :mod:`compare_revisions` (temporary git
worktrees; AFTER defaults to the working tree); they alternate per time. Prints a markdown
table: per time, the oracle calls finished and both latencies of each revision. With
``--in-floor-check`` the child sends itself the signal as its first floor check
(:meth:`metricopt.solvers.core.stage.LPStage.at_floor`) after each time begins: the
latency of a Ctrl-C that lands in a stage's measurement.

``--overhead N,...`` instead times one path search over all edges as one kernel call and
in parts (:func:`metricopt.solvers._cycle_search.search_cycles_until`), at the ``x`` of a
run stopped after 20 oracle calls, exact and in first-path mode (best of 3, alternated),
and checks that both find the same cycles; ``--dense-overhead N,...`` the same for the
dense full scan (:func:`metricopt.solvers.project_forget.full_scan`) on noisy distances
of N points.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np

from compare_revisions import revision_trees

HERE = os.path.dirname(os.path.abspath(__file__))

_CHILD = r"""
import json, os, signal, sys, time, warnings
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
signal.signal(signal.SIGINT, signal.default_int_handler)  # not inherited as ignored
import metricopt
from bench_signed_graphs import generated_problem
warnings.simplefilter("ignore")
threads = int(sys.argv[4])
from metricopt.solvers.core.loop import IterationLoop
# the warm-up runs to the end (path searches, certificates, polish): no kernel is compiled
# in the timed solve, which a signal would then wait for
if sys.argv[3].startswith("graph:"):  # Jaccard cc on a bundled graph, default tolerances
    opts = {}
    metricopt.solve(metricopt.build_problem("cc", metricopt.read_graph("karate")),
                    method="project-forget", threads=threads)
    problem = metricopt.build_problem("cc", metricopt.read_graph(sys.argv[3][6:]))
else:
    opts = dict(tol=1e-2, gap_tol=1e-2)
    metricopt.solve(generated_problem(300), method="project-forget", threads=threads, **opts)
    problem = generated_problem(int(sys.argv[3]))
loop_end = []
real_exit = IterationLoop.__exit__
def timed_exit(self, *exc):
    loop_end.append(time.time())
    return real_exit(self, *exc)
IterationLoop.__exit__ = timed_exit
sent = []
if sys.argv[5] != "-":  # the signal as the first floor check after this many seconds begins
    from metricopt.solvers.core import stage
    real_floor = stage.LPStage.at_floor
    def signalling_floor(self, *args):
        if not sent and time.time() >= t_start + float(sys.argv[5]):
            sent.append(time.time())
            os.kill(os.getpid(), signal.SIGINT)
        return real_floor(self, *args)
    stage.LPStage.at_floor = signalling_floor
t_start = time.time()
print(json.dumps(dict(start=t_start)), flush=True)
try:
    res = metricopt.solve(problem, method=sys.argv[6], threads=threads, **opts)
    calls, status = int(res["nit"]), res["status_name"]
except KeyboardInterrupt:  # a backend without the iteration loop (highs) passes it on
    calls, status = 0, "KeyboardInterrupt"
end = time.time()
print(json.dumps(dict(loop_end=loop_end[-1] if loop_end else end, end=end, calls=calls,
                      status=status, sent=sent[0] if sent else None)), flush=True)
"""


def interrupted_run(src, nodes, at, threads, in_floor_check=False, method="project-forget"):
    """Solve in a child, SIGINT ``at`` seconds after its solve starts (or, with
    ``in_floor_check``, as the child's first floor check after then begins); the latency."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, src, HERE, str(nodes),
                              str(threads), str(at) if in_floor_check else "-", method],
                             stdout=subprocess.PIPE, text=True)
    start = json.loads(child.stdout.readline())["start"]
    if not in_floor_check:
        time.sleep(max(0.0, start + at - time.time()))
        sent = time.time()
        child.send_signal(signal.SIGINT)
    out = json.loads(child.stdout.readline())
    child.wait()
    if in_floor_check:
        if out["sent"] is None:
            raise SystemExit(f"no floor check began after {at:g} s: the run ended first")
        sent = out["sent"]
    out["loop"], out["total"] = out["loop_end"] - sent, out["end"] - sent
    return out


def parts_overhead(nodes, threads, calls=20, repeats=3):
    """Seconds of one path search over all edges, as one call and in parts, at the ``x``
    of a run stopped after ``calls`` oracle calls; alternated ``repeats`` times."""
    import numba

    import metricopt
    from bench_signed_graphs import generated_problem
    from metricopt.solvers._cycle_search import (
        CycleGraph,
        canonical_cycles,
        search_cycles,
        search_cycles_until,
    )

    numba.set_num_threads(threads)
    warnings.simplefilter("ignore")  # the stopped run's ConvergenceWarning
    problem = generated_problem(nodes)
    x = metricopt.solve(problem, method="project-forget", tol=1e-2, gap_tol=1e-2,
                        max_iter=calls, threads=threads)["x"]
    graph = CycleGraph.from_problem(problem)
    rows = []
    for accept in (0.25, 0.0):
        one, parts = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            a = search_cycles(graph, x, graph.edges, 1e-4, threads, 4096, accept=accept)
            one.append(time.perf_counter() - t)
            t = time.perf_counter()
            b = search_cycles_until(graph, x, 1e-4, threads, 4096, accept=accept,
                                    stop=lambda: False)
            parts.append(time.perf_counter() - t)
        same = all(np.array_equal(u, v) for u, v in zip(canonical_cycles(*a[:2]),
                                                        canonical_cycles(*b[:2])))
        rows.append((accept, min(one), min(parts), same, a[0].shape[0] - 1))
    return problem, rows


def dense_parts_overhead(n, threads, repeats=3, add_tol=1e-5):
    """Seconds of project-forget's dense full scan as one call and in parts (best of
    ``repeats``, alternated), on noisy distances of ``n`` points (the metric nearness ``x``
    of ``bench_pruned_scan.py``, sorted points: the pruning skips most stretches)."""
    import numba

    from bench_pruned_scan import metric_x
    from metricopt.solvers import _pf_scan as D
    from metricopt.solvers._pf_oracles import full_scan

    numba.set_num_threads(threads)
    x = metric_x(n, np.random.default_rng(0), "sorted", 1e-3)
    rows = D.scan_rows(n, 16, threads)
    one, parts = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        a = full_scan(x, n, add_tol, rows)
        one.append(time.perf_counter() - t)
        t = time.perf_counter()
        b = full_scan(x, n, add_tol, rows, stop=lambda: False)
        parts.append(time.perf_counter() - t)
    same = a[1] == b[1] and all(np.array_equal(u, v) for u, v in zip(a[0], b[0]))
    return min(one), min(parts), same, a[0][0].shape[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", nargs="?", default=None)
    ap.add_argument("after", nargs="?", default=None)
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--at", default="20,50,80,110,140")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--graph", default=None,
                    help="Jaccard cc on this bundled graph instead of the signed graph")
    ap.add_argument("--method", default="project-forget",
                    help="the backend solving (highs: no iteration loop, the loop column "
                         "is the return)")
    ap.add_argument("--in-floor-check", action="store_true",
                    help="the signal as the first floor check after each --at time begins")
    ap.add_argument("--overhead", default=None,
                    help="node counts: time the path search in one call and in parts only")
    ap.add_argument("--dense-overhead", default=None,
                    help="n values: time the dense full scan in one call and in parts only")
    args = ap.parse_args(argv)
    if args.dense_overhead:
        print("| dense scan, n | found | one call s | in parts s | parts / one | same |")
        print("|---|---|---|---|---|---|")
        for n in (int(v) for v in args.dense_overhead.split(",")):
            one, parts, same, k = dense_parts_overhead(n, args.threads)
            print(f"| {n} | {k} | {one:.2f} | {parts:.2f} | {parts / one:.3f} "
                  f"| {'yes' if same else 'no'} |", flush=True)
    if args.overhead:
        print("| nodes, edges | mode | cycles | one call s | in parts s | parts / one "
              "| same cycles |")
        print("|---|---|---|---|---|---|---|")
        for nodes in (int(v) for v in args.overhead.split(",")):
            problem, rows = parts_overhead(nodes, args.threads)
            for accept, one, parts, same, k in rows:
                mode = "exact" if accept == 0 else f"first path ({accept:g})"
                print(f"| {problem.n}, {problem.pairs.shape[0]} | {mode} | {k} | {one:.2f} "
                      f"| {parts:.2f} | {parts / one:.3f} | {'yes' if same else 'no'} |",
                      flush=True)
    if args.overhead or args.dense_overhead:
        return
    if args.before is None:
        ap.error("give the BEFORE revision (or --overhead)")
    with revision_trees(args.before, args.after) as (before, after):
        print((f"signed cc, generated Slashdot shape, {args.nodes} nodes" if args.graph is None
               else f"Jaccard cc, {args.graph}, default tolerances")
              + f", {args.method}, threads {args.threads}\n")
        when = "first floor check after s" if args.in_floor_check else "SIGINT at s"
        print(f"| {when} | before ({args.before}) calls done, status | loop ends s "
              f"| returns s | after ({args.after or 'working tree'}) calls done, status "
              f"| loop ends s | returns s |")
        print("|---|---|---|---|---|---|---|")
        lat = {"b": [], "a": []}
        for at in (float(a) for a in args.at.split(",")):
            what = args.nodes if args.graph is None else f"graph:{args.graph}"
            b, a = (interrupted_run(os.path.join(tree, "src"), what, at, args.threads,
                                    args.in_floor_check, args.method)
                    for tree in (before, after))
            lat["b"].append(b)
            lat["a"].append(a)
            print(f"| {at:g} | {b['calls']}, {b['status']} | {b['loop']:.2f} "
                  f"| {b['total']:.2f} | {a['calls']}, {a['status']} | {a['loop']:.2f} "
                  f"| {a['total']:.2f} |", flush=True)
        big = {k: (max(r["loop"] for r in v), max(r["total"] for r in v))
               for k, v in lat.items()}
        print(f"| largest | | {big['b'][0]:.2f} | {big['b'][1]:.2f} | | {big['a'][0]:.2f} "
              f"| {big['a'][1]:.2f} |")


if __name__ == "__main__":
    main()
