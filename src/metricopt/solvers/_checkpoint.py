"""One checkpoint format for the iterative backends: safe, atomic, bound to its instance.

A checkpoint is an uncompressed ``.npz`` archive holding

* ``__header__``: UTF-8 JSON as a ``uint8`` array: the format tag and version, the backend
  that wrote it, the instance it belongs to (problem kind, nodes, variables and a BLAKE2b
  digest of the problem data and parameters), and the backend's own metadata (counters
  and the options a resumed run must repeat);
* the backend's state arrays, numeric only. A float array of at least
  :data:`SPARSE_MIN_SIZE` entries of which fewer than a third are nonzero (dual
  variables, mostly) is stored as positions and values (``NAME@idx``, ``NAME@val``,
  ``NAME@size``) and restored bit for bit (``-0.0`` counts as nonzero).

Nothing is unpickled: archives are read with ``allow_pickle=False``, so a file that holds
object arrays is refused, never executed. Every file that cannot be read, is not a
checkpoint, was written by another backend or for another instance raises
:class:`~metricopt.exceptions.InputError` with a one-line message; so does one whose
state is not whole: the backends check every array they resume from
(:func:`state_array`: present, shape, dtype, finite values, indices in range) and every
header field (:func:`header_field`; the counters ``iteration`` and ``seconds`` here),
since a kernel trusts its arrays and a damaged one would run a wrong solve, or read out
of bounds. Writes go through
:func:`metricopt.io.reports.atomic_write` (temporary file, then rename).

The content depends only on the iteration state; the clock decides only when a backend
writes one.
"""

import hashlib
import json
import math
import zipfile

import numpy as np

from ..exceptions import InputError

__all__ = ["FORMAT", "VERSION", "problem_digest", "write_checkpoint", "read_checkpoint",
           "SPARSE_MIN_SIZE", "state_array", "header_field", "header_history",
           "read_history", "MAX_COUNT"]

FORMAT = "metricopt-checkpoint"
VERSION = 1
#: Float arrays from this size on are stored sparsely when mostly zero.
SPARSE_MIN_SIZE = 4096
_HEADER = "__header__"
_SEP = "@"
#: Largest count (iterations, streaks) a checkpoint's header may hold.
MAX_COUNT = 2**53
_REQUIRED = object()


def _hash_array(h, name, arr):
    arr = np.ascontiguousarray(arr)
    h.update(f"{name}:{arr.dtype.str}:{arr.shape}".encode())
    h.update(memoryview(arr).cast("B"))


def problem_digest(problem):
    """BLAKE2b digest of a problem's data and parameters (hex string).

    Covers the kind, structure, objective, sizes, bounds, the sum constraint, the
    builder parameters and the arrays ``cost``, ``weights``, ``target``, ``pairs``,
    ``triangles`` and ``wedges``: two problems with the same digest have the same
    feasible set and objective.

    Parameters
    ----------
    problem : MetricProblem

    Returns
    -------
    str
    """
    h = hashlib.blake2b(digest_size=16)
    scalars = {
        "kind": problem.kind, "n": int(problem.n), "structure": problem.structure,
        "objective": problem.objective, "constant": float(problem.constant),
        "lower": float(problem.lower), "upper": float(problem.upper),
        "sum_value": None if problem.sum_value is None else float(problem.sum_value),
        "params": {str(k): repr(v) for k, v in sorted(problem.params.items())},
    }
    h.update(json.dumps(scalars, sort_keys=True, default=repr).encode())
    for name in ("cost", "weights", "target", "pairs", "triangles", "wedges"):
        arr = getattr(problem, name, None)
        if arr is not None:
            _hash_array(h, name, np.asarray(arr))
    return h.hexdigest()


def _instance(problem, digest):
    return {"kind": problem.kind, "n": int(problem.n),
            "n_variables": int(problem.n_variables), "digest": digest}


def _jsonable(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # JSON has no inf/nan; read back by _from_json
    return value


def _from_json(value):
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _from_json(v) for k, v in value.items()}
    return value


def _pack(name, arr, out):
    arr = np.asarray(arr)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"checkpoint array {name!r} has dtype {arr.dtype}; only numbers are stored")
    if _SEP in name or name == _HEADER:
        raise ValueError(f"reserved checkpoint array name {name!r}")
    if arr.dtype.kind == "f" and arr.ndim == 1 and arr.size >= SPARSE_MIN_SIZE:
        bits = arr.view(np.uint64 if arr.dtype.itemsize == 8 else np.uint32)
        idx = np.flatnonzero(bits)
        if 3 * idx.size < arr.size:
            itype = np.int32 if arr.size < 2**31 else np.int64
            out[f"{name}{_SEP}idx"] = idx.astype(itype)
            out[f"{name}{_SEP}val"] = arr[idx]
            out[f"{name}{_SEP}size"] = np.array(arr.size, dtype=np.int64)
            return
    out[name] = arr


def write_checkpoint(path, *, backend, problem, digest, meta, arrays):
    """Write a checkpoint atomically.

    Parameters
    ----------
    path : str or os.PathLike
    backend : str
        Name of the backend writing it (a resume by another backend is refused).
    problem : MetricProblem
    digest : str
        :func:`problem_digest` of ``problem`` (computed once per run by the caller).
    meta : dict
        JSON-serialisable counters and options (numbers, strings, lists, dicts).
    arrays : dict of str to ndarray
        Numeric state arrays; ``None`` values are skipped.

    Returns
    -------
    int
        Bytes written.
    """
    from .._atomic import atomic_write

    header = {"format": FORMAT, "version": VERSION, "backend": backend,
              "instance": _instance(problem, digest), "meta": _jsonable(meta)}
    out = {_HEADER: np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)}
    for name, arr in arrays.items():
        if arr is not None:
            _pack(name, arr, out)
    with atomic_write(path, "wb") as fh:
        np.savez(fh, **out)
        size = fh.tell()
    return int(size)


def _refuse(path, why):
    return InputError(f"cannot resume from {path}: {why}")


def _load_all(path):
    """Every array of the archive, read eagerly (a truncated member fails here)."""
    try:
        data = np.load(path, allow_pickle=False)
        if not hasattr(data, "files"):
            raise _refuse(path, "not a metricopt checkpoint (a single .npy array)")
        with data:
            return {name: data[name] for name in data.files}
    except InputError:
        raise
    except OSError as exc:
        raise _refuse(path, exc.strerror or "the file cannot be read") from None
    except EOFError:
        raise _refuse(path, "the file is empty") from None
    except (ValueError, zipfile.BadZipFile, KeyError, RuntimeError, MemoryError,
            TypeError) as exc:
        text = str(exc).split("\n")[0]
        if "pickle" in text:
            text = "not an archive of numbers; pickled Python objects are never loaded"
        raise _refuse(path, f"not a readable metricopt checkpoint ({text})") from None


def read_checkpoint(path, *, backend, problem, digest):
    """Read and validate a checkpoint written by :func:`write_checkpoint`.

    Parameters
    ----------
    path : str or os.PathLike
    backend : str
        The backend that is resuming; it must be the one that wrote the file.
    problem : MetricProblem
    digest : str
        :func:`problem_digest` of ``problem``.

    Returns
    -------
    meta : dict
        The backend's metadata.
    arrays : dict of str to ndarray
        The state arrays (sparse ones restored to dense).

    Raises
    ------
    InputError
        The file cannot be read, is not a checkpoint, or belongs to another backend or
        instance.
    """
    raw = _load_all(path)
    header_bytes = raw.pop(_HEADER, None)
    if header_bytes is None or header_bytes.dtype != np.uint8 or header_bytes.ndim != 1:
        raise _refuse(path, "not a metricopt checkpoint (no checkpoint header; a run's "
                            "solution.npz is not a checkpoint)")
    try:
        header = json.loads(header_bytes.tobytes().decode("utf-8"))
        fmt, version = header["format"], header["version"]
        writer, inst, meta = header["backend"], header["instance"], header["meta"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise _refuse(path, "its checkpoint header is damaged") from None
    if fmt != FORMAT:
        raise _refuse(path, "not a metricopt checkpoint")
    if version != VERSION:
        raise _refuse(path, f"checkpoint format version {version!r}; this metricopt reads "
                            f"version {VERSION}")
    if writer != backend:
        raise _refuse(path, f"it was written by method {writer!r}, not {backend!r}")
    want = _instance(problem, digest)
    if not isinstance(inst, dict):
        raise _refuse(path, "its checkpoint header is damaged")
    if (inst.get("kind"), inst.get("n"), inst.get("n_variables")) != (
            want["kind"], want["n"], want["n_variables"]):
        raise _refuse(path, f"it belongs to a {inst.get('kind')} problem on {inst.get('n')} "
                            f"nodes with {inst.get('n_variables')} variables, not to this "
                            f"{want['kind']} problem on {want['n']} nodes with "
                            f"{want['n_variables']} variables")
    if inst.get("digest") != digest:
        raise _refuse(path, "it belongs to another instance of the same size (different "
                            "graph data or problem parameters)")
    if not isinstance(meta, dict):
        raise _refuse(path, "its checkpoint header is damaged")
    arrays = {}
    try:
        for name, arr in raw.items():
            base, sep, part = name.partition(_SEP)
            if not sep:
                arrays[name] = arr
            elif part == "idx":
                size = int(raw[f"{base}{_SEP}size"])
                val = raw[f"{base}{_SEP}val"]
                full = np.zeros(size, dtype=val.dtype)
                full[arr] = val
                arrays[base] = full
    except (KeyError, IndexError, ValueError, TypeError):
        raise _refuse(path, "its sparse arrays are damaged") from None
    meta = _from_json(meta)
    header_field(path, meta, "iteration", "count")
    header_field(path, meta, "seconds", "seconds")
    return meta, arrays


_WHAT = {
    "count": f"an integer from 0 to {MAX_COUNT}",
    "seconds": "a finite number of seconds >= 0",
    "positive": "a finite number > 0",
    "real": "a finite number",
    "real_or_none": "a finite number or null",
}


def header_field(path, meta, name, what, default=_REQUIRED):
    """A field of a checkpoint's metadata, checked.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint (for the message).
    meta : dict
    name : str
    what : {"count", "seconds", "positive", "real", "real_or_none"}
        An int in ``[0, MAX_COUNT]``; a finite float >= 0; > 0; any finite float; or
        that or None.
    default : optional
        The value of a missing field; without it a missing field is an error.

    Returns
    -------
    int, float or None

    Raises
    ------
    InputError
        The field is missing or out of range.
    """
    if name not in meta:
        if default is _REQUIRED:
            raise _refuse(path, f"its header has no {name!r} (the checkpoint is incomplete)")
        return default
    value = meta[name]
    if what == "real_or_none" and value is None:
        return None
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if what == "count":
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT
        if ok:
            return int(value)
    elif number and math.isfinite(value) and (
            what in ("real", "real_or_none") or (value >= 0 if what == "seconds" else value > 0)):
        return float(value)
    raise _refuse(path, f"its header field {name!r} is {value!r}, not {_WHAT[what]}")


def header_history(path, meta):
    """The iteration records of the runs before (``meta["history"]``), checked: a list
    of records, each a dict whose ``iteration`` is at most the header's. A checkpoint
    written before records were kept has none (empty list).

    Raises
    ------
    InputError
        The records are damaged.
    """
    history = meta.get("history", [])
    last = meta.get("iteration")
    if not isinstance(history, list) or not all(
            isinstance(r, dict) and isinstance(r.get("iteration", 0), int)
            and not isinstance(r.get("iteration", 0), bool)
            and (last is None or 0 <= r.get("iteration", 0) <= last) for r in history):
        raise _refuse(path, "its iteration records ('history' in its header) are damaged")
    return history


def read_history(path):
    """The iteration records a checkpoint holds (read from its header alone), or an
    empty list when the file has none or cannot be read (a resume from it then fails
    with the reason)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(data[_HEADER].tobytes().decode("utf-8"))
        meta = _from_json(header["meta"])
        return header_history(path, meta)
    except Exception:  # noqa: BLE001 - the backend's own read reports what is wrong
        return []


def state_array(path, arrays, name, *, dtype, shape=None, low=None, high=None):
    """A state array of a checkpoint, checked.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint (for the message).
    arrays : dict of str to ndarray
        As :func:`read_checkpoint` returns them.
    name : str
    dtype : numpy dtype
        The exact dtype the backend's kernels take.
    shape : tuple or None
        The shape, with ``None`` for an axis of any length; None: any 1-d array; ``()``:
        a scalar (also stored as one element).
    low, high : int or None
        Integer arrays: every value in ``[low, high)``. Float arrays must be finite.

    Returns
    -------
    ndarray
        C-contiguous.

    Raises
    ------
    InputError
        The array is missing, of another shape or dtype, or holds values out of range.
    """
    if name not in arrays:
        raise _refuse(path, f"it holds no array {name!r} (the checkpoint is incomplete)")
    arr = np.ascontiguousarray(arrays[name])
    dtype = np.dtype(dtype)
    if arr.dtype != dtype:
        raise _refuse(path, f"its array {name!r} has dtype {arr.dtype}, not {dtype}")
    want = (None,) if shape is None else tuple(shape)
    if want == () and arr.shape == (1,):
        arr = arr.reshape(())
    if arr.ndim != len(want) or any(w is not None and w != a for w, a in zip(want, arr.shape)):
        need = "x".join("any" if w is None else str(w) for w in want) or "a scalar"
        raise _refuse(path, f"its array {name!r} has shape {arr.shape}, where this problem "
                            f"needs {need}")
    if arr.dtype.kind == "f" and arr.size and not np.isfinite(arr).all():
        raise _refuse(path, f"its array {name!r} holds values that are not finite")
    if arr.dtype.kind in "iu" and arr.size and (
            (low is not None and arr.min() < low) or (high is not None and arr.max() >= high)):
        raise _refuse(path, f"its array {name!r} holds values outside "
                            f"[{low if low is not None else '-inf'}, "
                            f"{high if high is not None else 'inf'})")
    return arr
