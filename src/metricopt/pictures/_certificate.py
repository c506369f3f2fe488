"""The certificate as a picture: where the optimum lies, and how sure that is.

One row per run, on one axis: the certified lower bound (the optimum lies above it), the
LP value (the relaxation's objective at the returned solution), the rounding's objective
and, after the local search, the refined objective (the answer's cost; the optimum lies
below it). The shaded span from the bound to the answer holds the optimum; its length
relative to the bound is the certified ratio, written at its end. Runs of one graph and
problem share the objective's axis; runs of different ones are drawn relative to their
own lower bound (ratio axis).
"""

import math

from ._save import new_figure

__all__ = ["certificate_values", "certificate_figure"]

_MARKS = (  # key, legend label, marker, colour, vertical offset (equal values stay visible)
    ("lower_bound", "lower bound (certified)", "|", "tab:green", 0.0),
    ("lp_value", "LP value", "o", "tab:blue", -0.2),
    ("rounded", "rounded", "x", "tab:orange", 0.2),
    ("refined", "refined (the answer)", "*", "tab:red", 0.0),
)


def _number(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def certificate_values(report):
    """The values a certificate picture shows, from a run report.

    Returns
    -------
    dict
        ``lower_bound``, ``lp_value``, ``rounded`` (the rounding's objective, before the
        local search), ``refined`` (the reported answer's objective) and ``ratio``
        (certified, ``refined / lower_bound``); ``None`` where the run has no value.
    """
    rounding = report.get("rounding") or {}
    return {"lower_bound": _number(report.get("lower_bound")),
            "lp_value": _number(report.get("lp_value")),
            "rounded": _number(rounding.get("objective")),
            "refined": _number(report.get("rounded_objective")),
            "ratio": _number(report.get("approximation_ratio"))}


def _key(report):
    graph = (report.get("graph") or {}).get("name")
    problem = report.get("problem") or {}
    return graph, problem.get("kind"), problem.get("objective")


def _row_label(name, report):
    method = report.get("method") or "?"
    kind = (report.get("problem") or {}).get("kind") or "?"
    graph = (report.get("graph") or {}).get("name") or "?"
    return f"{name}\n{graph} {kind}, {method}"


def _widen(ax, values):
    """x limits around ``values`` that leave room for the ratio text, without the
    offset notation matplotlib picks for a span of round-off (bound == answer)."""
    if not values:
        return
    lo, hi = min(values), max(values)
    pad = max(hi - lo, 0.02 * max(abs(lo), abs(hi)), 1e-9)
    ax.set_xlim(lo - 0.15 * pad, hi + 0.6 * pad)


def certificate_figure(runs):
    """The certificate picture of one run or several.

    Parameters
    ----------
    runs : list of (name, report)

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = [(name, report, certificate_values(report)) for name, report in runs]
    relative = len({_key(r) for _, r, _ in rows}) > 1
    fig = new_figure((7.5, 1.4 + 0.75 * len(rows)))
    ax = fig.add_subplot()
    seen, shown = set(), []
    for y, (name, report, vals) in enumerate(rows):
        lb = vals["lower_bound"]
        scale = lb if relative and lb and lb > 0 else (None if relative else 1.0)
        if scale is None:  # no positive bound to measure the others against
            ax.text(1.0, y, "no positive lower bound", va="center", color="0.4")
            continue
        top = vals["refined"] if vals["refined"] is not None else vals["rounded"]
        shown += [(v, scale) for v in (lb, vals["lp_value"], vals["rounded"], top) if v is not None]
        if lb is not None and top is not None:
            ax.plot([lb / scale, top / scale], [y, y], color="0.8", linewidth=10,
                    solid_capstyle="butt", zorder=1)
        for key, label, marker, color, dy in _MARKS:
            if vals[key] is None:
                continue
            ax.plot([vals[key] / scale], [y + dy], linestyle="none", marker=marker, color=color,
                    markersize=14 if marker in "|*" else 8,
                    markeredgewidth=2 if marker in "|x" else 1,
                    label=None if key in seen else label, zorder=3)
            seen.add(key)
        text = (f"ratio {vals['ratio']:.4f}" if vals["ratio"] is not None
                else "no certified ratio")
        end = max(v for v in (lb, vals["lp_value"], top) if v is not None) / scale \
            if any(v is not None for v in (lb, vals["lp_value"], top)) else 1.0
        ax.annotate(text, (end, y), xytext=(12, 0), textcoords="offset points", va="center",
                    fontsize="small")
    ax.set_yticks(range(len(rows)), [_row_label(n, r) for n, r, _ in rows], fontsize="small")
    ax.set_ylim(len(rows) - 0.5, -0.5)
    _widen(ax, [v / s for v, s in shown if s])
    ax.ticklabel_format(axis="x", useOffset=False)
    ax.grid(True, axis="x", alpha=0.3)
    objective = (rows[0][1].get("problem") or {}).get("objective") if rows else None
    ax.set_xlabel("value / own lower bound" if relative
                  else f"objective{f' ({objective})' if objective else ''}")
    if seen:
        fig.legend(fontsize="small", loc="outside lower center", ncol=4, frameon=False)
    title = "Certificate: the optimum lies in the grey span"
    if len(rows) == 1:
        title = f"{rows[0][0]}: the optimum lies in the grey span"
    ax.set_title(title, fontsize="medium")
    return fig
