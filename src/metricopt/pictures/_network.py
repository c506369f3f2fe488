"""A node-link drawing coloured by cluster, for graphs up to :data:`MAX_NODES` nodes.

Positions come from networkx's spring layout, seeded, so the same answer gives the same
picture. The ten largest clusters get their own colours; the rest are grey. Above
:data:`MAX_NODES` nodes a drawing is a hairball that takes minutes to lay out: there is
none, and :func:`network_figure` says so (the matrix picture shows the clustering at
any size).
"""

import numpy as np

from ..exceptions import InputError
from ._matrix import cluster_order
from ._save import new_figure

__all__ = ["MAX_NODES", "network_figure"]

#: Largest graph drawn as nodes and links.
MAX_NODES = 2000
_COLOURED = 10


def network_figure(answer, *, seed=0, max_nodes=MAX_NODES):
    """The node-link drawing of an :class:`~metricopt.pictures.Answer`.

    Parameters
    ----------
    answer : Answer
    seed : int, default=0
        Seed of the layout.
    max_nodes : int, default=MAX_NODES

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InputError
        The graph has more than ``max_nodes`` nodes.
    """
    import networkx as nx
    from matplotlib.collections import LineCollection

    graph = answer.graph
    if graph.n > max_nodes:
        raise InputError(f"{answer.name}: {graph.n:,} nodes is above the {max_nodes:,} a "
                         f"node-link drawing is made for; the matrix picture shows the "
                         f"clustering")
    g = nx.Graph()
    g.add_nodes_from(range(graph.n))
    g.add_edges_from(graph.edges.tolist())
    pos = nx.spring_layout(g, seed=seed, k=None if graph.n < 200 else 2.0 / np.sqrt(graph.n))
    xy = np.array([pos[i] for i in range(graph.n)])
    order, bounds, sizes = cluster_order(answer.labels)
    colour_of = np.full(graph.n, -1)
    for c in range(min(_COLOURED, sizes.size)):
        if sizes[c] > 1 or answer.kind == "sc":
            colour_of[order[bounds[c]:bounds[c + 1]]] = c
    from matplotlib import colormaps

    palette = colormaps["tab10"].colors
    colours = np.array([palette[c] if c >= 0 else (0.6, 0.6, 0.6) for c in colour_of])
    if answer.kind == "sc":  # as in the cut picture: S red, the rest blue
        colours = np.where(answer.labels[:, None] == 1, [palette[3]], [palette[0]])
    large = graph.n > 500
    fig = new_figure((6.4, 6.4))
    ax = fig.add_subplot()
    segments = xy[graph.edges]
    if graph.is_signed:
        edge_colours = np.where(graph.weights[:, None] < 0, [[0.85, 0.2, 0.2, 0.3]],
                                [[0.3, 0.3, 0.3, 0.3]])
    else:
        edge_colours = [(0.3, 0.3, 0.3, 0.25 if large else 0.5)]
    ax.add_collection(LineCollection(segments, colors=edge_colours,
                                     linewidths=0.3 if large else 0.7, rasterized=large,
                                     zorder=1))
    size = 8 if large else max(20, 3000 / graph.n)
    ax.scatter(xy[:, 0], xy[:, 1], s=size, c=colours, edgecolors="k",
               linewidths=0.0 if large else 0.4, zorder=2, rasterized=large)
    ax.set_aspect("equal")
    ax.axis("off")
    coloured = int(np.sum(colour_of >= 0))
    if answer.kind == "sc":
        what, colours_text = "cut", "red: the side S, blue: the rest"
    else:
        what = f"{sizes.size:,} cluster" + ("" if sizes.size == 1 else "s")
        coloured_k = min(_COLOURED, int(np.sum(sizes > 1)))
        colours_text = f"colours: the {coloured_k} largest clusters"
        rest = graph.n - coloured
        if rest:
            colours_text += f"; grey: {rest:,} node{'' if rest == 1 else 's'} in smaller ones"
    if graph.is_signed:
        colours_text += "; red edges: negative"
    ax.set_title(f"{answer.name}: {what}, spring layout (seed {seed})\n{colours_text}",
                 fontsize="medium")
    return fig
