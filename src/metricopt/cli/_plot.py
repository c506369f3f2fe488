"""``metricopt plot``: convergence (the default), ``plot clusters`` (the answer's pictures)
and ``plot certificate`` (the certificates of several runs on one picture).

``metricopt plot RUN_DIR...`` keeps meaning ``metricopt plot convergence RUN_DIR...``: a
first argument that is not a subcommand's name goes to ``convergence``.
"""

import warnings

import click

from ..exceptions import MetricOptError

__all__ = ["PlotGroup", "make_plot_group", "clusters", "certificate"]


class PlotGroup(click.Group):
    """A group whose first argument, when it names no subcommand, is for ``default``."""

    default = "convergence"

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in self.get_help_option_names(ctx):
            args = [self.default, *args]
        return super().parse_args(ctx, args)


@click.command(name="clusters")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False),
                metavar="RUN_DIR...")
@click.option("--graph", "graph", default=None, metavar="GRAPH",
              help="The run's graph, when the file its report names cannot be read again "
                   "(one run only).")
@click.option("--output-dir", "-o", "out", type=click.Path(file_okay=False), default=None,
              help="Directory for the pictures (one run only).  [default: RUN_DIR]")
@click.option("--format", "formats", type=click.Choice(["png", "svg"]), multiple=True,
              help="Picture format, repeatable.  [default: png and svg]")
@click.option("--seed", type=click.IntRange(min=0, max=2**32 - 1), default=0, show_default=True,
              help="Seed of the node-link layout.")
def clusters(runs, graph, out, formats, seed):
    """Draw the answer of runs: matrix by cluster, cluster sizes (sc: the cut), certificate,
    and a node-link drawing (up to 2,000 nodes).

    Writes clusters-matrix, clusters-sizes (sc: cut-sides), certificate and
    clusters-network as PNG and SVG into each RUN_DIR (or --output-dir) and prints their
    paths. The run's graph is read again from the file its report names (or --graph).

    Example:

        metricopt plot clusters runs/karate
    """
    from ..pictures import FORMATS, plot_clusters

    if (graph or out) and len(runs) > 1:
        raise click.UsageError("--graph and --output-dir take a single RUN_DIR")
    written = []
    for run in runs:
        try:
            files = plot_clusters(run, out, graph=graph, formats=formats or FORMATS, seed=seed)
        except MetricOptError as exc:
            if len(runs) == 1:
                raise click.ClickException(" ".join(str(exc).split())) from None
            warnings.warn(f"skipped {run}: {exc}", stacklevel=2)
            continue
        written += [p for paths in files.values() for p in paths]
    if not written:
        raise click.ClickException("none of the runs could be drawn")
    for path in written:
        click.echo(str(path))


@click.command(name="certificate")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True), metavar="RUN_DIR...")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False), default=None,
              help="File name without suffix (or with .png/.svg).  [default: RUN_DIR/certificate "
                   "for one run, certificate-comparison for several]")
@click.option("--format", "formats", type=click.Choice(["png", "svg"]), multiple=True,
              help="Picture format, repeatable.  [default: png and svg]")
def certificate(runs, output, formats):
    """Draw the certificates of runs on one picture: lower bound, LP value, rounded and
    refined objective, certified ratio.

    RUN_DIR may be a parent searched for report.json files. Runs of one graph and problem
    share the objective's axis; others are drawn relative to their own lower bound.

    Example:

        metricopt plot certificate runs/ -o certificates
    """
    from pathlib import Path

    from ..io.reports import read_report_json
    from ..pictures import FORMATS, certificate_figure
    from ..pictures._save import save_figure
    from ..reporting import find_runs

    try:
        found = find_runs(runs)
        loaded = [(Path(r).name, read_report_json(Path(r) / "report.json")) for r in found]
    except MetricOptError as exc:
        raise click.ClickException(" ".join(str(exc).split())) from None
    if output is None:
        stem = Path(found[0]) / "certificate" if len(found) == 1 else Path("certificate-comparison")
    else:
        stem = Path(output)
        if stem.suffix.lower() in (".png", ".svg"):
            formats = formats or (stem.suffix.lower()[1:],)
            stem = stem.with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    for path in save_figure(certificate_figure(loaded), stem, formats or FORMATS):
        click.echo(str(path))


_PLOT_HELP = """Draw runs: convergence (the default), the answer, certificates.

    'metricopt plot RUN_DIR...' draws the convergence, as 'metricopt plot convergence';
    'metricopt plot clusters RUN_DIR...' draws the clustering or cut and its certificate;
    'metricopt plot certificate RUN_DIR...' puts the certificates of runs on one picture.

    Example:

        metricopt plot clusters runs/karate
    """


def make_plot_group(convergence):
    """The ``plot`` group: ``convergence`` (also the default), ``clusters``, ``certificate``."""
    group = PlotGroup(name="plot", help=_PLOT_HELP)
    group.add_command(convergence, name="convergence")
    group.add_command(clusters)
    group.add_command(certificate)
    return group
