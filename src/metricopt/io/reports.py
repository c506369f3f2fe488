"""Run outputs: ``report.json``, ``iterations.csv``, ``clusters.csv``, ``cut.csv``, ``solution.npz``.

Every writer is atomic: it writes a temporary file in the destination directory and
renames it over the destination (:func:`os.replace`), so a reader never sees a half
written file and an interrupted run never leaves one behind.

The readers turn a clustering or cut file (for example one written by another
algorithm) back into arrays indexed by the graph's internal node ids, so that
:func:`metricopt.rounding.evaluate` can score it.

File formats
------------
``report.json``
    One JSON object whose top-level fields are :data:`REPORT_FIELDS`, in that order
    (the names are stable; :func:`metricopt.pipeline.run` writes it):

    ``metricopt_version``, ``versions`` (python, numpy, scipy, numba, highspy, click),
    ``created`` (ISO 8601, UTC), ``command`` (argv, or null), ``graph`` {name, source,
    n, m (null for a dissimilarity matrix), read_options, summary}, ``problem`` {kind,
    structure, objective, n_variables, n_constraints (null for cycle families),
    params}, ``method``, ``options``, ``auto_reason``, ``status``, ``status_name``,
    ``success``, ``message``, ``lp_value``, ``lower_bound``, ``rounded_objective``,
    ``approximation_ratio``, ``lp_approx_ratio``, ``scores`` (the rounded objective
    and the bound in the problem's other units, e.g. ``modularity`` and
    ``modularity_upper_bound``; null when it has none), ``editing`` (with
    ``relaxation="editing"``: the cluster-editing bound {bound, lp_value, exact,
    relaxations, seconds, bound_source} and its search {objective_before, objective,
    exact_components, searched_components, iterations, seconds}; ``approximation_ratio``
    is then over the larger bound, ``bound_source``; else null), ``gap``, ``max_violation``,
    ``iterations``, ``solve_seconds``, ``compile_seconds`` (kernels compiled or loaded
    before the solve clock started), ``total_seconds``, ``peak_memory_bytes``,
    ``rounding`` {method, requested_method, n_tries, seed, n_clusters, time_limit (its
    budget, seconds, or null), tries_run (null without a budget), seconds, per_method,
    per_method_ratio, objective (the rounding's), refined_objective, refine {method,
    candidates, moves, merges, sweeps, layout, stopped, seconds}} (null without rounding;
    ``rounded_objective`` and ``approximation_ratio`` are the refined answer's, which
    ``clusters.csv`` / ``cut.csv`` hold), ``solver_extras``, ``warnings``, ``files``.

    The ratios are defined in :mod:`metricopt.pipeline`. :func:`read_report_json`
    reads the file back; :mod:`metricopt.reporting` flattens many into a table, and
    :func:`report_summary` is the ``--json`` output of a run.
``iterations.csv``
    One row per iteration: ``iteration, seconds, primal, dual, gap, max_violation,
    full_check, active_constraints``, then any extra keys a backend records, sorted by
    name. Missing values are empty cells; booleans are written ``1``/``0``.
``clusters.csv``
    ``node,cluster``: the node's label in the input file and an integer cluster id.
``cut.csv``
    ``node,in_cut``: the node's label and ``1`` if it lies in the cut side ``S``, else
    ``0``.
``solution.npz``
    ``x`` (the relaxation's solution), ``kind``, ``structure``, ``n``, ``labels`` (as
    strings) and, unless the problem is dense (all pairs in packed order), ``pairs``.
    A support-sized problem's solution (a
    :class:`~metricopt.problems.support.SupportPoint`) is stored by its pairs away from
    the bulk value: ``i``, ``j`` (``i < j``, in key order ``i n + j``) and ``x``, with
    ``bulk``, the value of every pair not listed (1), and no ``pairs``.
"""

import csv
import io
import json
import math
import os
from pathlib import Path

import numpy as np

from metricopt._atomic import atomic_write, current_umask
from metricopt.exceptions import InputError

__all__ = [
    "REPORT_FIELDS",
    "SUMMARY_OMIT",
    "ITERATION_COLUMNS",
    "atomic_write",
    "current_umask",
    "to_jsonable",
    "write_report_json",
    "read_report_json",
    "report_summary",
    "write_iterations_csv",
    "write_clusters_csv",
    "write_cut_csv",
    "write_solution_npz",
    "read_clusters",
    "read_cut",
]

#: Top-level fields of ``report.json``, in order (stable names).
REPORT_FIELDS = (
    "metricopt_version", "versions", "created", "command", "graph", "problem", "method",
    "options", "auto_reason", "status", "status_name", "success", "message", "lp_value",
    "lower_bound", "rounded_objective", "approximation_ratio", "lp_approx_ratio", "scores",
    "editing", "gap",
    "max_violation", "iterations", "solve_seconds", "compile_seconds", "total_seconds",
    "peak_memory_bytes",
    "rounding", "solver_extras", "warnings", "files",
)

#: Report fields left out of :func:`report_summary` (the ``--json`` output of a run).
SUMMARY_OMIT = ("versions", "command")

#: Leading columns of ``iterations.csv``, in order.
ITERATION_COLUMNS = (
    "iteration",
    "seconds",
    "primal",
    "dual",
    "gap",
    "max_violation",
    "full_check",
    "active_constraints",
)

_HEADER_WORDS = {"node", "nodes", "id", "vertex", "label", "name"}
_TRUE = {"1", "true", "yes", "t", "y"}
_FALSE = {"0", "false", "no", "f", "n"}


# ------------------------------------------------------------------ writing
def to_jsonable(value):
    """Convert ``value`` to plain JSON types.

    numpy scalars and arrays become Python numbers and lists, paths become strings,
    and non-finite floats become ``None`` (JSON has no NaN or infinity).

    Parameters
    ----------
    value : object
        Nested dicts, lists, tuples, numbers, strings, arrays.

    Returns
    -------
    object
    """
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def write_report_json(report, path):
    """Write a run report as indented JSON (non-finite numbers become ``null``).

    Parameters
    ----------
    report : dict
    path : str or os.PathLike
    """
    text = json.dumps(to_jsonable(report), indent=2, allow_nan=False)
    with atomic_write(path) as fh:
        fh.write(text + "\n")


def report_summary(report):
    """A run report without the fields in :data:`SUMMARY_OMIT`, as plain JSON types.

    Parameters
    ----------
    report : dict

    Returns
    -------
    dict
    """
    return to_jsonable({k: v for k, v in report.items() if k not in SUMMARY_OMIT})


def read_report_json(path):
    """Read a ``report.json`` written by :func:`write_report_json`.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    dict

    Raises
    ------
    InputError
        The file is missing or is not a JSON object.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"File not found: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a readable JSON report ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a metricopt report (expected a JSON object)")
    return data


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return repr(value) if math.isfinite(value) else ""
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def write_iterations_csv(history, path):
    """Write the per-iteration records of a solve.

    Parameters
    ----------
    history : list of dict
        :attr:`SolveResult.history`. Keys outside :data:`ITERATION_COLUMNS` become
        extra columns, sorted by name.
    path : str or os.PathLike
    """
    extra = sorted({key for rec in history for key in rec} - set(ITERATION_COLUMNS))
    columns = [*ITERATION_COLUMNS, *extra]
    with atomic_write(path) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for rec in history:
            writer.writerow([_cell(rec.get(col)) for col in columns])


def write_clusters_csv(labels, clusters, path):
    """Write a clustering as ``node,cluster`` rows.

    Parameters
    ----------
    labels : array-like of shape (n,)
        Original node labels.
    clusters : array-like of int, shape (n,)
        Cluster id of each node.
    path : str or os.PathLike
    """
    clusters = np.asarray(clusters)
    with atomic_write(path) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["node", "cluster"])
        writer.writerows((str(lab), int(c)) for lab, c in zip(labels, clusters))


def write_cut_csv(labels, in_cut, path):
    """Write a cut as ``node,in_cut`` rows (``1`` for the side ``S``, else ``0``).

    Parameters
    ----------
    labels : array-like of shape (n,)
    in_cut : array-like of bool, shape (n,)
    path : str or os.PathLike
    """
    in_cut = np.asarray(in_cut, dtype=bool)
    with atomic_write(path) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["node", "in_cut"])
        writer.writerows((str(lab), int(s)) for lab, s in zip(labels, in_cut))


def write_solution_npz(problem, x, path):
    """Write the relaxation's solution with what is needed to interpret it.

    Parameters
    ----------
    problem : MetricProblem
    x : ndarray of shape (n_variables,) or SupportPoint
        A support-sized problem's point is written as the triples ``i, j, x`` of its
        pairs away from the bulk value, and ``bulk`` (see the module docstring).
    path : str or os.PathLike
    """
    arrays = {
        "kind": np.array(problem.kind),
        "structure": np.array(problem.structure),
        "n": np.array(problem.n, dtype=np.int64),
        "labels": np.asarray([str(lab) for lab in problem.labels], dtype=str),
    }
    if problem.structure == "support":
        if not callable(getattr(x, "compact", None)):
            raise InputError(f"the solution of a support-sized problem must be a SupportPoint; "
                             f"got {type(x).__name__}")
        point = x.compact()
        arrays.update(i=point.pairs[:, 0].copy(), j=point.pairs[:, 1].copy(), x=point.values,
                      bulk=np.array(float(point.bulk)))
    else:
        arrays["x"] = np.asarray(x, dtype=np.float64)
    if problem.structure not in ("dense", "support") and problem.pairs is not None:
        arrays["pairs"] = np.asarray(problem.pairs, dtype=np.int64)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    with atomic_write(path, "wb") as fh:
        fh.write(buf.getvalue())


# ------------------------------------------------------------------ reading
def _rows(path):
    """Yield ``(line_number, fields)`` of a CSV or whitespace-separated file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"File not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (bad byte at offset {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "%")):
            continue
        if "," in stripped:
            fields = [f.strip() for f in next(csv.reader([stripped]))]
        else:
            fields = stripped.split()
        yield number, fields


def _read_assignment(path, labels, what):
    """Map each node label of a two-column file to its value, by internal id."""
    index = {str(lab): i for i, lab in enumerate(labels)}
    values = [None] * len(index)
    seen_line = {}
    first = True
    for number, fields in _rows(path):
        is_header = (first and fields and fields[0].lower() in _HEADER_WORDS
                     and fields[0] not in index)
        first = False
        if is_header:
            continue
        if len(fields) != 2:
            raise InputError(
                f"{path}: line {number}: expected 2 fields (node {what}), got {len(fields)}"
            )
        node, value = fields
        if node not in index:
            raise InputError(f"{path}: line {number}: unknown node {node!r} (not in the graph)")
        i = index[node]
        if values[i] is not None:
            raise InputError(
                f"{path}: line {number}: node {node!r} listed twice (first on line {seen_line[i]})"
            )
        values[i] = value
        seen_line[i] = number
    missing = [i for i, v in enumerate(values) if v is None]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise InputError(f"{path}: node {str(labels[missing[0]])!r}{more} missing")
    return values, seen_line


def read_clusters(path, labels):
    """Read a clustering file: ``node,cluster`` CSV or whitespace ``node cluster`` lines.

    A header row (first field ``node``, ``id``, ``label``...) and lines starting with
    ``#`` or ``%`` are skipped. Cluster ids may be any tokens.

    Parameters
    ----------
    path : str or os.PathLike
    labels : array-like of shape (n,)
        The graph's node labels; every node must appear exactly once.

    Returns
    -------
    ndarray of int64, shape (n,)
        Cluster of each internal node id, numbered 0, 1, ... in order of first
        appearance along the node ids.

    Raises
    ------
    InputError
        Unreadable file, wrong number of fields, unknown, repeated or missing node.
    """
    values, _ = _read_assignment(path, labels, "cluster")
    ids = {}
    return np.array([ids.setdefault(v, len(ids)) for v in values], dtype=np.int64)


def read_cut(path, labels):
    """Read a cut file: ``node,in_cut`` CSV or whitespace ``node in_cut`` lines.

    ``in_cut`` is ``1``/``0`` (also ``true``/``false``, ``yes``/``no``).

    Parameters
    ----------
    path : str or os.PathLike
    labels : array-like of shape (n,)

    Returns
    -------
    ndarray of bool, shape (n,)

    Raises
    ------
    InputError
        As :func:`read_clusters`, or a side that is not 0/1.
    """
    values, lines = _read_assignment(path, labels, "in_cut")
    out = np.zeros(len(values), dtype=bool)
    for i, value in enumerate(values):
        low = value.lower()
        if low in _TRUE:
            out[i] = True
        elif low not in _FALSE:
            raise InputError(f"{path}: line {lines[i]}: in_cut must be 0 or 1, got {value!r}")
    return out
