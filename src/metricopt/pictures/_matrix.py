"""The adjacency (or signed weight) matrix, rows and columns ordered by cluster.

Clusters are sorted by size, largest first (top left); nodes keep their order inside a
cluster. The matrix is drawn binned: at most ``max_pixels`` rows and columns, each pixel
the share of its node pairs that are edges (signed graphs: the positive share minus the
negative share), so memory is ``O(m + max_pixels**2)`` whatever ``n``. Cluster blocks at
least two pixels wide are outlined.
"""

import numpy as np

from ._save import new_figure

__all__ = ["cluster_order", "binned_matrix", "matrix_figure"]

#: Largest number of pixel rows (and columns) of the matrix picture.
MAX_PIXELS = 600
#: Nodes of the zoom on the largest clusters, drawn beside a binned matrix.
ZOOM_NODES = 300


def cluster_order(labels):
    """Node order by cluster (largest cluster first) and the cluster boundaries.

    Parameters
    ----------
    labels : ndarray of int, shape (n,)

    Returns
    -------
    order : ndarray of int64, shape (n,)
        Nodes in drawing order.
    bounds : ndarray of int64, shape (k + 1,)
        Position of each cluster's first node in ``order``, then ``n``.
    sizes : ndarray of int64, shape (k,)
        Sizes of the clusters in drawing order.
    """
    labels = np.asarray(labels, dtype=np.int64)
    _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    rank = np.empty(counts.size, dtype=np.int64)
    by_size = np.lexsort((np.arange(counts.size), -counts))  # ties: smaller label first
    rank[by_size] = np.arange(counts.size)
    order = np.lexsort((np.arange(labels.size), rank[inverse.ravel()]))
    sizes = counts[by_size]
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return order.astype(np.int64), bounds, sizes.astype(np.int64)


def binned_matrix(graph, order, max_pixels=MAX_PIXELS):
    """Edge density of the matrix in drawing order, binned to at most ``max_pixels``.

    Parameters
    ----------
    graph : Graph
    order : ndarray of int64, shape (n,)
    max_pixels : int

    Returns
    -------
    image : ndarray of float64, shape (p, p)
        Share of each pixel's node pairs that are edges (signed graphs: positive share
        minus negative share, in [-1, 1]); ``p = min(n, max_pixels)``.
    """
    n = graph.n
    p = int(min(n, max_pixels))
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    pixel = position * p // n
    u, v = pixel[graph.edges[:, 0]], pixel[graph.edges[:, 1]]
    sign = np.ones(graph.m) if not graph.is_signed else np.sign(graph.weights)
    cells = np.concatenate([u * p + v, v * p + u])
    counts = np.bincount(cells, weights=np.concatenate([sign, sign]), minlength=p * p)
    width = np.bincount(pixel, minlength=p).astype(np.float64)
    pairs = np.outer(width, width)
    np.fill_diagonal(pairs, width * (width - 1))  # pairs of distinct nodes, both orders
    with np.errstate(invalid="ignore", divide="ignore"):
        image = np.where(pairs > 0, counts.reshape(p, p) / np.maximum(pairs, 1), 0.0)
    return image


def matrix_figure(answer, *, max_pixels=MAX_PIXELS):
    """The matrix picture of an :class:`~metricopt.pictures.Answer`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.collections import PatchCollection
    from matplotlib.colors import Normalize, PowerNorm
    from matplotlib.patches import Rectangle

    graph = answer.graph
    n = graph.n
    order, bounds, sizes = cluster_order(answer.labels)
    image = binned_matrix(graph, order, max_pixels)
    p = image.shape[0]
    signed = graph.is_signed
    zoom = min(n, ZOOM_NODES) if p < n else 0
    fig = new_figure((11.5, 5.6) if zoom else (6.4, 5.6))
    axes = fig.subplots(1, 2) if zoom else [fig.add_subplot()]
    ax = axes[0]
    if signed:
        norm = Normalize(-1.0, 1.0)
        cmap = "RdBu"  # blue: positive (together), red: negative (apart)
        top = max(float(np.abs(image).max()), 1e-12)
        shown = np.sign(image) * np.sqrt(np.abs(image) / top)
    elif p < n:  # binned: one edge in a pixel of many pairs must still show
        from matplotlib import colormaps
        from matplotlib.colors import LogNorm

        positive = image[image > 0]
        low = float(positive.min()) if positive.size else 1e-6
        top = max(float(image.max()), low * 10)
        cmap = colormaps["Greys"].with_extremes(bad="white")
        norm, shown = LogNorm(low, top), np.ma.masked_less_equal(image, 0.0)
    else:
        top = max(float(image.max()), 1e-12)
        norm, cmap, shown = PowerNorm(0.5, 0.0, top), "Greys", image
    im = ax.imshow(shown, cmap=cmap, norm=norm, interpolation="nearest",
                   extent=(0, n, n, 0), rasterized=True)
    per_pixel = n / p
    boxes = [Rectangle((b, b), s, s) for b, s in zip(bounds[:-1], sizes)
             if s >= 2 and s >= 2 * per_pixel]
    color = "k" if signed else "tab:orange"
    ax.add_collection(PatchCollection(boxes, facecolor="none", edgecolor=color,
                                      linewidth=1.2, zorder=3, clip_on=False))
    if zoom:
        _draw_zoom(axes[1], graph, order, bounds, sizes, zoom, signed, color)
        ax.add_patch(Rectangle((0, 0), zoom, zoom, facecolor="none", edgecolor="tab:blue",
                               linestyle="--", linewidth=1.0, zorder=4))
    bar = fig.colorbar(im, ax=axes, shrink=0.8)
    if signed:
        bar.set_label("positive - negative share of pairs (sqrt scale)")
    else:
        bar.set_label("share of pairs that are edges" + (" (log scale)" if p < n else ""))
    ax.set_xlabel("nodes, ordered by cluster (largest first)")
    ax.set_ylabel("nodes, ordered by cluster")
    binned = f"{per_pixel:.1f} nodes per pixel" if p < n else "one pixel per node"
    small = int(np.sum(sizes < max(2, 2 * per_pixel)))
    what = "signed weights" if signed else "adjacency"
    if answer.kind == "sc":
        parts = f"the cut's sides, S of {int(np.sum(answer.labels == 1)):,} nodes"
    else:
        parts = f"{sizes.size:,} cluster" + ("" if sizes.size == 1 else "s")
    title = f"{answer.name}: {what}, {parts}"
    detail = (f"n = {n:,}, m = {graph.m:,}; {binned}; {len(boxes):,} block"
              f"{'' if len(boxes) == 1 else 's'} outlined")
    if small:
        detail += f", {small:,} smaller not"
    fig.suptitle(f"{title}\n{detail}", fontsize="medium")
    return fig


def _draw_zoom(ax, graph, order, bounds, sizes, zoom, signed, color):
    """The first ``zoom`` nodes in drawing order (the largest clusters), one pixel each."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    position = np.empty(graph.n, dtype=np.int64)
    position[order] = np.arange(graph.n)
    pu, pv = position[graph.edges[:, 0]], position[graph.edges[:, 1]]
    keep = (pu < zoom) & (pv < zoom)
    image = np.zeros((zoom, zoom))
    value = np.sign(graph.weights[keep]) if signed else 1.0
    image[pu[keep], pv[keep]] = value
    image[pv[keep], pu[keep]] = value
    ax.imshow(image, cmap="RdBu" if signed else "Greys", vmin=-1 if signed else 0, vmax=1,
              interpolation="nearest", extent=(0, zoom, zoom, 0), rasterized=True)
    boxes = [Rectangle((b, b), min(s, zoom - b), min(s, zoom - b))
             for b, s in zip(bounds[:-1], sizes) if b < zoom and s >= 2]
    ax.add_collection(PatchCollection(boxes, facecolor="none", edgecolor=color, linewidth=1.0,
                                      zorder=3, clip_on=False))
    ax.set_title(f"zoom: the first {zoom} nodes (largest clusters), one pixel per node",
                 fontsize="small")
    ax.set_xlabel("nodes, ordered by cluster")
