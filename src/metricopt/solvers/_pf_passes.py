"""Project and Forget's projection passes: over the pairs' own rows, over the remembered
triangles of a dense problem (gathered to their pairs), and over an active list.

Each pass projects the remembered rows, then the per-pair rows, then forgets the rows
whose dual is zero (PF Alg. 7). In a recentred run (:func:`._regularised.recentre`, the
proximal point method on the LP) the passes recentre every ``recentre_every`` passes
(:data:`._proximal.PF_PASSES`; the dense layout's passes over the remembered triangles
only, not the support-sized layout's), as dykstra's passes do, instead of only before
each call's passes: a call's many passes otherwise solve one QP far beyond what its centre
is worth.
"""

import dataclasses
import time

import numpy as np

from . import _pf_oracles as O
from . import _regularised

__all__ = ["pair_pass", "dense_passes", "list_passes"]


#: Pairs from which :func:`pair_pass` runs in shares on the run's threads, and the
#: pairs of a share.
THREADED_PAIRS = 1 << 18


def pair_pass(st):
    """One pass over the per-variable constraints (dense duals, never forgotten).

    Each pair's rows involve that pair only, so from :data:`THREADED_PAIRS` pairs the pass
    runs in shares on the run's threads (:func:`metricopt._threads.run_workers`): every
    pair ends where the serial pass leaves it, whatever the thread count."""
    from .._threads import run_workers, thread_count
    from ._constraint_kernels import pair_pass, pair_pass_weights, sum_step

    x, f = st.x, st.f
    step, scale = (pair_pass, st.winv) if st.winv is not None \
        else (pair_pass_weights, st.w)
    fx = f if f is not None else x
    target = st.delta if st.delta is not None else x
    args = (st.lower, st.upper, f is not None, st.has_lower, st.has_upper)
    n = x.shape[0]
    if step is pair_pass and n >= THREADED_PAIRS and thread_count() > 1:
        bounds = np.arange(0, n + THREADED_PAIRS, THREADED_PAIRS).clip(max=n)
        parts = run_workers(lambda t: step(
            *(a[bounds[t]:bounds[t + 1]] for a in (x, scale, fx, target)),
            st.z_pair[:, bounds[t]:bounds[t + 1]], *args), bounds.shape[0] - 1)
        vmax = max(p[2] for p in parts)
        smax = max(p[3] for p in parts)
    else:
        _, _, vmax, smax = step(x, scale, fx, target, st.z_pair, *args)
    if st.sum_value is not None:
        st.z_sum, a, m = sum_step(x, st.winv, st.z_sum, float(st.sum_value))
        vmax, smax = max(vmax, a), max(smax, m)
    return float(vmax), float(smax)


_PAIR_KEYS = ("x", "winv", "f", "delta")


def dense_passes(st, active, k_max, budget, deadline, recentre_every=0):
    """Projection passes over the remembered triangles and their pairs only.

    The pairs that occur in the list are gathered into contiguous arrays
    (:func:`._pf_list.localise`); each pass projects the list, then the per-pair
    constraints of those pairs, then forgets. The other pairs' constraints do not
    interact with the list; they get one pass per outer iteration (the caller's full
    pair pass). Stops after ``k_max`` passes, once the passes' work
    (:func:`O.pass_work`) reaches ``budget`` (at least 2 passes), at ``deadline``, or
    when a pass changes no dual by more than ``1e-13`` (relative). A recentred run
    (``st.shift_x`` set) recentres the listed pairs every ``recentre_every`` passes
    (:func:`recentre_pairs`; 0: never).

    Returns ``(active, passes, smax)``.
    """
    from ._pf_list import globalise, localise

    if active.nc == 0:
        return active, 0, 0.0
    # the list is consumed: its positions become local ones in place (no copy of the
    # list's 20 bytes a row: 18.9 million rows after ca-HepPh's first call)
    used = localise(active.ta, active.tb, active.tc, active.nc, st.nvar)
    # the pairs of the list, gathered: a state of their own (no sum row among them)
    sub = dataclasses.replace(
        st, sum_value=None, z_pair=np.ascontiguousarray(st.z_pair[:, used]), shift_x=None,
        shift_f=None,
        **{k: (None if getattr(st, k) is None else getattr(st, k)[used]) for k in _PAIR_KEYS})
    if sub.winv is None:
        sub.winv = 1.0 / st.w[used]
    every = recentre_every if st.shift_x is not None else 0
    if every:  # the centre of the listed pairs moves with them
        sub.shift_x, sub.shift_f = st.shift_x[used], st.shift_f[used]
    lst = active
    scale = max(1.0, float(np.max(np.abs(sub.x))))
    smax_all = 0.0
    work = 0.0
    p = 0
    while p < k_max:
        work += O.pass_work(lst.nc, used.shape[0])
        _, smax, _ = lst.project(sub.x, sub.winv)
        _, s2 = pair_pass(sub)
        lst.forget()
        p += 1
        smax_all = max(smax_all, smax, s2)
        if max(smax, s2) <= 1e-13 * scale:
            break
        if (deadline is not None and time.perf_counter() >= deadline) or \
                (p >= 2 and work >= budget):
            break
        if every and p % every == 0 and p < k_max:
            _regularised.recentre(sub)
    st.x[used] = sub.x
    if st.f is not None:
        st.f[used] = sub.f
    st.z_pair[:, used] = sub.z_pair
    if every:
        st.shift_x[used], st.shift_f[used] = sub.shift_x, sub.shift_f
    globalise(used, lst.ta, lst.tb, lst.tc, lst.nc)
    # the rows kept, in arrays of their size (forgetting left the rest unused)
    k = lst.nc
    return O.TriangleList(*(a[:k].copy() for a in (lst.ta, lst.tb, lst.tc, lst.z)), k), p, \
        smax_all


def list_passes(st, active, k, budget, deadline):
    """At most ``k`` passes over the active list ``active`` and the pairs' own rows,
    forgetting after each; stops at ``deadline``, or from the second pass once the passes'
    work (:func:`O.pass_work`) reaches ``budget``. No recentring here: ca-GrQc
    (support-sized, Jaccard cc at the defaults) hovered at violation 0.4 with it every 5
    passes (limit at 300 s, against `optimal` in 83 s without).

    Returns ``(passes, smax)``: the passes made and the largest step.
    """
    smax_all, work, npass = 0.0, 0.0, 0
    for p in range(k):
        work += O.pass_work(active.nc, st.nvar)
        _, smax, _ = active.project(st.x, st.winv)
        _, s2 = pair_pass(st)
        active.forget()
        smax_all, npass = max(smax_all, smax, s2), p + 1
        if deadline is not None and time.perf_counter() >= deadline:
            break
        if p >= 1 and work >= budget:
            break
    return npass, smax_all
