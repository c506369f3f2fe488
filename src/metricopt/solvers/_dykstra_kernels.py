"""numba kernels of the Dykstra (Hildreth) projection method for metric-constrained QPs.

Every kernel is pure: arrays and scalars in, arrays and scalars out. Inputs are assumed
checked by :mod:`metricopt.solvers.dykstra`: contiguous float64 / int64 arrays of
matching lengths.

Conventions (see Veldt et al. 2019, Alg. 1-2 and §5):

* The QP is ``min c'v + (1/2 gamma) (v - delta)' W (v - delta)`` over constraints
  ``a_t' v <= b_t``; ``winv`` holds the diagonal of ``W^{-1}``.
* A dual is kept as ``z_t = gamma * y_t`` so that ``v = v0 - W^{-1} A' z`` and a visit
  of constraint ``t`` is the Hildreth step
  ``z_t <- max(0, z_t + (a_t' v - b_t) / (a_t' W^{-1} a_t))``,
  ``v <- v - (z_t(new) - z_t(old)) W^{-1} a_t``.
* Dense pair variables use the *diagonal layout*: the pair ``(a, a + s)`` lives at
  ``off[s] + a`` (see :func:`diagonal_offsets`).
* Triangle duals are stored sparsely (§5.2): the nonzero ones of the previous pass as
  two arrays ``(pos, val)`` in visiting order, consumed with a cursor, while the
  nonzero ones of this pass are appended to a second pair of arrays. Position
  ``3 t + c`` is constraint ``c`` of the ``t``-th visited triplet ``(i, j, k)``:
  ``c = 0: x_ij <= x_ik + x_jk``, ``c = 1: x_ik <= x_ij + x_jk``,
  ``c = 2: x_jk <= x_ij + x_ik``.

References
----------
.. [1] Veldt, N., Gleich, D. F., Wirth, A., & Saunderson, J. (2019). Metric-constrained
       optimization for graph clustering algorithms. SIAM J. Math. Data Sci. 1(2), 333-355.
.. [2] Dykstra, R. L. (1983). An algorithm for restricted least squares regression.
       J. Amer. Statist. Assoc. 78(384), 837-842.
"""

import numba
import numpy as np

from .. import _config

__all__ = [
    "diagonal_offsets",
    "packed_to_diagonal_index",
    "triangle_pass_diagonal",
    "triangle_pass_lexicographic",
    "triangle_pass_blocked",
    "pair_pass",
    "sum_step",
    "edge_triangle_pass",
    "wedge_pass",
    "TRIANGLE_KERNELS",
]

_FM = set(_config.FASTMATH)
_BIG = np.iinfo(np.int64).max


@numba.njit(cache=True)
def diagonal_offsets(n):
    """``off[s]`` such that pair ``(a, a+s)`` is stored at ``off[s] + a`` (``off[0]`` unused)."""
    off = np.zeros(max(n, 1), dtype=np.int64)
    acc = 0
    for s in range(1, n):
        off[s] = acc
        acc += n - s
    return off


@numba.njit(cache=True)
def packed_to_diagonal_index(n):
    """``idx[p]``: diagonal-layout position of the ``p``-th pair in packed (row-major) order."""
    off = diagonal_offsets(n)
    idx = np.empty(n * (n - 1) // 2, dtype=np.int64)
    p = 0
    for i in range(n):
        for j in range(i + 1, n):
            idx[p] = off[j - i] + i
            p += 1
    return idx


@numba.njit(inline="always")
def _grow(pos, val, count):
    if count < pos.shape[0]:
        return pos, val
    cap = max(2 * pos.shape[0], 1024)
    npos = np.empty(cap, dtype=np.int64)
    nval = np.empty(cap, dtype=np.float64)
    npos[:count] = pos[:count]
    nval[:count] = val[:count]
    return npos, nval


@numba.njit(inline="always", fastmath=_FM)
def _visit(x, winv, ia, ib, ic, t3, cur_pos, cur_val, cursor, nextp,
           nxt_pos, nxt_val, count, vmax, smax):
    """The three triangle constraints of one triplet (Alg. 2), sparse duals."""
    xa = x[ia]
    xb = x[ib]
    xc = x[ic]
    if nextp >= t3 + 3:
        # no stored dual for this triplet: only a violated constraint needs work
        if xa - xb - xc <= 0.0 and xb - xa - xc <= 0.0 and xc - xa - xb <= 0.0:
            return cursor, nextp, nxt_pos, nxt_val, count, vmax, smax
    wa = winv[ia]
    wb = winv[ib]
    wc = winv[ic]
    qinv = 1.0 / (wa + wb + wc)
    # c = 0: xa - xb - xc <= 0
    z = 0.0
    if nextp == t3:
        z = cur_val[cursor]
        cursor += 1
        nextp = cur_pos[cursor] if cursor < cur_pos.shape[0] else _BIG
    v = xa - xb - xc
    if v > vmax:
        vmax = v
    zn = z + v * qinv
    if zn < 0.0:
        zn = 0.0
    dz = zn - z
    if dz != 0.0:
        xa -= dz * wa
        xb += dz * wb
        xc += dz * wc
        if abs(dz) > smax:
            smax = abs(dz)
    if zn > 0.0:
        nxt_pos, nxt_val = _grow(nxt_pos, nxt_val, count)
        nxt_pos[count] = t3
        nxt_val[count] = zn
        count += 1
    # c = 1: xb - xa - xc <= 0
    z = 0.0
    if nextp == t3 + 1:
        z = cur_val[cursor]
        cursor += 1
        nextp = cur_pos[cursor] if cursor < cur_pos.shape[0] else _BIG
    v = xb - xa - xc
    if v > vmax:
        vmax = v
    zn = z + v * qinv
    if zn < 0.0:
        zn = 0.0
    dz = zn - z
    if dz != 0.0:
        xb -= dz * wb
        xa += dz * wa
        xc += dz * wc
        if abs(dz) > smax:
            smax = abs(dz)
    if zn > 0.0:
        nxt_pos, nxt_val = _grow(nxt_pos, nxt_val, count)
        nxt_pos[count] = t3 + 1
        nxt_val[count] = zn
        count += 1
    # c = 2: xc - xa - xb <= 0
    z = 0.0
    if nextp == t3 + 2:
        z = cur_val[cursor]
        cursor += 1
        nextp = cur_pos[cursor] if cursor < cur_pos.shape[0] else _BIG
    v = xc - xa - xb
    if v > vmax:
        vmax = v
    zn = z + v * qinv
    if zn < 0.0:
        zn = 0.0
    dz = zn - z
    if dz != 0.0:
        xc -= dz * wc
        xa += dz * wa
        xb += dz * wb
        if abs(dz) > smax:
            smax = abs(dz)
    if zn > 0.0:
        nxt_pos, nxt_val = _grow(nxt_pos, nxt_val, count)
        nxt_pos[count] = t3 + 2
        nxt_val[count] = zn
        count += 1
    x[ia] = xa
    x[ib] = xb
    x[ic] = xc
    return cursor, nextp, nxt_pos, nxt_val, count, vmax, smax


@numba.njit(fastmath=_FM, cache=True)
def triangle_pass_diagonal(x, winv, n, block, cur_pos, cur_val, nxt_pos, nxt_val):
    """One pass over all triangle constraints in *diagonal* order.

    Triplets ``(i, i+s1, i+s1+s2)``: ``s1`` in blocks of ``block``, then ``s2``, then
    ``s1`` within the block, then ``i`` innermost, so the three pairs of consecutive
    visits are consecutive in the diagonal layout.

    Parameters
    ----------
    x, winv : ndarray of shape (n(n-1)/2,)
        Pair values (updated in place) and ``1/w``, diagonal layout.
    n, block : int
    cur_pos, cur_val : ndarray
        Nonzero duals of the previous pass (exact length), in visiting order.
    nxt_pos, nxt_val : ndarray
        Scratch space for this pass's nonzero duals (grown when full).

    Returns
    -------
    nxt_pos, nxt_val : ndarray
        Possibly reallocated; the first ``count`` entries are this pass's duals.
    count : int
    vmax : float
        Largest violation met at a visit (before its step): a cheap estimate.
    smax : float
        Largest dual change ``|dz|`` (0 when the pass changed nothing).
    """
    off = diagonal_offsets(n)
    cursor = 0
    nextp = cur_pos[0] if cur_pos.shape[0] > 0 else _BIG
    count = 0
    vmax = 0.0
    smax = 0.0
    t3 = 0
    for sb in range(1, n - 1, block):
        for s2 in range(1, n - 1):
            top = min(sb + block, n - s2)
            for s1 in range(sb, top):
                ba = off[s1]
                bb = off[s1 + s2]
                bc = off[s2] + s1
                for i in range(n - s1 - s2):
                    if nextp >= t3 + 3:
                        xa = x[ba + i]
                        xb = x[bb + i]
                        xc = x[bc + i]
                        if xa - xb - xc <= 0.0 and xb - xa - xc <= 0.0 and xc - xa - xb <= 0.0:
                            t3 += 3
                            continue
                    cursor, nextp, nxt_pos, nxt_val, count, vmax, smax = _visit(
                        x, winv, ba + i, bb + i, bc + i, t3, cur_pos, cur_val, cursor, nextp,
                        nxt_pos, nxt_val, count, vmax, smax)
                    t3 += 3
    return nxt_pos, nxt_val, count, vmax, smax


@numba.njit(fastmath=_FM, cache=True)
def triangle_pass_lexicographic(x, winv, n, block, cur_pos, cur_val, nxt_pos, nxt_val):
    """One pass over all triangle constraints in lexicographic order ``i < j < k``.

    The papers' order. Same parameters and returns as :func:`triangle_pass_diagonal`
    (``block`` is ignored).
    """
    off = diagonal_offsets(n)
    cursor = 0
    nextp = cur_pos[0] if cur_pos.shape[0] > 0 else _BIG
    count = 0
    vmax = 0.0
    smax = 0.0
    t3 = 0
    for i in range(n):
        for j in range(i + 1, n):
            ia = off[j - i] + i
            for k in range(j + 1, n):
                if nextp >= t3 + 3:
                    xa = x[ia]
                    xb = x[off[k - i] + i]
                    xc = x[off[k - j] + j]
                    if xa - xb - xc <= 0.0 and xb - xa - xc <= 0.0 and xc - xa - xb <= 0.0:
                        t3 += 3
                        continue
                cursor, nextp, nxt_pos, nxt_val, count, vmax, smax = _visit(
                    x, winv, ia, off[k - i] + i, off[k - j] + j, t3, cur_pos, cur_val, cursor,
                    nextp, nxt_pos, nxt_val, count, vmax, smax)
                t3 += 3
    return nxt_pos, nxt_val, count, vmax, smax


@numba.njit(fastmath=_FM)
def _block_triplets(x, winv, off, lo_i, hi_i, lo_k, hi_k, cur_pos, cur_val, nxt_pos, nxt_val):
    """Triplets ``i < j < k`` with ``i`` in ``[lo_i, hi_i)``, ``k`` in ``[lo_k, hi_k)``."""
    cursor = 0
    nextp = cur_pos[0] if cur_pos.shape[0] > 0 else _BIG
    count = 0
    vmax = 0.0
    smax = 0.0
    t3 = 0
    for i in range(lo_i, hi_i):
        for k in range(max(lo_k, i + 2), hi_k):
            ib = off[k - i] + i
            for j in range(i + 1, k):
                if nextp >= t3 + 3:
                    xa = x[off[j - i] + i]
                    xb = x[ib]
                    xc = x[off[k - j] + j]
                    if xa - xb - xc <= 0.0 and xb - xa - xc <= 0.0 and xc - xa - xb <= 0.0:
                        t3 += 3
                        continue
                cursor, nextp, nxt_pos, nxt_val, count, vmax, smax = _visit(
                    x, winv, off[j - i] + i, ib, off[k - j] + j, t3, cur_pos, cur_val, cursor,
                    nextp, nxt_pos, nxt_val, count, vmax, smax)
                t3 += 3
    return nxt_pos, nxt_val, count, vmax, smax


@numba.njit(fastmath=_FM, parallel=True)
def triangle_pass_blocked(x, winv, n, bsize, cur_pos, cur_val, cur_start, nxt_pos, nxt_val,
                          nxt_start):
    """One pass in the conflict-free anti-diagonal block schedule (parallel).

    Nodes are cut into blocks of ``bsize``; block pair ``(I, K)``, ``I <= K``, owns the
    triplets ``i < j < k`` with ``i`` in ``I`` and ``k`` in ``K``. All block pairs with the
    same ``I + K`` touch disjoint pairs, so they run concurrently (``prange``); the
    anti-diagonals run one after the other. Each block pair keeps its own dual list
    (block pair ``b`` owns ``cur_pos[cur_start[b]:cur_start[b+1]]``), so the result does
    not depend on the number of threads.

    Parameters
    ----------
    x, winv : ndarray
        Diagonal layout, ``x`` updated in place.
    n, bsize : int
    cur_pos, cur_val, cur_start : ndarray
        Previous duals of all block pairs, concatenated, with offsets (length nb + 1).
    nxt_pos, nxt_val : ndarray
        Scratch arrays, one per block pair (typed list entries are not used; see returns).
    nxt_start : ndarray
        Unused capacity hint; kept for symmetry.

    Returns
    -------
    out_pos, out_val : ndarray
        This pass's duals of all block pairs, concatenated in block-pair order.
    out_start : ndarray of shape (nb + 1,)
    vmax, smax : float
    """
    off = diagonal_offsets(n)
    nblk = (n + bsize - 1) // bsize
    npairs_blk = nblk * (nblk + 1) // 2
    counts = np.zeros(npairs_blk, dtype=np.int64)
    vm = np.zeros(npairs_blk)
    sm = np.zeros(npairs_blk)
    # block pair id of (I, K), I <= K: row-major over I
    pos_lists = [np.empty(0, dtype=np.int64) for _ in range(npairs_blk)]
    val_lists = [np.empty(0, dtype=np.float64) for _ in range(npairs_blk)]
    for diag in range(2 * nblk - 1):
        lo = max(0, diag - nblk + 1)
        hi = diag // 2
        for bi in numba.prange(lo, hi + 1):
            bk = diag - bi
            b = bi * nblk - bi * (bi - 1) // 2 + (bk - bi)
            s0 = cur_start[b]
            s1 = cur_start[b + 1]
            cap = max(1024, 2 * (s1 - s0))
            p, v, c, a, m = _block_triplets(
                x, winv, off, bi * bsize, min(n, (bi + 1) * bsize), bk * bsize,
                min(n, (bk + 1) * bsize), cur_pos[s0:s1], cur_val[s0:s1],
                np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.float64))
            pos_lists[b] = p[:c].copy()
            val_lists[b] = v[:c].copy()
            counts[b] = c
            vm[b] = a
            sm[b] = m
    out_start = np.zeros(npairs_blk + 1, dtype=np.int64)
    for b in range(npairs_blk):
        out_start[b + 1] = out_start[b] + counts[b]
    out_pos = np.empty(out_start[-1], dtype=np.int64)
    out_val = np.empty(out_start[-1], dtype=np.float64)
    for b in numba.prange(npairs_blk):
        out_pos[out_start[b]:out_start[b + 1]] = pos_lists[b]
        out_val[out_start[b]:out_start[b + 1]] = val_lists[b]
    return out_pos, out_val, out_start, vm.max(), sm.max()


#: visiting orders of the serial triangle pass, by name
TRIANGLE_KERNELS = {
    "diagonal": triangle_pass_diagonal,
    "lexicographic": triangle_pass_lexicographic,
}


@numba.njit(fastmath=_FM, cache=True)
def pair_pass(x, winv, f, target, z, lower, upper, has_f, has_lower, has_upper):
    """One pass over the per-pair constraints, dense duals.

    For every pair ``p`` (in array order) the constraints, in this order:
    ``x - f <= d`` and ``-x - f <= -d`` (when ``has_f``: the ``f >= |x - d|`` split of
    V §6.2, ``d = target``, ``f`` weighted like ``x``), ``-x <= -lower`` and
    ``x <= upper``.

    Parameters
    ----------
    x, winv, f, target : ndarray of shape (N,)
        ``f`` and ``target`` are ignored unless ``has_f``.
    z : ndarray of shape (4, N)
        Duals (``gamma * y``), updated in place; rows: f-plus, f-minus, lower, upper.
    lower, upper : float
    has_f, has_lower, has_upper : bool

    Returns
    -------
    bz : float
        ``sum_t b_t z_t`` over these constraints after the pass.
    nnz : int
        Nonzero duals after the pass.
    vmax : float
        Largest violation met at a visit.
    smax : float
        Largest ``|dz|``.
    """
    npair = x.shape[0]
    bz = 0.0
    nnz = 0
    vmax = 0.0
    smax = 0.0
    for p in range(npair):
        xp = x[p]
        wp = winv[p]
        if has_f:
            fp = f[p]
            dp = target[p]
            q = 0.5 / wp
            # x - f <= d
            zo = z[0, p]
            v = xp - fp - dp
            if v > vmax:
                vmax = v
            zn = zo + v * q
            if zn < 0.0:
                zn = 0.0
            dz = zn - zo
            xp -= dz * wp
            fp += dz * wp
            z[0, p] = zn
            if abs(dz) > smax:
                smax = abs(dz)
            # -x - f <= -d
            zo = z[1, p]
            v = dp - xp - fp
            if v > vmax:
                vmax = v
            zn = zo + v * q
            if zn < 0.0:
                zn = 0.0
            dz = zn - zo
            xp += dz * wp
            fp += dz * wp
            z[1, p] = zn
            if abs(dz) > smax:
                smax = abs(dz)
            f[p] = fp
            bz += dp * (z[0, p] - z[1, p])
            nnz += (z[0, p] > 0.0) + (z[1, p] > 0.0)
        if has_lower:
            zo = z[2, p]
            v = lower - xp
            if v > vmax:
                vmax = v
            zn = zo + v / wp
            if zn < 0.0:
                zn = 0.0
            dz = zn - zo
            xp += dz * wp
            z[2, p] = zn
            if abs(dz) > smax:
                smax = abs(dz)
            bz -= lower * zn
            nnz += zn > 0.0
        if has_upper:
            zo = z[3, p]
            v = xp - upper
            if v > vmax:
                vmax = v
            zn = zo + v / wp
            if zn < 0.0:
                zn = 0.0
            dz = zn - zo
            xp -= dz * wp
            z[3, p] = zn
            if abs(dz) > smax:
                smax = abs(dz)
            bz += upper * zn
            nnz += zn > 0.0
        x[p] = xp
    return bz, nnz, vmax, smax


@numba.njit(fastmath=_FM, cache=True)
def sum_step(x, winv, z, total):
    """Project on the equality ``sum(x) == total`` (dual unrestricted in sign).

    Returns the new dual ``z``, the violation ``|sum(x) - total|`` before the step, and
    ``|dz|``.
    """
    s = 0.0
    q = 0.0
    for p in range(x.shape[0]):
        s += x[p]
        q += winv[p]
    v = s - total
    dz = v / q
    for p in range(x.shape[0]):
        x[p] -= dz * winv[p]
    return z + dz, abs(v), abs(dz)


@numba.njit(fastmath=_FM, cache=True)
def edge_triangle_pass(x, winv, tri, z):
    """One pass over the triangle constraints of explicit triangles (dense duals).

    Parameters
    ----------
    x, winv : ndarray of shape (m,)
    tri : ndarray of shape (t, 3), int64
        Variable indices ``(a, b, c)``; the constraints are ``x_a <= x_b + x_c``,
        ``x_b <= x_a + x_c``, ``x_c <= x_a + x_b`` (in this order).
    z : ndarray of shape (3 t,)
        Duals, updated in place.

    Returns
    -------
    nnz : int
    vmax, smax : float
    """
    nnz = 0
    vmax = 0.0
    smax = 0.0
    for r in range(tri.shape[0]):
        ia = tri[r, 0]
        ib = tri[r, 1]
        ic = tri[r, 2]
        xa = x[ia]
        xb = x[ib]
        xc = x[ic]
        wa = winv[ia]
        wb = winv[ib]
        wc = winv[ic]
        qinv = 1.0 / (wa + wb + wc)
        for c in range(3):
            zo = z[3 * r + c]
            if c == 0:
                v = xa - xb - xc
            elif c == 1:
                v = xb - xa - xc
            else:
                v = xc - xa - xb
            if v > vmax:
                vmax = v
            zn = zo + v * qinv
            if zn < 0.0:
                zn = 0.0
            dz = zn - zo
            if dz != 0.0:
                sa = 1.0 if c == 0 else -1.0
                sb = 1.0 if c == 1 else -1.0
                sc = 1.0 if c == 2 else -1.0
                xa -= dz * sa * wa
                xb -= dz * sb * wb
                xc -= dz * sc * wc
                if abs(dz) > smax:
                    smax = abs(dz)
            z[3 * r + c] = zn
            nnz += zn > 0.0
        x[ia] = xa
        x[ib] = xb
        x[ic] = xc
    return nnz, vmax, smax


@numba.njit(fastmath=_FM, cache=True)
def wedge_pass(x, winv, wed, z):
    """One pass over ``x_a + x_b >= 1`` for the wedge rows ``(a, b)`` (dense duals).

    Returns ``bz = sum b_t z_t`` (``b_t = -1``), the nonzero count, ``vmax`` and ``smax``.
    """
    nnz = 0
    bz = 0.0
    vmax = 0.0
    smax = 0.0
    for r in range(wed.shape[0]):
        ia = wed[r, 0]
        ib = wed[r, 1]
        wa = winv[ia]
        wb = winv[ib]
        zo = z[r]
        v = 1.0 - x[ia] - x[ib]
        if v > vmax:
            vmax = v
        zn = zo + v / (wa + wb)
        if zn < 0.0:
            zn = 0.0
        dz = zn - zo
        if dz != 0.0:
            x[ia] += dz * wa
            x[ib] += dz * wb
            if abs(dz) > smax:
                smax = abs(dz)
        z[r] = zn
        bz -= zn
        nnz += zn > 0.0
    return bz, nnz, vmax, smax
