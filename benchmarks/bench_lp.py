"""Time to a certified LP gap: metricopt's methods next to HiGHS (markdown tables).

Usage::

    python benchmarks/bench_lp.py [--cases cc:lesmis,cc-unit:jazz,sc:jazz,cd:Vassar85]
        [--scale] [--methods auto,dykstra,project-forget,highs-pdlp,highs-simplex]
        [--highs-lazy] [--gap 1e-4] [--violation 1e-6] [--time-limit 600]
        [--hard-timeout SECONDS] [--threads 2] [--data-dir DIR] [--out FILE] [--csv FILE]

What it measures
----------------
For every case and method: the solve seconds (``elapsed`` of :func:`metricopt.solve`;
the kernels' compilation or loading, ``compile_seconds``, is not counted) until the
run stops, and whether the point it returns meets both targets: certified LP gap
``(fun - lower_bound) / max(|lower_bound|, 1e-300) <= --gap`` (computed here from the
reported ``fun`` and ``lower_bound``, not taken from the library) and largest constraint
violation ``max_violation <= --violation`` (default 1e-4 and 1e-6). Each run gets
``tol`` = the violation target, ``gap_tol`` = the gap target (iterative backends and
``auto``), ``time_limit`` = ``--time-limit`` (default 600 s) and ``threads`` =
``--threads`` (default 2).

Methods: ``auto``, ``dykstra``, ``project-forget`` (metricopt's), ``highs-pdlp``
(``method="highs", lp_algorithm="pdlp"``; "n/a" while the backend rejects it),
``highs-simplex`` (``lp_algorithm="simplex"``), with ``--highs-lazy`` also
``highs-lazy``; ``--methods`` picks any of these and ``highs-ipm``. The HiGHS backends
report ``lower_bound = fun`` when HiGHS says optimal; the table takes that at face value
and the exact-reference columns show what it is worth. A HiGHS variant is skipped
("skipped (memory)") when its backend's ``estimate_memory(problem)`` exceeds the memory
available (``highs``: the full model; ``highs-lazy``: its first rounds).

Cases (``--cases``, comma-separated ``KIND:GRAPH[:GAP[:VIOLATION[:LIMIT]]]``; the
optional fields override the flags for that case): ``cc`` correlation clustering with
Jaccard weights, ``cc-unit`` with unit weights, ``sc`` sparsest cut, ``cd`` cluster
deletion, ``mn`` metric nearness with p = 1, ``cc-wedges`` the open-wedge relaxation of
unit cc (``benchmarks/bench_wedges.py`` sets it beside the full LP). GRAPH is
``DATA_DIR/GRAPH.txt`` when that file exists (``--data-dir``, default ``$METRICOPT_DATA`` or
``../shared/data`` next to the repository), else a bundled dataset (karate, lesmis, dolphins,
football).
Default cases: Jaccard cc on lesmis, polbooks, football, jazz, USAir97, netscience; unit cc on
jazz, polblogs; sc on jazz, USAir97; cd on jazz, Vassar85. ``--scale`` runs the large
set instead: Jaccard cc on ca-GrQc and power (gap 1e-3, violation 1e-3, 600 s) and on
ca-HepTh (gap 1e-2, violation 1e-3, 1800 s).

Every (case, method) runs in a fresh process (``python benchmarks/bench_lp.py --one
...``), killed after ``--hard-timeout`` seconds (default 1.5 x the case's limit + 180),
so that a crash or a hang leaves one row "timeout" or "crashed" and the table goes on;
its peak resident memory comes from ``os.wait4``.

Output
------
The machine (cores, CPU model, memory) and the versions used, then two markdown tables
on stdout and in ``--out FILE`` (rewritten after each case), all fields of every run in
``--csv FILE``:

1. one row per case and method: status, seconds, ``fun``, ``lower_bound``, certified
   gap, violation, iterations, peak RSS, targets met, the exact LP value (from the
   ``highs-simplex`` run when it ended optimal, else from ``highs-lazy`` or
   ``highs-ipm``) and the signed relative error of ``fun`` and ``lower_bound`` to it;
2. one row per case: each method's seconds over the best metricopt method's (the
   fastest of ``auto``, ``dykstra``, ``project-forget`` that met the targets; ``auto``
   counts only when it chose a metricopt backend), ``> r`` where the method stopped
   without meeting the targets after ``r`` times the best (its time to the targets is
   longer), the speed-up of the best metricopt method over HiGHS PDLP and over the
   fastest HiGHS variant, and the goals: at least 10x faster than PDLP on every Jaccard
   cc case, faster than every HiGHS variant on every case.

Runs: ``python benchmarks/bench_lp.py --out lp.md --csv lp.csv`` (hours: HiGHS is given
600 s per case); smoke test ``python benchmarks/bench_lp.py --cases cc:karate
--time-limit 20``.
"""

import argparse
import csv
import io
import json
import math
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time

from _data import data_dir

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = str(data_dir())

DEFAULT_CASES = ("cc:lesmis,cc:polbooks,cc:football,cc:jazz,cc:USAir97,cc:netscience,"
                 "cc-unit:jazz,cc-unit:polblogs,sc:jazz,sc:USAir97,cd:jazz,cd:Vassar85")
SCALE_CASES = "cc:ca-GrQc:1e-3:1e-3:600,cc:power:1e-3:1e-3:600,cc:ca-HepTh:1e-2:1e-3:1800"

#: case kind -> (problem kind, builder parameters, label)
KINDS = {
    "cc": ("cc", {"weights": "jaccard"}, "cc Jaccard"),
    "cc-unit": ("cc", {"weights": "unit"}, "cc unit"),
    "cc-wedges": ("cc", {"weights": "unit", "relaxation": "wedges"}, "cc unit, open-wedge LP"),
    "sc": ("sc", {}, "sc"),
    "cd": ("cd", {}, "cd"),
    "mn": ("mn", {"p": 1}, "mn p=1"),
}

#: method label -> (backend, extra options)
METHODS = {
    "auto": ("auto", {}),
    "dykstra": ("dykstra", {}),
    "project-forget": ("project-forget", {}),
    "highs-pdlp": ("highs", {"lp_algorithm": "pdlp"}),
    "highs-simplex": ("highs", {"lp_algorithm": "simplex"}),
    "highs-ipm": ("highs", {"lp_algorithm": "ipm"}),
    "highs-lazy": ("highs-lazy", {}),
}
METRICOPT_METHODS = ("auto", "dykstra", "project-forget")
HIGHS_BACKENDS = ("highs", "highs-lazy")
DEFAULT_METHODS = "auto,dykstra,project-forget,highs-pdlp,highs-simplex"
#: runs whose optimal value is the exact LP optimum, in order of preference
EXACT_SOURCES = ("highs-simplex", "highs-lazy", "highs-ipm")

_MARK = "BENCH_LP_RESULT "
#: statuses of runs that produced no solve
NO_SOLVE = ("n/a", "skipped (memory)", "error", "timeout", "crashed")


# ------------------------------------------------------------------ one run (child)
def _graph(name, data_dir):
    from metricopt.io import read_graph

    path = os.path.join(data_dir, f"{name}.txt")
    return read_graph(path if os.path.exists(path) else name)


def _finite(v):
    return None if v is None or not math.isfinite(float(v)) else float(v)


def run_one(kind, graph, method, gap, violation, limit, threads, data_dir):
    """Build and solve one case in this process; return the record (a dict)."""
    import resource
    import warnings

    import metricopt
    from metricopt._memory import available_memory
    from metricopt.exceptions import InvalidParameterError
    from metricopt.problems import build_problem
    from metricopt.solvers import get_solver

    backend, extra = METHODS[method]
    pkind, params, _ = KINDS[kind]
    rec = dict(status="error", backend=backend)
    t = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem = build_problem(pkind, _graph(graph, data_dir), **params)
    except Exception as exc:  # noqa: BLE001 - one row of the table
        rec.update(message=f"{type(exc).__name__}: {exc}")
        return rec
    rec.update(build_seconds=time.perf_counter() - t, n=int(problem.n),
               n_variables=int(problem.n_variables))
    opts = dict(tol=violation, time_limit=limit, threads=threads, **extra)
    if backend not in HIGHS_BACKENDS:
        opts["gap_tol"] = gap
    if backend in HIGHS_BACKENDS:
        need = get_solver(backend).estimate_memory(problem)
        have = available_memory()
        rec.update(memory_estimate=need, memory_available=have)
        if need is not None and need > have:
            rec.update(status="skipped (memory)",
                       message=f"estimate {need / 2**30:.1f} GiB > {have / 2**30:.1f} GiB available")
            return rec
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = metricopt.solve(problem, method=backend, **opts)
    except InvalidParameterError as exc:
        if "lp_algorithm" in extra and "lp_algorithm" in str(exc):
            rec.update(status="n/a", message=str(exc))
            return rec
        rec.update(status="error", message=f"{type(exc).__name__}: {exc}")
        return rec
    except Exception as exc:  # noqa: BLE001 - one row of the table
        rec.update(status="error", message=f"{type(exc).__name__}: {exc}")
        return rec
    rec.update(
        status=res.get("status_name", str(res.get("status"))), backend=res.get("method", backend),
        seconds=float(res["elapsed"]), compile_seconds=float(res.get("compile_seconds", 0.0)),
        fun=_finite(res.get("fun")), lower_bound=_finite(res.get("lower_bound")),
        max_violation=_finite(res.get("max_violation")), nit=res.get("nit"),
        message=str(res.get("message", ""))[:200],
        peak_rss_self=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    )
    if "memory_estimate" not in rec and rec["backend"] in HIGHS_BACKENDS:
        rec["memory_estimate"] = get_solver(rec["backend"]).estimate_memory(problem)
    return rec


# ----------------------------------------------------------------- driver (parent)
def parse_cases(text, gap, violation, limit):
    cases = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        parts = item.split(":")
        if len(parts) < 2 or parts[0] not in KINDS:
            raise SystemExit(f"bad case {item!r}: KIND:GRAPH[:GAP[:VIOLATION[:LIMIT]]] with KIND "
                             f"in {', '.join(KINDS)}")
        extra = [float(p) for p in parts[2:5]]
        extra += [None] * (3 - len(extra))
        cases.append(dict(kind=parts[0], graph=parts[1],
                          gap=extra[0] if extra[0] is not None else gap,
                          violation=extra[1] if extra[1] is not None else violation,
                          limit=extra[2] if extra[2] is not None else limit))
    return cases


def run_child(case, method, threads, data_dir, hard_timeout):
    """Run one (case, method) in a fresh process; return its record with the peak RSS."""
    cmd = [sys.executable, os.path.abspath(__file__), "--one", case["kind"], case["graph"], method,
           "--gap", repr(case["gap"]), "--violation", repr(case["violation"]),
           "--time-limit", repr(case["limit"]), "--threads", str(threads), "--data-dir", data_dir]
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, str(threads))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, start_new_session=True)
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > hard_timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                killed = True
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        lines = [ln for ln in out.read().splitlines() if ln.startswith(_MARK)]
        tail = err.read().strip().splitlines()[-1:] or [""]
    rec = dict(status="crashed", message=tail[0][:200])
    if killed:
        rec = dict(status="timeout", message=f"killed after {hard_timeout:.0f} s")
    elif lines:
        rec = json.loads(lines[-1][len(_MARK):])
    elif os.WIFSIGNALED(status):
        rec["message"] = f"signal {os.WTERMSIG(status)}; {rec['message']}"
    rec.update(peak_rss=usage.ru_maxrss * 1024, process_seconds=wall)
    return rec


def certified_gap(fun, lb):
    if fun is None or lb is None:
        return math.inf
    return (fun - lb) / max(abs(lb), 1e-300)


def complete(rec, case, method):
    """Add the case, the certified gap and the target verdict to a run's record."""
    rec.update(case=f"{case['kind']}:{case['graph']}", kind=case["kind"], graph=case["graph"],
               method=method, gap_target=case["gap"], violation_target=case["violation"],
               time_limit=case["limit"])
    rec["gap"] = certified_gap(rec.get("fun"), rec.get("lower_bound"))
    viol = rec.get("max_violation")
    rec["met"] = bool(rec["status"] not in NO_SOLVE and rec["gap"] <= case["gap"]
                      and viol is not None and viol <= case["violation"])
    return rec


def add_exact(rows):
    """The exact LP value of a case's rows, and every row's relative error to it."""
    by = {r["method"]: r for r in rows}
    exact = source = None
    for m in EXACT_SOURCES:
        r = by.get(m)
        if r is not None and r["status"] == "optimal" and r.get("fun") is not None:
            exact, source = r["fun"], m
            break
    for r in rows:
        r["exact"], r["exact_source"] = exact, source
        for key, field in (("fun_error", "fun"), ("lb_error", "lower_bound")):
            v = r.get(field)
            r[key] = None if exact is None or v is None else (v - exact) / max(abs(exact), 1e-300)


def _f(v, spec, empty="-"):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return empty
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    return format(v, spec)


def _label(r):
    if r["method"] == "auto" and r.get("backend") not in (None, "auto"):
        return f"auto ({r['backend']})"
    return r["method"]


def _case_label(case):
    _, _, label = KINDS[case["kind"]]
    return f"{label} {case['graph']}"


def run_table(rows):
    head = ("| case | method | status | seconds | fun | lower bound | cert. gap | violation | nit | "
            "peak RSS GiB | targets met | exact LP | fun err | LB err |")
    lines = [head, "|" + "---|" * 14]
    for r in rows:
        status = r["status"]
        if status in ("error", "crashed", "timeout") and r.get("message"):
            status = f"{status}: {r['message'][:60]}"
        exact = "-" if r.get("exact") is None else f"{r['exact']:.8g} ({r['exact_source']})"
        met = "yes" if r["met"] else ("-" if r["status"] in NO_SOLVE else "no")
        lines.append(
            f"| {r['case_label']} (gap {r['gap_target']:g}, viol {r['violation_target']:g}) | "
            f"{_label(r)} | {status} | {_f(r.get('seconds'), '.2f')} | {_f(r.get('fun'), '.8g')} | "
            f"{_f(r.get('lower_bound'), '.8g')} | "
            f"{_f(r['gap'] if r['status'] not in NO_SOLVE else None, '.1e')} | "
            f"{_f(r.get('max_violation'), '.1e')} | {_f(r.get('nit'), 'd')} | "
            f"{_f(r.get('peak_rss', 0) / 2**30 if r.get('peak_rss') else None, '.2f')} | {met} | "
            f"{exact} | {_f(r.get('fun_error'), '+.1e')} | {_f(r.get('lb_error'), '+.1e')} |")
    return "\n".join(lines)


def _time_to_target(r):
    """``(seconds, exact)``: the run's time to the targets, or a lower bound on it
    (``exact=False``) when it stopped without meeting them; ``None`` without a solve."""
    if r is None:
        return None
    if r["met"]:
        return r["seconds"], True
    if r["status"] == "timeout":
        return min(r["time_limit"], r["process_seconds"]), False
    if r["status"] in NO_SOLVE or r.get("seconds") is None:
        return None
    return r["seconds"], False


def _ratio_text(tt, best):
    if tt is None:
        return None
    s, exact = tt
    r = s / best if best > 0 else math.inf
    return f"{r:.2f}" if exact else f"> {r:.2f}"


def ratio_table(case_rows, methods):
    cols = [m for m in methods]
    head = ("| case | best metricopt method | s | " + " | ".join(cols)
            + " | PDLP / best | best HiGHS / best | goals |")
    lines = [head, "|" + "---|" * (len(cols) + 6)]
    for case, rows in case_rows:
        by = {r["method"]: r for r in rows}
        mine = [r for r in rows if r["method"] in METRICOPT_METHODS and r["met"]
                and r.get("backend") not in HIGHS_BACKENDS]
        best = min(mine, key=lambda r: r["seconds"]) if mine else None
        cells = []
        for m in cols:
            r = by.get(m)
            if r is None:
                cells.append("-")
            elif r["status"] in ("n/a", "skipped (memory)", "error", "crashed"):
                cells.append(r["status"])
            elif r["status"] == "timeout" and best is None:
                cells.append(f"timeout (> {_time_to_target(r)[0]:.0f} s)")
            elif best is None:
                cells.append(("met, " if r["met"] else "not met, ")
                             + f"{_f(r.get('seconds'), '.2f')} s")
            elif m == "auto" and r.get("backend") in HIGHS_BACKENDS:
                cells.append(f"({r['backend']}) {_ratio_text(_time_to_target(r), best['seconds'])}")
            else:
                cells.append(_ratio_text(_time_to_target(r), best["seconds"]) or "-")
        if best is None:
            lines.append(f"| {_case_label(case)} | none met | - | " + " | ".join(cells)
                         + " | - | - | not met |")
            continue
        b = best["seconds"]
        highs = [by[m] for m in cols if m in by and METHODS[m][0] in HIGHS_BACKENDS]
        # PDLP
        pdlp = by.get("highs-pdlp")
        goals = []
        if pdlp is None or pdlp["status"] == "n/a":
            pd_text = "n/a"
            if case["kind"] == "cc":
                goals.append("PDLP >= 10x: n/a")
        elif pdlp["status"] == "skipped (memory)":
            pd_text = "HiGHS out of memory"
            if case["kind"] == "cc":
                goals.append("PDLP >= 10x: met (PDLP cannot run)")
        else:
            tt = _time_to_target(pdlp)
            pd_text = _ratio_text(tt, b) or pdlp["status"]
            if case["kind"] == "cc":
                if tt is None:
                    goals.append(f"PDLP >= 10x: ? ({pdlp['status']})")
                else:
                    r = tt[0] / b
                    ok = r >= 10 if tt[1] else (True if r >= 10 else None)
                    goals.append("PDLP >= 10x: " + {True: "met", False: "not met", None: "?"}[ok])
        # every HiGHS variant
        verdicts, ratios = [], []
        for r in highs:
            if r["status"] == "n/a":
                continue
            if r["status"] == "skipped (memory)":
                verdicts.append(True)
                continue
            tt = _time_to_target(r)
            if tt is None:
                verdicts.append(None)
                continue
            ratios.append((tt[0] / b, tt[1]))
            verdicts.append((tt[0] > b) if tt[1] else (True if tt[0] >= b else None))
        if ratios:
            lo = min(ratios)
            best_h = f"{lo[0]:.2f}" if lo[1] else f"> {lo[0]:.2f}"
        else:
            best_h = "-"
        if verdicts:
            ok = (False if False in verdicts else (None if None in verdicts else True))
            goals.append("faster than all HiGHS: " + {True: "met", False: "not met", None: "?"}[ok])
        label = _label(best)
        lines.append(f"| {_case_label(case)} | {label} | {b:.2f} | " + " | ".join(cells)
                     + f" | {pd_text} | {best_h} | {'; '.join(goals) or '-'} |")
    return "\n".join(lines)


def machine_info(args):
    import importlib.metadata as md

    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as fh:
            info = dict(ln.split(":", 1) for ln in fh)
        mem = (f"{int(info['MemTotal'].split()[0]) / 2**20:.1f} GiB total, "
               f"{int(info['MemAvailable'].split()[0]) / 2**20:.1f} GiB available")
    except (OSError, KeyError, ValueError):
        pass
    versions = []
    for pkg in ("metricopt", "numpy", "numba", "scipy", "highspy"):
        try:
            versions.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            versions.append(f"{pkg} -")
    try:
        rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], check=True,
                             capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rev = "?"
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    return "\n".join([
        f"Machine: {cores} cores ({usable} usable), {cpu}; memory {mem}; {platform.platform()}",
        f"Versions: Python {platform.python_version()}, {', '.join(versions)}; git {rev}",
        f"Runs: threads={args.threads}, each in a fresh process; seconds = solve time "
        f"(compile time excluded); targets per case in the first column (certified gap "
        f"(fun - LB)/|LB|, max violation); time limit per case {args.time_limit:g} s unless "
        f"the case says otherwise",
    ])


def render(info, case_rows, methods):
    rows = [r for _, rs in case_rows for r in rs]
    return (f"{info}\n\n### Runs\n\n{run_table(rows)}\n\n### Time over the best metricopt method\n\n"
            f"{ratio_table(case_rows, methods)}\n")


CSV_FIELDS = ("case", "kind", "graph", "method", "backend", "status", "seconds", "compile_seconds",
              "build_seconds", "process_seconds", "fun", "lower_bound", "gap", "max_violation", "nit",
              "peak_rss", "met", "gap_target", "violation_target", "time_limit", "exact",
              "exact_source", "fun_error", "lb_error", "n", "n_variables", "memory_estimate",
              "message")


def write_csv(path, rows):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    with open(path, "w", newline="") as fh:
        fh.write(buf.getvalue())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=None,
                    help="comma-separated KIND:GRAPH[:GAP[:VIOLATION[:LIMIT]]] "
                         f"(default: {DEFAULT_CASES})")
    ap.add_argument("--scale", action="store_true",
                    help=f"run the large cases instead ({SCALE_CASES})")
    ap.add_argument("--methods", default=DEFAULT_METHODS,
                    help=f"comma-separated, among {', '.join(METHODS)} (default: {DEFAULT_METHODS})")
    ap.add_argument("--highs-lazy", action="store_true", help="also run highs-lazy")
    ap.add_argument("--gap", type=float, default=1e-4, help="certified LP gap target (default 1e-4)")
    ap.add_argument("--violation", type=float, default=1e-6,
                    help="largest constraint violation allowed, also passed as tol (default 1e-6)")
    ap.add_argument("--time-limit", type=float, default=600.0,
                    help="time_limit of each solve, seconds (default 600)")
    ap.add_argument("--hard-timeout", type=float, default=None,
                    help="kill a run's process after this many seconds (default 1.5 x its "
                         "time limit + 180)")
    ap.add_argument("--threads", type=int, default=2, help="threads of each solve (default 2)")
    ap.add_argument("--data-dir", default=DATA,
                    help=f"directory of GRAPH.txt edge lists (default {DATA})")
    ap.add_argument("--out", default=None, help="also write the markdown to this file")
    ap.add_argument("--csv", default=None, help="write every run's fields to this CSV file")
    ap.add_argument("--one", nargs=3, metavar=("KIND", "GRAPH", "METHOD"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.one:
        kind, graph, method = args.one
        rec = run_one(kind, graph, method, args.gap, args.violation, args.time_limit, args.threads,
                      args.data_dir)
        print(_MARK + json.dumps(rec), flush=True)
        return

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if args.highs_lazy and "highs-lazy" not in methods:
        methods.append("highs-lazy")
    bad = [m for m in methods if m not in METHODS]
    if bad:
        ap.error(f"unknown method(s) {', '.join(bad)}; choose among {', '.join(METHODS)}")
    text = args.cases or (SCALE_CASES if args.scale else DEFAULT_CASES)
    cases = parse_cases(text, args.gap, args.violation, args.time_limit)

    info = machine_info(args)
    print(info, file=sys.stderr, flush=True)
    case_rows = []
    total, k = len(cases) * len(methods), 0
    for case in cases:
        rows = []
        for method in methods:
            k += 1
            hard = args.hard_timeout or 1.5 * case["limit"] + 180
            rec = complete(run_child(case, method, args.threads, args.data_dir, hard), case, method)
            rec["case_label"] = _case_label(case)
            rows.append(rec)
            print(f"[{k}/{total}] {rec['case']} {_label(rec)}: {rec['status']}, "
                  f"{_f(rec.get('seconds'), '.2f')} s, gap {_f(rec['gap'], '.1e')}, "
                  f"violation {_f(rec.get('max_violation'), '.1e')}, "
                  f"met {rec['met']}", file=sys.stderr, flush=True)
        add_exact(rows)
        case_rows.append((case, rows))
        if args.out:
            with open(args.out, "w") as fh:
                fh.write(render(info, case_rows, methods))
        if args.csv:
            write_csv(args.csv, [r for _, rs in case_rows for r in rs])
    print(render(info, case_rows, methods))


if __name__ == "__main__":
    main()
