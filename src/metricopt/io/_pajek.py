"""Pajek ``.net`` files read as graphs.

Sections ``*Vertices N``, ``*Edges``, ``*Arcs`` and their ``*Edgeslist``/``*Arcslist``
forms; vertex numbers (``"1".."N"``) are the labels, vertex names and edge values are
ignored, and every declared vertex exists with or without edges.
"""

from metricopt._memory import check_memory
from metricopt.exceptions import InputError
from metricopt.io._records import records_from_labels

__all__ = ["parse_pajek"]

_SECTIONS = ("*vertices", "*arcs", "*edges", "*arcslist", "*edgeslist")


def parse_pajek(text, path):
    """Parse the vertices and edges of a Pajek network.

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
    section, declared = None, 0
    u, v = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        if stripped.startswith("*"):
            head = stripped.split()
            section = head[0].lower()
            if section == "*vertices" and len(head) > 1 and head[1].isdigit():
                declared = int(head[1])
            elif section not in _SECTIONS:
                raise InputError(f"{path}, line {number}: unsupported Pajek section {head[0]}")
            continue
        fields = stripped.split()
        if section in ("*arcs", "*edges"):
            if len(fields) < 2:
                raise InputError(f"{path}, line {number}: expected two vertex numbers")
            u.append(fields[0])
            v.append(fields[1])
        elif section in ("*arcslist", "*edgeslist"):
            u.extend([fields[0]] * (len(fields) - 1))
            v.extend(fields[1:])
    # every declared vertex is a node (isolated ones too): about 100 bytes each while read
    check_memory(100 * declared, f"{path}: the *Vertices line declares {declared:,} vertices, which")
    return records_from_labels(u, v, nodes=[str(i) for i in range(1, declared + 1)])
