"""Everything the command line shows a person: progress, summaries, tables.

Progress, run summaries and warnings go to stderr. The tables that *are* a command's
answer (``metricopt solvers``, ``datasets list``, ``check-metric``) go to stdout, at
their natural width when stdout is not a terminal (a pipe or a file gets whole lines,
not lines folded at 80 columns). Machine-readable output (``--json``) is not produced
here; commands print it on stdout with :func:`click.echo`.
"""

import math
import time

import click
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from .._memory import format_bytes

__all__ = ["RunProgress", "run_summary", "evaluation", "graph_info", "solvers", "solver_options",
           "metric_check", "output_console", "warning", "note"]

_THROTTLE_S = 1.0  # minimum spacing of progress lines when stderr is not a terminal
_REDRAW_S = 0.1  # minimum spacing of redraws of the live line on a terminal


def _console():
    return Console(stderr=True, highlight=False, soft_wrap=False)


#: Width of the stdout console when stdout is not a terminal: wide enough that no table
#: is folded (rich pads a table to its own width, not to the console's).
_UNBOUNDED = 100_000


class _OutputConsole(Console):
    """A console on stdout whose reader may leave early (``| head``)."""

    def on_broken_pipe(self):
        # rich exits with status 1 here; the command group ends quietly with 0 instead
        self.quiet = True
        raise BrokenPipeError


def output_console():
    """A console on stdout, for a command's answer; unbounded width off a terminal."""
    console = _OutputConsole(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console = _OutputConsole(highlight=False, soft_wrap=False, width=_UNBOUNDED)
    return console


def _num(value, fmt=".6g"):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return format(float(value), fmt)


def warning(message):
    """Show a warning line."""
    click.echo(f"Warning: {message}", err=True)


def note(message):
    """Show an informational line."""
    _console().print(Text(message), soft_wrap=True)


def _iteration_line(rec):
    parts = [f"iter {rec.get('iteration', '?'):>5}"]
    if rec.get("seconds") is not None:
        parts.append(f"{rec['seconds']:8.2f}s")
    for key, label, fmt in (("primal", "primal", ".8g"), ("dual", "dual", ".8g"),
                            ("qp_gap", "qp gap", ".2e"), ("gap", "LP gap", ".2e"),
                            ("max_violation", "viol", ".2e")):
        value = rec.get(key)
        # the projection backends certify the LP gap only where a stage ends or measures it
        if value is not None and not (key == "gap" and value != value):
            parts.append(f"{label} {_num(value, fmt)}")
    if rec.get("active_constraints") is not None:
        parts.append(f"active {rec['active_constraints']}")
    if rec.get("gamma") is not None:  # dykstra: the stage of its gamma-continuation
        parts.append(f"gamma {rec['gamma']:.3g}")
    return "  ".join(parts)


def _polish_line(rec):
    """A polish event of the iteration records (:meth:`.stage.LPStage.polish_record`)."""
    rows = f"{rec.get('rows', 0):,}"
    if not rec.get("polish_round"):
        return (f"polish   {rec.get('seconds', 0.0):8.2f}s  the exact LP on {rows} active "
                f"rows (gamma {rec.get('gamma', 0.0):.3g}), separated round by round")
    parts = [f"polish round {rec['polish_round']}", f"{rec.get('seconds', 0.0):8.2f}s"]
    if rec.get("lp_value") is not None:
        parts.append(f"LP {_num(rec['lp_value'], '.10g')} (a lower bound)")
    if rec.get("max_violation") is not None:
        parts.append(f"viol {_num(rec['max_violation'], '.2e')}")
    parts.append(f"rows {rows}")
    return "  ".join(parts)


class RunProgress:
    """Stage lines and a live per-iteration line for ``solve`` and ``bound``.

    On a terminal the iteration line is redrawn in place; otherwise one line is printed
    per iteration, at most one per second (the first always). Use as a context manager.

    Parameters
    ----------
    quiet : bool
        Show nothing.
    """

    def __init__(self, quiet=False):
        self.quiet = quiet
        self.console = _console()
        self._live = None
        self._last = 0.0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Stop the live line."""
        if self._live is not None:
            self._live.stop()
            self._live = None

    def stage(self, name, info):
        """``on_stage`` hook of :func:`metricopt.pipeline.run`."""
        if self.quiet:
            return
        self.close()
        if name == "read":
            msg = info.summary.get("message") if info.summary else None
            size = f"{info.n} nodes, {info.m} edges" if hasattr(info, "m") else f"{info.n} points"
            line = f"Read {info.name}: {size}" + (f" ({msg})" if msg else "")
        elif name == "build":
            cons = info.n_constraints
            cons = "cycle inequalities (separated lazily)" if cons is None else f"{cons} constraints"
            what = ("open-wedge relaxation" if info.params.get("relaxation") == "wedges"
                    else "relaxation")
            line = (f"Built {info.kind} {what} ({info.structure}, {info.objective}): "
                    f"{info.n_variables} variables, {cons}")
        elif name == "solve":
            why = f" (auto: {info['auto_reason']})" if info.get("auto_reason") else ""
            line = f"Solving with {info['method']}{why}"
        elif name == "compile":
            line = ("Loading the kernels (compiling them takes a while on the first run "
                    "only; not counted in the solve time)")
        elif name == "round":
            line = f"Rounding ({info['method']}, {info['n_tries']} tries)"
        elif name == "editing" and info.get("kind") == "cd":
            line = ("Cluster deletion: its bound (the LP with independent-set rows) and the "
                    "rounding of that LP")
        elif name == "editing":
            line = ("Cluster editing: its bound (critical cliques, exhaustive search, the LP "
                    "with 2-partition rows) and the search from the clustering")
        else:
            line = f"Writing outputs to {info}"
        self.console.print(Text(line), soft_wrap=True)

    def iteration(self, record):
        """``callback`` of :func:`metricopt.pipeline.run`: show one iteration record."""
        if self.quiet:
            return
        if record.get("stage") == "polish":  # rare and slow: every one is kept
            self.close()
            self.console.print(Text(_polish_line(record)), soft_wrap=True)
            return
        line = Text(_iteration_line(record))
        if self.console.is_terminal:
            if self._live is None:
                self._live = Live(line, console=self.console, transient=True, auto_refresh=False)
                self._live.start()
            now = time.monotonic()
            draw = now - self._last >= _REDRAW_S
            self._last = now if draw else self._last
            self._live.update(line, refresh=draw)
            return
        now = time.monotonic()
        if self._last == 0.0 or now - self._last >= _THROTTLE_S:
            self._last = now
            self.console.print(line, soft_wrap=True)


def _ratio_text(ratio, lower_bound, numerator=None):
    if ratio is not None:
        return _num(ratio, ".6f")
    if lower_bound is None:
        return "-  (no certified lower bound)"
    if not math.isfinite(float(lower_bound)):
        return "-  (the lower bound is not finite)"
    if numerator is not None and math.isfinite(float(numerator)) and lower_bound > numerator:
        return "-  (the lower bound exceeds the objective: not a valid bound)"
    if numerator is None or not math.isfinite(float(numerator)):
        return "-  (no objective)"
    return "-  (the lower bound is not positive)"


def _kv_table(title, rows):
    table = Table(title=title, show_header=False, box=None, pad_edge=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in rows:
        if value is not None:
            table.add_row(key, value)
    return table


def _below_bound_text(report):
    lp_value, bound = report.get("lp_value"), report.get("lower_bound")
    if lp_value is None or bound is None or not lp_value < bound:
        return ""
    viol = report.get("max_violation")
    if viol:
        return f"  (below the bound: x violates constraints by up to {viol:.2e})"
    return "  (below the bound by round-off)"


def _score_rows(scores):
    """One row per value of a report's ``scores`` (other units of the objective)."""
    return [(name.replace("_", " "), _num(value, ".10g")) for name, value in (scores or {}).items()]


def _per_method_text(rnd):
    """``leiden 32.5 (ratio 1.23); pivot ...`` when more than one method was scored."""
    per_method = rnd.get("per_method") or {}
    if len(per_method) < 2:
        return None
    ratios = rnd.get("per_method_ratio") or {}
    parts = []
    for name, value in per_method.items():
        ratio = ratios.get(name)
        parts.append(f"{name} {_num(value, '.10g')}"
                     + (f" (ratio {_num(ratio, '.6f')})" if ratio is not None else ""))
    return "; ".join(parts)


def _relaxation_text(problem):
    """``"; open-wedge relaxation ..."`` for the wedge LP, else ``""``."""
    if (problem.get("params") or {}).get("relaxation") != "wedges":
        return ""
    return ("; open-wedge relaxation (STC+ LP): its LP value and lower bound are of that "
            "LP, below the full LP's")


def _refine_text(rnd, lower_bound):
    """``local (best of 4 tries): 12 moves, 1 merges, 25.3 -> 24.9 (ratio ...), 0.01 s``."""
    info = rnd.get("refine")
    if not info or info.get("method") == "none":
        return "none"
    before, after = rnd.get("objective"), rnd.get("refined_objective")
    tries = f" (best of {info['candidates']} tries)" if (info.get("candidates") or 1) > 1 else ""
    text = (f"{info['method']}{tries}: {info['moves']} moves, {info['merges']} merges, "
            f"{_num(before, '.10g')} -> {_num(after, '.10g')}")
    if lower_bound is not None and before is not None and after is not None and float(lower_bound) > 0:
        lb = float(lower_bound)
        text += f" (ratio {float(before) / lb:.6f} -> {float(after) / lb:.6f})"
    return text + f", {info['stopped']}, {_num(info.get('seconds'), '.3f')} s"


def _editing_text(editing):
    """``1514 (components by relaxation: 2-partition-lp 1; 240.0 s; editing bound used);
    search 1621 -> 1611, 6.1 s``."""
    rels = ", ".join(f"{k} {v}" for k, v in sorted(editing["relaxations"].items()))
    text = (f"{editing['bound']} ({'optimum, ' if editing['exact'] else ''}components by "
            f"relaxation: {rels}; {_num(editing['seconds'], '.1f')} s; "
            f"{editing['bound_source']} bound used)")
    found = editing.get("search")
    if found is not None:
        text += (f"; search {_num(found['objective_before'], '.10g')} -> "
                 f"{_num(found['objective'], '.10g')}, {_num(found['seconds'], '.1f')} s")
    return text


def run_summary(report):
    """Summary table of a ``solve`` or ``bound`` run."""
    graph, problem, rnd = report["graph"], report["problem"], report.get("rounding")
    rows = [
        ("graph", f"{graph['name']}: n={graph['n']}"
                  + (f", m={graph['m']}" if graph.get("m") is not None else "")),
        ("problem", f"{problem['kind']} ({problem['structure']}, {problem['objective']}), "
                    f"{problem['n_variables']} variables" + _relaxation_text(problem)),
        ("method", report["method"]
                   + (f"  (auto: {report['auto_reason']})" if report.get("auto_reason") else "")),
        ("status", f"{report['status_name']}: {report['message']}"),
        ("LP value", _num(report.get("lp_value"), ".10g") + _below_bound_text(report)),
        ("lower bound", _num(report.get("lower_bound"), ".10g")),
        ("LP / bound", _num(report.get("lp_approx_ratio"), ".6f")),
    ]
    editing = report.get("editing")
    ratio_bound = report.get("lower_bound")
    if editing is not None:
        rows.append(("editing bound", _editing_text(editing)))
        ratio_bound = editing["bound"] if editing["bound_source"] == "editing" else ratio_bound
    if rnd is not None:
        rows += [
            ("rounded objective", _num(report.get("rounded_objective"), ".10g")),
            ("certified ratio", _ratio_text(report.get("approximation_ratio"), ratio_bound,
                                            report.get("rounded_objective"))),
            ("rounding", f"{rnd['method']}, {rnd['n_clusters']} clusters, seed {rnd['seed']}"
             if problem["kind"] != "sc" else f"{rnd['method']}, seed {rnd['seed']}"),
            ("per method", _per_method_text(rnd)),
            ("refinement", _refine_text(rnd, ratio_bound)),
        ]
    rows += _score_rows(report.get("scores"))
    rows += [
        ("max violation", _num(report.get("max_violation"), ".3e")),
        ("iterations", _num(report.get("iterations"))),
        ("time", f"solve {_num(report.get('solve_seconds'), '.3f')} s, "
                 f"total {_num(report.get('total_seconds'), '.3f')} s"),
        ("peak memory",
         format_bytes(report["peak_memory_bytes"]) if report.get("peak_memory_bytes") else None),
        ("outputs", ", ".join(report["files"].values()) if report.get("files") else None),
    ]
    _console().print(_kv_table(None, rows))


def evaluation(result):
    """Summary of ``metricopt evaluate``."""
    rows = [
        ("graph", f"{result['graph']['name']}: n={result['graph']['n']}"),
        ("problem", result["problem"]["kind"]),
        ("file", result["file"]),
        ("clusters" if "n_clusters" in result else "cut size",
         str(result.get("n_clusters", result.get("cut_size")))),
        ("objective", _num(result["objective"], ".10g")),
        ("lower bound", _num(result.get("lower_bound"), ".10g")),
    ]
    editing = result.get("editing_bound")
    if editing is not None:
        rels = ", ".join(f"{k} {v}" for k, v in sorted(editing["relaxations"].items()))
        rows.append(("editing bound", f"{editing['bound']} ({'optimum, ' if editing['exact'] else ''}"
                                      f"components by relaxation: {rels}; "
                                      f"{_num(editing['seconds'], '.1f')} s; "
                                      f"{result.get('bound_source')} bound used)"))
    if result.get("lower_bound") is not None:
        rows.append(("certified ratio",
                     _ratio_text(result.get("approximation_ratio"), result["lower_bound"],
                                 result.get("objective"))))
    rows += _score_rows(result.get("scores"))
    refined = result.get("refined")
    if refined is not None:
        size = ("refined clusters", str(refined["n_clusters"])) if "n_clusters" in refined else \
            ("refined cut size", str(refined["cut_size"]))
        rows += [
            size,
            ("refined objective", _num(refined["objective"], ".10g")),
            ("refinement", f"{refined['moves']} moves, {refined['merges']} merges, "
                           f"{refined['stopped']}, {_num(refined['seconds'], '.3f')} s"
             + (f", written to {refined['file']}" if refined.get("file") else "")),
        ]
        if result.get("lower_bound") is not None:
            rows.append(("refined ratio", _ratio_text(refined.get("approximation_ratio"),
                                                      result["lower_bound"], refined["objective"])))
    _console().print(_kv_table(None, rows))


def graph_info(info):
    """Tables of ``metricopt info`` (stdout): the graph, each relaxation, each backend's
    memory."""
    console = output_console()
    graph = info["graph"]
    size = f"n={graph['n']}" + (f", m={graph['m']}" if graph.get("m") is not None else "")
    msg = (graph.get("summary") or {}).get("message")
    console.print(Text(f"{graph['name']}: {size}" + (f"\n{msg}" if msg else "")), soft_wrap=True)
    problems = Table(title="Relaxations", title_justify="left")
    for col in ("problem", "structure", "objective", "variables", "constraints"):
        problems.add_column(col, justify="right" if col in ("variables", "constraints") else "left")
    backends = Table(title=f"Estimated memory (allowance {format_bytes(info['memory_budget'])})",
                     title_justify="left")
    for col in ("problem", "method", "memory", "fits", "note"):
        backends.add_column(col, justify="right" if col == "memory" else "left")
    entries = []
    for prob in info["problems"]:
        entries.append(prob)
        if prob.get("other_layout"):
            entries.append(prob["other_layout"])
    for prob in entries:
        if "error" in prob:
            problems.add_row(prob["kind"], "-", "-", "-", Text(prob["error"]))
            continue
        cons = prob["n_constraints"]
        structure = prob["structure"]
        if (prob.get("params") or {}).get("relaxation") == "wedges":
            structure += ", open wedges"
        kind = prob["kind"] + (" (--layout support)" if structure == "support" else "")
        problems.add_row(kind, structure, prob["objective"],
                         str(prob["n_variables"]), "cycle family" if cons is None else str(cons))
        for row in prob["backends"]:
            mem = "-" if row["memory_bytes"] is None else format_bytes(row["memory_bytes"])
            fits = "-" if row["fits"] is None else ("yes" if row["fits"] else "no")
            note_ = row["reason"] or ("" if row["available"] else "not installed")
            if row["supported"] or structure != "support":
                backends.add_row(kind, row["method"], mem, fits, Text(note_ or ""))
    console.print(problems)
    console.print(backends)


def solvers(rows):
    """Table of ``metricopt solvers`` (stdout)."""
    table = Table(title="Registered backends (preference order)", title_justify="left")
    for col in ("method", "available", "exact", "structures", "description"):
        table.add_column(col, overflow="fold")
    for row in rows:
        exact = "-" if row["exact"] is None else ("yes" if row["exact"] else "no")
        table.add_row(row["name"], "yes" if row["available"] else "no", exact,
                      ", ".join(row["structures"]), Text(row["description"] or ""))
    output_console().print(table)


def solver_options(row):
    """Options of one backend: default, what it accepts and one line of description
    (stdout)."""
    table = Table(title=f"Options of {row['name']} (pass with --option KEY=VALUE or the named flags)",
                  title_justify="left")
    table.add_column("option", no_wrap=True)
    table.add_column("default")
    table.add_column("values")
    table.add_column("description", overflow="fold")
    help_ = row.get("option_help") or {}
    values = row.get("option_values") or {}
    for key, value in row["options"].items():
        table.add_row(key, Text(repr(value)), Text(values.get(key, "")),
                      Text(help_.get(key, "")))
    console = output_console()
    console.print(Text(f"{row['name']}: {row['description']}"))
    console.print(table)


def metric_check(answer):
    """The answer of ``metricopt check-metric`` (stdout): verdict, largest violations and
    the repair."""
    check = answer["check"]
    console = output_console()
    size = f"{check['name']}: {check['n']} x {check['n']} dissimilarity matrix, " \
           f"{check['n_triplets']} triplets"
    console.print(Text(size))
    tolerance = f"tolerance {check['tol']:g} x largest entry = {check['threshold']:.3g}"
    if check["is_metric"]:
        console.print(Text(f"metric: no violated triplet ({tolerance}; largest excess "
                           f"{check['max_violation']:.3g})"))
    else:
        count = check["violated_triplets"]
        console.print(Text(f"not a metric: {count} violated triplet{'s' if count != 1 else ''} "
                           f"({tolerance}); largest excess {check['max_violation']:.6g}"))
    if check["violations"]:
        console.print(Text("largest violations (for each pair i, j its most violated "
                           "detour through k):"))
        table = Table()
        for col in ("i", "j", "k", "d(i,j)", "d(i,k) + d(k,j)", "excess"):
            table.add_column(col, justify="left" if col in ("i", "j", "k") else "right")
        for v in check["violations"]:
            table.add_row(Text(str(v["i"])), Text(str(v["j"])), Text(str(v["k"])),
                          _num(v["d_ij"]), _num(v["d_ik"] + v["d_kj"]), _num(v["excess"]))
        console.print(table)
    repair = answer.get("repair")
    if repair is None:
        return
    after = repair["check"]
    verdict = ("a metric" if after["is_metric"]
               else f"{after['violated_triplets']} violated triplets left")
    bound = repair.get("lower_bound")
    rows = [
        ("nearest metric", f"p={repair['p']}: distance {_num(repair['distance'], '.10g')} "
                           f"(sum {'|x - d|' if repair['p'] == 1 else '(x - d)^2'} = "
                           f"{_num(repair['objective'], '.10g')})"),
        ("lower bound", None if bound is None else
         f"{_num(bound, '.10g')} on the sum (certified by {repair['method']})"),
        ("solve", f"{repair['method']}, {repair['status_name']}: {repair['message']}"),
        ("check", f"{verdict} (largest excess {after['max_violation']:.3g})"),
        ("written to", repair.get("file")),
    ]
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        if value is not None:
            console.print(Text(f"{key.ljust(width)}  {value}"))
