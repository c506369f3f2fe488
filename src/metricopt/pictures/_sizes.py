"""How big the clusters are, and for a cut its two sides and how sparse it is."""

import numpy as np

from ._save import new_figure

__all__ = ["sizes_figure", "cut_figure", "cut_measures"]


def sizes_figure(answer):
    """The distribution of cluster sizes: number of clusters of each size (log scales
    when the sizes span more than a decade), with the share of nodes per size.

    Returns
    -------
    matplotlib.figure.Figure
    """
    sizes = np.bincount(np.unique(answer.labels, return_inverse=True)[1].ravel())
    values, counts = np.unique(sizes, return_counts=True)
    fig = new_figure((6.4, 4.2))
    ax = fig.add_subplot()
    wide = values.max() > 10 * values.min() and values.size > 3
    ax.bar(values, counts, width=0.8 if not wide else values * 0.15, color="tab:blue",
           edgecolor="tab:blue")
    if wide:
        from matplotlib.ticker import FuncFormatter, NullFormatter

        plain = FuncFormatter(lambda v, _: f"{v:g}")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(plain)
        if counts.max() >= 20:
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(NullFormatter())
    if not wide or counts.max() < 20:
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("cluster size (nodes)")
    ax.set_ylabel("clusters")
    share = ax.twinx()
    share.plot(values, np.cumsum(values * counts) / sizes.sum(), color="tab:orange",
               marker="o" if values.size <= 40 else None, markersize=3)
    share.set_ylim(0, 1.02)
    share.set_ylabel("share of nodes in clusters up to this size", color="tab:orange")
    singletons = int(counts[values == 1].sum()) if (values == 1).any() else 0
    ax.set_title(f"{answer.name}: {sizes.size:,} clusters of {answer.graph.n:,} nodes\n"
                 f"largest {int(sizes.max()):,}, median {float(np.median(sizes)):g}, "
                 f"{singletons:,} singletons", fontsize="medium")
    return fig


def cut_measures(graph, in_cut):
    """Sides, cut and volumes of a cut, with its sparsity and conductance.

    Parameters
    ----------
    graph : Graph
    in_cut : array-like of bool, shape (n,)
        The side S.

    Returns
    -------
    dict
        ``size_s``, ``size_rest``, ``edges_s``, ``edges_rest``, ``cut_edges``,
        ``cut_weight`` (the weights of a weighted graph, else the count), ``volume_s``,
        ``volume_rest`` (weighted degrees), ``sparsity`` (``n * cut / (|S| |V \\ S|)``,
        the objective of ``sc``) and ``conductance`` (``cut / min(vol S, vol V \\ S)``);
        a measure with a zero denominator is NaN.
    """
    side = np.asarray(in_cut, dtype=bool)
    u, v = graph.edges[:, 0], graph.edges[:, 1]
    w = graph.weights if graph.weights is not None else np.ones(graph.m)
    across = side[u] != side[v]
    degree = np.bincount(graph.edges.ravel(), weights=np.repeat(w, 2), minlength=graph.n)
    s, rest = int(side.sum()), int(graph.n - side.sum())
    cut = float(w[across].sum())
    vol_s, vol_rest = float(degree[side].sum()), float(degree[~side].sum())
    out = {"size_s": s, "size_rest": rest,
           "edges_s": int(np.sum(side[u] & side[v])),
           "edges_rest": int(np.sum(~side[u] & ~side[v])),
           "cut_edges": int(across.sum()), "cut_weight": cut,
           "volume_s": vol_s, "volume_rest": vol_rest}
    out["sparsity"] = graph.n * cut / (s * rest) if s and rest else float("nan")
    low = min(vol_s, vol_rest)
    out["conductance"] = cut / low if low > 0 else float("nan")
    return out


def cut_figure(answer):
    """The two sides of a cut: their sizes, the edges inside each and across, with the
    cut's sparsity (the ``sc`` objective) and conductance.

    Returns
    -------
    matplotlib.figure.Figure
    """
    m = cut_measures(answer.graph, answer.labels.astype(bool))
    fig = new_figure((6.4, 4.2))
    nodes, edges = fig.subplots(1, 2, width_ratios=(1, 1.4))
    nodes.bar(["S", "V \\ S"], [m["size_s"], m["size_rest"]], color=["tab:red", "tab:blue"])
    nodes.set_ylabel("nodes")
    for x, value in enumerate((m["size_s"], m["size_rest"])):
        nodes.annotate(f"{value:,}", (x, value), ha="center", va="bottom")
    labels = ["inside S", "across", "inside V \\ S"]
    values = [m["edges_s"], m["cut_edges"], m["edges_rest"]]
    edges.bar(labels, values, color=["tab:red", "0.3", "tab:blue"])
    edges.set_ylabel("edges")
    for x, value in enumerate(values):
        edges.annotate(f"{value:,}", (x, value), ha="center", va="bottom")
    for ax in (nodes, edges):
        ax.margins(y=0.15)
    fig.suptitle(f"{answer.name}: cut S of {m['size_s']:,} nodes, {m['cut_edges']:,} edges across\n"
                 f"sparsity n cut / (|S| |V\\S|) = {m['sparsity']:.4g}, "
                 f"conductance cut / min vol = {m['conductance']:.4g}", fontsize="medium")
    return fig
