"""Benchmarks of the ``dykstra`` backend; prints a markdown table.

Usage::

    python benchmarks/bench_dykstra.py [--quick] [--orders] [--highs-cap SECONDS]
        [--large-limit SECONDS] [--no-kernels | --kernels-only] [--presize FRACTION]
        [--c-fastmath]

Cases (targets from the project's issue): sparsest cut on jazz (gamma 5, lambda 1/n,
gap 1e-4, violation 1e-8; <= 5 s), Jaccard correlation clustering on jazz (gap 1e-4,
violation 1e-6; <= 10 s), single-thread time per triplet at n = 1000, 2000 over passes
2-5 next to the plain C loop ``ref_kernel.c`` (gcc -O3 -march=native, compiled here),
2 threads against 1 at n = 2000 (parallel order, whose iterates equal the lexicographic
order's), cluster deletion on Vassar85 (<= 60 s,
<= 2 GB peak RSS, run in its own process), sparsest cut on USAir97, netscience and Harvard500
(<= 60 s each; stopped after ``--large-limit`` seconds). HiGHS
(``metricopt.solve(problem, method="highs")``) runs in a child process
that is stopped after ``--highs-cap`` seconds. ``--quick`` uses small instances. The
kernels are loaded by a warm-up solve on karate before the timed cases.

Kernel table: the numba sparse diagonal kernel is compared with the C mode
``sparse-scratch`` (same algorithm: each row through a dense scratch), the dense kernel
with ``dense`` and the lexicographic kernel with ``lexicographic``. The dual lists are
reused between passes as the solver reuses them; with ``--presize F`` (default 0.04) both
lists of the diagonal order, numba's and C's, are allocated and touched for ``F`` of the
``3 C(n,3)`` constraints before the timed passes (the solver's steady state: no pass
grows them), 0 lets the kernels grow them during the passes (fresh pages fault, which
is slow on this VM and differs between numba's copy and C's realloc). ``--c-fastmath``
compiles the C loop with the fast-math set numba's kernels use (reassociation, so that its
sum reductions vectorise; no finite-math assumptions).
"""

import argparse
import multiprocessing as mp
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

from _data import data_dir

HERE = os.path.dirname(os.path.abspath(__file__))
#: largest dense dual array the kernel table allocates (the C reference allocates its own)
DENSE_KERNEL_BYTES = 8 * 2**30
DATA = str(data_dir())


def graph(name):
    from metricopt.io import read_graph

    path = os.path.join(DATA, f"{name}.txt")
    return read_graph(path if os.path.exists(path) else name)


def _highs_child(kind, name, params, q):
    import metricopt
    from metricopt.problems import build_problem

    try:
        t = time.perf_counter()
        res = metricopt.solve(build_problem(kind, graph(name), **params), method="highs")
        q.put((time.perf_counter() - t, float(res.fun)))
    except Exception as exc:  # noqa: BLE001 - reported in the table
        q.put((None, f"{type(exc).__name__}"))


def highs_time(kind, name, params, cap):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_highs_child, args=(kind, name, params, q))
    p.start()
    p.join(cap)
    if p.is_alive():
        p.terminate()
        p.join()
        return f"> {cap:.0f} s (stopped)"
    if q.empty():
        return "failed"
    t, val = q.get()
    return f"{t:.2f} s (LP {val:.6g})" if t is not None else f"error: {val}"


def run_case(rows, label, kind, name, params, opts, cap):
    from metricopt.problems import build_problem
    from metricopt.solvers.dykstra import solve_dykstra

    problem = build_problem(kind, graph(name), **params)
    t, c = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = solve_dykstra(problem, **opts)
    sec, cpu = time.perf_counter() - t, time.process_time() - c
    lb = res["lower_bound"]
    hi = highs_time(kind, name, params, cap) if cap > 0 else "skipped"
    par = ", ".join(f"{k}={v}" for k, v in opts.items())
    rows.append([label, "dykstra", par, res["nit"], f"{sec:.2f} ({cpu:.2f} CPU)", f"{res['qp_gap']:.1e}",
                 f"{res['max_violation']:.1e}", f"{res['fun']:.6g}",
                 "-" if lb is None else f"{lb:.6g}",
                 "-" if lb is None or lb <= 0 else f"{res['fun'] / lb:.4f}", res["status_name"]
                 if "status_name" in res else res["status"], hi])
    return res


def _cd_child(name, cap, q):
    rows = []
    t, c = time.perf_counter(), time.process_time()
    run_case(rows, f"cd {name}", "cd", name, {}, dict(tol=1e-6, gap_tol=1e-4), cap)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    rows[-1][2] += (f"; peak RSS {peak:.2f} GB; read + build + solve {wall:.1f} s wall, "
                    f"{cpu:.1f} s CPU")
    q.put(rows[-1])


def cd_case(name, cap):
    """Cluster deletion case in a child process (its peak RSS alone)."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_cd_child, args=(name, cap, q))
    p.start()
    row = q.get()
    p.join()
    return row


def _instance(n):
    rng = np.random.default_rng(0)
    N = n * (n - 1) // 2
    return (rng.random(N) < 0.1).astype(np.float64), 1.0 / rng.uniform(0.5, 2.0, N)


def per_triplet(n, npass=5, threads=1, order="diagonal", presize=0.0):
    """ns per triplet of the triangle pass alone, mean over passes 2..npass.

    ``order``: "diagonal" and "lexicographic" (sparse duals), "dense" (diagonal order,
    dense duals) or "parallel". ``presize``: sparse orders only, fraction of the
    ``3 C(n,3)`` constraints both dual lists are sized (and touched) for before the
    timed passes; 0 starts from 64K entries and lets the kernel grow them. The lists
    are reused between passes as in the solver (the full arrays, not the slices).

    Returns ``(wall, cpu, nz)``: wall clock and CPU time of this process (all threads)
    per triplet, so that a loaded machine shows up as ``cpu / wall`` below the thread
    count, and the fraction of the constraints holding a nonzero dual after the last pass.
    """
    import numba

    from metricopt.solvers import _dykstra_parallel as P
    from metricopt.solvers import _triangle_dense as D
    from metricopt.solvers import _triangle_sparse as S

    x, winv = _instance(n)
    trip = n * (n - 1) * (n - 2) / 6
    old = numba.get_num_threads()
    wall = cpu = 0.0
    try:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        if order == "parallel":
            bs = 64
            sched = P.schedule(n, bs)
            pos, val = np.zeros((2, 1), np.int64), np.zeros((2, 1))
            cnt = np.zeros(2, np.int64)
            a, b = np.empty((2, 1024), np.int64), np.empty((2, 1024))
            P.triangle_pass_parallel(x[:3].copy(), winv[:3], 3, 2, pos, val, cnt, a, b)  # jit
            for k in range(1, npass + 1):
                t, c = time.perf_counter(), time.process_time()
                p, v, cnt2, _, _ = P.triangle_pass_parallel(x, winv, n, bs, pos, val, cnt, a, b,
                                                            sched)
                if k >= 2:
                    wall += time.perf_counter() - t
                    cpu += time.process_time() - c
                a, b, pos, val, cnt = pos, val, p, v, cnt2
            nz = int(cnt.sum())
        elif order == "dense":
            z = np.zeros(3 * (n * (n - 1) * (n - 2) // 6))
            for k in range(1, npass + 1):
                t, c = time.perf_counter(), time.process_time()
                _, _, nz = D.triangle_pass_dense(x, winv, n, 16, z)
                if k >= 2:
                    wall += time.perf_counter() - t
                    cpu += time.process_time() - c
            del z
        else:
            kern = S.TRIANGLE_KERNELS[order]
            cap = max(1 << 16, int(presize * 3 * trip) + 3 * n)
            # (a, b): scratch for this pass's duals; (fp, fv): the full arrays behind
            # (pos, val); both pairs are passed on between passes, as the solver does
            a, b, fp, fv = (np.ones(cap, np.int64), np.ones(cap), np.ones(cap, np.int64),
                            np.ones(cap))
            pos, val = fp[:0], fv[:0]
            for k in range(1, npass + 1):
                t, c = time.perf_counter(), time.process_time()
                p, v, cnt, _, _ = kern(x, winv, n, 16, pos, val, a, b)
                if k >= 2:
                    wall += time.perf_counter() - t
                    cpu += time.process_time() - c
                a, b, fp, fv = fp, fv, p, v
                pos, val = p[:cnt], v[:cnt]
            nz = cnt
            del a, b, fp, fv, pos, val, p, v
    finally:
        numba.set_num_threads(old)
    return (1e9 * wall / (trip * (npass - 1)), 1e9 * cpu / (trip * (npass - 1)),
            nz / (3 * trip))


#: gcc flags matching the kernels' fast-math set (``_config.FASTMATH``: nsz, arcp, contract,
#: afn, reassoc; NaN and infinity stay honest)
C_FASTMATH = ["-fassociative-math", "-fno-signed-zeros", "-fno-trapping-math",
              "-freciprocal-math", "-ffp-contract=fast"]


def c_reference(n, npass=5, order="diagonal", presize=0.0, fastmath=False):
    """(wall, thread CPU, nonzero fraction) of ``ref_kernel.c`` in mode ``order``
    ("diagonal" is the earlier sparse algorithm, "sparse-scratch" the current one), or
    None without gcc. ``presize``: as in :func:`per_triplet`; ``fastmath``: add
    :data:`C_FASTMATH` to ``-O3 -march=native``."""
    if shutil.which("gcc") is None:
        return None
    exe = os.path.join(tempfile.mkdtemp(), "ref_kernel")
    subprocess.run(["gcc", "-O3", "-march=native", *(C_FASTMATH if fastmath else []), "-o", exe,
                    os.path.join(HERE, "ref_kernel.c")], check=True)
    out = subprocess.run([exe, str(n), str(npass), order, "0", str(presize)], check=True,
                         capture_output=True, text=True)
    wall, cpu, nz = out.stdout.split()
    return float(wall), float(cpu), float(nz)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small instances only")
    ap.add_argument("--highs-cap", type=float, default=120.0, help="seconds allowed to HiGHS")
    ap.add_argument("--orders", action="store_true", help="also compare visiting orders")
    ap.add_argument("--large-limit", type=float, default=60.0,
                    help="seconds allowed to each sc case on USAir97, netscience, Harvard500 "
                         "(0 skips them)")
    ap.add_argument("--no-kernels", action="store_true",
                    help="skip the per-triplet kernel and thread tables")
    ap.add_argument("--kernels-only", action="store_true",
                    help="only the per-triplet kernel and thread tables")
    ap.add_argument("--presize", type=float, default=0.04,
                    help="fraction of the constraints the diagonal order's dual lists are "
                         "sized for before the timed passes (0: grown by the kernels)")
    ap.add_argument("--c-fastmath", action="store_true",
                    help="compile ref_kernel.c with the kernels' fast-math flag set")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.join(HERE, "..", "src"))
    from metricopt.io import read_graph
    from metricopt.problems import build_problem
    from metricopt.solvers.dykstra import solve_dykstra

    # load (or compile) every kernel once, so that the timed cases measure the solve alone
    # (a fresh process pays this once: about 1-2 s with a warm numba cache)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kind in ("sc", "cc"):
            solve_dykstra(build_problem(kind, read_graph("karate")), max_iter=12)
    print(f"kernel load / warm-up: {time.perf_counter() - t:.1f} s\n")

    if not args.kernels_only:
        _cases(args)
    if not args.no_kernels:
        _kernels(args)


def _cases(args):
    rows = []
    cap = args.highs_cap
    big = "lesmis" if args.quick else "jazz"
    orders = ("diagonal", "lexicographic") if args.orders else ("diagonal",)
    for order in orders:
        run_case(rows, f"sc {big}", "sc", big, {},
                 dict(gamma=5.0, tol=1e-8, gap_tol=1e-4, order=order), cap if order == orders[0] else 0)
        run_case(rows, f"cc Jaccard {big}", "cc", big, {},
                 dict(tol=1e-6, gap_tol=1e-4, order=order), cap if order == orders[0] else 0)
    cd_name = "football" if args.quick else "Vassar85"
    # own process, so that ru_maxrss is this case's peak (graph, lists, duals, checks)
    rows.append(cd_case(cd_name, cap if args.quick else 0))
    if not args.quick and args.large_limit > 0:
        for name in ("USAir97", "netscience", "Harvard500"):
            run_case(rows, f"sc {name}", "sc", name, {},
                     dict(gamma=5.0, tol=1e-8, gap_tol=1e-4, time_limit=args.large_limit), 0)

    print("| case | backend | parameters | passes | seconds wall (CPU) | final gap | violation | LP value "
          "| LB | LP/LB | status | HiGHS |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")


#: kernel table rows: numba order, the ref_kernel.c mode with the same algorithm
KERNEL_ROWS = (("diagonal", "sparse-scratch"), ("dense", "dense"),
               ("lexicographic", "lexicographic"))


def _kernels(args):
    sizes = (300, 600) if args.quick else (1000, 2000)
    print("\n| n | order (C mode) | numba wall | numba CPU | C wall | C CPU | numba / C (CPU) "
          "| nonzero duals numba / C | target |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        for order, mode in KERNEL_ROWS:
            label = f"{order} ({mode})"
            if order == "dense" and 24 * n ** 3 / 6 > DENSE_KERNEL_BYTES:
                print(f"| {n} | {label} | - | - | - | - | - | - | needs "
                      f"{24 * n ** 3 / 6 / 2**30:.0f} GiB |")
                continue
            presize = args.presize if order == "diagonal" else 0.0
            nw, nc, nzn = per_triplet(n, order=order, presize=presize)
            c = c_reference(n, order=mode, presize=presize, fastmath=args.c_fastmath)
            cw, cc, nzc = ("-", "-", "-") if c is None else (f"{c[0]:.2f}", f"{c[1]:.2f}",
                                                             f"{c[2]:.4f}")
            ratio = "-" if c is None else f"{nc / c[1]:.2f}"
            target = ""
            if order == "diagonal" and n in (1000, 2000):
                met = c is not None and nc <= 3.0 and nc / c[1] <= 1.3
                target = f"<= 3 ns, <= 1.3x: {'met' if met else 'not met'}"
            print(f"| {n} | {label} | {nw:.2f} | {nc:.2f} | {cw} | {cc} | {ratio} "
                  f"| {nzn:.4f} / {nzc} | {target} |")
    n = sizes[-1]
    w1, c1, _ = per_triplet(n, threads=1, order="parallel")
    w2, c2, _ = per_triplet(n, threads=2, order="parallel")
    print(f"\nparallel order, n = {n} (ns/triplet, passes 2-5): 1 thread wall {w1:.2f} "
          f"(CPU share {c1 / w1:.2f}), 2 threads wall {w2:.2f} (CPU share {c2 / w2:.2f}); "
          f"speed-up {w1 / w2:.2f}x")


if __name__ == "__main__":
    main()
