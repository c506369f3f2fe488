"""Parsed edge entries, node-label coding and line helpers shared by the text readers."""

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metricopt.exceptions import InputError

__all__ = ["Records", "encode_labels", "encode_int_labels", "records_from_labels", "strip_comments",
           "data_lines", "bad_line"]

_INTEGER = r"[+-]?[0-9]+"
_COMMENT_LINES = re.compile(r"^[ \t]*[#%][^\n]*", re.M)
_SEPARATORS = re.compile(r"[ \t]+")


@dataclass
class Records:
    """Edge entries as read from a file, before any pre-processing.

    Parameters
    ----------
    src, dst : ndarray of shape (k,), dtype int64
        Internal node ids (``0..n-1``) of each entry's endpoints.
    labels : ndarray of shape (n,), dtype object
        Node labels, in internal order.
    weights : ndarray of shape (k,) or None
        Entry weights, when kept.
    n_lines : int
        Number of data lines (entries) read.
    """

    src: np.ndarray
    dst: np.ndarray
    labels: np.ndarray
    weights: np.ndarray | None
    n_lines: int

    @property
    def n(self):
        return int(self.labels.shape[0])


def _integer_order(uniques):
    """Numeric order of ``uniques`` if every label is an integer, else ``None``."""
    if len(uniques) == 0 or not pd.Series(uniques, dtype=object).str.fullmatch(_INTEGER).all():
        return None
    values = [int(s) for s in uniques]
    try:
        numeric = np.array(values, dtype=np.int64)
    except OverflowError:
        order = sorted(range(len(values)), key=lambda i: (values[i], uniques[i]))
        return np.array(order, dtype=np.int64)
    text = np.asarray(uniques, dtype=str)
    return np.lexsort((text, numeric))


def _rank(order):
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank


def encode_labels(u, v):
    """Code string labels as ``0..n-1``.

    All-integer labels are ordered numerically (ties between spellings such as ``"7"``
    and ``"07"`` by the string); otherwise labels keep their order of first appearance,
    reading each entry's two endpoints in turn.

    Returns
    -------
    src, dst : ndarray of int64
    labels : ndarray of object
    """
    both = np.empty(2 * len(u), dtype=object)
    both[0::2] = u
    both[1::2] = v
    codes, uniques = pd.factorize(both)
    uniques = np.asarray(uniques, dtype=object)
    order = _integer_order(uniques)
    if order is not None:
        codes = _rank(order)[codes]
        uniques = uniques[order]
    codes = codes.astype(np.int64, copy=False)
    return codes[0::2].copy(), codes[1::2].copy(), uniques


def encode_int_labels(u, v):
    """Code integer labels (canonically written) as ``0..n-1`` in numeric order."""
    codes, uniques = pd.factorize(np.concatenate([u, v]))
    order = np.argsort(uniques, kind="stable")
    codes = _rank(order)[codes]
    labels = uniques[order].astype(str).astype(object)
    k = len(u)
    return codes[:k].copy(), codes[k:].copy(), labels


def records_from_labels(u, v, *, nodes=(), weights=None):
    """Records of entries given by their endpoints' labels, coded by :func:`encode_labels`.

    Parameters
    ----------
    u, v : sequence of str
        The endpoints of each entry.
    nodes : sequence of str, default=()
        Declared nodes: each is a node of the result, with or without entries, and they
        come first in the order of first appearance.
    weights : ndarray of shape (len(u),) or None

    Returns
    -------
    Records
    """
    nodes = np.asarray(list(nodes), dtype=object)
    u, v = np.asarray(u, dtype=object), np.asarray(v, dtype=object)
    src, dst, labels = encode_labels(np.concatenate([nodes, u]), np.concatenate([nodes, v]))
    k = len(nodes)
    return Records(src[k:], dst[k:], labels, weights, len(u))


def strip_comments(text):
    """Blank out lines whose first non-blank character is ``#`` or ``%``."""
    if "#" not in text and "%" not in text:
        return text
    return _COMMENT_LINES.sub("", text)


def data_lines(text, first_lineno=1):
    """Yield ``(lineno, line, tokens)`` for each data line of ``text``.

    Blank lines and comment lines (first non-blank character ``#`` or ``%``) are skipped
    but counted; tokens are separated by spaces, tabs or commas.
    """
    for lineno, line in enumerate(text.split("\n"), first_lineno):
        stripped = line.replace(",", " ").strip(" \t")
        if stripped and stripped[0] not in "#%":
            yield lineno, line, _SEPARATORS.split(stripped)


def bad_line(path, lineno, line, detail=""):
    """The error for a line that cannot be parsed."""
    suffix = f" ({detail})" if detail else ""
    return InputError(f"{path}, line {lineno}: cannot parse {line!r}{suffix}")
