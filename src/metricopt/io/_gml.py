"""GML files read as graphs (Newman's network data, among others).

The file is a nested list of ``key value`` pairs; the first ``graph [...]`` holds
``node [ id ... ]`` and ``edge [ source ... target ... ]`` lists. Node ids become the
labels, every declared node exists with or without edges, and edge attributes (``value``
included) are ignored.
"""

import re

from metricopt.exceptions import InputError
from metricopt.io._records import records_from_labels

__all__ = ["parse_gml"]

_GML_TOKEN = re.compile(r'"[^"]*"|\[|\]|[^\s\[\]"]+')


def parse_gml(text, path):
    """Parse the nodes and edges of a GML file.

    Parameters
    ----------
    text : str
        The file's text.
    path : str or Path
        Used in error messages.

    Returns
    -------
    Records
        Without weights.
    """
    stack = [[]]
    key = None
    for match in _GML_TOKEN.finditer(text):
        token = match.group()
        if token == "[":
            if key is None:
                raise InputError(f"{path}: malformed GML (a list without a key)")
            child = []
            stack[-1].append((key, child))
            stack.append(child)
            key = None
        elif token == "]":
            if len(stack) == 1 or key is not None:
                raise InputError(f"{path}: malformed GML (unbalanced ']')")
            stack.pop()
        elif key is None:
            key = token
        else:
            stack[-1].append((key, token.strip('"')))
            key = None
    if len(stack) != 1:
        raise InputError(f"{path}: malformed GML (unclosed '[')")
    graphs = [value for k, value in stack[0] if k == "graph" and isinstance(value, list)]
    if not graphs:
        raise InputError(f"{path}: no 'graph [...]' in the GML file")
    nodes, u, v = {}, [], []
    for k, value in graphs[0]:
        if not isinstance(value, list):
            continue
        fields = {fk: fv for fk, fv in value if not isinstance(fv, list)}
        if k == "node" and "id" in fields:
            nodes[fields["id"]] = None
        elif k == "edge":
            if "source" not in fields or "target" not in fields:
                raise InputError(f"{path}: a GML edge without source or target")
            u.append(fields["source"])
            v.append(fields["target"])
    unknown = (set(u) | set(v)) - nodes.keys()
    if unknown:
        raise InputError(f"{path}: GML edge refers to undeclared node {sorted(unknown)[0]!r}")
    return records_from_labels(u, v, nodes=list(nodes))
