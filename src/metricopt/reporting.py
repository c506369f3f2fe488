"""One table over many runs: ``report.json`` files flattened into rows, CSV and Markdown.

:func:`report_table` finds run directories (each holding a ``report.json`` written by
:func:`metricopt.pipeline.run`) and returns a :class:`pandas.DataFrame` with one row per
run: the fixed columns of :data:`REPORT_COLUMNS` first, in that order and with those
dtypes, then one column per parameter the runs used:

``param_<name>``
    problem parameters (``report["problem"]["params"]``),
``option_<name>``
    solver options as the backend ran with them, defaults included
    (``report["options"]``),
``read_<name>``
    graph reading options (``report["graph"]["read_options"]``),
``extra_<name>``
    backend-specific scalar results (``report["solver_extras"]``),
``score_<name>``
    the objective in the problem's other units (``report["scores"]``, e.g.
    ``score_modularity``),
``version_<name>``
    versions beyond the fixed ``version_*`` columns.

These columns are sorted by name; a run that lacks one has an empty cell. Lists and
dicts are stored as JSON text. :func:`write_report_csv` writes the table and
:func:`load_report_csv` reads it back with the documented dtypes.
"""

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .exceptions import InputError, MetricOptWarning

__all__ = [
    "REPORT_COLUMNS",
    "COLUMN_DESCRIPTIONS",
    "DYNAMIC_PREFIXES",
    "find_runs",
    "report_row",
    "report_table",
    "write_report_csv",
    "load_report_csv",
    "markdown_table",
]

_COLUMNS = (
    ("run", "string", "the run directory, as found"),
    ("graph", "string", "graph name (file stem or dataset name)"),
    ("graph_source", "string", "the GRAPH argument of the run"),
    ("graph_path", "string", "the file that was read"),
    ("n", "Int64", "nodes (of the largest component unless all were kept)"),
    ("m", "Int64", "edges; empty for a dissimilarity matrix"),
    ("problem", "string", "cc, sc, mn or cd"),
    ("structure", "string", "dense (all pairs) or the sparse structure"),
    ("objective", "string", "objective kind (l1, l2, linear, ...)"),
    ("n_variables", "Int64", "variables of the relaxation"),
    ("n_constraints", "Int64", "constraints; empty for cycle families"),
    ("method", "string", "backend that solved it"),
    ("auto_reason", "string", "why 'auto' chose the method; empty otherwise"),
    ("status", "Int64", "0 optimal, 1 limit reached, 2 infeasible, 3 unbounded, 4 numerical, "
                        "5 stalled, 6 interrupted"),
    ("status_name", "string", "status as a word"),
    ("success", "boolean", "status == 0"),
    ("message", "string", "the backend's message"),
    ("lp_value", "float64", "objective of the returned relaxation solution"),
    ("lower_bound", "float64", "certified lower bound on the LP optimum"),
    ("rounded_objective", "float64", "objective of the rounded clustering or cut"),
    ("approximation_ratio", "float64", "rounded_objective / lower_bound, or / editing_bound "
                                       "when that is larger (certified)"),
    ("lp_approx_ratio", "float64", "lp_value / lower_bound"),
    ("editing_bound", "float64", "relaxation editing: the certified cluster-editing bound; "
                                 "empty otherwise"),
    ("gap", "float64", "certified LP gap (lp_value - lower_bound) / max(abs(lower_bound), tiny); "
                       "empty when x violates more than tol (never measured)"),
    ("max_violation", "float64", "largest constraint violation"),
    ("iterations", "Int64", "passes (or lazy rounds)"),
    ("solve_seconds", "float64", "wall-clock seconds of the solve"),
    ("compile_seconds", "float64", "seconds to compile or load the kernels, before the solve"),
    ("total_seconds", "float64", "wall-clock seconds of the whole run"),
    ("peak_memory_bytes", "Int64", "peak resident memory of the process that ran it"),
    ("rounding_method", "string", "rounding that gave rounded_objective"),
    ("rounding_requested", "string", "rounding method asked for"),
    ("rounding_n_tries", "Int64", "seeded tries per randomised rounding"),
    ("rounding_seed", "string", "rounding seed (text: it may exceed 64 bits)"),
    ("n_clusters", "Int64", "clusters of the rounded answer"),
    ("n_warnings", "Int64", "warnings raised during the run"),
    ("warnings", "string", "the warnings, separated by a vertical bar"),
    ("created", "string", "when the run finished (ISO 8601, UTC)"),
    ("metricopt_version", "string", "metricopt version"),
    ("version_python", "string", "Python version"),
    ("version_numpy", "string", "numpy version"),
    ("version_scipy", "string", "scipy version"),
    ("version_numba", "string", "numba version"),
    ("version_highspy", "string", "highspy version"),
    ("version_click", "string", "click version"),
    ("command", "string", "the command line, if recorded"),
)

#: Fixed report columns, in order: name -> pandas dtype.
REPORT_COLUMNS = {name: dtype for name, dtype, _ in _COLUMNS}
#: Fixed report columns: name -> one-line description.
COLUMN_DESCRIPTIONS = {name: text for name, _, text in _COLUMNS}
#: Prefixes of the per-parameter columns that follow the fixed ones.
DYNAMIC_PREFIXES = ("param_", "option_", "read_", "extra_", "score_", "version_")

_MARKDOWN_COLUMNS = ("run", "graph", "n", "m", "problem", "method", "status_name", "lp_value",
                     "lower_bound", "rounded_objective", "approximation_ratio", "gap",
                     "max_violation", "iterations", "solve_seconds", "peak_memory_bytes")


def find_runs(paths):
    """Run directories among ``paths``.

    Parameters
    ----------
    paths : iterable of str or os.PathLike
        Run directories, ``report.json`` files, or parent directories searched
        recursively for ``report.json``.

    Returns
    -------
    list of pathlib.Path
        Run directories, in argument order, each parent's runs sorted; no duplicates.

    Raises
    ------
    InputError
        A path does not exist or holds no ``report.json``.
    """
    found, seen = [], set()
    for raw in paths:
        path = Path(raw)
        if path.is_file() and path.name == "report.json":
            runs = [path.parent]
        elif (path / "report.json").is_file():
            runs = [path]
        elif path.is_dir():
            runs = sorted(p.parent for p in path.rglob("report.json"))
            if not runs:
                raise InputError(f"{path}: no report.json in this directory or below")
        else:
            raise InputError(f"{path}: no such run directory")
        for run in runs:
            key = run.resolve()
            if key not in seen:
                seen.add(key)
                found.append(run)
    return found


def _text(value):
    if value is None:
        return None
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def report_row(run):
    """Flatten one run's ``report.json`` into a row.

    Parameters
    ----------
    run : str or os.PathLike
        A run directory.

    Returns
    -------
    dict
        Fixed columns (see :data:`REPORT_COLUMNS`) and ``param_*``, ``option_*``,
        ``read_*``, ``extra_*``, ``score_*``, ``version_*`` columns, with the values of
        the report.
    """
    from .io.reports import read_report_json

    run = Path(run)
    rep = read_report_json(run / "report.json")
    graph = rep.get("graph") or {}
    problem = rep.get("problem") or {}
    rounding = rep.get("rounding") or {}
    versions = dict(rep.get("versions") or {})
    warnings = rep.get("warnings") or []
    command = rep.get("command")
    row = {
        "run": str(run),
        "graph": graph.get("name"),
        "graph_source": graph.get("source"),
        "graph_path": (graph.get("summary") or {}).get("path"),
        "n": graph.get("n"),
        "m": graph.get("m"),
        "problem": problem.get("kind"),
        "structure": problem.get("structure"),
        "objective": problem.get("objective"),
        "n_variables": problem.get("n_variables"),
        "n_constraints": problem.get("n_constraints"),
        "rounding_method": rounding.get("method"),
        "rounding_requested": rounding.get("requested_method"),
        "rounding_n_tries": rounding.get("n_tries"),
        "rounding_seed": _text(rounding.get("seed")),
        "n_clusters": rounding.get("n_clusters"),
        "n_warnings": len(warnings),
        "warnings": " | ".join(warnings) if warnings else None,
        "command": " ".join(command) if isinstance(command, list) else _text(command),
        "editing_bound": (rep.get("editing") or {}).get("bound"),
    }
    for key in ("auto_reason", "created", "gap", "iterations", "lower_bound", "lp_approx_ratio",
                "lp_value", "max_violation", "message", "method", "metricopt_version",
                "peak_memory_bytes", "rounded_objective", "approximation_ratio", "solve_seconds",
                "compile_seconds",
                "status", "status_name", "success", "total_seconds"):
        row[key] = rep.get(key)
    for name in ("python", "numpy", "scipy", "numba", "highspy", "click"):
        row[f"version_{name}"] = versions.pop(name, None)
    sections = (("param_", problem.get("params")), ("option_", rep.get("options")),
                ("read_", graph.get("read_options")), ("extra_", rep.get("solver_extras")),
                ("score_", rep.get("scores")), ("version_", versions))
    for prefix, values in sections:
        for key, value in (values or {}).items():
            row[f"{prefix}{key}"] = value
    return row


_INT = r"[+-]?\d+"
_INT64 = (-(2**63), 2**63 - 1)


def _cell_text(value):
    """The CSV text of one cell (``None`` for a missing value)."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (float, np.floating)):
        return repr(float(value)) if math.isfinite(value) else None
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _from_text(text, dtype=None):
    """Type a column of CSV text: with ``dtype``, or inferred for a dynamic column.

    Inference: ``True``/``False`` only -> boolean; integers within 64 bits -> Int64;
    other numbers -> float64; anything else, or no value at all -> string.
    """
    text = text.astype("string")
    present = text.dropna()
    if dtype is None:
        if present.empty:
            dtype = "string"
        elif present.isin(["True", "False"]).all():
            dtype = "boolean"
        elif present.str.fullmatch(_INT).all() and all(
                _INT64[0] <= int(v) <= _INT64[1] for v in present):
            dtype = "Int64"
        elif pd.to_numeric(present, errors="coerce").notna().all():
            dtype = "float64"
        else:
            dtype = "string"
    if dtype == "boolean":
        return text.map({"True": True, "False": False}, na_action="ignore").astype("boolean")
    if dtype == "Int64":
        return pd.array([pd.NA if v is pd.NA else int(v) for v in text], dtype="Int64")
    if dtype == "float64":
        return pd.to_numeric(text, errors="coerce").astype("float64")
    return text


def _typed(text_frame):
    """Fixed columns with :data:`REPORT_COLUMNS` dtypes, then dynamic ones sorted."""
    out = {}
    for name, dtype in REPORT_COLUMNS.items():
        column = text_frame[name] if name in text_frame else pd.Series([None] * len(text_frame))
        out[name] = _from_text(column.reset_index(drop=True), dtype)
    for name in sorted(c for c in text_frame.columns if c not in REPORT_COLUMNS):
        out[name] = _from_text(text_frame[name].reset_index(drop=True))
    return pd.DataFrame(out, index=pd.RangeIndex(len(text_frame)))


def report_table(paths):
    """One row per run found under ``paths`` (see :func:`find_runs`).

    Parameters
    ----------
    paths : iterable of str or os.PathLike

    Returns
    -------
    pandas.DataFrame
        Columns: :data:`REPORT_COLUMNS` with their dtypes, then the dynamic
        ``param_*``, ``option_*``, ``read_*``, ``extra_*``, ``score_*`` and ``version_*``
        columns, sorted by name.

    Raises
    ------
    InputError
        A path holds no run, or no ``report.json`` is readable (unreadable ones among
        readable ones are skipped with a :class:`~metricopt.exceptions.MetricOptWarning`).
    """
    rows = []
    runs = find_runs(paths)
    for run in runs:
        try:
            row = report_row(run)
        except InputError as exc:  # a damaged run: skipped, the others tabulated
            warnings.warn(f"skipped {run}: {exc}", MetricOptWarning, stacklevel=2)
            continue
        rows.append({key: _cell_text(value) for key, value in row.items()})
    if not rows:
        raise InputError(f"none of the {len(runs)} run(s) has a readable report.json")
    return _typed(pd.DataFrame.from_records(rows, coerce_float=False).astype(object))


def write_report_csv(frame, path):
    """Write a report table as CSV (atomically), or to stdout when ``path`` is ``"-"``.

    Floats are written with full precision, missing values as empty cells, booleans as
    ``True``/``False``.

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`report_table`.
    path : str or os.PathLike
    """
    text = frame.to_csv(index=False, lineterminator="\n")
    if str(path) == "-":
        import sys

        sys.stdout.write(text)
        return
    from .io.reports import atomic_write

    with atomic_write(path) as fh:
        fh.write(text)


def load_report_csv(path):
    """Read a report CSV written by :func:`write_report_csv` with the documented dtypes.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    pandas.DataFrame
        Fixed columns with the dtypes of :data:`REPORT_COLUMNS` (nullable ``Int64``,
        ``boolean`` and ``string``; ``float64`` with NaN for empty cells); dynamic
        columns with the types pandas infers.
    """
    try:
        text = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"{path}: not a readable report CSV ({exc})") from None
    return _typed(text.astype(object).where(text.notna(), None))


def _fmt(value, name):
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if name == "peak_memory_bytes":
        from ._memory import format_bytes

        return format_bytes(int(value))
    if name == "run":
        return Path(str(value)).name or str(value)
    if isinstance(value, (float, np.floating)):
        return format(float(value), ".6g")
    return str(value).replace("|", "\\|")


def markdown_table(frame, columns=_MARKDOWN_COLUMNS):
    """A compact Markdown table of a report table.

    Parameters
    ----------
    frame : pandas.DataFrame
    columns : sequence of str, default: the key result columns
        ``run`` shows the directory name; ``peak_memory_bytes`` is shown in KiB/MiB/GiB.

    Returns
    -------
    str
    """
    columns = [c for c in columns if c in frame.columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for record in frame[columns].astype(object).itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v, c) for v, c in zip(record, columns)) + " |")
    return "\n".join(lines) + "\n"
