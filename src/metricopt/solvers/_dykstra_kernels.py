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
* Dense pair variables use the *diagonal layout* (pair ``(a, a + s)`` at ``off[s] + a``,
  :func:`diagonal_offsets`) for the diagonal order and the *packed* row-major layout
  (pair ``(i, j)`` at ``r[i] + j``, :func:`packed_row_offsets`, the problems' own order)
  for the lexicographic and parallel orders (:data:`LAYOUTS`).
* Hot loops never allocate and never return arrays: a resumable core stops before a row
  whose duals might not fit, the wrapper grows the buffer and resumes.
* Sparse duals, diagonal order: each row (one triplet shape, three contiguous pair
  streams) goes through a dense scratch allocated once per call of the core: the row's
  stored duals are scattered into it, the branch-free dense row (:func:`_row_dense`,
  vectorised) runs on it, and the nonzero duals are compacted back into the list
  without data-dependent branches. Lexicographic and parallel orders (:func:`_row`):
  triplets before the next stored dual only get a violation test, skipped eight at a
  time when idle.
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
    "triangle_rows_diagonal",
    "triangle_pass_dense",
    "triangle_rows_dense",
    "diagonal_rows",
    "dense_to_sparse_duals",
    "extrapolate_dense_duals",
    "sparse_to_dense_duals",
    "triangle_pass_lexicographic",
    "packed_row_offsets",
    "triangle_violation_exceeds",
    "LAYOUTS",
    "pair_pass",
    "sum_step",
    "edge_triangle_pass",
    "wedge_pass",
    "TRIANGLE_KERNELS",
]

_FM = set(_config.FASTMATH)
_BIG = np.iinfo(np.int64).max
_U0 = np.uint64(0)
#: triplets per group of the vectorised idle test in :func:`_row`
_GROUP = 8


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


@numba.njit(cache=True)
def packed_row_offsets(n):
    """``r[i]`` such that pair ``(i, j)``, ``i < j``, is at ``r[i] + j`` in packed order."""
    r = np.zeros(max(n, 1), dtype=np.int64)
    for i in range(n):
        r[i] = i * n - i * (i + 1) // 2 - i - 1
    return r


@numba.njit(inline="always", fastmath=_FM, error_model="numpy")
def _step3_sums(xa, xb, xc, wa, wb, wc, z0, z1, z2):
    """Hildreth steps on the three triangle constraints of one triplet (Alg. 2).

    Returns the new values and duals, the largest violation met before a step, the sum
    of the three ``|dz|`` and the number of nonzero duals. Branch-free (selects only),
    so that the dense rows vectorise.
    """
    qinv = 1.0 / (wa + wb + wc)
    v0 = xa - xb - xc
    zn = z0 + v0 * qinv
    zn = zn if zn > 0.0 else 0.0
    d0 = zn - z0
    xa -= d0 * wa
    xb += d0 * wb
    xc += d0 * wc
    z0 = zn
    v1 = xb - xa - xc
    zn = z1 + v1 * qinv
    zn = zn if zn > 0.0 else 0.0
    d1 = zn - z1
    xb -= d1 * wb
    xa += d1 * wa
    xc += d1 * wc
    z1 = zn
    v2 = xc - xa - xb
    zn = z2 + v2 * qinv
    zn = zn if zn > 0.0 else 0.0
    d2 = zn - z2
    xc -= d2 * wc
    xa += d2 * wa
    xb += d2 * wb
    z2 = zn
    v = v0 if v0 > v1 else v1
    v = v if v > v2 else v2
    nz = (1.0 if z0 > 0.0 else 0.0) + (1.0 if z1 > 0.0 else 0.0) + (1.0 if z2 > 0.0 else 0.0)
    return xa, xb, xc, z0, z1, z2, v, abs(d0) + abs(d1) + abs(d2), nz


@numba.njit(inline="always", fastmath=_FM, boundscheck=False)
def _row(x, winv, a0, b0, c0, length, trow, cur_pos, cur_val, ncur, cursor, nextp,
         nxt_pos, nxt_val, count, vmax, smax):
    """Visit the triplets ``q = 0..length-1`` with pairs at ``a0`` (the same for all:
    rows of the lexicographic and parallel orders), ``b0 + q``,
    ``c0 + q``; triplet ``q`` owns dual positions ``trow + 3q + (0, 1, 2)``.

    The caller guarantees room for ``3 * length`` more entries in ``nxt_pos/nxt_val``.
    Triplets before the next stored dual only need a violation test (the common case);
    every write of a new dual is unconditional and the count advances only when it is
    positive, so the loop has no data-dependent branch besides the violation test.
    Returns the updated scalars ``cursor, nextp, count, vmax, smax`` (never arrays).
    """
    q = 0
    while q < length:
        stop = length
        if nextp < trow + 3 * length:
            stop = (nextp - trow) // 3
        # a group of _GROUP triplets without a violation is skipped after one
        # vectorisable test (nothing changes inside an idle group, so this is exact)
        p = q
        while p < stop:
            end = stop
            if p + _GROUP <= stop:
                worst = 0.0
                for g in range(p, p + _GROUP):
                    xa = x[a0]
                    xb = x[b0 + g]
                    xc = x[c0 + g]
                    worst = max(worst, max(xa - xb - xc, max(xb - xa - xc, xc - xa - xb)))
                if worst <= 0.0:
                    p += _GROUP
                    continue
                end = p + _GROUP
            for g in range(p, end):
                ia = a0
                ib = b0 + g
                ic = c0 + g
                xa = x[ia]
                xb = x[ib]
                xc = x[ic]
                if max(xa - xb - xc, max(xb - xa - xc, xc - xa - xb)) > 0.0:
                    xa, xb, xc, z0, z1, z2, v, d, _ = _step3_sums(
                        xa, xb, xc, winv[ia], winv[ib], winv[ic], 0.0, 0.0, 0.0)
                    vmax = max(vmax, v)
                    smax = max(smax, d)
                    x[ia] = xa
                    x[ib] = xb
                    x[ic] = xc
                    t = trow + 3 * g
                    nxt_pos[count] = t
                    nxt_val[count] = z0
                    count += z0 > 0.0
                    nxt_pos[count] = t + 1
                    nxt_val[count] = z1
                    count += z1 > 0.0
                    nxt_pos[count] = t + 2
                    nxt_val[count] = z2
                    count += z2 > 0.0
            p = end
        if stop >= length:
            break
        # triplet `stop` holds at least one dual of the previous pass
        p = stop
        t = trow + 3 * p
        z0 = 0.0
        z1 = 0.0
        z2 = 0.0
        if nextp == t:
            z0 = cur_val[cursor]
            cursor += 1
            nextp = cur_pos[cursor] if cursor < ncur else _BIG
        if nextp == t + 1:
            z1 = cur_val[cursor]
            cursor += 1
            nextp = cur_pos[cursor] if cursor < ncur else _BIG
        if nextp == t + 2:
            z2 = cur_val[cursor]
            cursor += 1
            nextp = cur_pos[cursor] if cursor < ncur else _BIG
        ia = a0
        ib = b0 + p
        ic = c0 + p
        xa, xb, xc, z0, z1, z2, v, d, _ = _step3_sums(
            x[ia], x[ib], x[ic], winv[ia], winv[ib], winv[ic], z0, z1, z2)
        vmax = max(vmax, v)
        smax = max(smax, d)
        x[ia] = xa
        x[ib] = xb
        x[ic] = xc
        nxt_pos[count] = t
        nxt_val[count] = z0
        count += z0 > 0.0
        nxt_pos[count] = t + 1
        nxt_val[count] = z1
        count += z1 > 0.0
        nxt_pos[count] = t + 2
        nxt_val[count] = z2
        count += z2 > 0.0
        q = stop + 1
    return cursor, nextp, count, vmax, smax


@numba.njit(inline="always", fastmath=_FM, boundscheck=False, error_model="numpy")
def _row_scratch(x, winv, a0, b0, c0, m, t3, cur_pos, cur_val, ncur, cursor, nextp, nxt_pos,
                 nxt_val, count, zs, vs, busy):
    """One row of the diagonal order through a dense scratch: triplets ``g = 0..m-1`` with
    pairs at ``a0 + g``, ``b0 + g``, ``c0 + g`` and dual positions ``t3 + 3g + c``.

    The row's stored duals (positions below ``t3 + 3m``) are scattered into ``zs`` (all
    zeros on entry; ``z0`` run, ``z1`` run, ``z2`` run as in the dense layout), the row
    runs branch-free through :func:`_row_dense` (``vs``: its violation scratch), and the
    nonzero duals are appended to ``nxt_pos/nxt_val`` in position order by a branch-free
    two-level compaction: the triplets holding a dual are listed in ``busy`` (a store
    per triplet, the count advancing when the sum of its duals is positive), then each
    listed triplet stores its three duals (the count advancing when one is positive) and
    is zeroed, so that ``zs`` is all zeros again on return. The caller guarantees room
    for ``3m`` more entries. Returns ``cursor, nextp, count, vmax, dsum`` (never arrays).
    """
    end = t3 + 3 * m
    while nextp < end:
        r = nextp - t3
        g = r // 3
        zs[(r - 3 * g) * m + g] = cur_val[cursor]
        cursor += 1
        nextp = cur_pos[cursor] if cursor < ncur else _BIG
    z0_ = zs[0:m]
    z1_ = zs[m:2 * m]
    z2_ = zs[2 * m:3 * m]
    vmax, dsum, nzs = _row_dense(x[a0:a0 + m], x[b0:b0 + m], x[c0:c0 + m], winv[a0:a0 + m],
                                 winv[b0:b0 + m], winv[c0:c0 + m], z0_, z1_, z2_, m, vs)
    if nzs > 0.0:
        # unsigned counters: numba adds no negative-index wraparound to the stores
        nb = _U0
        for g in range(m):
            busy[nb] = g
            # duals are >= 0: the sum is positive iff one of them is
            nb += np.uint64(z0_[g] + z1_[g] + z2_[g] > 0.0)
        c = np.uint64(count)
        for i in range(nb):
            g = busy[i]
            p = t3 + 3 * g
            z = z0_[g]
            nxt_pos[c] = p
            nxt_val[c] = z
            c += np.uint64(z > 0.0)
            z = z1_[g]
            nxt_pos[c] = p + 1
            nxt_val[c] = z
            c += np.uint64(z > 0.0)
            z = z2_[g]
            nxt_pos[c] = p + 2
            nxt_val[c] = z
            c += np.uint64(z > 0.0)
            z0_[g] = 0.0
            z1_[g] = 0.0
            z2_[g] = 0.0
        count = np.int64(c)
    return cursor, nextp, count, vmax, dsum


@numba.njit(fastmath=_FM, cache=True, boundscheck=False, error_model="numpy")
def _diagonal_core(x, winv, off, n, block, cur_pos, cur_val, ncur, nxt_pos, nxt_val, state,
                   acc, max_rows):
    """Resumable diagonal-order pass, rows through :func:`_row_scratch`; stops before a
    row that might not fit into ``nxt_pos`` or after ``max_rows`` rows. ``state`` = (sb,
    s2, s1, cursor, t3, count), ``acc`` = (vmax, sum of ``|dz|``); both are read on entry
    and written on exit. Returns ``(done, rows)``: whether the pass is complete and the
    rows visited by this call."""
    sb = state[0]
    s2 = state[1]
    s1 = state[2]
    cursor = state[3]
    t3 = state[4]
    count = state[5]
    vmax = acc[0]
    dsum = acc[1]
    cap = nxt_pos.shape[0]
    nextp = cur_pos[cursor] if cursor < ncur else _BIG
    # a row's duals in dense layout (all zeros between rows), its violations and the
    # triplets holding a dual
    zs = np.zeros(3 * max(n, 1))
    vs = np.empty(max(n, 1))
    busy = np.empty(max(n, 1), dtype=np.int64)
    done = True
    rows = 0
    while sb < n - 1:
        while s2 < n - 1:
            top = min(sb + block, n - s2)
            while s1 < top:
                length = n - s1 - s2
                if count + 3 * length > cap or rows >= max_rows:
                    done = False
                    break
                rows += 1
                cursor, nextp, count, v, d = _row_scratch(
                    x, winv, off[s1], off[s1 + s2], off[s2] + s1, length, t3, cur_pos,
                    cur_val, ncur, cursor, nextp, nxt_pos, nxt_val, count, zs, vs, busy)
                vmax = max(vmax, v)
                dsum += d
                t3 += 3 * length
                s1 += 1
            if not done:
                break
            s2 += 1
            s1 = sb
        if not done:
            break
        sb += block
        s2 = 1
        s1 = sb
    state[0] = sb
    state[1] = s2
    state[2] = s1
    state[3] = cursor
    state[4] = t3
    state[5] = count
    acc[0] = vmax
    acc[1] = dsum
    return done, rows


@numba.njit(fastmath=_FM, cache=True, boundscheck=False)
def _lexicographic_core(x, winv, r, n, cur_pos, cur_val, ncur, nxt_pos, nxt_val, state, acc):
    """Resumable lexicographic pass (packed layout); ``state`` = (i, j, -, cursor, t3,
    count). See :func:`_diagonal_core`."""
    i = state[0]
    j = state[1]
    cursor = state[3]
    t3 = state[4]
    count = state[5]
    vmax = acc[0]
    smax = acc[1]
    cap = nxt_pos.shape[0]
    nextp = cur_pos[cursor] if cursor < ncur else _BIG
    done = True
    while i < n - 2:
        ri = r[i]
        while j < n - 1:
            length = n - 1 - j
            if count + 3 * length > cap:
                done = False
                break
            cursor, nextp, count, vmax, smax = _row(
                x, winv, ri + j, ri + j + 1, r[j] + j + 1, length, t3, cur_pos, cur_val,
                ncur, cursor, nextp, nxt_pos, nxt_val, count, vmax, smax)
            t3 += 3 * length
            j += 1
        if not done:
            break
        i += 1
        j = i + 1
    state[0] = i
    state[1] = j
    state[3] = cursor
    state[4] = t3
    state[5] = count
    acc[0] = vmax
    acc[1] = smax
    return done


@numba.njit(cache=True)
def _grow(pos, val, count, need):
    """Copies of ``pos[:count], val[:count]`` with room for at least ``need`` more."""
    cap = max(2 * pos.shape[0], count + need, 1024)
    npos = np.empty(cap, dtype=np.int64)
    nval = np.empty(cap, dtype=np.float64)
    npos[:count] = pos[:count]
    nval[:count] = val[:count]
    return npos, nval


@numba.njit(cache=True)
def triangle_pass_diagonal(x, winv, n, block, cur_pos, cur_val, nxt_pos, nxt_val):
    """One pass over all triangle constraints in *diagonal* order (diagonal layout).

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
        Scratch space for this pass's nonzero duals (replaced by larger arrays when
        full; the hot loop itself never allocates).

    Returns
    -------
    nxt_pos, nxt_val : ndarray
        Possibly reallocated; the first ``count`` entries are this pass's duals.
    count : int
    vmax : float
        Largest violation met at a visit (before its step): a cheap estimate.
    dsum : float
        Sum of ``|dz|`` over the pass, as in :func:`triangle_rows_dense`: an upper bound
        of the largest dual change, 0 when the pass changed nothing.
    """
    state = np.zeros(6, dtype=np.int64)
    acc = np.zeros(2)
    nxt_pos, nxt_val, _ = triangle_rows_diagonal(x, winv, n, block, cur_pos, cur_val, nxt_pos,
                                                 nxt_val, state, acc, _BIG)
    return nxt_pos, nxt_val, state[5], acc[0], acc[1]


@numba.njit(cache=True)
def triangle_rows_diagonal(x, winv, n, block, cur_pos, cur_val, nxt_pos, nxt_val, state, acc,
                           max_rows):
    """Up to ``max_rows`` rows of a diagonal-order pass (a pass has ``(n-1)(n-2)/2`` rows,
    one per triplet shape ``(s1, s2)``), resuming at ``state``.

    ``state`` (int64, length 6; all zeros at the start of a pass) and ``acc`` (float64,
    length 2: the largest violation met and the sum of ``|dz|``) carry the position and
    the running figures between calls;
    ``state[5]`` is the number of duals written to ``nxt_pos/nxt_val`` so far. Lets the
    driver revisit other constraints between parts of a pass (see
    :func:`metricopt.solvers.dykstra.solve_dykstra`, ``interleave``).

    Returns
    -------
    nxt_pos, nxt_val : ndarray
        Possibly reallocated.
    done : bool
        True when the pass is complete.
    """
    if state[0] == 0:
        state[0] = 1
        state[1] = 1
        state[2] = 1
    off = diagonal_offsets(n)
    left = max_rows
    while True:
        done, rows = _diagonal_core(x, winv, off, n, block, cur_pos, cur_val, cur_pos.shape[0],
                                    nxt_pos, nxt_val, state, acc, left)
        if done:
            return nxt_pos, nxt_val, True
        left -= rows
        if left <= 0:
            return nxt_pos, nxt_val, False
        nxt_pos, nxt_val = _grow(nxt_pos, nxt_val, state[5], 3 * n + 1024)


@numba.njit(cache=True)
def triangle_pass_lexicographic(x, winv, n, block, cur_pos, cur_val, nxt_pos, nxt_val):
    """One pass over all triangle constraints in lexicographic order ``i < j < k``.

    The papers' order, on the *packed* (row-major) layout: pair ``(i, j)`` at
    ``r[i] + j`` (:func:`packed_row_offsets`). Same parameters and returns as
    :func:`triangle_pass_diagonal` (``block`` is ignored), except that the last one is
    the largest change of one triplet's duals (sum of its three ``|dz|``).
    """
    r = packed_row_offsets(n)
    state = np.zeros(6, dtype=np.int64)
    state[1] = 1
    acc = np.zeros(2)
    while not _lexicographic_core(x, winv, r, n, cur_pos, cur_val, cur_pos.shape[0], nxt_pos,
                                  nxt_val, state, acc):
        nxt_pos, nxt_val = _grow(nxt_pos, nxt_val, state[5], 3 * n + 1024)
    return nxt_pos, nxt_val, state[5], acc[0], acc[1]


# ------------------------------------------------------------ dense dual storage
# With every triangle dual stored (3 C(n,3) float64, row by row in the diagonal order:
# the z0, z1, z2 of a row's triplets as three contiguous runs), a row is a branch-free
# loop over three contiguous pair streams that LLVM vectorises. Two conditions keep it
# vectorisable: no Python-style division check (``error_model="numpy"``; the divisor
# ``wa + wb + wc`` is positive) and sum reductions instead of max reductions (the largest violation is reduced per row afterwards). Streams
# that overlap (shapes with s1 = s2 < vector width) take LLVM's scalar fallback after
# its run-time alias check, so the iterates equal those of the sparse kernel exactly.


@numba.njit(inline="always", fastmath=_FM, boundscheck=False, error_model="numpy")
def _row_dense(xa_, xb_, xc_, wa_, wb_, wc_, z0_, z1_, z2_, length, scratch):
    """One row with stored duals; each argument is a view of one contiguous stream.

    The violations met go to ``scratch`` and are reduced afterwards by
    :func:`_lane_max` (a max reduction inside the loop would stop LLVM vectorising it).
    """
    dsum = 0.0
    nzs = 0.0
    for g in range(length):
        xa, xb, xc, z0, z1, z2, v, d, nz = _step3_sums(
            xa_[g], xb_[g], xc_[g], wa_[g], wb_[g], wc_[g], z0_[g], z1_[g], z2_[g])
        xa_[g] = xa
        xb_[g] = xb
        xc_[g] = xc
        z0_[g] = z0
        z1_[g] = z1
        z2_[g] = z2
        scratch[g] = v
        dsum += d
        nzs += nz
    return _lane_max(scratch, length), dsum, nzs


@numba.njit(inline="always", fastmath=_FM, boundscheck=False)
def _lane_max(s, length):
    """``max(0, s[:length])`` with eight independent chains."""
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = 0.0
    g = 0
    while g + 8 <= length:
        m0 = s[g] if s[g] > m0 else m0
        m1 = s[g + 1] if s[g + 1] > m1 else m1
        m2 = s[g + 2] if s[g + 2] > m2 else m2
        m3 = s[g + 3] if s[g + 3] > m3 else m3
        m4 = s[g + 4] if s[g + 4] > m4 else m4
        m5 = s[g + 5] if s[g + 5] > m5 else m5
        m6 = s[g + 6] if s[g + 6] > m6 else m6
        m7 = s[g + 7] if s[g + 7] > m7 else m7
        g += 8
    while g < length:
        m0 = s[g] if s[g] > m0 else m0
        g += 1
    return max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7)))


@numba.njit(cache=True)
def diagonal_rows(n, block):
    """The rows of the diagonal order, in visiting order, as an int64 array of shape
    ``(R, 5)``: ``s1, s2, length, start, first_triplet``. Row ``(s1, s2)`` holds the
    ``length = n - s1 - s2`` triplets ``(i, i+s1, i+s1+s2)``; its dense duals start at
    ``start`` (``z0`` run, then ``z1``, then ``z2``) and its first triplet is the
    ``first_triplet``-th one visited. O(n^2); computed once per solve."""
    nrows = (n - 1) * (n - 2) // 2 if n >= 3 else 0
    rows = np.empty((nrows, 5), dtype=np.int64)
    r = 0
    t = 0
    sb = 1
    while sb < n - 1:
        for s2 in range(1, n - 1):
            for s1 in range(sb, min(sb + block, n - s2)):
                m = n - s1 - s2
                rows[r, 0] = s1
                rows[r, 1] = s2
                rows[r, 2] = m
                rows[r, 3] = 3 * t
                rows[r, 4] = t
                r += 1
                t += m
        sb += block
    return rows


@numba.njit(fastmath=_FM, cache=True, boundscheck=False, error_model="numpy")
def triangle_rows_dense(x, winv, n, rows, z, state, acc, max_rows):
    """Up to ``max_rows`` rows of a diagonal-order pass with dense dual storage.

    Same order and iterates as :func:`triangle_rows_diagonal`; the duals of all
    ``3 C(n,3)`` triangle constraints live in ``z`` in the layout of ``rows``
    (:func:`diagonal_rows`). ``state[0]`` is the next row (0 at the start of a pass),
    ``acc`` = (largest violation met, sum of ``|dz|``, number of nonzero duals); both
    are carried between calls. The sum bounds the largest dual change from above.

    Returns
    -------
    done : bool
        True when the pass is complete.
    """
    off = diagonal_offsets(n)
    scratch = np.empty(max(n, 1))
    vmax = acc[0]
    dsum = acc[1]
    nzs = acc[2]
    r = state[0]
    stop = min(rows.shape[0], r + max_rows)
    while r < stop:
        s1 = rows[r, 0]
        s2 = rows[r, 1]
        m = rows[r, 2]
        t3 = rows[r, 3]
        a0 = off[s1]
        b0 = off[s1 + s2]
        c0 = off[s2] + s1
        v, d, nz = _row_dense(x[a0:a0 + m], x[b0:b0 + m], x[c0:c0 + m], winv[a0:a0 + m],
                              winv[b0:b0 + m], winv[c0:c0 + m], z[t3:t3 + m],
                              z[t3 + m:t3 + 2 * m], z[t3 + 2 * m:t3 + 3 * m], m, scratch)
        vmax = max(vmax, v)
        dsum += d
        nzs += nz
        r += 1
    state[0] = r
    acc[0] = vmax
    acc[1] = dsum
    acc[2] = nzs
    return r >= rows.shape[0]


@numba.njit(cache=True)
def triangle_pass_dense(x, winv, n, block, z):
    """One diagonal-order pass with dense dual storage; returns ``(vmax, dsum, nnz)``
    (see :func:`triangle_rows_dense`)."""
    state = np.zeros(1, dtype=np.int64)
    acc = np.zeros(3)
    triangle_rows_dense(x, winv, n, diagonal_rows(n, block), z, state, acc, _BIG)
    return acc[0], acc[1], int(acc[2])


@numba.njit(inline="always", fastmath=_FM, boundscheck=False, error_model="numpy")
def _extrapolate_row(xa_, xb_, xc_, wa_, wb_, wc_, z0_, z1_, z2_, r0_, r1_, r2_, beta,
                     length):
    for g in range(length):
        o0 = z0_[g]
        o1 = z1_[g]
        o2 = z2_[g]
        n0 = o0 + beta * (o0 - r0_[g])
        n1 = o1 + beta * (o1 - r1_[g])
        n2 = o2 + beta * (o2 - r2_[g])
        n0 = n0 if n0 > 0.0 else 0.0
        n1 = n1 if n1 > 0.0 else 0.0
        n2 = n2 if n2 > 0.0 else 0.0
        d0 = n0 - o0
        d1 = n1 - o1
        d2 = n2 - o2
        xa_[g] -= wa_[g] * (d0 - d1 - d2)
        xb_[g] -= wb_[g] * (d1 - d0 - d2)
        xc_[g] -= wc_[g] * (d2 - d0 - d1)
        r0_[g] = o0
        r1_[g] = o1
        r2_[g] = o2
        z0_[g] = n0
        z1_[g] = n1
        z2_[g] = n2


@numba.njit(fastmath=_FM, cache=True, boundscheck=False, error_model="numpy")
def extrapolate_dense_duals(x, winv, n, rows, z, zref, beta):
    """Move dense triangle duals along their recent direction and keep ``x`` consistent.

    ``z <- max(0, z + beta (z - zref))`` entrywise, ``zref <- z`` (the duals before the
    move), and ``x <- x - W^{-1} A' (z_new - z_old)``, so that ``x = x0 - W^{-1} A' z``
    still holds exactly for the moved duals (the Dykstra invariant). Layout of
    :func:`diagonal_rows`.
    """
    off = diagonal_offsets(n)
    for r in range(rows.shape[0]):
        s1 = rows[r, 0]
        s2 = rows[r, 1]
        m = rows[r, 2]
        t3 = rows[r, 3]
        a0 = off[s1]
        b0 = off[s1 + s2]
        c0 = off[s2] + s1
        _extrapolate_row(x[a0:a0 + m], x[b0:b0 + m], x[c0:c0 + m], winv[a0:a0 + m],
                         winv[b0:b0 + m], winv[c0:c0 + m], z[t3:t3 + m], z[t3 + m:t3 + 2 * m],
                         z[t3 + 2 * m:t3 + 3 * m], zref[t3:t3 + m], zref[t3 + m:t3 + 2 * m],
                         zref[t3 + 2 * m:t3 + 3 * m], beta, m)


@numba.njit(cache=True)
def dense_to_sparse_duals(z, rows):
    """The nonzero entries of dense duals ``z`` (layout of :func:`diagonal_rows`) as
    ``(pos, val)`` in the sparse kernels' convention (position ``3 t + c`` for
    constraint ``c`` of the ``t``-th triplet visited)."""
    count = 0
    for i in range(z.shape[0]):
        count += z[i] != 0.0
    pos = np.empty(count, dtype=np.int64)
    val = np.empty(count)
    k = 0
    for r in range(rows.shape[0]):
        m = rows[r, 2]
        t3 = rows[r, 3]
        t = rows[r, 4]
        for g in range(m):
            for c in range(3):
                v = z[t3 + c * m + g]
                if v != 0.0:
                    pos[k] = 3 * (t + g) + c
                    val[k] = v
                    k += 1
    return pos, val


@numba.njit(cache=True)
def sparse_to_dense_duals(pos, val, rows):
    """Inverse of :func:`dense_to_sparse_duals`."""
    total = 0
    if rows.shape[0]:
        total = rows[-1, 3] + 3 * rows[-1, 2]
    z = np.zeros(total)
    k = 0
    for r in range(rows.shape[0]):
        m = rows[r, 2]
        t3 = rows[r, 3]
        t = rows[r, 4]
        while k < pos.shape[0] and pos[k] < 3 * (t + m):
            z[t3 + (pos[k] % 3) * m + pos[k] // 3 - t] = val[k]
            k += 1
    return z


@numba.njit(fastmath=_FM, cache=True, boundscheck=False)
def triangle_violation_exceeds(x, n, tol):
    """True as soon as some triangle inequality of the packed vector ``x`` is violated by
    more than ``tol`` (early exit: cheap when the answer is yes)."""
    r = packed_row_offsets(n)
    for i in range(n - 2):
        for j in range(i + 1, n - 1):
            xa = x[r[i] + j]
            b0 = r[i]
            c0 = r[j]
            worst = 0.0
            for k in range(j + 1, n):
                xb = x[b0 + k]
                xc = x[c0 + k]
                worst = max(worst, max(xa - xb - xc, max(xb - xa - xc, xc - xa - xb)))
            if worst > tol:
                return True
    return False


#: visiting orders of the serial triangle pass, by name
TRIANGLE_KERNELS = {
    "diagonal": triangle_pass_diagonal,
    "lexicographic": triangle_pass_lexicographic,
}

#: pair layout each order works on: "diagonal" (:func:`diagonal_offsets`) or "packed"
LAYOUTS = {"diagonal": "diagonal", "lexicographic": "packed", "parallel": "packed"}


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
