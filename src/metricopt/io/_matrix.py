"""Dense dissimilarity matrices (``.npy`` and CSV) for metric nearness: reading, and
writing a repaired matrix in the same formats."""

import io
import zipfile

import numpy as np

from metricopt.exceptions import InputError
from metricopt.graph import Dissimilarity
from metricopt.io._source import decode_text

__all__ = ["matrix_from_npy", "matrix_from_csv", "make_dissimilarity", "write_matrix",
           "MATRIX_SUFFIXES"]

#: Suffixes :func:`write_matrix` writes.
MATRIX_SUFFIXES = (".npy", ".csv")

SYMMETRY_RTOL = 1e-9


def matrix_from_npy(data, path):
    """Load a 2-D numeric array from ``.npy`` bytes; labels are ``"0".."n-1"``."""
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError, MemoryError):
        raise InputError(f"{path}: not a valid .npy file") from None
    if not isinstance(array, np.ndarray):
        raise InputError(f"{path}: not a valid .npy file")
    if array.dtype.kind not in "biuf":
        raise InputError(f"{path}: expected a real numeric matrix, got dtype {array.dtype}")
    _check_square(array.shape, path)
    return array.astype(np.float64), None


def matrix_from_csv(data, path):
    """Parse a CSV (or whitespace-separated) numeric matrix with an optional header row.

    The first row is a header of labels when it holds a non-number, or when the file
    has one more row than columns.
    """
    rows = list(_csv_rows(decode_text(data, path)))
    if not rows:
        raise InputError(f"{path}: no matrix data found")
    header = None
    if len(rows) == len(rows[0][1]) + 1 or not all(_is_number(t) for t in rows[0][1]):
        header = [_unquote(t) for t in rows[0][1]]
        rows = rows[1:]
    width = len(header) if header is not None else len(rows[0][1])
    values = np.empty((len(rows), width))
    for i, (lineno, tokens) in enumerate(rows):
        if len(tokens) != width:
            raise InputError(f"{path}, line {lineno}: expected {width} values, found {len(tokens)}")
        values[i] = _row_values(tokens, i, path)
    _check_square(values.shape, path)
    return values, header


def _csv_rows(text):
    """Yield ``(lineno, tokens)`` for non-blank, non-comment lines."""
    for lineno, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#%":
            continue
        tokens = stripped.split(",") if "," in stripped else stripped.split()
        yield lineno, [t.strip() for t in tokens]


def _is_number(token):
    try:
        float(token)
    except ValueError:
        return False
    return True


def _unquote(token):
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'":
        return token[1:-1]
    return token


def _row_values(tokens, i, path):
    try:
        return np.array(tokens, dtype=np.float64)
    except ValueError:
        j = next(j for j, t in enumerate(tokens) if not _is_number(t))
        raise InputError(f"{path}: entry [{i}, {j}] is not a number: {tokens[j]!r}") from None


def _check_square(shape, path):
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f"{path}: expected a square matrix, got shape {tuple(shape)}")
    if shape[0] < 2:
        raise InputError(f"{path}: the matrix must be at least 2 x 2, got {shape[0]} x {shape[1]}")


def _first(mask):
    i, j = np.argwhere(mask)[0]
    return int(i), int(j)


def _check_values(values, path):
    """Finite everywhere, symmetric within a relative 1e-9, non-negative off the diagonal."""
    bad = ~np.isfinite(values)
    if bad.any():
        i, j = _first(bad)
        raise InputError(f"{path}: entry [{i}, {j}] is not finite ({float(values[i, j])})")
    scale = np.maximum(np.abs(values), np.abs(values.T))
    asym = np.abs(values - values.T) > SYMMETRY_RTOL * scale
    if asym.any():
        i, j = _first(asym)
        raise InputError(
            f"{path}: the matrix is not symmetric: entry [{i}, {j}] = {float(values[i, j])!r} "
            f"but [{j}, {i}] = {float(values[j, i])!r}"
        )
    negative = values < 0
    np.fill_diagonal(negative, False)
    if negative.any():
        i, j = _first(negative)
        raise InputError(f"{path}: entry [{i}, {j}] is negative ({float(values[i, j])!r})")


def _check_labels(labels, n, path):
    if len(labels) != n:
        raise InputError(f"{path}: the header has {len(labels)} labels for a {n} x {n} matrix")
    seen = set()
    for label in labels:
        if label in seen:
            raise InputError(f"{path}: duplicate label {label!r} in the header row")
        seen.add(label)


def make_dissimilarity(values, labels, path, *, name, fmt, gzipped):
    """Check a square matrix and wrap it as a :class:`~metricopt.graph.Dissimilarity`.

    The matrix is symmetrised (mean of the two triangles) and its diagonal set to zero.
    """
    n = values.shape[0]
    _check_values(values, path)
    if labels is None:
        labels = [str(i) for i in range(n)]
    _check_labels(labels, n, path)
    values = (values + values.T) / 2
    np.fill_diagonal(values, 0.0)
    summary = {
        "path": str(path),
        "format": fmt,
        "gzip": bool(gzipped),
        "weighted": False,
        "input_nodes": n,
        "kept_nodes": n,
        "message": f"read a {n} x {n} dissimilarity matrix",
    }
    return Dissimilarity(values, np.array(labels, dtype=object), name=name, summary=summary)


def write_matrix(path, values, labels=None):
    """Write a square matrix as ``.npy`` or as CSV with a header row of labels.

    Both read back with :func:`metricopt.io.read_dissimilarity`. Written atomically
    (temporary file, then rename).

    Parameters
    ----------
    path : str or os.PathLike
        Ends in ``.npy`` or ``.csv``.
    values : ndarray of shape (n, n)
    labels : sequence of length n or None
        CSV header (default: ``0..n-1``); not stored in ``.npy``.

    Returns
    -------
    pathlib.Path
    """
    from pathlib import Path

    from metricopt.exceptions import InvalidParameterError
    from metricopt.io.reports import atomic_write

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in MATRIX_SUFFIXES:
        raise InvalidParameterError(
            f"cannot tell the matrix format of {str(path)!r}: use a name ending in "
            f"{' or '.join(MATRIX_SUFFIXES)}")
    values = np.asarray(values, dtype=np.float64)
    if suffix == ".npy":
        buf = io.BytesIO()
        np.save(buf, values, allow_pickle=False)
        with atomic_write(path, "wb") as fh:
            fh.write(buf.getvalue())
        return path
    labels = range(values.shape[0]) if labels is None else labels
    header = ",".join(_csv_label(lab) for lab in labels)
    with atomic_write(path, "w") as fh:
        fh.write(header + "\n")
        for row in values:
            fh.write(",".join(repr(float(v)) for v in row) + "\n")
    return path


def _csv_label(label):
    """A header label; a numeric one is quoted so that the header reads as labels."""
    text = str(label)
    return f'"{text}"' if _is_number(text) else text
