"""Convergence pictures of runs: relative gap and max violation per pass and over time.

:func:`plot_convergence` reads a run directory's ``iterations.csv`` (and its
``report.json`` for the tolerances) and draws a 2 x 2 grid: relative primal-dual gap
(top) and largest constraint violation (bottom), against the pass number (left) and
wall-clock seconds (right), on log y scales, with dashed lines at the run's
``gap_tol`` and ``tol`` options when the backend has them. Several runs are overlaid
in one picture. On the violation panels of a long run, dots mark the passes whose
violation was measured over every constraint (``full_check``). A star marks each run's
reported end point (``report.json``: final gap and max violation at the solve time),
which can lie below the last record when a repair or rounding test made the answer
feasible at the end. The time axes start at 0; the iteration axes count the backend's
own unit (passes, oracle rounds, lazy rounds). Rendering uses
matplotlib's Agg canvas directly, so it needs no display and leaves pyplot's global
state alone.
"""

import warnings
from pathlib import Path

import numpy as np

from .exceptions import InputError, MetricOptWarning

__all__ = ["plot_convergence", "convergence_figure", "read_iterations"]

_PANELS = (
    ("gap", "certified LP gap", "gap_tol"),
    ("max_violation", "max violation", "tol"),
)
_AXES = (("iteration", "pass"), ("seconds", "seconds"))
_MARKER_LIMIT = 40  # draw markers when a run has at most this many points


def read_iterations(run):
    """Per-pass records of a run, with the report's final values as a fallback.

    Parameters
    ----------
    run : str or os.PathLike
        A run directory.

    Returns
    -------
    data : dict of str to ndarray
        ``iteration``, ``seconds``, ``gap`` (the certified LP gap; the projection
        backends certify at the ends of their QP stages, at stalls and at the floor
        checks of wide dense stages only), ``qp_gap`` (their QP's
        relative gap), ``max_violation``, ``full_check`` (1.0 when the violation was
        measured over all constraints) as float arrays of equal length (NaN where a
        value is missing). A run without per-pass records (an exact
        backend) gives one point from the report: its iterations, solve seconds, final
        gap and violation.
    report : dict
        The run's ``report.json`` (empty when absent).

    Raises
    ------
    InputError
        The directory has neither ``iterations.csv`` nor ``report.json``.
    """
    import pandas as pd

    from .io.reports import read_report_json

    run = Path(run)
    report = read_report_json(run / "report.json") if (run / "report.json").is_file() else {}
    path = run / "iterations.csv"
    if not path.is_file() and not report:
        raise InputError(f"{run}: no iterations.csv or report.json (not a run directory)")
    try:
        frame = pd.read_csv(path) if path.is_file() else pd.DataFrame()
    except pd.errors.EmptyDataError:  # an empty file: no records
        frame = pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, OSError) as exc:
        text = " ".join(str(exc).split())
        raise InputError(f"{path}: not a readable iterations file ({text})") from None
    if len(frame) and not report and "iteration" not in frame:
        raise InputError(f"{path}: not a metricopt iterations file (no 'iteration' column)")
    columns = ("iteration", "seconds", "gap", "qp_gap", "max_violation", "full_check")
    if len(frame):
        data = {}
        for col in columns:
            values = frame[col] if col in frame else pd.Series(np.nan, index=frame.index)
            data[col] = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
        return data, report
    point = {"iteration": report.get("iterations"), "seconds": report.get("solve_seconds"),
             "gap": report.get("gap"), "qp_gap": None,
             "max_violation": report.get("max_violation"), "full_check": 1.0}
    return {k: np.array([np.nan if v is None else float(v)], dtype=np.float64)
            for k, v in point.items()}, report


def _label(run, report):
    method = report.get("method")
    graph = (report.get("graph") or {}).get("name")
    detail = ", ".join(str(v) for v in (graph, method) if v)
    return f"{Path(run).name} ({detail})" if detail else Path(run).name


#: What one record of ``iterations.csv`` is, per backend.
_UNITS = {"dykstra": "pass", "project-forget": "oracle round", "highs-lazy": "lazy round",
          "highs": "HiGHS solve"}


def _unit(report):
    return _UNITS.get(report.get("method"), "iteration")


def _plural(count, unit):
    return f"{count} {unit}" + ("" if count == 1 else ("es" if unit.endswith("s") else "s"))


def _final_point(data, report):
    """The run's reported end point: ``(iteration, seconds, gap, max_violation)``.

    It is what the report certifies (after a repair or rounding test, which the per-pass
    records do not show), placed at the last record's iteration (or the report's count
    when there are no records) and the solve time.
    """
    if not report:
        return None
    its = data["iteration"][np.isfinite(data["iteration"])]
    x_iter = float(its[-1]) if its.size else _float(report.get("iterations"))
    point = (x_iter, _float(report.get("solve_seconds")), _float(report.get("gap")),
             _float(report.get("max_violation")))
    return point


def _float(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return np.nan


def _tolerance(report, key):
    value = (report.get("options") or {}).get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def plot_convergence(runs, path=None, *, title=None, dpi=120):
    """Draw the convergence of one run, or overlay several, into a PNG file.

    Parameters
    ----------
    runs : str, os.PathLike, or list of them
        Run directories.
    path : str or os.PathLike or None, default=None
        Output PNG. Default: ``<run>/convergence.png`` for one run; required for
        several.
    title : str or None, default=None
        Figure title (default: the run's graph, problem and method).
    dpi : int, default=120

    Returns
    -------
    pathlib.Path
        The PNG written.

    Raises
    ------
    InputError
        A directory is not a run directory.

    Notes
    -----
    Values that are missing, NaN or not positive cannot be drawn on a log scale and are
    left out; a panel with nothing to draw says so. An exact backend logs one record (or
    none), which is drawn as a single marker.
    """
    runs = [runs] if isinstance(runs, (str, Path)) else list(runs)
    if not runs:
        raise InputError("no run directory given")
    if path is None:
        if len(runs) > 1:
            raise InputError("give an output file to overlay several runs")
        path = Path(runs[0]) / "convergence.png"
    loaded = []
    for run in runs:
        try:
            loaded.append((run, *read_iterations(run)))
        except InputError as exc:
            if len(runs) == 1:
                raise
            warnings.warn(f"skipped {run}: {exc}", MetricOptWarning, stacklevel=2)
    if not loaded:
        raise InputError("none of the run directories could be read")
    fig = convergence_figure(loaded, title=title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    from .io.reports import atomic_write

    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, dpi=dpi, format="png")
    return path


def convergence_figure(loaded, *, title=None):
    """The 2 x 2 convergence figure of runs read by :func:`read_iterations`.

    Parameters
    ----------
    loaded : list of (run, data, report)
    title : str or None

    Returns
    -------
    matplotlib.figure.Figure
        Axes in row-major order: gap per iteration, gap over time, violation per
        iteration, violation over time. The reported end point of a run is the line
        labelled ``"reported (final)"`` (one run) or drawn with marker ``"*"``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(11, 7.5), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 2)
    colors = [f"C{i % 10}" for i in range(len(loaded))]
    for row, (column, ylabel, tol_key) in enumerate(_PANELS):
        for col, (xkey, xlabel) in enumerate(_AXES):
            ax = axes[row][col]
            drawn, missing = False, []
            for (run, data, report), color in zip(loaded, colors):
                x, y = data[xkey], data[column]
                if column == "gap":  # the QP's own gap, between the certificates
                    q = data.get("qp_gap", np.full(x.shape, np.nan))
                    qok = np.isfinite(x) & np.isfinite(q) & (q > 0)
                    if qok.any():
                        ax.plot(x[qok], q[qok], color=color, linestyle=":", linewidth=1.0,
                                label="QP gap" if len(loaded) == 1 else None)
                ok = np.isfinite(x) & np.isfinite(y) & (y > 0)
                if not ok.any():
                    missing.append((Path(run).name, color))
                    continue
                marker = "o" if ok.sum() <= _MARKER_LIMIT else None
                ax.plot(x[ok], y[ok], color=color, marker=marker, markersize=4, linewidth=1.2,
                        label=_label(run, report))
                drawn = True
                full = ok & (data["full_check"] == 1)
                if column == "max_violation" and marker is None and full.any():
                    ax.plot(x[full], y[full], linestyle="none", marker="o", markersize=3,
                            color=color, label="full check" if len(loaded) == 1 else None)
            for (run, data, report), color in zip(loaded, colors):
                final = _final_point(data, report)
                if final is None:
                    continue
                fx = final[0] if xkey == "iteration" else final[1]
                fy = final[2] if column == "gap" else final[3]
                if np.isfinite(fx) and np.isfinite(fy) and fy > 0:
                    ax.plot([fx], [fy], linestyle="none", marker="*", markersize=11,
                            color=color, markeredgecolor="k", markeredgewidth=0.6,
                            label="reported (final)" if len(loaded) == 1 else None)
                    drawn = True
            if drawn:
                for name, color in missing:  # say which runs have nothing to show here
                    ax.plot([], [], color=color, marker="x", linestyle="none",
                            label=f"{name}: no positive {ylabel}")
            owners = {}
            for (run, _, rep), color in zip(loaded, colors):
                if (tol := _tolerance(rep, tol_key)) is not None:
                    owners.setdefault(tol, []).append((Path(run).name, color))
            for tol, runs_with in sorted(owners.items()):
                shared = len(runs_with) > 1 or len(loaded) == 1
                label = f"{tol_key} = {tol:g}" + ("" if shared else f" ({runs_with[0][0]})")
                ax.axhline(tol, color="0.3" if shared else runs_with[0][1], linestyle="--",
                           linewidth=1, label=label)
            ax.set_yscale("log")
            if xkey == "seconds" and any(len(line.get_xdata()) for line in ax.lines):
                ax.set_xlim(left=0.0)  # the QP gap alone counts too (no LP gap measured)
            if xkey == "iteration":
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                lo, hi = ax.get_xlim()
                if drawn and hi - lo < 2:  # one pass: widen so that the ticks are whole passes
                    mid = round((lo + hi) / 2)
                    ax.set_xlim(mid - 1, mid + 1)
            units = {_unit(rep) for _, _, rep in loaded}
            ax.set_xlabel(units.pop() if xkey == "iteration" and len(units) == 1 else xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(True, which="major", alpha=0.3)
            if not drawn:
                ax.text(0.5, 0.5, f"no positive finite {ylabel} recorded", transform=ax.transAxes,
                        ha="center", va="center", color="0.4")
            if drawn or owners:
                ax.legend(fontsize="small", loc="best")
    fig.suptitle(title or _title(loaded))
    return fig


def _title(loaded):
    if len(loaded) > 1:
        return f"Convergence of {len(loaded)} runs"
    _, data, report = loaded[0]
    problem = (report.get("problem") or {}).get("kind", "")
    graph = (report.get("graph") or {}).get("name", "")
    method = report.get("method", "")
    status = report.get("status_name")
    parts = [p for p in (graph, problem, method) if p]
    text = " / ".join(parts) or "run"
    if method == "highs":  # one solve; the report counts HiGHS's own iterations
        count = report.get("iterations")
        extra = f"{count} simplex/IPM/QP iterations" if isinstance(count, int) else "one solve"
    else:
        count = report.get("iterations")
        if not isinstance(count, int):
            its = data["iteration"][np.isfinite(data["iteration"])]
            count = int(its.max()) if its.size else 0
        extra = _plural(count, _unit(report))
    extra += f", {status}" if status else ""
    return f"{text} ({extra})"
