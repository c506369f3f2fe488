"""The ``metricopt`` commands: thin wrappers over :mod:`metricopt.pipeline`.

Each command parses its options, calls one library function and hands the result to
:mod:`metricopt.cli._render` (progress and summaries on stderr; the tables that are a
listing's or a check's answer on stdout) or prints JSON (stdout). Library errors become a
one-line ``Error: ...`` and exit code 1; usage errors exit 2; Ctrl-C exits 130, and
``solve`` and ``bound`` answer Ctrl-C, SIGTERM and SIGHUP alike (partial report,
checkpoint) with 130, 143 and 129 (:mod:`metricopt._signals`).
"""

import importlib.util
import json
import warnings
from pathlib import Path

import click

from .. import _signals
from .._choices import REFINE_METHODS
from ..exceptions import ConvergenceWarning, MetricOptError
from ..solvers import registered_solvers
from . import _render as render
from ._options import (
    KINDS,
    ByteSize,
    Real,
    check_applicable,
    collect_problem_params,
    collect_read_options,
    collect_solver_options,
    given_problem_params,
    output_options,
    problem_options,
    read_options,
    rounding_options,
    solver_options,
)

__all__ = ["cli", "main"]

#: Exit code after Ctrl-C (128 + SIGINT), as shells report it; SIGTERM and SIGHUP exit
#: 128 + their number (143, 129).
EXIT_INTERRUPTED = 130


def _pipeline():
    """:mod:`metricopt.pipeline`, imported when a command runs (not for ``--help``)."""
    from .. import pipeline

    return pipeline


def _one_line(text):
    return " ".join(str(text).split()) or "unknown error"


def _caused_by_interrupt(exc):
    """True when ``exc`` wraps a KeyboardInterrupt.

    Ctrl-C that lands while compiled (numba) code returns surfaces as a SystemError whose
    cause is the KeyboardInterrupt.
    """
    return _signals.interrupt_cause(exc) is not None


def _interrupted(ctx, exc=None):
    """Exit as a run stopped by SIGINT, SIGTERM or SIGHUP: 128 + the signal's number."""
    click.echo(f"Error: interrupted by {_signals.interrupted_by(exc)}", err=True)
    ctx.exit(_signals.exit_code(exc))


class MetricoptGroup(click.Group):
    """Click group that records the command line and maps errors to exit codes."""

    def make_context(self, info_name, args, parent=None, **extra):
        argv = ["metricopt", *args]  # the script name, however the group was invoked
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except BrokenPipeError:  # --help or --version into a closed pipe
            _detach_closed_stdout()
            raise click.exceptions.Exit(0) from None
        ctx.meta["metricopt.argv"] = argv
        return ctx

    def invoke(self, ctx):
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                return super().invoke(ctx)
        except MetricOptError as exc:
            raise click.ClickException(_one_line(exc)) from None
        except BrokenPipeError:
            _detach_closed_stdout()
            ctx.exit(0)
        except MemoryError:
            raise click.ClickException(
                "out of memory; try a smaller instance, another --method, or --max-memory"
            ) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(_one_line(f"{where}{exc.strerror or exc}")) from None
        except KeyboardInterrupt as exc:
            _interrupted(ctx, exc)
        except Exception as exc:
            if not _caused_by_interrupt(exc):
                raise
            _interrupted(ctx, _signals.interrupt_cause(exc))
        finally:
            # the solver's own "stopped early" warning repeats the line solve printed
            # (whose message may have a note appended: "ended 3.2 s past the time limit")
            said = ctx.meta.get("metricopt.stopped_early")
            for w in caught:
                if said and issubclass(w.category, ConvergenceWarning) and (
                        said in str(w.message)
                        or str(w.message).split(": ", 1)[-1] in said):
                    continue
                render.warning(_one_line(w.message))


def _detach_closed_stdout():
    """Point standard output at the null device after its reader went away.

    A consumer such as ``head`` may close the pipe before the output is complete; like
    other Unix tools the run then ends quietly with exit code 0, and Python's final
    flush of the dead stream must not fail either.
    """
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _json_out(data):
    click.echo(json.dumps(data, indent=2))


def _argv(ctx):
    return ctx.meta.get("metricopt.argv")


def _group_help():
    from ..datasets import bundled_names

    return f"""Metric-constrained LP/QP relaxations for graph clustering, with certified ratios.

    GRAPH is an edge list (SNAP style, optionally signed or weighted), a Matrix Market
    file, a dissimilarity matrix (.npy or CSV; metric nearness), any of them gzipped, a
    bundled dataset name ({', '.join(bundled_names())}), or - for standard input (an
    edge list unless --format names another format).

    Example:

        metricopt solve cc karate --out runs/karate
    """


@click.group(cls=MetricoptGroup, help=_group_help(),
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="metricopt", prog_name="metricopt")
def cli():
    pass


def _check_export(ctx, kind, export):
    """``--export FILE``: a clustering or cut to write, and a suffix naming the format."""
    if export is None:
        return
    from ..io.exports import EXPORT_FORMATS, export_format

    if kind == "mn":
        raise click.UsageError("--export does not apply to mn (metric nearness has no "
                               "clustering)", ctx)
    if export_format(export) is None:
        raise click.UsageError(f"--export {export}: the name must end in "
                               f"{' or '.join(EXPORT_FORMATS.values())} (optionally .gz), "
                               f"which chooses the format", ctx)


def _run(ctx, kind, graph, opts, *, bound_only):
    check_applicable(ctx, kind, opts, bound_only=bound_only)
    export = opts.get("export")
    _check_export(ctx, kind, export)
    params = collect_problem_params(kind, opts, _pipeline().problem_parameters(kind))
    rounding = None
    if not bound_only:
        rounding = {"method": opts["round_method"].lower(), "n_tries": opts["round_tries"],
                    "seed": opts.get("seed"), "refine": opts["refine"].lower(),
                    "time_limit": opts.get("round_time_limit")}
    # SIGTERM and SIGHUP stop a run as Ctrl-C does (partial report, checkpoint, lock
    # released); a batch's processes keep their default (the jobs are run by workers)
    with _signals.signals_interrupt(), render.RunProgress(quiet=opts["quiet"]) as progress:
        outcome = _pipeline().run(
            graph, kind, method=opts["method"].lower(), problem_params=params,
            solver_options=collect_solver_options(opts), rounding=rounding, out=opts["out"],
            read_options=collect_read_options(opts), callback=progress.iteration,
            bound_only=bound_only, command=_argv(ctx), on_stage=progress.stage,
            force=opts["force"], export=export,
        )
    if not opts["quiet"]:
        render.run_summary(outcome.report)
    if opts["as_json"]:
        _json_out(outcome.summary)
    if outcome.interrupted:
        click.echo(f"Error: interrupted by {_signals.interrupted_by()}"
                   f"{_partial_note(outcome, opts)}", err=True)
        ctx.exit(_signals.exit_code())
    if outcome.result.get("x") is None:
        raise click.ClickException(
            _one_line(f"{outcome.report['method']} returned no solution "
                      f"({outcome.report['status_name']}): {outcome.report['message']}")
        )
    if not outcome.report["success"]:
        ctx.meta["metricopt.stopped_early"] = outcome.report["message"]
        render.warning(f"{outcome.report['method']} stopped early "
                       f"({outcome.report['status_name']}): {outcome.report['message']}")


def _partial_note(outcome, opts):
    """Where an interrupted run's files are, and how to go on from them."""
    checkpoint = opts.get("checkpoint")
    if checkpoint is not None and outcome.result.get("x") is None:
        checkpoint = None  # stopped before the first iteration: nothing was saved
    if outcome.out is None:
        return f"; checkpoint in {checkpoint} (continue with --resume {checkpoint})" \
            if checkpoint is not None else ""
    if checkpoint is not None:
        return (f"; partial results in {outcome.out}, checkpoint in {checkpoint}: continue "
                f"with --resume {checkpoint} --out {outcome.out} --force")
    return (f"; partial results in {outcome.out} (a new run into {outcome.out} needs "
            f"--force)")


@cli.command()
@click.argument("kind", metavar="PROBLEM", type=KINDS)
@click.argument("graph")
@problem_options
@read_options
@solver_options
@rounding_options
@output_options
@click.option("--export", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the graph with each node's cluster (sc: in_cut, 1 for the "
                   "side S) as a node attribute, for Gephi or Cytoscape; the suffix picks "
                   "the format: .graphml or .gexf (.gz compresses).")
@click.pass_context
def solve(ctx, kind, graph, **opts):
    """Solve PROBLEM's relaxation on GRAPH, round it, and certify the ratio.

    PROBLEM is cc (correlation clustering), sc (sparsest cut), mn (metric nearness;
    no rounding) or cd (cluster deletion), or the name written out (sparsest-cut). The
    summary goes to stderr; --json prints it on stdout; --out writes report.json,
    iterations.csv, clusters.csv or cut.csv, and solution.npz; --export writes the
    clustered graph as GraphML or GEXF. The certified ratio is rounded objective /
    lower bound.

    Example:

        metricopt solve cc karate --method highs --seed 0 --export karate.graphml
    """
    _run(ctx, kind, graph, opts, bound_only=False)


@cli.command()
@click.argument("kind", metavar="PROBLEM", type=KINDS)
@click.argument("graph")
@problem_options
@read_options
@solver_options
@output_options
@click.pass_context
def bound(ctx, kind, graph, **opts):
    """Compute a certified lower bound on PROBLEM's optimum on GRAPH (no rounding).

    Takes the same options as solve, without rounding; --out writes report.json,
    iterations.csv and solution.npz.

    Example:

        metricopt bound sc dolphins --json
    """
    _run(ctx, kind, graph, opts, bound_only=True)


@cli.command()
@click.argument("kind", metavar="PROBLEM", type=KINDS)
@click.argument("graph")
@click.argument("file", metavar="CLUSTERS_OR_CUT_FILE", type=click.Path())
@click.option("--lower-bound", type=Real(), default=None,
              help="A certified lower bound on the optimum (e.g. from 'metricopt bound').")
@click.option("--report", "report_path", type=click.Path(), default=None,
              help="A run's report.json (or its directory): use its lower bound and problem "
                   "parameters.")
@click.option("--refine", type=click.Choice(REFINE_METHODS, case_sensitive=False), default="none",
              show_default=True,
              help="Also improve the clustering (cut) by local search, as solve does after "
                   "its rounding, and report the refined objective and ratio beside the "
                   "given ones ('auto' is 'local').")
@click.option("--refined-out", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Write the refined clustering (cut) there, as clusters.csv (cut.csv).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True,
              help="Seed of the refinement's node orders.")
@click.option("--editing-bound", is_flag=True, default=False,
              help="cc --weights unit: also compute the cluster-editing bound (exact search on "
                   "small components, the triangle LP with 2-partition rows on the others); cd: "
                   "the cluster-deletion bound (the LP with independent-set rows); certify "
                   "with the larger bound.")
@click.option("--editing-time-limit", type=Real(), default=None, metavar="SECONDS",
              help="Seconds for each component's LP of --editing-bound.")
@problem_options
@read_options
@click.option("--json", "as_json", is_flag=True, default=False,
              help="Print the evaluation as JSON on stdout.")
def evaluate(kind, graph, file, lower_bound, report_path, as_json, refine, refined_out, seed,
             editing_bound, editing_time_limit, **opts):
    """Score a clustering or cut of GRAPH and, given a lower bound, its certified ratio.

    The file has one node per line: "node,cluster" CSV (as clusters.csv) or
    whitespace-separated "node cluster"; for sc, "node,in_cut" with in_cut 0 or 1 (as
    cut.csv). Node names are the labels of the graph file; every node of the graph
    (after pre-processing) must appear once. --refine local also improves it by the
    local search solve runs after its rounding and reports both objectives and ratios.

    Example:

        metricopt evaluate cc karate louvain.csv --report runs/karate-cc --refine local
    """
    if lower_bound is not None and report_path is not None:
        raise click.UsageError("use either --lower-bound or --report, not both")
    if refined_out is not None and refine.lower() == "none":
        raise click.UsageError("--refined-out needs --refine local")
    if report_path is not None and Path(report_path).is_dir():
        report_path = str(Path(report_path) / "report.json")
    result = _pipeline().evaluate_file(
        graph, kind, file, problem_params=collect_problem_params(
            kind, opts, _pipeline().problem_parameters(kind)),
        read_options=collect_read_options(opts), lower_bound=lower_bound, report=report_path,
        refine=refine.lower(), seed=seed, refined_out=refined_out,
        editing_bound=editing_bound, editing_time_limit=editing_time_limit,
    )
    render.evaluation(result)
    if as_json:
        _json_out(result)


@cli.command()
@click.argument("graph")
@click.option("--problem", "kinds", type=KINDS, multiple=True,
              help="Describe only this problem (repeatable; default: all).")
@problem_options
@read_options
@click.option("--max-memory", type=ByteSize(), default=None,
              help="Memory allowance to compare against, e.g. 8G (default: what is available).")
@click.option("--json", "as_json", is_flag=True, default=False,
              help="Print the description as JSON on stdout.")
def info(graph, kinds, max_memory, as_json, **opts):
    """Show GRAPH's size, pre-processing, and each relaxation's size and memory needs.

    For every problem: variables and constraints, and for every registered backend
    whether it handles the problem and the memory it would need (and whether that
    fits the allowance). The tables are printed on stdout (--json: the same as JSON);
    what reading the graph dropped goes to stderr.

    Example:

        metricopt info football --problem cc --max-memory 8G
    """
    params = given_problem_params(opts)
    result = _pipeline().describe(graph, kinds=list(kinds) or None,
                               read_options=collect_read_options(opts),
                               problem_params=params, max_memory=max_memory)
    if as_json:
        _json_out(result)
    else:
        render.graph_info(result)


@cli.command()
@click.argument("method", required=False)
@click.option("--json", "as_json", is_flag=True, default=False,
              help="Print the table as JSON on stdout.")
def solvers(method, as_json):
    """List the registered backends, or show one backend's options.

    Backends are listed in preference order, with whether their dependencies are
    installed and whether they are exact; a backend's options come with their
    defaults and one line each from the backend's documentation. Options can be set
    with --option KEY=VALUE on solve and bound. The table is printed on stdout
    (--json: the same as JSON).

    Example:

        metricopt solvers highs
    """
    rows = _pipeline().solver_table()
    if method is not None:
        match = [r for r in rows if r["name"] == method.lower()]
        if not match:
            names = ", ".join(r["name"] for r in rows)
            raise click.UsageError(f"unknown method {method!r}; choose one of: {names}")
        rows = match
    if as_json:
        _json_out(rows if method is None else rows[0])
    elif method is not None:
        render.solver_options(rows[0])
    else:
        render.solvers(rows)


@cli.command(name="check-metric")
@click.argument("matrix", type=click.Path(dir_okay=False))
@click.option("--tol", type=Real(0.0), default=1e-9, show_default=True,
              help="Excesses up to TOL times the largest dissimilarity are not violations.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many of the largest violations to list.")
@click.option("--repair", is_flag=True, default=False,
              help="Also compute the nearest metric (metric nearness) and its distance.")
@click.option("--p", "p", type=click.Choice(["1", "2"]), default=None,
              help="--repair: the distance, sum |x - d| (1) or Euclidean (2).  [default: 2]")
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False), default=None,
              metavar="FILE", help="--repair: write the nearest metric here (.npy, or .csv "
                                   "with a header of labels).")
@click.option("--method", type=click.Choice(["auto", *registered_solvers()],
                                            case_sensitive=False),
              default="auto", show_default=True, help="--repair: the backend.")
@click.option("--json", "as_json", is_flag=True, default=False,
              help="Print the answer as JSON on stdout.")
@click.pass_context
def check_metric(ctx, matrix, tol, top, repair, p, out, method, as_json):
    """Check that a dissimilarity MATRIX satisfies the triangle inequality.

    MATRIX is a .npy file or a CSV (optional header row of labels), gzipped or not,
    square, symmetric and non-negative. The answer, on stdout: the number of
    violated triplets {i, j, k} (d_ij > d_ik + d_kj), the largest violations with
    their labels and, with --repair, the nearest metric by metric nearness and its
    distance to MATRIX (-o writes it). The exit code is 0 whether or not MATRIX is a
    metric; --json gives is_metric for scripts.

    Example:

        metricopt check-metric distances.npy --repair --p 2 -o nearest.npy
    """
    from ..metric_check import check_metric as check
    from ..metric_check import repair_metric

    for given, flag in ((p is not None, "--p"), (out is not None, "-o/--out"),
                        (method.lower() != "auto", "--method")):
        if given and not repair:
            raise click.UsageError(f"{flag} needs --repair", ctx)
    if out is not None:
        from ..io._matrix import MATRIX_SUFFIXES

        if not any(out.lower().endswith(sfx) for sfx in MATRIX_SUFFIXES):
            raise click.UsageError(f"-o {out}: the name must end in "
                                   f"{' or '.join(MATRIX_SUFFIXES)}", ctx)
    result = check(matrix, tol=tol, top=top)
    answer = {"check": dict(result)}
    if repair:
        fixed = repair_metric(matrix, p=int(p or 2), method=method.lower(), tol=tol)
        if out is not None:
            from ..io._matrix import write_matrix

            write_matrix(out, fixed["matrix"], fixed["labels"])
        answer["repair"] = {k: v for k, v in fixed.items() if k not in ("matrix", "labels")}
        answer["repair"]["check"] = dict(fixed.check)
        answer["repair"]["file"] = out
    if as_json:
        from ..io.reports import to_jsonable

        _json_out(to_jsonable(answer))
    else:
        render.metric_check(answer)


def _register_pipeline_commands():
    """Add the batch-pipeline commands (datasets, batch, report, plot) when installed."""
    if importlib.util.find_spec("metricopt.cli.pipelines") is not None:
        from .pipelines import COMMANDS as _PIPELINE_COMMANDS

        commands = _PIPELINE_COMMANDS
        for command in commands.values() if isinstance(commands, dict) else commands:
            cli.add_command(command)


_register_pipeline_commands()


def main(argv=None):
    """Entry point of the ``metricopt`` script and ``python -m metricopt``."""
    try:
        return cli.main(args=argv, prog_name="metricopt")
    except BrokenPipeError:  # the reader of stdout left (e.g. ``| head``) outside a command
        _detach_closed_stdout()
        return 0
