"""Seeded signed graphs with the size and shape of SNAP's Slashdot and Epinions networks.

Neither network has a copy on these machines (both are registered for ``datasets fetch``),
so the scale runs of sparse signed correlation clustering (MET(G), Project and Forget's
Table 3) use graphs generated to match their published statistics:

=========  =========  =========  ==================  ==========================
shape      nodes      edges      negative edges      source of the figures
=========  =========  =========  ==================  ==========================
slashdot   82,144     549,202    22.6%               SNAP page of
                                                     soc-sign-Slashdot090221;
                                                     Leskovec et al. 2010, Tab. 1
epinions   131,828    841,372    15.0%               SNAP page of
                                                     soc-sign-epinions;
                                                     Leskovec et al. 2010, Tab. 1
=========  =========  =========  ==================  ==========================

The edge counts are SNAP's counts of signed *arcs*; the generated graphs have that many
undirected edges, so they are at least as large as the symmetrised networks.
Degrees follow a power law: a Chung-Lu graph whose expected degrees are
``w_i ~ (i + i0)^(-1 / (alpha - 1))`` with ``alpha = 2.1`` (the range 2.0-2.3 that
degree-distribution fits of both networks report), scaled to the edge count, with the
largest expected degree capped at ``sqrt(2 m)`` (the structural cut-off of an
uncorrelated graph); endpoints are drawn in proportion to ``w``, self-loops and repeats
dropped, and drawing repeats until the edge count is met. Signs are drawn independently
with the stated negative fraction, so the graphs are *less* balanced than the real
networks (whose triangles are mostly balanced), which makes the LP harder, not easier.
The table printed by :func:`main` gives the measured sizes, degrees and negative share.

``generated_problem(n)`` scales the Slashdot shape to ``n`` nodes (same mean degree and
negative fraction), for smaller trial runs.

References
----------
.. [1] Leskovec, J., Huttenlocher, D., & Kleinberg, J. (2010). Signed networks in social
       media. CHI 2010. Predicting positive and negative links in online social
       networks. WWW 2010.
.. [2] Chung, F., & Lu, L. (2002). Connected components in random graphs with given
       expected degree sequences. Annals of Combinatorics 6, 125-145.
.. [3] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget, Table 3.

Run: ``python benchmarks/bench_signed_graphs.py [--shapes slashdot,epinions]
[--write DIR]`` prints the statistics table (and writes signed edge lists with
``--write``); ``--solve`` also runs ``metricopt`` (project-forget, tol = gap_tol = 1e-2)
on each and adds the solve columns.
"""

import argparse
import os
import sys
import time

import numpy as np

SHAPES = {
    "slashdot": dict(n=82_144, m=549_202, negative=0.226),
    "epinions": dict(n=131_828, m=841_372, negative=0.150),
}
ALPHA = 2.1
SEED = 20100410  # fixed: the benchmark graphs are one graph per shape


def signed_power_law_graph(n, m, negative, *, alpha=ALPHA, seed=SEED):
    """Edges ``(u, v)`` with ``u < v`` and signs in {-1, +1} of a Chung-Lu power-law graph.

    Parameters
    ----------
    n, m : int
        Nodes and undirected edges.
    negative : float
        Probability of a negative sign.
    alpha : float
        Power-law exponent of the expected degrees.
    seed : int

    Returns
    -------
    edges : ndarray of shape (m, 2), int64
    signs : ndarray of shape (m,)
    """
    rng = np.random.default_rng(seed)
    w = (np.arange(n) + 10.0) ** (-1.0 / (alpha - 1.0))
    w *= 2.0 * m / w.sum()
    np.minimum(w, np.sqrt(2.0 * m), out=w)
    p = w / w.sum()
    keys = np.empty(0, dtype=np.int64)
    while keys.size < m:
        draw = int(1.2 * (m - keys.size)) + 1024
        u = rng.choice(n, size=draw, p=p)
        v = rng.choice(n, size=draw, p=p)
        keep = u != v
        lo = np.minimum(u, v)[keep].astype(np.int64)
        hi = np.maximum(u, v)[keep].astype(np.int64)
        new = lo * n + hi
        # first occurrence of each new key, in draw order (seeded, no set iteration)
        _, first = np.unique(new, return_index=True)
        new = new[np.sort(first)]
        new = new[~np.isin(new, keys)]
        keys = np.concatenate([keys, new[: m - keys.size]])
    edges = np.stack([keys // n, keys % n], axis=1)
    signs = np.where(rng.random(m) < negative, -1.0, 1.0)
    return edges, signs


def generated_graph(shape_or_n):
    """Largest component of a generated graph (a named shape, or Slashdot's scaled to ``n``).

    Read as a user would: a pandas edge table through :func:`metricopt.read_graph`.
    """
    import pandas as pd

    import metricopt

    if isinstance(shape_or_n, str):
        spec, name = SHAPES[shape_or_n], f"generated-{shape_or_n}"
    else:
        base = SHAPES["slashdot"]
        n = int(shape_or_n)
        spec = dict(n=n, m=int(round(base["m"] / base["n"] * n)), negative=base["negative"])
        name = f"generated-slashdot-{n}"
    edges, signs = signed_power_law_graph(spec["n"], spec["m"], spec["negative"])
    table = pd.DataFrame({"source": edges[:, 0], "target": edges[:, 1], "weight": signs})
    return metricopt.read_graph(table, weighted=True, name=name)


def generated_problem(shape_or_n):
    """Signed ``cc`` on the largest component of :func:`generated_graph`."""
    import metricopt

    g = generated_graph(shape_or_n)
    return metricopt.build_problem("cc", g, weights="signed")


def _stats(edges, signs, n):
    deg = np.bincount(edges.ravel(), minlength=n)
    return dict(nodes_with_edges=int((deg > 0).sum()), mean_degree=float(2 * len(edges) / n),
                max_degree=int(deg.max()), negative=float((signs < 0).mean()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="slashdot,epinions")
    ap.add_argument("--write", default=None, help="directory for the signed edge lists")
    ap.add_argument("--solve", action="store_true")
    ap.add_argument("--time-limit", type=float, default=3600.0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    print("| shape | nodes | edges | nodes with edges | mean degree | max degree | negative "
          "| generate s |" + (" largest component n, m | oracle calls (exact) | wall s "
                               "| oracle s | certificates s | LP value | lower bound | gap | violation "
                               "| peak GiB "
                               "| bytes per edge | estimate GiB | added by the solve GiB "
                               "| status |" if args.solve else ""))
    print("|---" * (8 + (14 if args.solve else 0)) + "|")
    for shape in args.shapes.split(","):
        spec = SHAPES[shape] if shape in SHAPES else None
        t0 = time.perf_counter()
        if spec is None:
            n = int(shape)
            base = SHAPES["slashdot"]
            edges, signs = signed_power_law_graph(
                n, int(round(base["m"] / base["n"] * n)), base["negative"])
        else:
            n = spec["n"]
            edges, signs = signed_power_law_graph(n, spec["m"], spec["negative"])
        gen = time.perf_counter() - t0
        st = _stats(edges, signs, n)
        row = (f"| {shape} | {n} | {len(edges)} | {st['nodes_with_edges']} "
               f"| {st['mean_degree']:.2f} | {st['max_degree']} | {st['negative']:.1%} "
               f"| {gen:.1f} |")
        if args.write:
            os.makedirs(args.write, exist_ok=True)
            path = os.path.join(args.write, f"generated-{shape}.txt")
            np.savetxt(path, np.column_stack([edges, signs.astype(int)]), fmt="%d",
                       header=f"generated {shape}: bench_signed_graphs.py, seed {SEED}")
        if args.solve:
            row += _solve_columns(shape if spec is not None else n, args)
        print(row, flush=True)


def _solve_columns(shape, args):
    import resource

    from metricopt.result import Status
    from metricopt.solvers import solve
    from metricopt.solvers.project_forget import estimate_memory

    prob = generated_problem(shape)
    estimate = estimate_memory(prob, threads=args.threads)
    before = _rss()

    def progress(r):  # every oracle call, on stderr
        print(f"  call {r['iteration']}{' (exact)' if r['full_check'] else ''}: "
              f"{r['seconds']:.0f} s, oracle {r['oracle_seconds']:.1f} s, violation "
              f"{r['max_violation']:.3g}, {r['constraints_found']} found, "
              f"{r['active_constraints']} remembered, gamma {r['gamma']:g}, "
              f"LP gap {r['gap']:.3g}", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    res = solve(prob, method="project-forget", tol=1e-2, gap_tol=1e-2, threads=args.threads,
                time_limit=args.time_limit, callback=progress)
    wall = time.perf_counter() - t0
    hist = res["history"]
    oracle = float(sum(r["oracle_seconds"] for r in hist))
    exact = sum(1 for r in hist if r["full_check"])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    m = prob.pairs.shape[0]
    return (f" {prob.n}, {m} | {res['nit']} ({exact}) | {wall:.0f} | {oracle:.0f} "
            f"| {res['certify_seconds']:.0f} | {res['fun']:.2f} "
            f"| {res['lower_bound']:.2f} | {res['gap']:.2e} | {res['max_violation']:.2e} "
            f"| {peak / 2**30:.2f} | {peak / m:.0f} | {estimate / 2**30:.2f} "
            f"| {(peak - before) / 2**30:.2f} | {Status.NAMES[res['status']]} |")


def _rss():
    """Resident bytes of this process now (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


if __name__ == "__main__":
    main()
