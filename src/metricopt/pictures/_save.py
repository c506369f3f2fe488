"""Figures on matplotlib's Agg canvas, saved atomically as PNG and SVG."""

import io
from pathlib import Path

from .._atomic import atomic_write

__all__ = ["new_figure", "save_figure", "png_bytes", "FORMATS"]

#: Formats a picture is written in, by default.
FORMATS = ("png", "svg")


def new_figure(figsize):
    """A figure on an Agg canvas (no display, pyplot's global state left alone)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig, stem, formats=FORMATS, dpi=100):
    """Write ``fig`` as ``stem.png``, ``stem.svg``... each atomically.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    stem : pathlib.Path
        The path without its suffix.
    formats : sequence of {"png", "svg"}
    dpi : int

    Returns
    -------
    list of pathlib.Path
    """
    written = []
    for fmt in formats:
        path = Path(f"{stem}.{fmt}")
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=_metadata(fmt))
        with atomic_write(path, "wb") as fh:
            fh.write(buf.getvalue())
        written.append(path)
    return written


def png_bytes(fig, dpi=100):
    """``fig`` as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata=_metadata("png"))
    return buf.getvalue()


def _metadata(fmt):
    # no creation date: the same picture gives the same bytes
    return {"Date": None} if fmt == "svg" else {"Software": None}
