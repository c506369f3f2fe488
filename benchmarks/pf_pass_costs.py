"""Unit costs behind project-forget's dense pass schedule, measured.

Usage::

    python benchmarks/pf_pass_costs.py [--graphs jazz,USAir97,netscience] [--threads 2]
        [--time-limit 120]

After every read-only scan of the dense oracle, project-forget makes projection passes
over the remembered constraints until their work, counted in operations
(``_pf_oracles.pass_work``), reaches the scan's (``_pf_oracles.scan_work``). The
constants of that count (``SCAN_NS_PER_TRIPLET``, ``MERGE_NS_PER_ROW``,
``PASS_NS_PER_TRIANGLE``, ``PASS_NS_PER_PAIR``) are nanoseconds on the reference machine;
this script times the kernels inside default Jaccard ``cc`` runs and prints, per graph,
the measured cost of each unit next to the constant, and the share of the run spent in
scans and in passes. The constants only balance scans against passes: a different
machine changes the time, never the iterates.
"""

import argparse
import os
import sys
import time
import warnings

from _data import data_dir

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = str(data_dir())
sys.path.insert(0, os.path.join(ROOT, "src"))


def measure(name, threads, time_limit):
    import metricopt
    from metricopt.solvers import _pf_list, _pf_scan
    from metricopt.solvers import _pf_strategy as pf

    path = os.path.join(DATA, name + ".txt")
    problem = metricopt.build_problem("cc", metricopt.read_graph(path if os.path.exists(path)
                                                                  else name), layout="dense")
    acc = dict(detect=0.0, calls=0, merge=0.0, rows=0, passes=0.0, tri_passes=0.0,
               pair_passes=0.0)
    detect, merge, passes = _pf_scan.dense_detect, _pf_list.dense_merge, pf.dense_passes

    def timed_detect(*args):
        t = time.perf_counter()
        out = detect(*args)
        acc["detect"] += time.perf_counter() - t
        acc["calls"] += 1
        return out

    def timed_merge(*args):
        t = time.perf_counter()
        out = merge(*args)
        acc["merge"] += time.perf_counter() - t
        acc["rows"] += int(args[4]) + int(args[8])
        return out

    def timed_passes(st, active, k_max, budget, deadline):
        t = time.perf_counter()
        out = passes(st, active, k_max, budget, deadline)
        acc["passes"] += time.perf_counter() - t
        # the list shrinks while it is forgotten: count its mean size
        acc["tri_passes"] += 0.5 * (active.nc + out[0].nc) * out[1]
        return out

    _pf_scan.dense_detect, _pf_list.dense_merge = timed_detect, timed_merge
    pf.dense_passes = timed_passes
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = metricopt.solve(problem, method="project-forget", threads=threads,
                                  time_limit=time_limit)
    finally:
        _pf_scan.dense_detect, _pf_list.dense_merge = detect, merge
        pf.dense_passes = passes
    n = problem.n
    triplets = n * (n - 1) * (n - 2) / 6 * max(acc["calls"], 1)
    return dict(
        graph=name, n=n, status=res.status_name, nit=res.nit, seconds=res.elapsed,
        scan_ns=1e9 * acc["detect"] * threads / triplets,
        merge_ns=1e9 * acc["merge"] / max(acc["rows"], 1),
        pass_ns=1e9 * acc["passes"] / max(acc["tri_passes"], 1.0),
        scan_share=(acc["detect"] + acc["merge"]) / max(res.elapsed, 1e-9),
        pass_share=acc["passes"] / max(res.elapsed, 1e-9))


def main(argv=None):
    from metricopt.solvers import _pf_oracles as pf

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="jazz,USAir97,netscience")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=120.0)
    args = ap.parse_args(argv)
    print(f"constants: scan {pf.SCAN_NS_PER_TRIPLET} ns/triplet (one thread), merge "
          f"{pf.MERGE_NS_PER_ROW} ns/row, pass {pf.PASS_NS_PER_TRIANGLE} ns/triangle "
          f"(+ {pf.PASS_NS_PER_PAIR} ns/pair)\n")
    print("| graph | n | status | oracle calls | s | scan ns/triplet x threads | merge ns/row "
          "| pass ns/triangle (pairs included) | scans % | passes % |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.graphs.split(","):
        r = measure(name, args.threads, args.time_limit)
        print(f"| {r['graph']} | {r['n']} | {r['status']} | {r['nit']} | {r['seconds']:.2f} | "
              f"{r['scan_ns']:.2f} | {r['merge_ns']:.1f} | {r['pass_ns']:.1f} | "
              f"{100 * r['scan_share']:.0f} | {100 * r['pass_share']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
