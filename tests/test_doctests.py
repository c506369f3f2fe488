"""Every docstring example of the package runs and prints what it shows.

The modules are found from the source (every one holding a ``>>>``), so a new example is
run without being listed here.
"""

import doctest
import importlib
import importlib.util
from pathlib import Path

import pytest

PACKAGE = "metricopt"


def _modules_with_examples():
    root = Path(importlib.util.find_spec(PACKAGE).origin).parent
    names = []
    for path in sorted(root.rglob("*.py")):
        if ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join([PACKAGE, *parts]))
    return names


MODULES = _modules_with_examples()


def test_examples_are_found():
    assert "metricopt" in MODULES and "metricopt.solvers" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder().find(module, name)
    examples = sum(len(t.examples) for t in tests)
    assert examples > 0, f"{name} holds '>>>' outside any docstring doctest finds"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
