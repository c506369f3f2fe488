"""LightTouch against FullTouch, dykstra and project-forget (markdown tables on stdout).

Cases: Jaccard ``cc`` on jazz, football and netscience; ``mn`` with ``p = 2`` on random
symmetric matrices (entries uniform in [0, 1), seed 0) with n = 500 and 1000.

Methods: ``lighttouch`` (LT Alg. 4, its finishing stage), ``fulltouch`` (the same code
with ``touch="full"``: every group checked at every step, LT Alg. 1), ``dykstra`` and
``project-forget``, all with their defaults (``tol = 1e-6`` for dykstra and lighttouch,
``1e-4`` for project-forget; ``gap_tol = 1e-4``), each capped by a time limit.

Columns of the main table, read from each run's records:

* ``checks``: triangle (or family) inequalities evaluated. lighttouch / fulltouch: the
  sampling phase's count (``constraints_checked``) plus ``3 C(n,3)`` per scan of the
  finishing stage (a polish separation round, or a dykstra pass and full check);
  dykstra: ``3 C(n,3)`` per pass and per full violation check, and per polish round;
  project-forget: ``3 C(n,3)`` per oracle scan plus one per remembered inequality per
  projection pass.
* ``viol 1e-2``: seconds to the first record whose full check (the average's, for
  lighttouch) shows violation <= 1e-2;
* ``gap 1e-2`` / ``gap 1e-4``: seconds to the first record with a certified LP gap at most
  that (dykstra and project-forget certify at the end of a QP stage; lighttouch at the end
  of its finishing stage), or "not reached in T s".

The warm-start table runs lighttouch for 1, 5 and 20 rounds before its finishing stage
(the LP polish from the rows active at the average) and gives the total time to the
certified optimum next to dykstra's; the early-answer table stops every method after a
short time limit and gives the returned point's objective and violation.

Run: ``python benchmarks/bench_lighttouch.py [--quick] [--cases jazz,mn500]
[--time-limit 60] [--skip-warm]``. Timings are wall seconds on a shared machine: read
them side by side, as ratios.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

import metricopt
from _data import data_dir
from metricopt.graph import Dissimilarity

DATA = str(data_dir())


def _graph_case(name):
    path = os.path.join(DATA, f"{name}.txt")
    g = metricopt.read_graph(path if os.path.exists(path) else name)
    return metricopt.build_problem("cc", g)


def _matrix_case(n, seed=0):
    rng = np.random.default_rng(seed)
    a = np.triu(rng.uniform(0.0, 1.0, (n, n)), 1)
    a = a + a.T
    labels = np.array([str(i) for i in range(n)], dtype=object)
    return metricopt.build_problem("mn", Dissimilarity(values=a, labels=labels,
                                                       name=f"random{n}"), p=2)


CASES = {
    "jazz": ("Jaccard cc, jazz", lambda: _graph_case("jazz")),
    "football": ("Jaccard cc, football", lambda: _graph_case("football")),
    "netscience": ("Jaccard cc, netscience", lambda: _graph_case("netscience")),
    "mn500": ("mn p=2, random n=500", lambda: _matrix_case(500)),
    "mn1000": ("mn p=2, random n=1000", lambda: _matrix_case(1000)),
}
QUICK = {
    "karate": ("Jaccard cc, karate", lambda: _graph_case("karate")),
    "mn60": ("mn p=2, random n=60", lambda: _matrix_case(60)),
}
METHODS = ("lighttouch", "fulltouch", "dykstra", "project-forget")


def _run(problem, method, time_limit, **extra):
    opts = dict(time_limit=time_limit, **extra)
    name = method
    if method == "fulltouch":
        name, opts["touch"] = "lighttouch", "full"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        res = metricopt.solve(problem, method=name, **opts)
        res["wall"] = time.perf_counter() - t0
    return res


def _first(history, test):
    for rec in history:
        if test(rec):
            return float(rec["seconds"])
    return None


def _checks(problem, method, res):
    tri = 3 * (problem.n * (problem.n - 1) * (problem.n - 2) // 6)
    polish_rounds = sum(p.get("rounds", 0) for p in res.get("polish", []) or [])
    hist = res.get("history", [])
    if method in ("lighttouch", "fulltouch"):
        fin = polish_rounds + 1.1 * res.get("finish_passes", 0)
        return res.get("constraints_checked", 0) + tri * fin
    if method == "dykstra":
        full = sum(1 for h in hist if h.get("full_check"))
        return tri * (len(hist) + full + polish_rounds)
    scans = len(hist)
    proj = sum(h.get("passes", 0) * h.get("remembered", 0) for h in hist)
    return tri * (scans + polish_rounds) + proj


def _cell(value, limit):
    return f"{value:.2f}" if value is not None else f"not reached in {limit:g} s"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cases", default=None)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--full-time-limit", type=float, default=30.0,
                    help="time limit of the FullTouch runs")
    ap.add_argument("--skip-warm", action="store_true")
    args = ap.parse_args(argv)
    table = QUICK if args.quick else CASES
    names = list(table) if args.cases is None else args.cases.split(",")
    methods = args.methods.split(",")
    rows, warm, early = [], [], []
    for key in names:
        title, make = table[key]
        problem = make()
        print(f"[{key}] n = {problem.n}", file=sys.stderr, flush=True)
        for method in methods:
            limit = args.full_time_limit if method == "fulltouch" else args.time_limit
            res = _run(problem, method, limit)
            h = res["history"]
            viol = _first(h, lambda r: r.get("full_check") and r["max_violation"] <= 1e-2)
            g2 = _first(h, lambda r: np.isfinite(r.get("gap", np.nan)) and r["gap"] <= 1e-2)
            g4 = _first(h, lambda r: np.isfinite(r.get("gap", np.nan)) and r["gap"] <= 1e-4)
            mem = metricopt.solvers.get_solver(
                "lighttouch" if method == "fulltouch" else method).estimate_memory(problem)
            rows.append(f"| {title} | {method} | {_checks(problem, method, res):.3g} | "
                        f"{_cell(viol, limit)} | {_cell(g2, limit)} | {_cell(g4, limit)} | "
                        f"{res['status_name']} | {res['wall']:.1f} | "
                        f"{(mem or 0) / 2**20:.0f} |")
            print(f"  {method}: {res['status_name']} {res['wall']:.1f} s, "
                  f"{res.get('message', '')[:150]}", file=sys.stderr, flush=True)
        if args.skip_warm:
            continue
        if problem.objective != "l2":
            dy = _run(problem, "dykstra", args.time_limit)
            for rounds in (1, 5, 20):
                res = _run(problem, "lighttouch", args.time_limit, max_iter=rounds,
                           finish_at=1e-12)
                fin = res["history"][-1].get("finish_seconds", float("nan"))
                phase = res["history"][-1]["seconds"] - fin
                warm.append(f"| {title} | {rounds} | {res['average_violation']:.2e} | "
                            f"{phase:.2f} | {fin:.2f} | "
                            f"{sum(p.get('rounds', 0) for p in res['polish'])} | "
                            f"{'+'.join(res['finish_stage'])} | {res['status_name']} | "
                            f"{res['wall']:.2f} | {dy['wall']:.2f} |")
        for method in ("lighttouch", "dykstra", "project-forget"):
            short = 2.0
            extra = dict(finish="none", max_iter=10 ** 6) if method == "lighttouch" else {}
            res = _run(problem, method, short, **extra)
            early.append(f"| {title} | {method} | {short:g} | {res['fun']:.6g} | "
                         f"{res['max_violation']:.2e} | {res['status_name']} |")
    print("| case | method | checks | viol 1e-2 (s) | gap 1e-2 (s) | gap 1e-4 (s) | status "
          "| wall (s) | memory estimate (MiB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if warm:
        print()
        print("| case | LT rounds | average's violation | LT phase (s) | finishing (s) | "
              "polish rounds | finishing stage | status | lighttouch total (s) | "
              "dykstra total (s) |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(warm))
    if early:
        print()
        print("| case | method | time limit (s) | objective of x | violation of x | status |")
        print("|---|---|---|---|---|---|")
        print("\n".join(early))


if __name__ == "__main__":
    main()
