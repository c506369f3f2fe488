"""Matrix Market coordinate files read as graphs.

Supported banners: ``%%MatrixMarket matrix coordinate {pattern,real,integer}
{general,symmetric,skew-symmetric}``. Node ``i`` is labelled ``str(i)`` (1-based) and every
declared node exists, with or without edges. Skew-symmetric files are read as patterns.
"""

import csv
import io
import math

import numpy as np
import pandas as pd

from metricopt._memory import check_memory
from metricopt.exceptions import InputError
from metricopt.io._records import Records, bad_line, data_lines, strip_comments

__all__ = ["parse_mtx"]

_FIELDS = ("pattern", "real", "integer")
_SYMMETRIES = ("general", "symmetric", "skew-symmetric")


def parse_mtx(text, path, *, keep_values=False):
    """Parse a Matrix Market coordinate file.

    Parameters
    ----------
    text : str
        The file's text, line endings normalised to ``"\\n"``.
    path : str or Path
        Used in error messages.
    keep_values : bool, default=False
        Return the entries' values as weights (real and integer fields only).

    Returns
    -------
    Records
    """
    field, symmetry, lines = _header(text, path)
    n, nnz, body, first_lineno = _size(lines, path)
    ncols = 2 if field == "pattern" else 3
    keep_values = keep_values and field != "pattern" and symmetry != "skew-symmetric"
    parsed = _entries_fast(body, ncols, n, keep_values)
    if parsed is None:
        parsed = _entries_slow(body, first_lineno, path, ncols, n, keep_values)
    rows, cols, values = parsed
    if len(rows) != nnz:
        raise InputError(f"{path}: the header declares {nnz} entries but the file has {len(rows)}")
    # every declared row is a node (isolated ones too): about 100 bytes each while read
    check_memory(100 * n, f"{path}: the header declares {n:,} nodes, which")
    labels = np.arange(1, n + 1).astype(str).astype(object)
    return Records(rows - 1, cols - 1, labels, values, len(rows))


def _header(text, path):
    first, _, rest = text.partition("\n")
    words = first.lower().split()
    # Network Repository writes the banner with a single "%"
    if len(words) != 5 or words[0] not in ("%%matrixmarket", "%matrixmarket") or words[1] != "matrix":
        raise InputError(f"{path}: not a Matrix Market file (bad or missing %%MatrixMarket header)")
    layout, field, symmetry = words[2:]
    if layout != "coordinate":
        raise InputError(f"{path}: only Matrix Market 'coordinate' files are supported, not {layout!r}")
    if field not in _FIELDS:
        raise InputError(
            f"{path}: unsupported Matrix Market field {field!r} (use pattern, real or integer)"
        )
    if symmetry not in _SYMMETRIES:
        raise InputError(f"{path}: unsupported Matrix Market symmetry {symmetry!r}")
    return field, symmetry, rest


def _size(rest, path):
    """Find the size line; return ``(n, nnz, body, first line number of body)``."""
    pos, lineno = 0, 2
    while pos <= len(rest):
        end = rest.find("\n", pos)
        end = len(rest) if end < 0 else end
        line = rest[pos:end]
        stripped = line.strip()
        if stripped and stripped[0] != "%":
            return (*_size_values(line, lineno, path), rest[end + 1 :], lineno + 1)
        pos, lineno = end + 1, lineno + 1
    raise InputError(f"{path}: Matrix Market size line is missing")


def _size_values(line, lineno, path):
    try:
        rows, cols, nnz = (int(t) for t in line.split())
    except ValueError:
        raise bad_line(path, lineno, line, "expected 'rows columns entries'") from None
    if rows != cols:
        raise InputError(f"{path}: the matrix is {rows} x {cols}; a graph needs a square matrix")
    if rows < 0 or nnz < 0:
        raise bad_line(path, lineno, line)
    return rows, nnz


def _entries_fast(body, ncols, n, keep_values):
    body = strip_comments(body)
    if not body.strip():
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, (np.empty(0) if keep_values else None)
    try:
        frame = pd.read_csv(
            io.StringIO(body), sep=r"\s+", header=None, engine="c",
            quoting=csv.QUOTE_NONE, keep_default_na=False, na_values=[], low_memory=False,
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, OverflowError):
        return None
    if frame.shape[1] != ncols or frame[0].dtype != np.int64 or frame[1].dtype != np.int64:
        return None
    rows, cols = frame[0].to_numpy(), frame[1].to_numpy()
    if min(rows.min(), cols.min()) < 1 or max(rows.max(), cols.max()) > n:
        return None
    values = None
    if ncols == 3:
        column = frame[2]
        if column.dtype.kind not in "iuf":
            return None
        values = column.to_numpy(dtype=np.float64)
        if keep_values and not np.isfinite(values).all():
            return None
    return rows, cols, (values if keep_values else None)


def _entries_slow(body, first_lineno, path, ncols, n, keep_values):
    rows, cols, values = [], [], []
    for lineno, line, tokens in data_lines(body, first_lineno):
        if len(tokens) != ncols:
            raise bad_line(path, lineno, line)
        try:
            i, j = int(tokens[0]), int(tokens[1])
            value = float(tokens[2]) if ncols == 3 else 1.0
        except ValueError:
            raise bad_line(path, lineno, line) from None
        for index in (i, j):
            if not 1 <= index <= n:
                raise InputError(f"{path}, line {lineno}: index {index} is outside 1..{n}")
        if keep_values and not math.isfinite(value):
            raise InputError(f"{path}, line {lineno}: weight is not finite")
        rows.append(i)
        cols.append(j)
        values.append(value)
    out = (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))
    return (*out, np.array(values, dtype=np.float64) if keep_values else None)
