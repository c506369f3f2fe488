"""Commands for working over many graphs and runs: datasets, batch, report, plot.

Each command parses its arguments, calls one library function, and shows the outcome:
progress bars and tables go to stderr (rich), except the ``datasets list`` table, which
is the command's answer; machine-readable output (paths, names, ``--json``, ``--csv -``)
goes to stdout. Library errors become one-line ``Error:`` messages
with exit code 1; invalid option combinations exit with code 2.
"""

import json
import sys
import warnings
from pathlib import Path

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from rich.text import Text

from ..exceptions import InputError, MetricOptError, MetricOptWarning
from ._plot import make_plot_group

__all__ = ["COMMANDS", "datasets", "batch", "report", "plot"]


def _console():
    return Console(stderr=True, highlight=False, soft_wrap=False)


def _fail(exc):
    """A library error as a one-line ``Error:`` message (exit code 1)."""
    return click.ClickException(" ".join(str(exc).split()))


def _num(value, fmt=".6g"):
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    try:
        return format(float(value), fmt)
    except (TypeError, ValueError):
        return str(value)


# ------------------------------------------------------------------ datasets
@click.group(name="datasets")
def datasets():
    """Public graphs from the papers: list, describe, download, locate.

    Downloads are verified (sha256 and/or the size of the largest component) and
    cached as SNAP-style edge lists in $METRICOPT_DATA, else the user cache directory.
    A fetched dataset's name works wherever a GRAPH argument is expected.

    Example:

        metricopt datasets fetch ca-GrQc && metricopt solve cc ca-GrQc --out runs/grqc
    """


def _where(ds, bundled):
    from ..datasets import resolve_dataset

    if resolve_dataset(ds.name) is not None:
        return "cached"
    return "bundled" if ds.name in bundled else ""


def _entry(ds, bundled):
    from ..datasets import cached_path

    return {
        "name": ds.name, "title": ds.title, "collection": ds.collection, "url": ds.url,
        "mirrors": list(ds.mirrors), "archive": ds.archive, "member": ds.member,
        "format": ds.format, "sha256": ds.sha256, "n": ds.n, "m": ds.m,
        "file_nodes": ds.file_nodes, "file_edges": ds.file_edges, "checks": ds.checks(),
        "provenance": ds.provenance, "citation": ds.citation,
        "cached_path": str(cached_path(ds.name)), "status": _where(ds, bundled) or "not fetched",
    }


@datasets.command(name="list")
@click.option("--names", "names_only", is_flag=True, default=False,
              help="Print only the names, one per line, on stdout.")
@click.option("--json", "as_json", is_flag=True, default=False,
              help="Print every entry as JSON on stdout.")
def datasets_list(names_only, as_json):
    """List the registered datasets with their sizes and what a download is checked against.

    The table is printed on stdout (--names: the names only; --json: every entry).

    Example:

        metricopt datasets list
    """
    from ..datasets import bundled_names, registry

    entries = list(registry().values())
    bundled = set(bundled_names())
    if names_only:
        for ds in entries:
            click.echo(ds.name)
        return
    if as_json:
        click.echo(json.dumps([_entry(ds, bundled) for ds in entries], indent=2))
        return
    table = Table(title="metricopt datasets", title_justify="left")
    table.add_column("name", no_wrap=True)
    for col, justify in (("collection", "left"), ("n", "right"), ("m", "right"), ("checks", "left"),
                         ("here", "left")):
        table.add_column(col, justify=justify)
    for ds in entries:
        checks = ", ".join(c for c, ok in (("sha256", ds.sha256), ("n/m", ds.n is not None),
                                            ("file counts", ds.file_nodes is not None)) if ok)
        table.add_row(ds.name, ds.collection, _num(ds.n), _num(ds.m), checks, _where(ds, bundled))
    from ._render import output_console

    output_console().print(table)


@datasets.command(name="info")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print the entry as JSON on stdout.")
def datasets_info(name, as_json):
    """Show one dataset: source, format, checks, citation, cache location.

    Example:

        metricopt datasets info polblogs
    """
    from ..datasets import bundled_names, get_dataset

    try:
        ds = get_dataset(name)
    except MetricOptError as exc:
        raise _fail(exc) from None
    entry = _entry(ds, set(bundled_names()))
    if as_json:
        click.echo(json.dumps(entry, indent=2))
        return
    table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key in ("name", "title", "collection", "url", "mirrors", "archive", "member", "format",
                "sha256", "n", "m", "file_nodes", "file_edges", "checks", "provenance",
                "citation", "cached_path", "status"):
        value = entry[key]
        if isinstance(value, list):
            value = "; ".join(value) or "-"
        table.add_row(key, Text("-" if value is None else str(value)))
    _console().print(table)


class _DownloadBar:
    """A rich download bar fed by :func:`metricopt.datasets.fetch`'s progress callback."""

    def __init__(self, progress, name):
        self.progress, self.name, self.task = progress, name, None

    def __call__(self, done, total):
        if self.task is None or (done == 0 and self.progress.tasks[self.task].completed):
            self.task = self.progress.add_task(self.name, total=total)
        self.progress.update(self.task, completed=done, total=total)


@datasets.command(name="fetch")
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
@click.option("--from", "from_file", type=click.Path(exists=True, dir_okay=False),
              help="Register a file you already have instead of downloading (offline machines): "
                   "the original download, its data file, or the graph as .txt/.mtx/.gml/.net/.mat.")
@click.option("--url", help="Download from this address instead of the registry's.")
@click.option("--force", is_flag=True, default=False, help="Replace a cached copy.")
@click.option("--no-checksum", is_flag=True, default=False,
              help="Accept a data file whose sha256 differs from the registry if its sizes match.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds to wait for the server.")
def datasets_fetch(names, from_file, url, force, no_checksum, timeout):
    """Download, verify and cache datasets (nothing is cached if a check fails).

    Example:

        metricopt datasets fetch karate --from ~/Downloads/karate.zip
    """
    from ..datasets import fetch

    if (from_file or url) and len(names) > 1:
        raise click.UsageError("--from and --url take a single dataset NAME")
    if from_file and url:
        raise click.UsageError("use either --from or --url, not both")
    console = _console()
    for name in names:
        columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                   TransferSpeedColumn(), TimeRemainingColumn())
        try:
            with Progress(*columns, console=console, transient=True) as bar:
                result = fetch(name, from_file=from_file, url=url, force=force,
                               verify_checksum=not no_checksum, progress=_DownloadBar(bar, name),
                               timeout=timeout)
        except MetricOptError as exc:
            raise _fail(exc) from None
        if result.skipped:
            console.print(Text(f"{result.name}: already cached at {result.path} (--force to replace)"))
        else:
            checks = "; ".join(result.checked) or "nothing to check against"
            console.print(Text(f"{result.name}: cached at {result.path} (verified: {checks})"))


@datasets.command(name="path")
@click.argument("name")
def datasets_path(name):
    """Print the file a GRAPH argument NAME reads: the cached copy, else the bundled one.

    Example:

        wc -l "$(metricopt datasets path ca-GrQc)"
    """
    from ..datasets import bundled_names, bundled_path, get_dataset, resolve_dataset

    try:
        ds = get_dataset(name)
    except MetricOptError as exc:
        raise _fail(exc) from None
    path = resolve_dataset(ds.name)
    if path is None and ds.name in bundled_names():
        path = bundled_path(ds.name)
    if path is None:
        raise click.ClickException(
            f"{ds.name} is not fetched yet; run: metricopt datasets fetch {ds.name} "
            f"(offline: --from FILE)"
        )
    click.echo(str(path))


# ------------------------------------------------------------------ batch
class _BatchBar:
    """Jobs done / running / failed, fed by :func:`metricopt.batch.run_batch`."""

    def __init__(self, progress):
        self.progress = progress
        self.task = progress.add_task("jobs", total=None)

    def __call__(self, counts, row):
        text = (f"jobs: {counts.done} done, {counts.running} running, {counts.failed} failed"
                + (f", {counts.skipped} skipped" if counts.skipped else ""))
        self.progress.update(self.task, description=text, total=counts.total,
                             completed=counts.finished)
        if row is not None and row["state"] == "failed":
            self.progress.console.print(Text(f"failed: {row['job']}: {row['error']}", style="red"))


def _batch_table(rows):
    table = Table(title="batch", title_justify="left")
    table.add_column("job", no_wrap=True)
    for col, justify in (("state", "left"), ("status", "left"), ("LP", "right"),
                         ("ratio", "right"), ("seconds", "right")):
        table.add_column(col, justify=justify)
    for row in rows:
        table.add_row(row["job"], row["state"], row.get("status_name") or "-",
                      _num(row.get("lp_value")), _num(row.get("approximation_ratio"), ".4f"),
                      _num(row.get("seconds"), ".1f"))
    return table


@click.command(name="batch")
@click.argument("manifest", type=click.Path(exists=True, dir_okay=False))
@click.option("--jobs", "-j", "n_jobs", type=click.IntRange(min=1), default=None,
              help="Local worker processes.  [default: number of CPUs]")
@click.option("--scheduler", metavar="ADDRESS",
              help="Submit the jobs to this Dask distributed scheduler (e.g. tcp://host:8786) "
                   "instead of local processes.")
@click.option("--force", is_flag=True, default=False,
              help="Re-run jobs whose report.json exists (default: skip them, i.e. resume).")
@click.option("--out-root", type=click.Path(file_okay=False),
              help="Parent of the output directories of jobs without an 'out' value.  "
                   "[default: MANIFEST_STEM-runs next to the manifest]")
@click.option("--summary", "summary_path", type=click.Path(dir_okay=False),
              help="Batch summary CSV.  [default: MANIFEST_STEM-summary.csv next to the manifest]")
@click.option("--dry-run", is_flag=True, default=False,
              help="Show the jobs and where each parameter goes; run nothing.")
@click.option("--quiet", is_flag=True, default=False, help="No progress display or table.")
@click.option("--json", "as_json", is_flag=True, default=False,
              help="Print the summary rows as JSON on stdout.")
def batch(manifest, n_jobs, scheduler, force, out_root, summary_path, dry_run, quiet, as_json):
    """Run every job of a CSV or TOML manifest, in parallel; resumable.

    One failing job never stops the others: its summary row records the error, and
    the command exits with code 1 after all jobs ended. Each job claims its output
    directory first, so batches of one manifest running at the same time run every
    job once (the others list it as skipped). See docs/pipelines.md for the
    manifest format.

    Example:

        metricopt batch jobs.csv --jobs 2
    """
    from ..batch import read_manifest, run_batch, write_summary

    if scheduler and n_jobs:
        raise click.UsageError("--jobs applies to local processes; with --scheduler the cluster decides")
    try:
        jobs = read_manifest(manifest, out_root=out_root)
    except MetricOptError as exc:
        raise _fail(exc) from None
    console = _console()
    if dry_run:
        table = Table(title=f"{len(jobs)} jobs", title_justify="left")
        for col in ("job", "graph", "problem", "method", "problem params", "solver options",
                    "rounding", "out"):
            table.add_column(col, overflow="fold")
        for job in jobs:
            table.add_row(job.id, job.graph, job.problem, job.method, _kv(job.problem_params),
                          _kv(job.solver_options), _kv(job.rounding),
                          job.out if job.error is None else f"[red]{job.error}")
        console.print(table)
        return
    summary = Path(summary_path) if summary_path else Path(manifest).with_name(
        f"{Path(manifest).stem}-summary.csv")
    command = ["metricopt", *sys.argv[1:]] if sys.argv else None
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=console, disable=quiet) as progress:
            rows = run_batch(jobs, n_jobs=n_jobs, scheduler=scheduler, force=force,
                             progress=None if quiet else _BatchBar(progress), command=command)
        write_summary(rows, summary)
    except MetricOptError as exc:
        raise _fail(exc) from None
    if not quiet:
        console.print(_batch_table(rows))
        console.print(Text(f"summary: {summary}"))
    if as_json:
        from ..io.reports import to_jsonable

        click.echo(json.dumps(to_jsonable(rows), indent=2))
    failed = [row for row in rows if row["state"] == "failed"]
    if failed:
        first = failed[0]
        raise click.ClickException(
            f"{len(failed)} of {len(rows)} jobs failed (first: {first['job']}: {first['error']}); "
            f"summary: {summary}"
        )


def _kv(mapping):
    return "; ".join(f"{k}={v}" for k, v in mapping.items()) or "-"


# ------------------------------------------------------------------ report
@click.command(name="report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True), metavar="RUN_DIR...")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write one row per run to this CSV file ('-' for stdout).")
@click.option("--markdown", "md_path", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write a Markdown table of the key columns ('-' for stdout).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False),
              help="Write one self-contained HTML page (pictures embedded, no network "
                   "needed): each run's summary, certificate, convergence, pictures of the "
                   "answer and warnings; with several runs a sortable table of them.")
def report(runs, csv_path, md_path, html_path):
    """Tabulate runs: every parameter, sizes, values, bounds, ratios, time, memory, versions.

    RUN_DIR may be a run directory or a parent searched for report.json files. Read the
    CSV back with metricopt.reporting.load_report_csv (documented dtypes). --html writes
    a page to open in a browser.

    Example:

        metricopt report runs/ --csv results.csv --html results.html
    """
    from ..reporting import markdown_table, report_table, write_report_csv

    try:
        frame = report_table(runs)
        if html_path:
            from ..html_report import write_html_report

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MetricOptWarning)  # report_table said them
                write_html_report(runs, html_path)
        if csv_path:
            write_report_csv(frame, csv_path)
        if md_path:
            text = markdown_table(frame)
            if md_path == "-":
                click.echo(text, nl=False)
            else:
                from ..io.reports import atomic_write

                with atomic_write(md_path) as fh:
                    fh.write(text)
    except MetricOptError as exc:
        raise _fail(exc) from None
    console = _console()
    if html_path:
        console.print(Text(f"HTML report: {html_path}"))
    if not csv_path and not md_path and not html_path:
        table = Table(title=f"{len(frame)} runs", title_justify="left")
        cols = ("run", "graph", "problem", "method", "status_name", "lp_value", "lower_bound",
                "rounded_objective", "approximation_ratio", "gap", "max_violation", "solve_seconds")
        for col in cols:
            table.add_column(col, overflow="fold")
        shown = frame[list(cols)].astype(object)
        for rec in shown.where(shown.notna(), None).itertuples(index=False):
            table.add_row(Path(str(rec[0])).name, *(_num(v) for v in rec[1:]))
        console.print(table)
        console.print(Text("write it with --csv FILE or --markdown FILE"))
    else:
        console.print(Text(f"{len(frame)} runs tabulated"))



# ------------------------------------------------------------------ plot
@click.command(name="convergence")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False),
                metavar="RUN_DIR...")
@click.option("--compare", is_flag=True, default=False,
              help="Overlay all the runs in one picture (default: one picture per run).")
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="PNG file.  [default: RUN_DIR/convergence.png; with --compare, "
                   "convergence-comparison.png]")
def plot(runs, compare, output):
    """Draw relative gap and max violation against pass and time (log scale), with tolerances.

    Prints the path of each PNG written.

    Example:

        metricopt plot runs/a --compare runs/b -o compare.png
    """
    from ..plotting import plot_convergence

    if output and len(runs) > 1 and not compare:
        raise click.UsageError("--output with several runs needs --compare")
    try:
        if compare or len(runs) == 1:
            default = "convergence-comparison.png" if len(runs) > 1 else None
            written = [plot_convergence(list(runs), output or default)]
        else:
            written = []
            for run in runs:  # a damaged run directory is skipped, with a warning
                try:
                    written.append(plot_convergence(run))
                except MetricOptError as exc:
                    warnings.warn(f"skipped {run}: {exc}", MetricOptWarning, stacklevel=2)
            if not written:
                raise InputError("none of the run directories could be plotted")
    except MetricOptError as exc:
        raise _fail(exc) from None
    for path in written:
        click.echo(str(path))


plot = make_plot_group(plot)

#: Commands registered by the main ``metricopt`` group.
COMMANDS = [datasets, batch, report, plot]
