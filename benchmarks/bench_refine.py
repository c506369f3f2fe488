"""Certified ratio before and after the local-search refinement, and its cost (markdown).

Usage::

    python benchmarks/bench_refine.py [--cases cc:jazz,cc-unit:ca-GrQc:highs-lazy,...]
        [--large] [--no-leiden] [--seed 0] [--data-dir DIR] [--out FILE]

What it measures
----------------
Each case is one :func:`metricopt.pipeline.run` (solve, rounding with the default 20
tries per method, refinement), seeded. From its report: the solve seconds, the LP value,
the certified lower bound ``LB``, the rounding's objective (``rounding.objective``) and
the refined one (``rounded_objective``), the refinement's seconds, moves and merges. The
table gives

* ``LP/LB``: how far the bound is from the LP value (the bound's share of the ratio);
* ``rounded/LB`` and ``refined/LB``: the certified ratio before and after refinement;
* ``refined/LP``: the clustering's share (the LP value is at most the optimum; a
  clustering cannot do better than the optimum, so this part is the clustering's plus
  the LP's integrality gap, and no bound can remove it);
* ``Leiden/LB``: for ``cc``, the best of 5 seeded Leiden runs on the matching quality
  function (``--round leiden``), refined the same way, for comparison with the best
  clustering another method finds (skipped with ``--no-leiden``, without leidenalg,
  and for Jaccard weights above :data:`LEIDEN_MAX_PAIRS` pairs: every pair is an edge of
  its signed graph, and 5 runs on ca-GrQc's 8.6 million took more than 10 minutes);
* ``refine / solve``: the refinement's seconds over the solve's (same process, side by
  side).

Cases (``--cases``, comma-separated ``KIND:GRAPH[:METHOD[:TOL[:GAP_TOL]]]``): ``cc``
Jaccard weights, ``cc-unit`` unit weights, ``cd`` cluster deletion, ``sc`` sparsest cut;
METHOD defaults to ``auto`` (also when empty), TOL and GAP_TOL to the backend's defaults
(GAP_TOL to TOL when only TOL is given). GRAPH is ``DATA_DIR/GRAPH.txt`` when that file
exists (``--data-dir``, default ``$METRICOPT_DATA`` or ``../shared/data`` next to the
repository), else a dataset name. Default cases: Jaccard cc on jazz, netscience, USAir97,
and polblogs (at violation 1e-2 and certified gap 2e-2: project-forget converges slowly
on its hubs); unit cc on the same and ca-GrQc (``highs-lazy``); cd on jazz, Vassar85; sc
on jazz, USAir97. ``--large`` adds Jaccard cc on ca-GrQc and ca-HepTh at violation 1e-2
and certified gap 2e-2 (the scale targets; about 1 and 4 minutes of solve, 1 and 4 GB) and
unit cc on ca-HepTh (``highs-lazy``).

The table is printed on stdout and, with ``--out``, rewritten after every case.
"""

import argparse
import os
import platform
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from _data import data_dir

DEFAULT_CASES = (
    "cc:jazz,cc:netscience,cc:USAir97,cc:polblogs::1e-2:2e-2,"
    "cc-unit:jazz,cc-unit:netscience,cc-unit:USAir97,cc-unit:polblogs,cc-unit:ca-GrQc:highs-lazy,"
    "cd:jazz,cd:Vassar85,sc:jazz,sc:USAir97"
)
#: The Leiden comparison is skipped on dense Jaccard problems with more pairs.
LEIDEN_MAX_PAIRS = 2_000_000
LARGE_CASES = "cc:ca-GrQc::1e-2:2e-2,cc:ca-HepTh::1e-2:2e-2,cc-unit:ca-HepTh:highs-lazy"
HEADER = ("| case | n | method | solve s | LP value | LB | LP/LB | rounded/LB | refined/LB | "
          "refined/LP | Leiden/LB | refine s | refine / solve | moves, merges |")


def _source(graph, folder):
    path = folder / f"{graph}.txt"
    return str(path) if path.exists() else graph


def _fmt(value, spec=".4f"):
    return "-" if value is None else format(value, spec)


def _leiden_ratio(problem, lower_bound, seed):
    from metricopt.rounding import round_solution

    try:
        res = round_solution(problem, None, method="leiden", n_tries=5, seed=seed)
    except Exception as exc:  # leidenalg missing or failing: no comparison
        print(f"leiden skipped: {exc}", file=sys.stderr)
        return None
    return res.objective / lower_bound


def run_case(spec, folder, seed, leiden):
    from metricopt import pipeline

    parts = spec.split(":")
    kind, graph = parts[0], parts[1]
    method = parts[2] if len(parts) > 2 and parts[2] else "auto"
    options = {"seed": seed}
    if len(parts) > 3:  # violation and certified-gap tolerances of the solve
        options["tol"] = float(parts[3])
        options["gap_tol"] = float(parts[4]) if len(parts) > 4 else float(parts[3])
    params = {}
    if kind.startswith("cc"):
        params["weights"] = "unit" if kind == "cc-unit" else "jaccard"
        kind = "cc"
    outcome = pipeline.run(_source(graph, folder), kind, method=method, problem_params=params,
                           solver_options=options, rounding={"seed": seed})
    rep = outcome.report
    rnd = rep["rounding"]
    lb, lp = rep["lower_bound"], rep["lp_value"]
    before, after = rnd["objective"], rnd["refined_objective"]
    info = rnd["refine"]
    leiden_ratio = None
    jaccard_pairs = outcome.problem.n_variables if params.get("weights") == "jaccard" else 0
    if leiden and kind == "cc" and lb and jaccard_pairs <= LEIDEN_MAX_PAIRS:
        leiden_ratio = _leiden_ratio(outcome.problem, lb, seed)
    name = {"cc": "Jaccard cc" if params.get("weights") == "jaccard" else "unit cc"}.get(kind, kind)
    return (f"| {name} {graph} | {rep['graph']['n']} | {rep['method']} | {rep['solve_seconds']:.2f} | "
            f"{lp:.6g} | {lb:.6g} | {_fmt(lp / lb)} | {_fmt(before / lb)} | {_fmt(after / lb)} | "
            f"{_fmt(after / lp)} | {_fmt(leiden_ratio)} | {info['seconds']:.3f} | "
            f"{info['seconds'] / rep['solve_seconds']:.4f} | {info['moves']}, {info['merges']} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default=None)
    parser.add_argument("--large", action="store_true")
    parser.add_argument("--no-leiden", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    cases = (args.cases or DEFAULT_CASES).split(",")
    if args.large:
        cases += LARGE_CASES.split(",")
    folder = data_dir(args.data_dir)
    import metricopt

    lines = [f"metricopt {metricopt.__version__}, python {platform.python_version()}, "
             f"numpy {np.__version__}, {os.cpu_count()} cores, seed {args.seed}", "", HEADER,
             "|" + "---|" * (HEADER.count("|") - 1)]
    for spec in cases:
        start = time.perf_counter()
        try:
            row = run_case(spec, folder, args.seed, not args.no_leiden)
        except Exception:
            traceback.print_exc()
            row = f"| {spec} | failed |" + " |" * (HEADER.count("|") - 3)
        print(f"{spec}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
        lines.append(row)
        if args.out:
            Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
