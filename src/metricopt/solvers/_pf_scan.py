"""numba kernels of the dense (``K_n``) mode of Project and Forget: the full scans.

The dense oracle (Sonthalia & Gilbert, App. 8 Alg. 6) is one projecting pass over every
triangle inequality of ``K_n``; between two such scans only the remembered constraints
(those whose dual is positive) are projected (:mod:`._pf_list`). The scans visit the
triangles in the *diagonal order* of :mod:`metricopt.solvers._layouts` (pair
``(i, i+s)`` stored at ``off[s] + i``, :func:`~._layouts.diagonal_offsets`; triplets
``(i, i+s1, i+s1+s2)`` with ``s1`` in blocks, then ``s2``, then ``s1`` within the
block, then ``i``), which projects far fewer inequalities in a pass than the
lexicographic order and streams the three pairs of consecutive triplets. Their output
is in the list layout of :mod:`._pf_list`.

The read-only scans (:func:`dense_detect`, :func:`dense_max_violation`) are pruned by
block bounds. Each diagonal is cut into chunks of :data:`CHUNK` consecutive pairs, whose
minimum and maximum :func:`chunk_extremes` tabulates (``16 / CHUNK`` bytes per pair).
A line ``(s1, s2)`` is cut into stretches of ``CHUNK`` triplets: the pairs ``a`` and
``b`` of a stretch fill one chunk each, its pairs ``c`` (offset by ``s1``) at most two,
so ``max(max_b - min_c, max_c - min_b) - min_a`` and ``max_a - min_b - min_c`` bound
every violation in it. A stretch whose bound is at most both the emission threshold and
the largest violation found so far cannot change the output and is skipped; the others
are scanned in runs, the whole line in one pass when nothing is skipped. Outputs are
those of the unpruned scan (``chunk = 0``) bit for bit, whatever the number of threads.
This pays where ``x`` is near-constant along the diagonals (the plateaus of correlation
clustering iterates: :func:`dense_detect` 2.5 to 3 times and :func:`dense_max_violation`
6.7 times faster on ca-GrQc's Jaccard iterate); on a generic metric nothing can be
skipped, and a scan that finds nothing to skip bounds fewer and fewer lines
(:data:`MAX_PAUSE`), so that it costs no measurable time there
(``benchmarks/bench_pruned_scan.py``, ``benchmarks/README.md``).

References
----------
.. [1] Sonthalia, R., & Gilbert, A. C. (2020). Project and Forget: solving large-scale
       metric constrained problems. arXiv:2005.03853.
.. [2] Ruggles, C., Veldt, N., & Gleich, D. F. (2020). A parallel projection method for
       metric constrained optimization. SIAM CSC 2020. arXiv:1901.10084
"""

import numba
import numpy as np

from .. import _config
from ._layouts import diagonal_offsets

__all__ = ["diagonal_offsets", "scan_rows", "dense_detect", "dense_max_violation",
           "CHUNK", "chunk_offsets", "chunk_extremes", "max_violation_stretches",
           "detect_share", "max_violation_share"]

_FM = set(_config.FASTMATH)
#: positions per chunk of the scans' block bounds (:func:`chunk_extremes`)
CHUNK = 32
#: most lines a scan goes without bounds after lines where they skipped nothing
MAX_PAUSE = 64


def scan_rows(n, block, threads):
    """Work split of a detection scan: rows ``(sb, s2)`` in visiting order and the
    first row of each of ``threads`` chunks of about equal triplet counts.

    Returns
    -------
    row_sb, row_s2 : ndarray of int64
    starts : ndarray of shape (threads + 1,), int64
    """
    sb = np.arange(1, max(n - 1, 1), block, dtype=np.int64)
    s2 = np.arange(1, max(n - 1, 1), dtype=np.int64)
    row_sb = np.repeat(sb, s2.shape[0])
    row_s2 = np.tile(s2, sb.shape[0])
    # triplets of row (sb, s2): sum over s1 in [sb, min(sb + block, n - s2)) of n - s1 - s2
    top = np.minimum(row_sb + block, n - row_s2)
    cnt = np.where(top > row_sb,
                   (top - row_sb) * (2 * n - 2 * row_s2 - row_sb - top + 1) // 2, 0)
    keep = cnt > 0
    row_sb, row_s2, cnt = row_sb[keep], row_s2[keep], cnt[keep]
    cum = np.concatenate([[0], np.cumsum(cnt)])
    starts = np.searchsorted(cum, np.linspace(0, cum[-1], threads + 1), side="left")
    starts[0], starts[-1] = 0, row_sb.shape[0]
    return row_sb, row_s2, np.maximum.accumulate(starts).astype(np.int64)


# ------------------------------------------------------------ chunk bounds
# Each diagonal is cut into chunks of ``chunk`` consecutive positions (the last one of a
# diagonal may be shorter; a chunk never straddles two diagonals). A stretch of a line
# (at most ``chunk`` consecutive triplets, aligned on the chunks of its pairs a and b)
# is bounded from the extremes of the chunks of its three pairs; the scans skip it when
# the bound shows it cannot change their output.


@numba.njit(cache=True)
def chunk_offsets(n, chunk):
    """``coff[s]``: index of the first chunk of diagonal ``s`` (``coff[n]``: the count).

    Diagonal ``s`` (``n - s`` pairs) has ``ceil((n - s) / chunk)`` chunks.
    """
    coff = np.zeros(max(n, 1) + 1, dtype=np.int64)
    for s in range(1, n):
        coff[s + 1] = coff[s] + (n - s + chunk - 1) // chunk
    return coff


@numba.njit(cache=True)
def chunk_extremes(x, n, chunk=CHUNK):
    """Minimum and maximum of ``x`` (diagonal layout) over each chunk of ``chunk``
    consecutive positions of a diagonal.

    Parameters
    ----------
    x : ndarray of shape (n(n-1)/2,)
        Diagonal layout.
    n, chunk : int

    Returns
    -------
    chunk_min, chunk_max : ndarray of shape (coff[n],)
        Chunk ``j`` of diagonal ``s`` (positions ``j chunk .. (j+1) chunk - 1`` of the
        diagonal) at ``coff[s] + j`` (:func:`chunk_offsets`): ``16 / chunk`` bytes per
        pair, plus at most 16 bytes per diagonal. Empty for ``chunk <= 0`` (no pruning).
    """
    if chunk <= 0:
        return np.empty(0), np.empty(0)
    off = diagonal_offsets(n)
    coff = chunk_offsets(n, chunk)
    lo = np.empty(coff[-1])
    hi = np.empty(coff[-1])
    for s in range(1, n):
        base = off[s]
        length = n - s
        for j in range(coff[s + 1] - coff[s]):
            q0 = j * chunk
            q1 = min(q0 + chunk, length)
            a = x[base + q0]
            b = a
            for q in range(q0 + 1, q1):
                v = x[base + q]
                a = min(a, v)
                b = max(b, v)
            lo[coff[s] + j] = a
            hi[coff[s] + j] = b
    return lo, hi


@numba.njit(cache=True)
def _bound_margin(chunk_min, chunk_max):
    """Slack added to a stretch bound: ``8 eps max|x|``.

    Under ``reassoc`` a violation and its bound may be rounded along different
    expression trees; each is within ``2.5 eps max|x|`` of its exact value, so a bound
    plus this slack is never below a violation computed in the scan (infinite or NaN
    for non-finite ``x``, which disables the skips).
    """
    m = 0.0
    for k in range(chunk_min.shape[0]):
        m = max(m, max(abs(chunk_min[k]), abs(chunk_max[k])))
    return 8.0 * np.finfo(np.float64).eps * m


@numba.njit(inline="always", fastmath=_FM)
def _stretch_bound(chunk_min, chunk_max, ja, jb, jc0, jc1):
    """Upper bound of ``max(|x_b - x_c| - x_a, x_a - x_b - x_c)`` over a stretch whose
    pairs a, b lie in chunks ``ja``, ``jb`` and pairs c in chunks ``jc0 .. jc1``."""
    lc = min(chunk_min[jc0], chunk_min[jc1])
    hc = max(chunk_max[jc0], chunk_max[jc1])
    lb = chunk_min[jb]
    hb = chunk_max[jb]
    return max(max(hb - lc, hc - lb) - chunk_min[ja], chunk_max[ja] - lb - lc)


@numba.njit(inline="always", fastmath=_FM)
def _mark(chunk_min, chunk_max, ja, jb, jc, jc1, jlast, nst, margin, lim, flags):
    """``flags[j] = 1`` for the stretches ``j < nst`` of a line whose bound plus
    ``margin`` is at most ``lim`` (else 0); returns their count.

    Stretch ``j`` has its pairs a, b in chunks ``ja + j``, ``jb + j`` and its pairs c in
    chunks ``jc + j .. min(jc1 + j, jlast)``.
    """
    cnt = 0
    inner = min(nst, jlast - jc1 + 1)  # chunks jc1 + j: contiguous loads (vectorisable)
    for j in range(inner):
        bnd = _stretch_bound(chunk_min, chunk_max, ja + j, jb + j, jc + j, jc1 + j) + margin
        f = 1 if bnd <= lim else 0
        flags[j] = f
        cnt += f
    for j in range(inner, nst):  # at most the last one
        bnd = _stretch_bound(chunk_min, chunk_max, ja + j, jb + j, jc + j, jlast) + margin
        f = 1 if bnd <= lim else 0
        flags[j] = f
        cnt += f
    return cnt


@numba.njit(inline="always")
def _backoff(few, pause):
    """``(wait, pause)`` after bounding a line with ``few`` skippable stretches: after a
    line with none, the next ``pause`` lines are scanned without bounds and the pause
    doubles (up to :data:`MAX_PAUSE`); a line with some resets it."""
    if few > 0:
        return 0, 1
    return pause, min(2 * pause, MAX_PAUSE)


@numba.njit(inline="always")
def _mark_line(chunk_min, chunk_max, coff, s1, s2, cq, cr, L, margin, lim, flags, wait,
               pause):
    """Bound the stretches of line ``(s1, s2)`` (:func:`_mark`, unless the backoff has the
    line wait) and step ``s1 = cq L + cr`` along. Stretch ``j``: triplets ``q`` in
    ``[j L, (j+1) L)``; pairs ``a``, ``b`` in chunk ``j`` of their diagonal, pairs ``c``
    (from position ``s1 + j L`` of diagonal ``s2``) in chunks ``jc + j .. min(jc1 + j,
    last chunk of diagonal s2)``. Returns ``(few, nst, cq, cr, wait, pause)``."""
    jb = coff[s1 + s2]
    nst = coff[s1 + s2 + 1] - jb  # diagonal s1 + s2 holds the line's pairs b
    jc = coff[s2] + cq  # chunk of position s1 of diagonal s2
    jc1 = jc + (1 if cr > 0 else 0)  # that of position s1 + L - 1
    cr += 1
    if cr == L:
        cq += 1
        cr = 0
    if wait > 0:
        return 0, nst, cq, cr, wait - 1, pause
    few = _mark(chunk_min, chunk_max, coff[s1], jb, jc, jc1, coff[s2 + 1] - 1, nst, margin,
                lim, flags)
    wait, pause = _backoff(few, pause)
    return few, nst, cq, cr, wait, pause


@numba.njit(inline="always")
def _runs_max(x, a0, b0, c0, flags, nst, L, length, rw):
    """:func:`_stretch_max` over the runs of unflagged stretches of a line."""
    j = 0
    while j < nst:
        if flags[j]:
            j += 1
            continue
        j1 = _run_end(flags, j, nst)
        rw = _stretch_max(x, a0, b0, c0, j * L, min(j1 * L, length), rw)
        j = j1
    return rw


@numba.njit(inline="always")
def _run_end(flags, j, nst):
    """End of the run of unflagged stretches from ``j``."""
    while j < nst and flags[j] == 0:
        j += 1
    return j


@numba.njit(inline="always", fastmath=_FM)
def _stretch_max(x, a0, b0, c0, q0, q1, rw):
    """``max(rw, largest violation of the triplets q0 .. q1-1 of a line)`` (vectorisable)."""
    for q in range(q0, q1):
        # the larger of x_b <= x_a + x_c and x_c <= x_a + x_b is |x_b - x_c| - x_a
        xa = x[a0 + q]
        xb = x[b0 + q]
        xc = x[c0 + q]
        v = max(abs(xb - xc) - xa, xa - xb - xc)
        rw = v if v > rw else rw
    return rw


@numba.njit(inline="always", fastmath=_FM)
def _stretch_emit(x, a0, b0, c0, q0, q1, add_tol, out_a, out_b, out_c, t, k):
    """Append the inequalities of triplets ``q0 .. q1-1`` of a line violated by more
    than ``add_tol`` to output row ``t`` from ``k``; returns the new ``k``."""
    for q in range(q0, q1):
        xa = x[a0 + q]
        xb = x[b0 + q]
        xc = x[c0 + q]
        if max(xa - xb - xc, max(xb - xa - xc, xc - xa - xb)) > add_tol:
            ia = a0 + q
            ib = b0 + q
            ic = c0 + q
            if xa - xb - xc > add_tol:
                out_a[t, k] = ia
                out_b[t, k] = ib
                out_c[t, k] = ic
                k += 1
            if xb - xa - xc > add_tol:
                out_a[t, k] = ia
                out_b[t, k] = ib
                out_c[t, k] = ic | (1 << 29)
                k += 1
            if xc - xa - xb > add_tol:
                out_a[t, k] = ia
                out_b[t, k] = ib
                out_c[t, k] = ic | (2 << 29)
                k += 1
    return k


def dense_detect(x, off, n, block, add_tol, row_sb, row_s2, starts, pos, out_a, out_b, out_c,
                 count, worst, chunk_min, chunk_max, chunk, threads=None):
    """Separation oracle of ``K_n`` (read only): every triangle inequality violated by
    more than ``add_tol``, and the exact largest violation.

    Worker ``t`` scans rows ``pos[t] .. starts[t+1]-1`` of ``(row_sb, row_s2)``
    (:func:`scan_rows`) in visiting order and appends to its own output row; the
    triplets of one ``(s1, s2)`` line are first tested together with a vectorisable
    reduction. A worker whose output row might overflow stops before that row
    (``pos[t] < starts[t+1]`` on return; call again with larger rows, finished work is
    kept), so the concatenation of the rows is in visiting order and does not depend
    on the number of workers.

    With ``chunk > 0`` a line is cut into stretches of ``chunk`` triplets, and a
    stretch whose bound from the chunk extremes (:func:`chunk_extremes`) is at most
    both ``add_tol`` and the worker's largest violation at the start of the line is
    skipped: it can neither emit nor raise the largest violation, so every output is
    that of the unpruned scan (``chunk = 0``, chunk arrays ignored), bit for bit. The
    runs of stretches left are scanned as above; after lines with nothing to skip, a
    worker scans up to :data:`MAX_PAUSE` lines without bounding them.

    Parameters
    ----------
    x : ndarray of shape (n(n-1)/2,)
        Diagonal layout.
    off : ndarray of int64
        :func:`diagonal_offsets`.
    n, block : int
    add_tol : float
    row_sb, row_s2, starts : ndarray of int64
        :func:`scan_rows`.
    pos : ndarray of shape (T,), int64
        Next row of each worker (start with ``starts[:-1]``); updated.
    out_a, out_b, out_c : ndarray of shape (T, cap), int32
        Constraints in the list layout of this module (``cap >= 3 block n``).
    count : ndarray of shape (T,), int64
        Constraints written per worker (updated).
    worst : ndarray of shape (T,)
        Largest violation per worker over its finished rows (updated).
    chunk_min, chunk_max : ndarray
        ``chunk_extremes(x, n, chunk)`` (may be empty when ``chunk = 0``).
    chunk : int
        Chunk length of the extremes; ``0``: no pruning.
    threads : int or None
        Threads that run the workers (default: numba's thread count,
        :func:`metricopt._threads.run_workers`); the outputs do not depend on it.

    Returns
    -------
    skipped, stretches : int
        Stretches skipped and stretches met by this call (both 0 without pruning).
    """
    from .._threads import run_workers

    T = pos.shape[0]
    L = max(chunk, 1)
    coff = chunk_offsets(n, L)
    margin = _bound_margin(chunk_min, chunk_max) if chunk > 0 else 0.0
    done = run_workers(lambda t: detect_share(
        x, off, coff, n, block, add_tol, margin, row_sb, row_s2, starts, pos, out_a, out_b,
        out_c, count, worst, chunk_min, chunk_max, chunk, t), T, threads)
    return sum(d[0] for d in done), sum(d[1] for d in done)


@numba.njit(fastmath=_FM, boundscheck=False, cache=True, nogil=True)
def detect_share(x, off, coff, n, block, add_tol, margin, row_sb, row_s2, starts, pos, out_a,
                 out_b, out_c, count, worst, chunk_min, chunk_max, chunk, t):
    """Worker ``t``'s share of :func:`dense_detect` (its rows from ``pos[t]``, its output
    row, ``pos[t]``, ``count[t]`` and ``worst[t]`` updated), with ``coff =
    chunk_offsets(n, max(chunk, 1))`` and ``margin = _bound_margin(chunk_min, chunk_max)``
    (0 without pruning); returns ``(skipped, stretches)`` of this call."""
    prune = chunk > 0
    L = max(chunk, 1)
    r = pos[t]
    k = count[t]
    wmax = worst[t]
    end = starts[t + 1]
    skip = 0
    met = 0
    flags = np.empty((n + L - 1) // L if prune else 0, dtype=np.uint8)
    wait = 0  # lines left to scan without bounds, and the next such pause
    pause = 1
    cap = out_a.shape[1]
    while r < end:
        sb = row_sb[r]
        s2 = row_s2[r]
        top = min(sb + block, n - s2)
        need = 0
        for s1 in range(sb, top):
            need += 3 * (n - s1 - s2)
        if k + need > cap:
            break
        cq = sb // L  # s1 = cq L + cr, kept without divisions along the row
        cr = sb - cq * L
        for s1 in range(sb, top):
            a0 = off[s1]
            b0 = off[s1 + s2]
            c0 = off[s2] + s1
            length = n - s1 - s2
            if not prune:
                rw = _stretch_max(x, a0, b0, c0, 0, length, 0.0)
                wmax = max(wmax, rw)
                if rw > add_tol:
                    k = _stretch_emit(x, a0, b0, c0, 0, length, add_tol, out_a, out_b,
                                      out_c, t, k)
                continue
            # skip the stretches that can neither emit nor raise wmax; scan each run
            # of the others in one pass (the whole line when there is no skip)
            few, nst, cq, cr, wait, pause = _mark_line(
                chunk_min, chunk_max, coff, s1, s2, cq, cr, L, margin,
                min(add_tol, wmax), flags, wait, pause)
            met += nst
            skip += few
            if few == nst:
                continue
            if few == 0:
                rw = _stretch_max(x, a0, b0, c0, 0, length, 0.0)
            else:
                rw = _runs_max(x, a0, b0, c0, flags, nst, L, length, 0.0)
            wmax = max(wmax, rw)
            if rw <= add_tol:
                continue
            if few == 0:
                k = _stretch_emit(x, a0, b0, c0, 0, length, add_tol, out_a, out_b, out_c,
                                  t, k)
                continue
            j = 0  # a flagged stretch (bound <= add_tol) cannot emit
            while j < nst:
                if flags[j]:
                    j += 1
                    continue
                j1 = _run_end(flags, j, nst)
                k = _stretch_emit(x, a0, b0, c0, j * L, min(j1 * L, length), add_tol,
                                  out_a, out_b, out_c, t, k)
                j = j1
        r += 1
    pos[t] = r
    count[t] = k
    worst[t] = wmax
    return skip, met


@numba.njit(fastmath=_FM, cache=True, boundscheck=False)
def _max_violation_row(x, off, n, s2, chunk_min, chunk_max, coff, chunk, margin):
    """Largest violation (at least 0) of the lines ``(s1, s2)`` and the stretches
    ``(skipped, met)``; a stretch whose bound is at most the row's largest violation so
    far is skipped (``chunk = 0``: none)."""
    worst = 0.0
    skip = 0
    met = 0
    flags = np.empty((n + chunk - 1) // chunk if chunk > 0 else 0, dtype=np.uint8)
    wait = 0
    pause = 1
    cq = 1 // max(chunk, 1)  # s1 = cq chunk + cr, kept without divisions
    cr = 1 - cq * chunk
    for s1 in range(1, n - s2):
        a0 = off[s1]
        b0 = off[s1 + s2]
        c0 = off[s2] + s1
        length = n - s1 - s2
        if chunk <= 0:
            worst = _stretch_max(x, a0, b0, c0, 0, length, worst)
            continue
        few, nst, cq, cr, wait, pause = _mark_line(chunk_min, chunk_max, coff, s1, s2, cq, cr,
                                                   chunk, margin, worst, flags, wait, pause)
        met += nst
        skip += few
        if few == nst:
            continue
        if few == 0:
            worst = _stretch_max(x, a0, b0, c0, 0, length, worst)
            continue
        worst = _runs_max(x, a0, b0, c0, flags, nst, chunk, length, worst)
    return worst, skip, met


@numba.njit(fastmath=_FM, cache=True, boundscheck=False, nogil=True)
def max_violation_share(x, off, n, chunk_min, chunk_max, coff, chunk, margin, t, T):
    """Worker ``t`` of ``T``'s share of :func:`max_violation_stretches`: the rows
    ``s2 = 1 + t, 1 + t + T, ...`` (:func:`_max_violation_row`); returns their largest
    violation (at least 0) and stretches ``(skipped, met)``."""
    worst = 0.0
    skip = 0
    met = 0
    for s2 in range(1 + t, n - 1, T):
        w, s, m = _max_violation_row(x, off, n, s2, chunk_min, chunk_max, coff, chunk, margin)
        worst = max(worst, w)
        skip += s
        met += m
    return worst, skip, met


def max_violation_stretches(x, n, chunk=CHUNK, threads=None):
    """:func:`dense_max_violation` and its stretches ``(worst, skipped, met)``.

    The rows ``s2`` are dealt round robin to one worker per thread
    (:func:`max_violation_share`, :func:`metricopt._threads.run_workers`); each row is
    scanned on its own, so the result does not depend on the number of threads.
    """
    from .._threads import run_workers, thread_count

    n = int(n)
    chunk = int(chunk)
    off = diagonal_offsets(n)
    L = max(chunk, 1)
    coff = chunk_offsets(n, L)
    if chunk > 0:
        lo, hi = chunk_extremes(x, n, L)
    else:
        lo, hi = np.empty(0), np.empty(0)
    margin = _bound_margin(lo, hi)
    T = max(1, min(thread_count(threads), n - 2))
    done = run_workers(lambda t: max_violation_share(x, off, n, lo, hi, coff, chunk, margin,
                                                     t, T), T, threads)
    return (max(max(d[0] for d in done), 0.0), sum(int(d[1]) for d in done),
            sum(int(d[2]) for d in done))


def dense_max_violation(x, n, chunk=CHUNK, threads=None):
    """Largest triangle-inequality violation of ``x`` (diagonal layout), read only.

    Rows ``s2`` are split over ``threads`` threads (default: numba's thread count); the
    result does not depend on their number.
    Stretches of ``chunk`` triplets that cannot exceed their row's largest violation
    so far are skipped (:func:`chunk_extremes`; ``chunk = 0``: the unpruned scan, same
    result bit for bit).
    """
    return max_violation_stretches(x, n, chunk, threads)[0]
