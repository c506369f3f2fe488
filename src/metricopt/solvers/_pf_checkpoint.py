"""Project and Forget's checkpoints: write the iteration state, read it back checked.

The format is the shared one of :mod:`._checkpoint` (an ``.npz`` of numbers with a JSON
header, bound to the problem instance by a digest, never pickled); every array is checked
against the problem on reading, so a damaged or partial file is refused with one line.
The dense and support-sized layouts keep a triangle list, sparse and edge problems an
active list of cycles and wedges.
"""

import numpy as np

from ..exceptions import InputError, InvalidParameterError
from . import _checkpoint
from . import _pf_oracles as O

__all__ = ["write_checkpoint", "read_header", "read_triangle_list", "read_state",
           "read_checkpoint", "resumed_counters"]


def write_checkpoint(path, st, active, counters, problem, digest, extra=None):
    """Write the whole iteration state (:mod:`metricopt.solvers._checkpoint`); ``extra``
    adds a layout's own arrays."""
    arrays = dict(x=st.x, z_pair=st.z_pair, z_sum=np.array(st.z_sum), f=st.f)
    if st.shift_x is not None:  # a proximal run's centre
        arrays.update(shift_x=st.shift_x, shift_f=st.shift_f)
    arrays.update(active.arrays())
    arrays.update(extra or {})
    return _checkpoint.write_checkpoint(path, backend="project-forget", problem=problem,
                                        digest=digest, meta=counters, arrays=arrays)


def read_header(path, st, problem, digest):
    """The checked header and the arrays of a project-forget checkpoint of ``problem``;
    sets ``st.gamma`` (an LP stage may have grown it: the arrays are at its scale)."""
    meta, data = _checkpoint.read_checkpoint(path, backend="project-forget",
                                             problem=problem, digest=digest)
    first = _checkpoint.header_field(path, meta, "gamma_start", "positive",
                         meta.get("gamma") if "gamma" in meta else None)
    if first != st.gamma:
        raise InvalidParameterError(
            f"checkpoint {path!r} was written with gamma={first}; resume with the same gamma")
    st.gamma = _checkpoint.header_field(path, meta, "gamma", "positive")
    _checkpoint.header_field(path, meta, "triangle_streak", "count", 0)
    worst = meta.get("path_worst")  # the cycle search's last answer (may be -inf)
    if worst is not None and (not isinstance(worst, (int, float)) or isinstance(worst, bool)
                              or worst != worst):
        raise InputError(f"cannot resume from {path}: its header field 'path_worst' is "
                         f"{worst!r}, not a number or null")
    return meta, data


def read_triangle_list(path, data, nvar):
    """The remembered triangles of a checkpoint (positions checked against ``nvar``)."""
    from ._pf_list import MAX_POSITION

    def load(name, shape=None, dtype=np.float64, **bounds):
        return _checkpoint.state_array(path, data, name, dtype=dtype, shape=shape, **bounds).copy()

    ta = load("tri_a", dtype=np.int32, low=0, high=nvar)
    tb = load("tri_b", ta.shape, np.int32, low=0, high=nvar)
    tc = load("tri_c", ta.shape, np.int32, low=0, high=3 * MAX_POSITION)
    if tc.size and (tc & (MAX_POSITION - 1)).max() >= nvar:
        raise InputError(f"cannot resume from {path}: its array 'tri_c' holds "
                         f"positions outside [0, {nvar})")
    return O.TriangleList.from_arrays(ta, tb, tc, load("tri_z", ta.shape))


def read_state(path, data, st):
    """Restore the QP arrays of ``st`` (its shapes) from a checkpoint's ``data``."""
    def load(name, shape):
        return _checkpoint.state_array(path, data, name, dtype=np.float64, shape=shape).copy()

    st.x = load("x", st.x.shape)
    st.z_pair = load("z_pair", st.z_pair.shape)
    st.z_sum = float(load("z_sum", ()))
    if st.f is not None:
        st.f = load("f", st.f.shape)
    if "shift_x" in data:
        st.shift_x, st.shift_f = load("shift_x", st.x.shape), load("shift_f", st.x.shape)


def read_checkpoint(path, st, problem, digest):
    """Restore ``st`` and the active list from a checkpoint; every array is checked
    against this problem (:func:`._checkpoint.state_array`), so a damaged or partial
    file is refused."""
    meta, data = read_header(path, st, problem, digest)
    nvar = st.x.shape[0]
    read_state(path, data, st)
    if problem.structure == "dense":
        return meta, read_triangle_list(path, data, nvar)

    def load(name, shape=None, dtype=np.float64, **bounds):
        return _checkpoint.state_array(path, data, name, dtype=dtype, shape=shape, **bounds).copy()

    kind = load("act_kind", dtype=np.uint8, low=0, high=2)
    off = load("act_off", (kind.shape[0] + 1,), np.int64, low=0)
    mem = load("act_mem", dtype=np.int64, low=0, high=nvar)
    if off[0] != 0 or off[-1] != mem.shape[0] or np.any(np.diff(off) < 1):
        raise InputError(f"cannot resume from {path}: its array 'act_off' does not "
                         f"delimit the constraints' members")
    return meta, O.ActiveList.from_arrays(off, mem, kind, load("act_z", kind.shape))


def resumed_counters(counters, meta, path):
    """Fill a run's ``counters`` from a checkpoint's header ``meta``."""
    counters["iteration"] = int(meta["iteration"])
    counters["seconds"] = float(meta["seconds"])
    counters["triangle_streak"] = int(meta.get("triangle_streak", 0))
    counters["path_worst"] = meta.get("path_worst")
    counters["history"] = _checkpoint.header_history(path, meta)
    counters["stall_watch"] = meta.get("stall_watch")
    counters["stage_gaps"] = meta.get("stage_gaps")
    counters["proximal"] = _checkpoint.header_field(path, meta, "proximal", "count", 0)
