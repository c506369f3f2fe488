"""SNAP-style edge lists: ``u v`` or ``u v weight`` per line.

The whole file is parsed at once with pandas; if anything looks wrong (ragged lines,
a bad or non-finite weight), a line-by-line pass finds and reports the first bad line.
"""

import csv
import io
import math
import re

import numpy as np
import pandas as pd

from metricopt.exceptions import InputError
from metricopt.io._records import (
    Records,
    bad_line,
    data_lines,
    encode_int_labels,
    encode_labels,
    strip_comments,
)

__all__ = ["parse_edgelist"]

# An integer token written in a non-canonical way ("+3", "007", "-0"): such labels must
# keep their spelling, so the numeric fast path is not used when one may be present.
_NONCANONICAL = re.compile(r"(?:^|[ \t])(?:\+|-?0[0-9]|-0(?=[ \t\n]|$))", re.M)
_PLAIN_INTEGER = re.compile(r"-?[0-9]+")
_POWERS_OF_TEN = 10 ** np.arange(1, 19, dtype=np.int64)


def parse_edgelist(text, path, *, parse_weights=True):
    """Parse an edge list.

    Parameters
    ----------
    text : str
        The file's text, line endings normalised to ``"\\n"``.
    path : str or Path
        Used in error messages.
    parse_weights : bool, default=True
        Parse and check a third column as float weights; when False it is ignored.

    Returns
    -------
    Records
        ``weights`` is None unless the lines have a third column and ``parse_weights``.
    """
    body = strip_comments(text.replace(",", " "))
    if not body.strip():
        return _empty()
    records = _parse_fast(body, parse_weights)
    if records is None:
        records = _parse_slow(text, path, parse_weights)
    return records


def _empty():
    empty = np.empty(0, dtype=np.int64)
    return Records(empty, empty, np.empty(0, dtype=object), None, 0)


def _read_frame(body, labels_as_str):
    try:
        return pd.read_csv(
            io.StringIO(body),
            sep=r"\s+",
            header=None,
            engine="c",
            quoting=csv.QUOTE_NONE,
            keep_default_na=False,
            na_values=[],
            low_memory=False,
            dtype={0: str, 1: str} if labels_as_str else None,
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, OverflowError):
        return None


def _integer_like(body):
    """Whether the first data line starts with two integer tokens."""
    first = next(line for line in body.split("\n", 64) if line.strip())
    return all(_PLAIN_INTEGER.fullmatch(t) for t in first.split()[:2])


def _fast_weights(column, parse_weights):
    """Weights from the third column, ``None`` when ignored, ``False`` when invalid."""
    if column.dtype.kind in "iuf":
        values = column.to_numpy(dtype=np.float64)
    else:
        strings = column.astype(object).astype(str)
        if (strings == "").any():
            return False
        if not parse_weights:
            return None
        values = pd.to_numeric(strings, errors="coerce").to_numpy(dtype=np.float64)
    if not parse_weights:
        return None
    return values if np.isfinite(values).all() else False


def _parse_fast(body, parse_weights):
    as_str = not _integer_like(body)
    frame = _read_frame(body, labels_as_str=as_str)
    if frame is None or frame.shape[1] not in (2, 3):
        return None
    weights = None
    if frame.shape[1] == 3:
        weights = _fast_weights(frame[2], parse_weights)
        if weights is False:
            return None
    u, v = frame[0], frame[1]
    if u.dtype == np.int64 and v.dtype == np.int64 and _canonical(body, frame):
        src, dst, labels = encode_int_labels(u.to_numpy(), v.to_numpy())
        return Records(src, dst, labels, weights, len(src))
    if not as_str:
        frame = _read_frame(body, labels_as_str=True)
        if frame is None or frame.shape[1] not in (2, 3):
            return None
    u = frame[0].to_numpy(dtype=object)
    v = frame[1].to_numpy(dtype=object)
    if (u == "").any() or (v == "").any():
        return None
    src, dst, labels = encode_labels(u, v)
    return Records(src, dst, labels, weights, len(src))


def _written_length(values):
    """Characters of ``str(x)`` summed over an int64 array (``None`` if it cannot tell)."""
    if len(values) and values.min() == np.iinfo(np.int64).min:
        return None
    digits = np.searchsorted(_POWERS_OF_TEN, np.abs(values), side="right") + 1
    return int(digits.sum() + (values < 0).sum())


def _canonical(body, frame):
    """True when every integer token of ``frame`` is written as ``str(int(token))``.

    Any other spelling is longer, so it suffices to compare the canonical lengths with
    the number of non-blank characters; for a float column the check falls back to a
    regular-expression scan.
    """
    lengths = [
        _written_length(frame[c].to_numpy()) if frame[c].dtype == np.int64 else None for c in frame
    ]
    if None in lengths:
        return not _NONCANONICAL.search(body)
    blank = body.count(" ") + body.count("\t") + body.count("\n")
    return sum(lengths) == len(body) - blank


def _parse_slow(text, path, parse_weights):
    """Line-by-line parse that reports the first bad line."""
    us, vs, ws = [], [], []
    ncols = first = None
    for lineno, line, tokens in data_lines(text):
        if len(tokens) not in (2, 3):
            raise bad_line(path, lineno, line)
        if ncols is None:
            ncols, first = len(tokens), lineno
        elif len(tokens) != ncols:
            raise bad_line(path, lineno, line, f"expected {ncols} columns as on line {first}")
        us.append(tokens[0])
        vs.append(tokens[1])
        if ncols == 3 and parse_weights:
            ws.append(_weight(tokens[2], path, lineno, line))
    if not us:
        return _empty()
    src, dst, labels = encode_labels(np.array(us, dtype=object), np.array(vs, dtype=object))
    weights = np.array(ws, dtype=np.float64) if ws else None
    return Records(src, dst, labels, weights, len(us))


def _weight(token, path, lineno, line):
    try:
        value = float(token)
    except ValueError:
        raise bad_line(path, lineno, line) from None
    if not math.isfinite(value):
        raise InputError(f"{path}, line {lineno}: weight is not finite")
    return value
