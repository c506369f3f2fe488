"""Reading the Parameters section of numpydoc docstrings.

The backends declare their options in :mod:`metricopt.solvers.core.options` (one line
each) and describe them at length in their drivers' docstrings; the tests check that the
two name the same options.
"""

import inspect
import re

__all__ = ["parameter_docs", "first_sentence", "referenced_functions"]

_SECTION = re.compile(r"^(\s*)([A-Z][A-Za-z ]+)\n\1(-{3,})\s*$", re.M)
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'`])")
_FUNC_REF = re.compile(r":(?:func|meth):`~?\.?([A-Za-z_][A-Za-z0-9_.]*)`")


def _section(doc, title):
    """The lines of section ``title`` of a cleaned docstring (``None`` if absent)."""
    headers = list(_SECTION.finditer(doc))
    for k, match in enumerate(headers):
        if match.group(2).strip() == title:
            end = headers[k + 1].start() if k + 1 < len(headers) else len(doc)
            return doc[match.end():end].split("\n")
    return None


def parameter_docs(obj):
    """The entries of the Parameters section of ``obj``'s docstring.

    Parameters
    ----------
    obj : callable or str
        A documented object, or a docstring.

    Returns
    -------
    dict
        Parameter name -> ``(type, description)``, both strings (the description's
        lines unindented, paragraphs separated by a blank line). An entry naming several
        parameters (``a, b : float``) gives each of them. Empty when there is no Parameters section.
    """
    doc = obj if isinstance(obj, str) else inspect.getdoc(obj)
    lines = _section(inspect.cleandoc(doc or ""), "Parameters")
    if lines is None:
        return {}
    out = {}
    names, kind, text = None, "", []

    def flush():
        if names:
            for name in names:
                out[name] = (kind, "\n".join(text).strip())

    indent = None
    for line in lines:
        if not line.strip():
            if names:
                text.append("")
            continue
        width = len(line) - len(line.lstrip())
        indent = width if indent is None else indent
        if width <= indent:
            flush()
            head, _, kind = line.strip().partition(" : ")
            names = [n.strip().lstrip("*") for n in head.split(",") if n.strip()]
            kind, text = kind.strip(), []
        else:
            text.append(line.strip())
    flush()
    return out


def first_sentence(text):
    """The first sentence of a description, reST roles and literals made plain.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
    """
    paragraph = re.split(r"\n\s*\n", text.strip())[0] if text else ""
    plain = _LITERAL.sub(r"\1", _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], paragraph))
    plain = " ".join(plain.split())
    return _SENTENCE_END.split(plain, maxsplit=1)[0]


def referenced_functions(obj):
    """Names of the functions and methods a docstring points to (``:func:`name```).

    Parameters
    ----------
    obj : callable or str

    Returns
    -------
    list of str
        In order of appearance, without the leading ``~`` or ``.``.
    """
    doc = obj if isinstance(obj, str) else inspect.getdoc(obj)
    return _FUNC_REF.findall(doc or "")
