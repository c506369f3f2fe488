"""Two-worker conflict-free block schedule of the Dykstra triangle pass (two threads).

Nodes are cut into blocks of ``bsize``; block pair ``(I, K)``, ``I <= K``, owns the
triplets ``i < j < k`` with ``i`` in ``I`` and ``k`` in ``K`` (Ruggles, Veldt & Gleich
2020). All block pairs on one anti-diagonal ``I + K = d`` touch disjoint pairs, so they
may run concurrently; the anti-diagonals run one after the other (one join of the
threads of :func:`metricopt._threads.run_workers` each, ``2 n / bsize`` per pass). Each
anti-diagonal's block pairs are split between two *logical workers* by a fixed
longest-first rule (:func:`diagonal_share` runs one worker's share), and each logical worker
keeps one dual list in its own visiting order, so the result is the same on one thread
(the workers' shares then run one after the other) as on two.

Within a block pair: ``i``, then ``j`` in ``(i, max K)``, then ``k`` in ``K`` innermost,
on the packed row-major layout (pair ``(i, j)`` at ``r[i] + j``), so the inner loop
streams two contiguous rows.
"""

import numba
import numpy as np

from ._layouts import packed_row_offsets
from ._triangle_sparse import _BIG, _FM, _row

__all__ = ["NWORKERS", "schedule", "diagonal_share", "triangle_pass_parallel"]

#: logical workers of the schedule (fixed, so results do not depend on the thread count)
NWORKERS = 2


@numba.njit(fastmath=_FM, cache=True, boundscheck=False)
def _unit(x, winv, r, i, jlo, jhi, klo, khi, cur_pos, cur_val, ncur, nxt_pos, nxt_val, st,
          acc):
    """Triplets ``(i, j, k)``, ``j`` in ``[jlo, jhi)``, ``k`` in ``[max(klo, j+1), khi)``.

    ``st`` = (cursor, count, t3) and ``acc`` = (vmax, smax) of this worker, updated.
    """
    cursor = st[0]
    count = st[1]
    t3 = st[2]
    vmax = acc[0]
    smax = acc[1]
    nextp = cur_pos[cursor] if cursor < ncur else _BIG
    ri = r[i]
    for j in range(jlo, jhi):
        k0 = max(klo, j + 1)
        length = khi - k0
        if length <= 0:
            continue
        cursor, nextp, count, vmax, smax = _row(
            x, winv, ri + j, ri + k0, r[j] + k0, length, t3, cur_pos, cur_val, ncur, cursor,
            nextp, nxt_pos, nxt_val, count, vmax, smax)
        t3 += 3 * length
    st[0] = cursor
    st[1] = count
    st[2] = t3
    acc[0] = vmax
    acc[1] = smax


@numba.njit(cache=True)
def _block_work(n, bsize, bi, bk):
    """Triplets of block pair ``(bi, bk)``: ``i`` in block ``bi``, ``k`` in block ``bk``."""
    total = 0
    klo = bk * bsize
    khi = min(n, klo + bsize)
    for i in range(bi * bsize, min(n, (bi + 1) * bsize)):
        for j in range(i + 1, khi):
            total += max(0, khi - max(klo, j + 1))
    return total


@numba.njit(cache=True)
def schedule(n, bsize):
    """Deterministic two-worker schedule of the block pairs.

    Anti-diagonal ``d`` holds the block pairs ``(bi, bk)``, ``bi <= bk``, ``bi + bk = d``;
    they touch disjoint pairs. Within ``d`` the block pairs go to the two logical
    workers by longest-processing-time first (ties to worker 0).

    Returns
    -------
    blocks : ndarray of shape (nbp, 2)
        Block pairs ordered by (anti-diagonal, worker, sequence).
    start : ndarray of shape (ndiag, 3)
        ``blocks[start[d, w]:start[d, w+1]]`` is worker ``w``'s share of ``d``.
    work : ndarray of shape (ndiag, 2)
        Triplets of each share.
    """
    nb = (n + bsize - 1) // bsize
    nd = max(2 * nb - 1, 0)
    blocks = np.zeros((nb * (nb + 1) // 2, 2), dtype=np.int64)
    start = np.zeros((nd, 3), dtype=np.int64)
    work = np.zeros((nd, 2), dtype=np.int64)
    pos = 0
    for d in range(nd):
        lo = max(0, d - nb + 1)
        hi = d // 2
        m = hi - lo + 1
        wk = np.empty(m, dtype=np.int64)
        for t in range(m):
            wk[t] = _block_work(n, bsize, lo + t, d - lo - t)
        order = np.argsort(-wk, kind="mergesort")
        owner = np.zeros(m, dtype=np.int64)
        for t in order:
            owner[t] = 0 if work[d, 0] <= work[d, 1] else 1
            work[d, owner[t]] += wk[t]
        start[d, 0] = pos
        for w in range(NWORKERS):
            for t in range(m):
                if owner[t] == w:
                    blocks[pos, 0] = lo + t
                    blocks[pos, 1] = d - lo - t
                    pos += 1
            start[d, w + 1] = pos
    return blocks, start, work


@numba.njit(fastmath=_FM, cache=True, nogil=True)
def diagonal_share(x, winv, r, n, bsize, blocks, start, d, w, cur_pos, cur_val, ncur, nxt_pos,
                   nxt_val, st, acc):
    """Logical worker ``w``'s share of anti-diagonal ``d`` (its block pairs in order, its
    dual lists and its rows of ``st`` and ``acc`` updated)."""
    for s in range(start[d, w], start[d, w + 1]):
        bi = blocks[s, 0]
        klo = blocks[s, 1] * bsize
        khi = min(n, klo + bsize)
        for i in range(bi * bsize, min(n, (bi + 1) * bsize)):
            _unit(x, winv, r, i, i + 1, khi, klo, khi, cur_pos[w], cur_val[w], ncur[w],
                  nxt_pos[w], nxt_val[w], st[w], acc[w])


def _diagonals(x, winv, r, n, bsize, blocks, start, work, d0, cur_pos, cur_val, ncur, nxt_pos,
               nxt_val, st, acc, threads=None):
    """Anti-diagonals ``d = d0, d0+1, ...`` until done (returns their number) or until a
    worker's share of the next one might not fit into its row of ``nxt_pos`` (returns
    that ``d``). The two shares of a diagonal run at the same time
    (:func:`metricopt._threads.run_workers`), one diagonal after the other."""
    from .._threads import run_workers

    cap = nxt_pos.shape[1]
    nd = start.shape[0]
    for d in range(d0, nd):
        if st[0, 1] + 3 * work[d, 0] > cap or st[1, 1] + 3 * work[d, 1] > cap:
            return d
        run_workers(lambda w: diagonal_share(x, winv, r, n, bsize, blocks, start, d, w,
                                             cur_pos, cur_val, ncur, nxt_pos, nxt_val, st,
                                             acc), NWORKERS, threads)
    return nd


def triangle_pass_parallel(x, winv, n, bsize, cur_pos, cur_val, ncur, nxt_pos, nxt_val,
                           sched=None, threads=None):
    """One pass over all triangle constraints in the two-worker schedule (packed layout).

    Parameters
    ----------
    x, winv : ndarray of shape (n(n-1)/2,)
        Packed layout; ``x`` is updated in place.
    n, bsize : int
        Nodes and node-block size.
    cur_pos, cur_val : ndarray of shape (2, c)
        Previous pass's duals of each logical worker; row ``w`` holds ``ncur[w]``.
    ncur : ndarray of shape (2,), int64
    nxt_pos, nxt_val : ndarray of shape (2, cap)
        Scratch for this pass's duals (replaced by larger arrays when needed, between
        anti-diagonals, never inside the hot loop).
    sched : tuple or None
        ``schedule(n, bsize)``, computed when not given.
    threads : int or None
        Threads (default: numba's thread count); the result does not depend on it.

    Returns
    -------
    nxt_pos, nxt_val : ndarray of shape (2, cap')
    count : ndarray of shape (2,), int64
        This pass's duals per worker (the first ``count[w]`` entries of row ``w``).
    vmax, smax : float
    """
    r = packed_row_offsets(n)
    blocks, start, work = schedule(n, bsize) if sched is None else sched
    st = np.zeros((NWORKERS, 3), dtype=np.int64)
    acc = np.zeros((NWORKERS, 2))
    d = 0
    while True:
        d = _diagonals(x, winv, r, n, bsize, blocks, start, work, d, cur_pos, cur_val, ncur,
                       nxt_pos, nxt_val, st, acc, threads)
        if d >= start.shape[0]:
            break
        cap = max(2 * nxt_pos.shape[1], int(st[:, 1].max()) + 3 * int(work[d].max()) + 1024)
        npos = np.empty((NWORKERS, cap), dtype=np.int64)
        nval = np.empty((NWORKERS, cap))
        for w in range(NWORKERS):
            c = st[w, 1]
            npos[w, :c] = nxt_pos[w, :c]
            nval[w, :c] = nxt_val[w, :c]
        nxt_pos, nxt_val = npos, nval
    return nxt_pos, nxt_val, st[:, 1].copy(), float(acc[:, 0].max()), float(acc[:, 1].max())
