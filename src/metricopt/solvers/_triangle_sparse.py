"""numba kernels of the triangle constraints of ``K_n`` with sparse dual storage.

One pass over all triangle constraints in the diagonal order
(:func:`triangle_pass_diagonal`, resumable by rows: :func:`triangle_rows_diagonal`) or
the lexicographic order (:func:`triangle_pass_lexicographic`), by name in
:data:`TRIANGLE_KERNELS`; the triplet row :func:`_row` of the orders on the packed
layout (lexicographic here, parallel in :mod:`metricopt.solvers._dykstra_parallel`);
and :func:`triangle_violation_exceeds`, an early-exit violation test on the packed
layout. Hildreth conventions: those of :mod:`metricopt.solvers._constraint_kernels`;
layouts: :mod:`metricopt.solvers._layouts`.

* Triangle duals are stored sparsely (Veldt et al. 2019, §5.2): the nonzero ones of
  the previous pass as two arrays ``(pos, val)`` in visiting order, consumed with a
  cursor, while the nonzero ones of this pass are appended to a second pair of arrays.
  Position ``3 t + c`` is constraint ``c`` of the ``t``-th visited triplet
  ``(i, j, k)``: ``c = 0: x_ij <= x_ik + x_jk``, ``c = 1: x_ik <= x_ij + x_jk``,
  ``c = 2: x_jk <= x_ij + x_ik``.
* Hot loops never allocate and never return arrays: a resumable core stops before a row
  whose duals might not fit, the wrapper grows the buffer and resumes.
* Diagonal order: each row (one triplet shape, three contiguous pair streams) goes
  through a dense scratch allocated once per call of the core: the row's stored duals
  are scattered into it, the branch-free dense row
  (:func:`~metricopt.solvers._triangle_dense._row_dense`, vectorised) runs on it, and
  the nonzero duals are compacted back into the list without data-dependent branches.
  Lexicographic and parallel orders (:func:`_row`): triplets before the next stored
  dual only get a violation test, skipped eight at a time when idle.

Kernels are pure and trust their inputs, as those of
:mod:`metricopt.solvers._constraint_kernels` (which also lists the references).
"""

import numba
import numpy as np

from .. import _config
from ._layouts import diagonal_offsets, packed_row_offsets
from ._triangle_dense import _row_dense, _step3_sums

__all__ = [
    "triangle_pass_diagonal",
    "triangle_rows_diagonal",
    "triangle_pass_lexicographic",
    "triangle_violation_exceeds",
    "TRIANGLE_KERNELS",
]

_FM = set(_config.FASTMATH)
_BIG = np.iinfo(np.int64).max
_U0 = np.uint64(0)
#: triplets per group of the vectorised idle test in :func:`_row`
_GROUP = 8


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
