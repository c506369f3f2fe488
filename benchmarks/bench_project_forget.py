"""Benchmarks of the ``project-forget`` backend (markdown table on stdout).

Cases
-----
``grqc-cc``
    Correlation clustering with Jaccard weights (dense, K_n), gamma = 1, on ca-GrQc
    (n = 4158): violation <= 0.01, gap <= 1e-4; ``dykstra`` side by side when it is
    installed.
``power-cc``
    The same on the power grid (n = 4941).
``hepth-signed``
    A signed graph on the edges of ca-HepTh, solved in sparse mode (MET(G)) to
    violation <= 0.01. Construction: for every edge ``(i, j)`` the Jaccard coefficient
    ``J = |N(i) & N(j)| / |N(i) | N(j)|`` of the open neighbourhoods, the score
    ``S = log((1 + (J - delta)) / (1 - (J - delta)))`` with ``delta = 0.05`` and
    ``Z = S + eps`` (``S >= 0``) or ``S - eps`` (``S < 0``), ``eps = 0.01`` (the DESIGN §1
    Jaccard rule restricted to edges); sign of the edge = sign of ``Z``, weight =
    ``|Z|``. Pairs that are not edges weigh 0, so only the m edges are variables.

``hepth-cc``
    Jaccard correlation clustering (dense) on ca-HepTh (n = 8638).
``hepph-cc``
    The same on ca-HepPh (n = 11204, 62.7 million pairs).

Tolerances: ``--tol`` (largest violation, default 1e-2) and ``--gap-tol`` (certified LP
gap, default 2e-2), the scale targets of ``benchmarks/README.md``.

``--quick`` replaces the graphs by small ones (karate, lesmis, a 400-edge subgraph of
ca-HepTh) so a smoke run takes well under a minute. ``--cases`` picks cases,
``--backends`` the backends (``dykstra`` runs on dense cases only), ``--time-limit``
caps each run (seconds; ``--dykstra-time-limit`` the ``dykstra`` runs).

Columns: wall seconds of the solve (the certificate included), CPU seconds of the
process over the same span and the CPU share ``cpu / (wall * threads)`` it got (the
machine is shared), ``LP value`` (``c'x`` of the returned ``x``), the certified lower
bound ``LB`` and the ratio ``LP value / LB`` (a certified approximation ratio of
``x``), the peak resident memory of the process so far (runs of one invocation
accumulate: run one backend per invocation for separate peaks), the backend's memory
estimate and what the solve added to the resident memory at its peak (Linux: the peak
is reset before the solve through ``/proc/self/clear_refs`` and read from ``VmHWM``;
the resident memory before the problem was built is subtracted, so the problem's
arrays count, as in the estimate; the kernels are compiled before), and their ratio.

Run: ``python benchmarks/bench_project_forget.py [--quick] [--cases grqc-cc,hepth-signed]``.
"""

import argparse
import dataclasses
import resource
import sys
import time

import numba
import numpy as np
import scipy.sparse as sp

import metricopt
import metricopt.solvers
from _data import data_dir
from metricopt.problems._base import MetricProblem

DATA = str(data_dir())


def edge_jaccard_signed(graph, delta=0.05, eps=0.01):
    """Signed cc problem on the edges of ``graph`` (see the module docstring)."""
    n = graph.n
    e = graph.edges
    a = sp.csr_matrix((np.ones(2 * len(e)), (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])),
                      shape=(n, n))
    deg = np.asarray(a.sum(1)).ravel()
    common = np.asarray((a[e[:, 0]].multiply(a[e[:, 1]])).sum(1)).ravel()
    jac = common / (deg[e[:, 0]] + deg[e[:, 1]] - common)
    t = jac - delta
    s = np.log((1.0 + t) / (1.0 - t))
    z = np.where(s >= 0, s + eps, s - eps)
    return MetricProblem(kind="cc", n=n, labels=graph.labels, structure="sparse",
                         objective="l1", weights=np.abs(z), target=(z < 0).astype(float),
                         lower=0.0, upper=1.0, pairs=e.copy(), graph=graph,
                         params=dict(weights="edge-jaccard-signed", delta=delta, epsilon=eps),
                         name=f"{graph.name}-signed")


def _subgraph(graph, m_keep):
    """The largest component of the first ``m_keep`` edges (a small smoke instance)."""
    import networkx as nx

    g = nx.Graph()
    g.add_edges_from(map(tuple, graph.edges[:m_keep]))
    comp = max(nx.connected_components(g), key=len)
    nodes = sorted(comp)
    idx = {v: k for k, v in enumerate(nodes)}
    edges = np.array(sorted((min(idx[u], idx[v]), max(idx[u], idx[v]))
                            for u, v in g.subgraph(comp).edges()), dtype=np.int64)
    return dataclasses.replace(graph, n=len(nodes), edges=edges, weights=None,
                               labels=np.asarray(graph.labels)[nodes],
                               name=f"{graph.name}-sub{len(edges)}")


def _cases(quick):
    if quick:
        return {
            "grqc-cc": ("karate", "cc-jaccard"),
            "power-cc": ("lesmis", "cc-jaccard"),
            "hepth-signed": (("ca-HepTh", 3000), "signed"),
            "hepth-cc": (("ca-HepTh", 3000), "cc-jaccard"),
        }
    return {
        "grqc-cc": (f"{DATA}/ca-GrQc.txt", "cc-jaccard"),
        "power-cc": (f"{DATA}/power.txt", "cc-jaccard"),
        "hepth-signed": (f"{DATA}/ca-HepTh.txt", "signed"),
        "hepth-cc": (f"{DATA}/ca-HepTh.txt", "cc-jaccard"),
        "hepph-cc": (f"{DATA}/ca-HepPh.txt", "cc-jaccard"),
    }


def _problem(source, how):
    if isinstance(source, tuple):
        g = _subgraph(metricopt.read_graph(f"{DATA}/{source[0]}.txt"), source[1])
    else:
        g = metricopt.read_graph(source)
    if how == "signed":
        return edge_jaccard_signed(g)
    return metricopt.build_problem("cc", g, weights="jaccard", layout="dense")


def _status_kib(field):
    """A ``VmRSS``/``VmHWM`` line of ``/proc/self/status`` in bytes (None off Linux)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_peak():
    """Reset the process's peak resident memory (``VmHWM``); False when not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _fmt(v, spec):
    return "-" if v is None or (isinstance(v, float) and not np.isfinite(v)) else format(v, spec)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cases", default="grqc-cc,power-cc,hepth-signed")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--no-dykstra", action="store_true")
    ap.add_argument("--backends", default="project-forget,dykstra")
    ap.add_argument("--dykstra-time-limit", type=float, default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--tol", type=float, default=1e-2)
    ap.add_argument("--gap-tol", type=float, default=2e-2)
    ap.add_argument("--progress", action="store_true",
                    help="print every iteration record to stderr")
    args = ap.parse_args(argv)
    cases = _cases(args.quick)
    rows = []
    # the kernels compiled (or loaded) once before any measurement
    warm = metricopt.build_problem("cc", metricopt.read_graph("karate"))
    for method in args.backends.split(","):
        if method in metricopt.solvers.registered_solvers():
            metricopt.solve(warm, method=method, max_iter=2)
    for name in args.cases.split(","):
        source, how = cases[name]
        rss_before_build = _status_kib("VmRSS")
        t0 = time.perf_counter()
        prob = _problem(source, how)
        build_s = time.perf_counter() - t0
        opts = dict(tol=args.tol, gap_tol=args.gap_tol, gamma=1.0, time_limit=args.time_limit)
        backends = args.backends.split(",")
        runs = []
        if "project-forget" in backends:
            runs.append(("project-forget", dict(opts, threads=args.threads)))
        if "dykstra" in backends and prob.structure == "dense" and not args.no_dykstra \
                and "dykstra" in metricopt.solvers.registered_solvers():
            runs.append(("dykstra", dict(opts, threads=args.threads,
                                         time_limit=args.dykstra_time_limit or args.time_limit)))
        for method, kw in runs:
            kw = {k: v for k, v in kw.items() if v is not None}
            t = time.perf_counter()
            ru = resource.getrusage(resource.RUSAGE_SELF)
            cpu0 = ru.ru_utime + ru.ru_stime
            cb = None
            if args.progress:
                def cb(rec, _m=method):
                    print(f"#   {_m} it={rec['iteration']} t={rec['seconds']:.1f}s "
                          f"viol={rec['max_violation']:.3g} gap={rec['gap']:.3g} "
                          f"active={rec['active_constraints']}", file=sys.stderr, flush=True)
            rss0 = rss_before_build
            reset = _reset_peak()
            try:
                res = metricopt.solve(prob, method=method, callback=cb, **kw)
            except Exception as exc:  # a missing or failing backend is reported, not fatal
                rows.append((name, method, str(exc)[:60]))
                continue
            sec = time.perf_counter() - t
            ru = resource.getrusage(resource.RUSAGE_SELF)
            cpu = ru.ru_utime + ru.ru_stime - cpu0
            nthr = kw.get("threads") or numba.get_num_threads()
            peak = ru.ru_maxrss / 2**20
            hwm = _status_kib("VmHWM") if reset else None
            added = (hwm - rss0) if (hwm is not None and rss0 is not None) else None
            est = res.get("memory_estimate")
            lb = res.get("lower_bound")
            params = (f"n={prob.n} vars={prob.n_variables} tol={args.tol:g} "
                      f"gap_tol={args.gap_tol:g} gamma=1")
            hist = res.get("history") or []
            scan_s = sum(float(r.get("oracle_seconds", 0.0)) for r in hist)
            passes = sum(int(r.get("passes", 0)) for r in hist)
            cert_s = float(res.get("certify_seconds") or 0.0)
            split = (f"{scan_s:.0f} / {max(sec - scan_s - cert_s, 0.0):.0f} / {cert_s:.0f}"
                     if method == "project-forget" else "-")
            rows.append((name, method, params, res.nit, passes if hist else "-", split,
                         f"{sec:.1f}", f"{cpu:.1f}",
                         f"{cpu / max(sec * nthr, 1e-9):.0%} of {nthr}",
                         _fmt(res.get("qp_gap"), ".2e"), _fmt(res.get("gap"), ".2e"),
                         _fmt(res.max_violation, ".2e"),
                         _fmt(res.fun, ".6g"), _fmt(lb, ".6g"),
                         _fmt(res.fun / lb if lb else None, ".3f"),
                         f"{peak:.2f}",
                         _fmt(est / 2**30 if est else None, ".2f"),
                         _fmt(added / 2**30 if added else None, ".2f"),
                         _fmt(est / added if (est and added) else None, ".2f"),
                         _fmt(added / prob.n_variables if added else None, ".0f"),
                         res.status_name, f"{build_s:.1f}"))
            print(f"# {name} {method}: {res.status_name} in {sec:.1f} s", file=sys.stderr,
                  flush=True)
    head = ("case", "backend", "parameters", "iterations (scans)", "passes",
            "scan / projection and rest / certificate s", "wall s", "CPU s", "CPU share",
            "QP gap", "certified LP gap", "violation", "LP value", "LB", "ratio",
            "peak memory (GiB, process)",
            "estimate GiB", "solve's added peak GiB", "estimate / added",
            "added bytes per variable", "status", "build s")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(map(str, r)) + " |")


if __name__ == "__main__":
    main()
