"""numba kernels of the ``lighttouch`` backend: constraint groups, sampled steps, RNG.

Constraint groups (LT §5.1). The metric constraints are partitioned into groups whose
violation is the largest violation of their members, ``g_G(x) = max_{t in G} a_t'x - b_t``:

dense problems (``structure == 0``)
    group ``G`` is the block of ``gsz`` consecutive pairs ``v`` of the packed order, and
    holds every triangle inequality whose *long side* is one of them,
    ``x_ij <= x_ik + x_jk`` for all ``k``; each inequality is in exactly one group and a
    group check visits ``gsz (n - 2)`` inequalities;
edge problems (``structure == 1``, cluster deletion)
    group ``G`` is the block of ``gsz`` consecutive ids of the explicit family
    (:func:`metricopt.solvers.core.lp_matrix.edge_family_rows`: ids ``3t + s`` are the
    triangle rows with long side ``s``, ids ``3T + w`` the wedge rows
    ``x_a + x_b >= 1``).

Dense iterates are stored as ``x = y + shift``: a scalar shift is the exact, O(1)
projection onto ``sum(x) = n`` of sparsest cut (a step moves a few entries of ``y`` and
the shift), so that a step costs what it touches; the shift is 0 otherwise.

One call of :func:`lt_steps` runs ``nsteps`` iterations of LT Alg. 4 (or of FullTouch,
Alg. 1, with ``full``); its state is plain arrays (RNG state included), so a run can be
checkpointed between calls and repeats bit for bit on any thread count (the kernels are
serial). Inputs are assumed checked by the driver: contiguous float64 / int64 arrays.

References
----------
.. [1] Cotter, A., Gupta, M. R., & Pfeifer, J. (2016). A Light Touch for Heavily
       Constrained SGD. COLT 2016, PMLR 49, 729-771. arXiv:1512.04960
.. [2] Blackman, D., & Vigna, S. (2021). Scrambled linear pseudorandom number
       generators. ACM Trans. Math. Softw. 47(4), 36 (xoshiro256**).
"""

import math

import numba
import numpy as np

from .. import _config

__all__ = ["rng_next", "rng_uniform", "pair_base", "check_group", "group_violations",
           "lt_steps", "top_active", "average", "ST", "CT"]

_FM = set(_config.FASTMATH)

#: Slots of the float state array ``st`` of :func:`lt_steps`.
ST = dict(shift=0, shift_acc=1, vf_num=2, vf_den=3, vg_num=4, vg_den=5, vp_num=6, vp_den=7)
#: Slots of the integer counters ``ct`` of :func:`lt_steps`.
CT = dict(t=0, checks=1, kf=2, kg=3, kp=4, f_samples=5, t_start=6)


# ----------------------------------------------------------------------------- RNG
@numba.njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@numba.njit(cache=True)
def rng_next(s):
    """Next 64-bit output of xoshiro256** [2]_ with state ``s`` (4 uint64, updated)."""
    s0, s1, s2, s3 = s[0], s[1], s[2], s[3]
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    s[0], s[1], s[2], s[3] = s0, s1, s2, s3
    return result


@numba.njit(cache=True)
def rng_uniform(s):
    """A float in [0, 1) from the top 53 bits of :func:`rng_next`."""
    return float(rng_next(s) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, inline="always")
def _below(s, m):
    """An int in ``0 .. m-1``."""
    r = int(rng_uniform(s) * m)
    return r if r < m else m - 1


# -------------------------------------------------------------------- groups
@numba.njit(cache=True)
def pair_base(n):
    """``base[i] = i n - i (i + 1) / 2 - i - 1``: packed index of ``(i, j)``, ``i < j``, is
    ``base[i] + j``."""
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = i * n - i * (i + 1) // 2 - i - 1
    return out


@numba.njit(fastmath=_FM, cache=True)
def check_group(g, y, shift, structure, n, base, prow, pcol, tri, wed, gsz, nmem):
    """Largest violation in group ``g`` and the inequality attaining it.

    Returns
    -------
    viol : float
        ``max a_t'x - b_t`` over the group (``-inf`` for an empty group).
    i1, i2, i3 : int
        Variables of that inequality (``i3 = -1`` for a wedge row).
    c2 : float
        Coefficient of ``i2`` and ``i3`` (``-1``); ``i1`` has ``+1`` for a triangle
        row, ``-1`` for a wedge row (then ``c1 = c2 = -1``).
    checked : int
        Inequalities visited.
    """
    best = -np.inf
    b1 = b2 = b3 = -1
    checked = 0
    if structure == 0:
        lo = g * gsz
        hi = min(lo + gsz, nmem)
        for v in range(lo, hi):
            i = prow[v]
            j = pcol[v]
            xv = y[v] + shift  # x_ij - x_ik - x_jk = y_ij - y_ik - y_jk - shift
            for k in range(n):
                if k == i or k == j:
                    continue
                vik = base[k] + i if k < i else base[i] + k
                vjk = base[k] + j if k < j else base[j] + k
                val = xv - y[vik] - y[vjk] - 2.0 * shift
                if val > best:
                    best, b1, b2, b3 = val, v, vik, vjk
            checked += n - 2
    else:
        nt = 3 * tri.shape[0]
        lo = g * gsz
        hi = min(lo + gsz, nmem)
        for c in range(lo, hi):
            if c < nt:
                t = c // 3
                s = c - 3 * t
                a = tri[t, s]
                b = tri[t, (s + 1) % 3]
                d = tri[t, (s + 2) % 3]
                val = y[a] - y[b] - y[d]
                if val > best:
                    best, b1, b2, b3 = val, a, b, d
            else:
                w = c - nt
                a = wed[w, 0]
                b = wed[w, 1]
                val = 1.0 - y[a] - y[b]
                if val > best:
                    best, b1, b2, b3 = val, a, b, -1
        checked = hi - lo
    return best, b1, b2, b3, checked


@numba.njit(fastmath=_FM, cache=True)
def group_violations(y, shift, structure, n, base, prow, pcol, tri, wed, gsz, nmem,
                     ngroups, out):
    """``out[g]`` = violation of group ``g`` (:func:`check_group`) for every group;
    returns the index of the most violated group (FullTouch's check, LT Alg. 1)."""
    arg = 0
    for g in range(ngroups):
        out[g] = check_group(g, y, shift, structure, n, base, prow, pcol, tri, wed, gsz,
                             nmem)[0]
        if out[g] > out[arg]:
            arg = g
    return arg


# -------------------------------------------------------------------- steps
@numba.njit(fastmath=_FM, cache=True, inline="always")
def _obj_grad(v, x, objective, coef, target, wts):
    """A subgradient of the objective's term of variable ``v`` at ``x``."""
    if objective == 0:
        return coef[v]
    if objective == 1:
        e = x - target[v]
        return wts[v] if e > 0.0 else (-wts[v] if e < 0.0 else 0.0)
    return 2.0 * wts[v] * (x - target[v])


@numba.njit(fastmath=_FM, cache=True, inline="always")
def _add(buf, mark, touched, nt, v, val):
    """``buf[v] += val``, listing ``v`` in ``touched`` once (``mark``)."""
    if mark[v] == 0:
        mark[v] = 1
        touched[nt] = v
        nt += 1
    buf[v] += val
    return nt


@numba.njit(fastmath=_FM, cache=True, inline="always")
def _full_touch(y, shift, ct, hbuf, mark, touched, nh, structure, n, base, prow, pcol, tri,
                wed, gsz, nmem, ngroups, gamma):
    """Step 3b of :func:`lt_steps` for FullTouch (LT Alg. 1): every group checked, the
    subgradient of the most violated added to ``hbuf``; returns the touched count."""
    best = -np.inf
    a1 = a2 = a3 = -1
    for g in range(ngroups):
        val, i1, i2, i3, chk = check_group(g, y, shift, structure, n, base, prow,
                                           pcol, tri, wed, gsz, nmem)
        ct[1] += chk
        if val > best:
            best, a1, a2, a3 = val, i1, i2, i3
    if best > 0.0:
        sgn = 1.0 if a3 >= 0 else -1.0
        nh = _add(hbuf, mark, touched, nh, a1, gamma * sgn)
        nh = _add(hbuf, mark, touched, nh, a2, -gamma)
        if a3 >= 0:
            nh = _add(hbuf, mark, touched, nh, a3, -gamma)
    return nh


@numba.njit(fastmath=_FM, cache=True, inline="always")
def _update_p(y, shift, logp, cdf, mu, perm, ct, rng, sel, structure, n, base, prow, pcol,
              tri, wed, gsz, nmem, ngroups, kp, gamma, eta_p):
    """Step 4 of :func:`lt_steps`: check ``kp`` groups drawn uniformly, move ``log p``
    along the centred estimate and refresh the cached violations and the cumulative
    weights; returns the estimate's sample variance term."""
    vps = 0.0
    for j in range(kp):
        r = j + _below(rng, ngroups - j)
        tmp = perm[j]
        perm[j] = perm[r]
        perm[r] = tmp
    for j in range(kp):
        g = perm[j]
        val, i1, i2, i3, chk = check_group(g, y, shift, structure, n, base, prow,
                                           pcol, tri, wed, gsz, nmem)
        ct[1] += chk
        val = max(val, 0.0)
        sel[j] = val
        vps += (mu[g] - val) ** 2
    vps *= gamma * gamma * ngroups * ngroups / kp
    top = -np.inf
    for g in range(ngroups):
        logp[g] += eta_p * gamma * mu[g]
    for j in range(kp):
        g = perm[j]
        logp[g] += eta_p * gamma * ngroups / kp * (sel[j] - mu[g])
        mu[g] = sel[j]
    for g in range(ngroups):
        if logp[g] > top:
            top = logp[g]
    run = 0.0
    for g in range(ngroups):
        logp[g] -= top
        if logp[g] < -700.0:
            logp[g] = -700.0
        run += math.exp(logp[g])
        cdf[g] = run
    return vps


@numba.njit(fastmath=_FM, cache=True)
def lt_steps(y, acc, last, logp, cdf, mu, perm, st, ct, rng, gbuf, hbuf, mark, touched, sel,
             structure, n, base, prow, pcol, tri, wed, gsz, nmem, ngroups, vsz,
             objective, coef, target, wts, lo, hi, has_sum, gamma, eta_w, eta_p, t0,
             strong, full, kmax, nu, cost_f, cost_g, nsteps, max_work):
    """Run ``nsteps`` iterations of practical LightTouch (LT Alg. 4) or FullTouch
    (LT Alg. 1, ``full``) on ``min f(x) + gamma max(0, max_G g_G(x))`` over the box
    ``[lo, hi]`` (and ``sum(x) = n`` when ``has_sum``), or fewer once their work
    (constraint checks, the O(groups) arithmetic of ``p``, the objective terms) reaches
    ``max_work``; returns the number run.

    Iteration ``t`` (global, ``ct[t]``):

    1. step ``eta_t = eta_w / (1 + t/t0)`` (``strong``: LT Alg. 3/4 for a strongly
       convex ``f``) or ``eta_w / sqrt(1 + t/t0)``;
    2. minibatch sizes (LT §5.2): ``k_f = 2`` blocks of ``vsz`` variables, and
       ``k_g, k_p`` proportional to ``sqrt(eta v / c)`` of their averaged sample
       variances ``v`` and costs ``c`` (constraint checks, never the clock), scaled so
       that ``k_f = 2``, rounded, ``k_g >= 2``, ``k_p >= 1``, both at most ``kmax``;
    3. ``k_f`` stochastic gradients of ``f`` (a uniform block, scaled by the number of
       blocks) and ``k_g`` constraint subgradients ``gamma grad max(0, g_i)``,
       ``i ~ p`` (FullTouch: one, of the most violated group, all groups checked);
    4. ``p``: ``k_p`` groups ``S`` uniform without replacement (a partial Fisher-Yates
       shuffle of ``perm``), the centred estimate
       ``gamma mu + (gamma m / k_p) sum_{j in S} e_j (max(0, g_j) - mu_j)``, the cache
       ``mu_j`` refreshed on ``S``, and the multiplicative step
       ``log p += eta_p estimate`` (normalised; O(groups) arithmetic, LT §5.1);
    5. the step on the touched entries, projected on the box (and the sum row, by the
       shift); the running sums of the average are brought up to date lazily.

    All arrays are updated in place; ``gbuf``, ``hbuf`` and ``mark`` (length of ``y``)
    must be zero on entry and are zero on return; ``touched`` holds at least
    ``2 vsz + 3 max(kmax, 2)`` entries, ``sel`` at least ``kmax``. ``nmem`` is the number of
    members of the partition (pairs of a dense problem, family rows of an edge
    problem).
    """
    nvar = y.shape[0]
    nblocks = (nvar + vsz - 1) // vsz
    kf = 2
    work = 0.0
    done = 0
    for _ in range(nsteps):
        if work >= max_work:
            break
        done += 1
        checks0 = ct[1]
        ct[0] += 1
        t = ct[0]
        shift = st[0]
        st[1] += shift  # the average of the shift over iterations 1..t
        eta = eta_w / (1.0 + t / t0) if strong else eta_w / math.sqrt(1.0 + t / t0)
        # --- 2. minibatch sizes (LT §5.2)
        kg = 2
        kp = 1
        if not full and st[3] > 0.0:
            vf = st[2] / st[3]
            vg = st[4] / max(st[5], 1e-300)
            vp = st[6] / max(st[7], 1e-300)
            rf = math.sqrt(eta * vf / cost_f)
            if rf > 0.0:
                kg = int(round(2.0 * math.sqrt(eta * vg / cost_g) / rf))
                kp = int(round(2.0 * math.sqrt(eta_p * vp / cost_g) / rf))
            else:
                kg = kmax
                kp = kmax
            kg = max(min(kg, kmax), 2)  # drawn with replacement: 2 even for one group
            kp = min(max(kp, 1), kmax, ngroups)
        ct[2], ct[3], ct[4] = kf, (1 if full else kg), (0 if full else kp)
        # --- 3a. objective part: k_f uniform blocks, scaled by the number of blocks
        nt = 0
        sq = 0.0
        for _j in range(kf):
            b = _below(rng, nblocks)
            blo = b * vsz
            bhi = min(blo + vsz, nvar)
            for v in range(blo, bhi):
                gv = nblocks * _obj_grad(v, y[v] + shift, objective, coef, target, wts)
                sq += gv * gv
                nt = _add(gbuf, mark, touched, nt, v, gv / kf)
        ct[5] += kf
        mean_sq = 0.0
        for q in range(nt):
            mean_sq += gbuf[touched[q]] ** 2
        vfs = (sq - kf * mean_sq) / (kf - 1)
        # --- 3b. constraint part
        nh = nt
        gsq = 0.0
        if full:
            nh = _full_touch(y, shift, ct, hbuf, mark, touched, nh, structure, n, base, prow,
                             pcol, tri, wed, gsz, nmem, ngroups, gamma)
        else:
            total = cdf[ngroups - 1]
            for _j in range(kg):
                u = rng_uniform(rng) * total
                lo_i, hi_i = 0, ngroups - 1
                while lo_i < hi_i:  # first g with cdf[g] > u
                    mid = (lo_i + hi_i) // 2
                    if cdf[mid] > u:
                        hi_i = mid
                    else:
                        lo_i = mid + 1
                val, i1, i2, i3, chk = check_group(lo_i, y, shift, structure, n, base, prow,
                                                   pcol, tri, wed, gsz, nmem)
                ct[1] += chk
                if val > 0.0:
                    sgn = 1.0 if i3 >= 0 else -1.0
                    gsq += gamma * gamma * (3.0 if i3 >= 0 else 2.0)
                    nh = _add(hbuf, mark, touched, nh, i1, gamma * sgn / kg)
                    nh = _add(hbuf, mark, touched, nh, i2, -gamma / kg)
                    if i3 >= 0:
                        nh = _add(hbuf, mark, touched, nh, i3, -gamma / kg)
        hmean = 0.0
        for q in range(nh):
            hmean += hbuf[touched[q]] ** 2
        vgs = (gsq - kg * hmean) / (kg - 1) if not full else 0.0
        # --- 4. the distribution p (LightTouch only), at the same iterate
        vps = 0.0
        if not full:
            vps = _update_p(y, shift, logp, cdf, mu, perm, ct, rng, sel, structure, n, base,
                            prow, pcol, tri, wed, gsz, nmem, ngroups, kp, gamma, eta_p)
        # --- 5. the step, projected; the average's running sums first
        moved = 0.0
        for q in range(nh):
            v = touched[q]
            acc[v] += y[v] * (t - last[v])
            last[v] = t
            step = eta * (gbuf[v] + hbuf[v])
            gbuf[v] = 0.0
            hbuf[v] = 0.0
            mark[v] = 0
            nv = y[v] - step
            if not has_sum:
                if nv < lo:
                    nv = lo
                elif nv > hi:
                    nv = hi
            moved += y[v] - nv
            y[v] = nv
        if has_sum:
            st[0] = shift + moved / nvar
        work += (ct[1] - checks0) + 2.0 * vsz + (0 if full else ngroups)
        # --- variance averages (weights nu^age, LT §6.1)
        st[2] = vfs + nu * st[2]
        st[3] = 1.0 + nu * st[3]
        st[4] = vgs + nu * st[4]
        st[5] = 1.0 + nu * st[5]
        st[6] = vps + nu * st[6]
        st[7] = 1.0 + nu * st[7]
    return done


@numba.njit(cache=True)
def average(y, acc, last, t, t_start, shift_acc, out):
    """``out`` = the average of the iterates ``t_start + 1 .. t`` (LT Alg. 4 line 15);
    ``acc`` and ``shift_acc`` hold the sums since ``t_start``, ``last`` is at least
    ``t_start``."""
    for v in range(y.shape[0]):
        out[v] = (acc[v] + y[v] * (t - last[v]) + shift_acc) / (t - t_start)


# -------------------------------------------------------------- finishing rows
@numba.njit(cache=True, inline="always")
def _sift_down(score, rows, size, pos):
    while True:
        left = 2 * pos + 1
        if left >= size:
            return
        child = left
        if left + 1 < size and score[left + 1] < score[left]:
            child = left + 1
        if score[child] >= score[pos]:
            return
        score[pos], score[child] = score[child], score[pos]
        for c in range(rows.shape[1]):
            rows[pos, c], rows[child, c] = rows[child, c], rows[pos, c]
        pos = child


@numba.njit(fastmath=_FM, cache=True)
def _offer(score, rows, size, val, a, b, c):
    """Keep the ``rows.shape[0]`` largest scores in a min-heap; returns the size."""
    cap = score.shape[0]
    if size < cap:
        pos = size
        score[pos] = val
        rows[pos, 0], rows[pos, 1], rows[pos, 2] = a, b, c
        while pos > 0:
            parent = (pos - 1) // 2
            if score[parent] <= score[pos]:
                break
            score[pos], score[parent] = score[parent], score[pos]
            for k in range(3):
                rows[pos, k], rows[parent, k] = rows[parent, k], rows[pos, k]
            pos = parent
        return size + 1
    if val <= score[0]:
        return size
    score[0] = val
    rows[0, 0], rows[0, 1], rows[0, 2] = a, b, c
    _sift_down(score, rows, size, 0)
    return size


@numba.njit(fastmath=_FM, cache=True)
def top_active(x, structure, n, base, prow, pcol, tri, wed, nmem, floor, score, rows):
    """The inequalities of largest ``a_t'x - b_t`` (at least ``floor``), at most
    ``score.shape[0]`` of them, in no particular order: the rows the LP polish starts
    from (:mod:`metricopt.solvers.core.polish`). O(constraints) time, O(capacity) memory.

    ``rows`` gets ``(a, b, c)`` packed pair indices of ``x_a <= x_b + x_c`` (dense) or
    ``(id, -1, -1)`` family ids (edge problems). Returns the count.
    """
    size = 0
    if structure == 0:
        for v in range(nmem):
            i = prow[v]
            j = pcol[v]
            for k in range(n):
                if k == i or k == j:
                    continue
                vik = base[k] + i if k < i else base[i] + k
                vjk = base[k] + j if k < j else base[j] + k
                val = x[v] - x[vik] - x[vjk]
                if val >= floor:
                    size = _offer(score, rows, size, val, v, vik, vjk)
    else:
        nt = 3 * tri.shape[0]
        for c in range(nmem):
            if c < nt:
                t = c // 3
                s = c - 3 * t
                val = x[tri[t, s]] - x[tri[t, (s + 1) % 3]] - x[tri[t, (s + 2) % 3]]
            else:
                val = 1.0 - x[wed[c - nt, 0]] - x[wed[c - nt, 1]]
            if val >= floor:
                size = _offer(score, rows, size, val, c, -1, -1)
    return size
