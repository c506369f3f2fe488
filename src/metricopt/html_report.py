"""One self-contained HTML page for one run or many: ``metricopt report --html``.

The page needs no network: pictures are PNG data URIs, the style sheet is inline, the
only script (a dozen lines, inline) sorts the table of runs when a column heading is
clicked. For each run it shows the summary (graph, problem, method, status, values,
ratio, time, memory), the certificate picture, the convergence picture, the pictures of
the clustering or cut (:mod:`metricopt.pictures`; left out, with the reason, when the
run's graph cannot be read again) and the run's warnings. With several runs it starts
with their certificates side by side and a sortable table of the columns of ``metricopt
report --csv`` (:func:`metricopt.reporting.report_table`).
"""

import base64
import html
import math
import warnings
from pathlib import Path

from ._atomic import atomic_write
from .exceptions import InputError, MetricOptWarning

__all__ = ["write_html_report", "html_report"]

_SUMMARY = (  # report field or (section, field), label, format
    ("graph.name", "graph", None), ("graph.n", "nodes", ","), ("graph.m", "edges", ","),
    ("problem.kind", "problem", None), ("problem.objective", "objective", None),
    ("method", "method", None), ("auto_reason", "why this method", None),
    ("status_name", "status", None), ("message", "message", None),
    ("lower_bound", "lower bound (certified)", ".8g"), ("lp_value", "LP value", ".8g"),
    ("rounding.objective", "rounded objective", ".8g"),
    ("rounded_objective", "refined objective (the answer)", ".8g"),
    ("approximation_ratio", "certified ratio", ".6f"), ("gap", "certified LP gap", ".3g"),
    ("max_violation", "max violation", ".3g"), ("rounding.n_clusters", "clusters", ","),
    ("iterations", "iterations", ","), ("solve_seconds", "solve seconds", ".3f"),
    ("total_seconds", "total seconds", ".3f"), ("peak_memory_bytes", "peak memory", "bytes"),
    ("metricopt_version", "metricopt", None), ("created", "created", None),
)

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em;color:#222;
max-width:1200px}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:2em}h3{font-size:1.05em}
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ddd;padding:.2em .5em;
text-align:left;vertical-align:top}th{background:#f3f3f3}
table.runs th{cursor:pointer;white-space:nowrap}table.runs td{white-space:nowrap}
table.runs th:after{content:" \\2195";color:#999}
.wide{overflow-x:auto;max-width:100%}
.num{text-align:right;font-variant-numeric:tabular-nums}
figure{display:inline-block;margin:.5em 1em .5em 0;vertical-align:top}
figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.8em;color:#555;max-width:640px}
.warn{background:#fff6e0;border-left:4px solid #e0a000;padding:.3em .6em;margin:.2em 0}
.note{color:#666;font-style:italic}
"""

_SCRIPT = """
document.querySelectorAll("table.runs").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.from(body.rows);
      var up = th.dataset.order !== "asc"; th.dataset.order = up ? "asc" : "desc";
      function key(r) {
        var c = r.cells[col]; return c.dataset.v !== undefined ? c.dataset.v : c.textContent;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
        var d = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : (x === "" ? 1 : y === "" ? -1 : x.localeCompare(y));
        return up ? d : -d;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

_CAPTIONS = {
    "certificate": "The optimum lies in the grey span: above the certified lower bound, "
                   "at most the answer's objective. Their quotient is the certified ratio.",
    "convergence": "Certified LP gap and max violation per iteration and over time, with "
                   "the tolerances (dashed) and the reported end point (star).",
    "clusters-matrix": "The adjacency (signed weight) matrix, rows and columns ordered by "
                       "cluster, largest first; cluster blocks outlined.",
    "clusters-sizes": "How many clusters of each size, and the share of nodes they hold.",
    "cut-sides": "The two sides of the cut, the edges inside each and across, its sparsity "
                 "and conductance.",
    "clusters-network": "The graph drawn by a seeded spring layout, nodes coloured by cluster.",
}


def _get(report, dotted):
    value = report
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _fmt(value, fmt):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if fmt == "bytes" and isinstance(value, (int, float)):
        return f"{value / 2**20:,.0f} MiB"
    if fmt and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return format(value, fmt)
        except (TypeError, ValueError):
            pass
    return str(value)


def _img(png, alt):
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


def _figure(stem, fig, alt, dpi):
    from .pictures import png_bytes

    caption = html.escape(_CAPTIONS.get(stem, ""))
    return (f"<figure>{_img(png_bytes(fig, dpi=dpi), alt)}"
            f"<figcaption>{caption}</figcaption></figure>")


def _summary_table(report):
    rows = []
    for key, label, fmt in _SUMMARY:
        value = _get(report, key)
        if value is None and key in ("auto_reason", "rounding.objective", "rounding.n_clusters"):
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        cls = ' class="num"' if number else ""
        rows.append(f"<tr><th>{html.escape(label)}</th><td{cls}>"
                    f"{html.escape(_fmt(value, fmt))}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def _run_section(run, report, dpi, seed, max_nodes):
    from .pictures import answer_of, certificate_figure, cluster_figures
    from .plotting import convergence_figure, read_iterations

    name = run.name
    parts = [f'<section id="run-{html.escape(name)}"><h2>{html.escape(name)}</h2>',
             f'<p class="note">{html.escape(str(run))}</p>', _summary_table(report)]
    notes = [str(w) for w in report.get("warnings") or []]
    parts.append("<h3>Certificate and convergence</h3>")
    parts.append(_figure("certificate", certificate_figure([(name, report)]),
                         f"certificate of {name}", dpi))
    try:
        loaded = [(run, *read_iterations(run))]
        parts.append(_figure("convergence", convergence_figure(loaded), f"convergence of {name}",
                             dpi))
    except InputError as exc:
        parts.append(f'<p class="note">no convergence picture: {html.escape(str(exc))}</p>')
    kind = (report.get("problem") or {}).get("kind")
    if kind in ("cc", "sc", "cd"):
        parts.append("<h3>The answer</h3>")
        try:
            answer = answer_of(run)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for stem, fig in cluster_figures(answer, seed=seed, max_nodes=max_nodes):
                    if stem != "certificate":
                        parts.append(_figure(stem, fig, f"{stem} of {name}", dpi))
            for w in caught:
                parts.append(f'<p class="note">{html.escape(str(w.message))}</p>')
        except InputError as exc:
            parts.append(f'<p class="note">no pictures of the answer: {html.escape(str(exc))}</p>')
    parts.append("<h3>Warnings</h3>")
    if notes:
        parts += [f'<div class="warn">{html.escape(w)}</div>' for w in notes]
    else:
        parts.append('<p class="note">none</p>')
    parts.append("</section>")
    return "\n".join(parts)


#: Longer texts in the table of runs are cut (the cell's tooltip holds all of it).
_CELL_CHARS = 60


def _runs_table(frame):
    columns = list(frame.columns)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for rec in frame.astype(object).itertuples(index=False):
        cells = []
        for col, value in zip(columns, rec):
            missing = value is None or (isinstance(value, float) and not math.isfinite(value)) \
                or (not isinstance(value, (str, bytes)) and _isna(value))
            if missing:
                cells.append('<td data-v=""></td>')
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                shown = html.escape(_fmt(value, ".6g"))
                cells.append(f'<td class="num" data-v="{value!r}">{shown}</td>')
            else:
                text = Path(str(value)).name if col == "run" else str(value)
                short = text if len(text) <= _CELL_CHARS else text[:_CELL_CHARS - 1] + "\u2026"
                cells.append(f'<td data-v="{html.escape(text)}" title="{html.escape(text)}">'
                             f"{html.escape(short)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<div class="wide"><table class="runs"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _isna(value):
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def html_report(runs, *, title=None, dpi=80, seed=0, max_nodes=None):
    """The HTML page of runs, as a string.

    Parameters
    ----------
    runs : iterable of str or os.PathLike
        Run directories, ``report.json`` files or parents searched for them
        (:func:`metricopt.reporting.find_runs`).
    title : str or None
    dpi : int, default=80
        Resolution of the embedded pictures.
    seed : int, default=0
        Seed of the node-link layouts.
    max_nodes : int or None
        Largest graph drawn as nodes and links (default:
        :data:`metricopt.pictures.MAX_NODES`).

    Returns
    -------
    str

    Raises
    ------
    InputError
        No readable run.
    """
    from .io.reports import read_report_json
    from .pictures import MAX_NODES, certificate_figure
    from .reporting import find_runs, report_table

    found = find_runs(runs)
    loaded = []
    for run in found:
        try:
            loaded.append((Path(run), read_report_json(Path(run) / "report.json")))
        except InputError as exc:
            warnings.warn(f"skipped {run}: {exc}", MetricOptWarning, stacklevel=2)
    if not loaded:
        raise InputError(f"none of the {len(found)} run(s) has a readable report.json")
    title = title or (f"metricopt: {loaded[0][0].name}" if len(loaded) == 1
                      else f"metricopt: {len(loaded)} runs")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    if len(loaded) > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MetricOptWarning)  # already said above
            frame = report_table([run for run, _ in loaded])
        links = " &middot; ".join(f'<a href="#run-{html.escape(r.name)}">{html.escape(r.name)}</a>'
                                  for r, _ in loaded)
        parts += [f"<p>{links}</p>", "<h2>All runs</h2>",
                  '<p class="note">Click a column heading to sort by it.</p>',
                  _runs_table(frame),
                  _figure("certificate", certificate_figure([(r.name, rep) for r, rep in loaded]),
                          "certificates of all runs", dpi)]
    for run, report in loaded:
        parts.append(_run_section(run, report, dpi, seed, max_nodes or MAX_NODES))
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts) + "\n"


def write_html_report(runs, path, **kwargs):
    """Write :func:`html_report` of ``runs`` to ``path`` (atomically); returns the path."""
    text = html_report(runs, **kwargs)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as fh:
        fh.write(text)
    return path
