"""The V Thm 5 certificate of correlation clustering: exact inner solver vs streamed passes.

For N pairs (the sizes of ca-GrQc, ca-HepTh and ca-HepPh's dense Jaccard problems), a
synthetic iterate near a clustering (targets 0/1 with 20% ones, ``x`` the target plus
noise clipped to [0, 1], ``f = |x - d|``, LP weights in [0, 1], ``W`` floored at 0.01,
``-b'y`` at 90% of the cost of ``f``) is certified by
:func:`metricopt.bounds.correlation_clustering_bound` (exact inner LP, median
selection, per-pair temporaries) and by
:func:`metricopt.bounds.streamed.correlation_clustering_bound_streamed` (what
:func:`metricopt.bounds.certify` runs). Columns: seconds, the peak of numpy allocations
during the call in bytes per pair (``tracemalloc``; the inputs themselves not counted),
the two values and their relative difference. The exact solver is skipped above
``--exact-max`` pairs (its temporaries would not fit).

Run: ``python benchmarks/bench_certificate.py [--sizes 8642403,37303203,62757006]
[--exact-max 10000000] [--threads 2]``.
"""

import argparse
import time
import tracemalloc

import numpy as np


def _iterate(n, seed=0):
    rng = np.random.default_rng(seed)
    d = (rng.random(n) < 0.2).astype(np.float64)
    x = np.clip(d + rng.normal(0.0, 0.15, n), 0.0, 1.0)
    f = np.abs(x - d)
    w = rng.random(n)
    wr = np.maximum(w, 0.01)
    mby = 0.9 * float(w @ f)
    return x, f, w, d, wr, mby


def _measure(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    res = fn()
    sec = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return res, sec, peak


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="8642403,37303203,62757006")
    ap.add_argument("--exact-max", type=int, default=10_000_000)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    import numba

    from metricopt.bounds import correlation_clustering_bound
    from metricopt.bounds.streamed import correlation_clustering_bound_streamed

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    x, f, w, d, wr, mby = _iterate(1000)
    correlation_clustering_bound_streamed(x, f, w, d, gamma=1.0, minus_b_dot_y=mby,
                                          regularizer=wr)  # compile
    print("| pairs | exact s | exact peak B/pair | streamed s | streamed peak B/pair "
          "| exact value | streamed value | relative difference | streamed passes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (int(v) for v in args.sizes.split(",")):
        x, f, w, d, wr, mby = _iterate(n)
        s, s_sec, s_peak = _measure(lambda: correlation_clustering_bound_streamed(
            x, f, w, d, gamma=1.0, minus_b_dot_y=mby, regularizer=wr))
        if n <= args.exact_max:
            e, e_sec, e_peak = _measure(lambda: correlation_clustering_bound(
                x - d, f, w, d, gamma=1.0, minus_b_dot_y=mby, regularizer=wr, qp_cost=wr))
            exact = (f"{e_sec:.1f} | {e_peak / n:.0f}", f"{e['value']:.10g}",
                     f"{(s['value'] - e['value']) / abs(e['value']):.1e}")
        else:
            exact = ("- | -", "-", "-")
        print(f"| {n} | {exact[0]} | {s_sec:.1f} | {s_peak / n:.1f} | {exact[1]} "
              f"| {s['value']:.10g} | {exact[2]} | {s['nit']} |", flush=True)


if __name__ == "__main__":
    main()
