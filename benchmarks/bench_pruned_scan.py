"""Block pruning of project-forget's dense full scan: unpruned against pruned (markdown).

Usage::

    python benchmarks/bench_pruned_scan.py [--sizes 1000,2000] [--graph PATH]
        [--noise 1e-3] [--threads 2] [--chunk 32] [--repeat 1] [--no-cc]
        [--x-cache FILE] [--out FILE]

Times :func:`metricopt.solvers._pf_scan.dense_detect` to the end (output rows grown as
``_DenseOracle._full_scan`` does; the pruned time includes
:func:`~metricopt.solvers._pf_scan.chunk_extremes`) and
:func:`~metricopt.solvers._pf_scan.dense_max_violation` (``add_tol`` "-"), unpruned
(``chunk = 0``) and pruned, side by side in one process, on ``x`` from

* metric nearness: Euclidean distances of ``n`` uniform points of the unit square plus
  Gaussian noise (sd ``--noise``), points in random order and sorted by their first
  coordinate;
* the Jaccard correlation clustering iterate of ca-GrQc after three project-forget
  iterations (``tol=1e-2``, ``max_iter=3``, no polish; about 40 s; ``--x-cache`` keeps
  it in a ``.npy`` file between runs).

Each row checks that both scans return the same constraints (a digest of the three id
arrays) and largest violation.
``skipped``: the share of stretches (``chunk`` triplets of a line) the pruned scan
skipped. Only the ratios within one run mean anything on a shared machine.
"""

import argparse
import hashlib
import os
import sys
import time
import warnings

import numpy as np

from _data import data_dir

DATA = str(data_dir())


def _scan(x, n, add_tol, threads, chunk, block=16):
    """The full scan as the oracle runs it: ``(seconds, found, worst, skipped share)``."""
    from metricopt.solvers import _pf_scan as D
    from metricopt.solvers._pf_oracles import full_scan

    t0 = time.perf_counter()
    found, worst, skipped, met, _ = full_scan(x, n, add_tol, D.scan_rows(n, block, threads),
                                              chunk=chunk, block=block)
    seconds = time.perf_counter() - t0
    return seconds, found, worst, skipped / max(met, 1)


def _digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _max_violation(x, n, chunk):
    from metricopt.solvers import _pf_scan as D

    t0 = time.perf_counter()
    worst, skipped, met = D.max_violation_stretches(x, n, chunk)
    return time.perf_counter() - t0, worst, skipped / max(met, 1)


def metric_x(n, rng, order, noise):
    """Noisy Euclidean distances (diagonal layout) of ``n`` random points."""
    from metricopt.solvers._layouts import diagonal_offsets

    pts = rng.uniform(0, 1, (n, 2))
    if order == "sorted":
        pts = pts[np.argsort(pts[:, 0])]
    i, j = np.triu_indices(n, 1)
    x = np.empty(i.size)
    x[diagonal_offsets(n)[j - i] + i] = np.hypot(*(pts[i] - pts[j]).T)
    return x + rng.normal(0, noise, i.size)


def cc_x(graph, cache):
    """The Jaccard cc iterate of ``graph`` after three project-forget iterations."""
    import metricopt
    from metricopt.solvers._layouts import packed_to_diagonal_index

    if cache and os.path.exists(cache):
        xp = np.load(cache)
    else:
        problem = metricopt.build_problem("cc", metricopt.read_graph(graph), weights="jaccard",
                                           layout="dense")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = metricopt.solve(problem, method="project-forget", tol=1e-2, gap_tol=1e-9,
                                  max_iter=3, polish=False, threads=2)
        xp = np.asarray(res.x, dtype=np.float64)
        if cache:
            np.save(cache, xp)
    n = int(round((1 + np.sqrt(1 + 8 * xp.size)) / 2))
    x = np.empty_like(xp)
    x[packed_to_diagonal_index(n)] = xp
    return x, n


def measure(name, x, n, thresholds, args):
    """Rows of the table for one ``x``: each threshold, then the largest violation."""
    rows = []
    for add_tol in thresholds:
        best = {}
        out = {}
        for r in range(args.repeat):  # alternate, so that both see the same load
            for chunk in ((0, args.chunk) if r % 2 == 0 else (args.chunk, 0)):
                seconds, found, worst, skip = _scan(x, n, add_tol, args.threads, chunk)
                best[chunk] = min(best.get(chunk, np.inf), seconds)
                # keep a digest only: both scans start with the same memory free
                out[chunk] = (_digest(found), worst, found[0].size, skip)
                del found
        best_u, best_p = best[0], best[args.chunk]
        (du, wu, k, _), (dp, wp, _, skip) = out[0], out[args.chunk]
        rows.append((name, n, f"{add_tol:g}", k, wu, best_u, best_p, skip,
                     du == dp and wu == wp))
        print(f"  {name} add_tol={add_tol:g}: {best_u:.2f} s / {best_p:.2f} s", file=sys.stderr)
    best_u = best_p = np.inf
    for _ in range(args.repeat):
        tu, wu, _ = _max_violation(x, n, 0)
        tp, wp, skip = _max_violation(x, n, args.chunk)
        best_u, best_p = min(best_u, tu), min(best_p, tp)
    rows.append((name, n, "-", "-", wu, best_u, best_p, skip, wu == wp))
    return rows


def table(rows, args):
    out = [f"chunk = {args.chunk}, {args.threads} threads, best of {args.repeat}; "
           f"`add_tol` \"-\": `dense_max_violation`",
           "",
           "| x | n | add_tol | found | worst | unpruned s | pruned s | ratio | skipped "
           "| same |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, n, tol, found, worst, tu, tp, skip, same in rows:
        out.append(f"| {name} | {n} | {tol} | {found} | {worst:.3g} | {tu:.2f} | {tp:.2f} "
                   f"| {tu / tp:.2f} | {100 * skip:.1f}% | {'yes' if same else 'NO'} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,2000", help="n of the metric nearness x")
    ap.add_argument("--graph", default=os.path.join(DATA, "ca-GrQc.txt"))
    ap.add_argument("--noise", type=float, default=1e-3, help="sd of the metric noise")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=None, help="default: _pf_scan.CHUNK")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-cc", action="store_true", help="skip the ca-GrQc iterate")
    ap.add_argument("--x-cache", default=None, help=".npy file for the ca-GrQc iterate")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    import numba

    from metricopt.solvers import _pf_scan as D

    if args.chunk is None:
        args.chunk = D.CHUNK
    numba.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    xs = metric_x(40, rng, "random", args.noise)  # compile both paths first
    for chunk in (0, args.chunk):
        _scan(xs, 40, 0.0, args.threads, chunk)
        _max_violation(xs, 40, chunk)

    rows = []
    for n in (int(s) for s in args.sizes.split(",") if s):
        for order in ("random", "sorted"):
            x = metric_x(n, rng, order, args.noise)
            rows += measure(f"metric {order}", x, n, (0.0, 1e-3, 1e-2), args)
    if not args.no_cc:
        x, n = cc_x(args.graph, args.x_cache)
        rows += measure("cc jaccard " + os.path.basename(args.graph).split(".")[0], x, n,
                        (0.0, 1e-3, 1e-2), args)
    text = table(rows, args)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
