"""The package's layers, read from the imports of its source.

Every ``import`` and ``from ... import`` statement of every module counts, at module level
or inside a function (a lazy import is still a dependency), with relative imports
resolved. The graph is checked at two levels:

* units: each subpackage (``metricopt.io``, ``metricopt.solvers``, ...) and each module
  directly under ``metricopt`` is one node, the package root another. The units form a
  directed acyclic graph, and each belongs to one of :data:`LAYERS` (the table of the
  README's "Package layout") and imports only units of its own layer or of those below.
* modules: no module of ``metricopt.solvers`` imports ``metricopt.io``; a solver returns
  arrays and results, and what reads or writes files sits above it. Modules import one
  another without cycles, anywhere.
* backends: the modules of a solver backend (:data:`BACKENDS`) import the solver core
  (``metricopt.solvers.core``), the shared solver modules, their own private modules,
  the problems, the bounds and the base units; never another backend's modules nor the
  registry (``metricopt.solvers`` itself). The core and the shared modules import no
  backend. The imports still breaking this are listed in :data:`KNOWN_BACKEND_IMPORTS`.

The source read is that of the ``metricopt`` that Python imports, so the same test can be
pointed at another checkout with ``PYTHONPATH``.
"""

import ast
import importlib.util
from pathlib import Path

import pytest

PACKAGE = "metricopt"

#: The layers, top first: unit names without the ``metricopt.`` prefix ("" is the root).
LAYERS = (
    ("package root", ("",)),
    ("command line", ("cli", "__main__")),
    ("jobs", ("pipeline", "batch", "reporting", "plotting", "metric_check", "estimators",
              "pictures", "html_report")),
    ("datasets", ("datasets",)),
    ("algorithms", ("solvers", "rounding", "bounds", "problems")),
    ("input and output", ("io",)),
    ("base", ("graph", "result", "exceptions", "_choices", "_config", "_memory", "_atomic",
              "_version", "_docstrings", "_stdout", "_dask", "_signals",
              "_threads")),
)

SOLVERS = f"{PACKAGE}.solvers"

#: Each registered backend's modules (``metricopt.solvers.`` left out): the module the
#: registry names, then the private modules only it (or its family) uses. Any other
#: module of ``metricopt.solvers`` is the core or shared by every backend.
BACKENDS = {
    "highs": ("highs", "_highs_common"),
    "highs-lazy": ("highs_lazy", "_highs_common"),
    "dykstra": ("dykstra", "_dykstra_state", "_dykstra_strategy", "_dykstra_parallel",
                "_active_kernels"),
    "project-forget": ("project_forget", "_pf_oracles", "_pf_strategy", "_pf_checkpoint",
                       "_pf_passes", "_pf_scan", "_pf_list", "_pf_kernels", "_cycle_search",
                       "_dask_oracle", "_support_strategy", "_support_kernels", "_support_polish",
                       "_dask_support", "_support_local"),
    "lighttouch": ("lighttouch", "_lighttouch_run", "_lighttouch_kernels"),
}

#: What a backend may import outside ``metricopt.solvers``: these units and the base layer.
BACKEND_MAY_IMPORT = ("problems", "bounds")

#: Imports of a backend that break the rule above, each to be removed; the test fails when
#: one is no longer made, so that its entry goes too. (A backend that hands its answer on
#: reaches the other through ``Solver.other``.)
KNOWN_BACKEND_IMPORTS = set()


def _source_root():
    spec = importlib.util.find_spec(PACKAGE)
    return Path(spec.origin).parent


def _module_names(root):
    """Dotted name -> path of every module of the package (``__init__`` as the package)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join([PACKAGE, *parts])] = path
    return names


def _target(module, names):
    """The module an imported dotted name loads: itself, or the deepest known parent."""
    while module and module not in names:
        module = module.rpartition(".")[0]
    return module or None


def _imports(name, path, names):
    """Modules of the package that the module ``name`` imports, anywhere in its body."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(_target(alias.name, names))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module
            for alias in node.names:
                sub = f"{origin}.{alias.name}"
                # ``from pkg import submodule`` loads the submodule; ``from m import f``, m
                found.add(sub if sub in names else _target(origin, names))
    found.discard(None)
    found.discard(name)
    return found


def _unit(module):
    parts = module.split(".")
    return ".".join(parts[:2])


@pytest.fixture(scope="module")
def module_graph():
    root = _source_root()
    names = _module_names(root)
    return {name: _imports(name, path, names) for name, path in names.items()}


def _unit_graph(modules):
    graph = {}
    for name, targets in modules.items():
        edges = graph.setdefault(_unit(name), set())
        edges.update(_unit(t) for t in targets)
    for unit, edges in graph.items():
        edges.discard(unit)
    return graph


def _cycles(graph):
    """The strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _witnesses(modules, component):
    """The module-level imports that tie the units of ``component`` together."""
    inside = set(component)
    return sorted(f"{name} -> {t}" for name, targets in modules.items() for t in targets
                  if _unit(name) in inside and _unit(t) in inside and _unit(name) != _unit(t))


def test_graph_covers_the_package(module_graph):
    # the walk must see the subpackages and the lazy imports inside functions
    units = _unit_graph(module_graph)
    for unit in ("io", "datasets", "solvers", "problems", "bounds", "rounding", "cli", "pipeline"):
        assert f"{PACKAGE}.{unit}" in units
    assert f"{PACKAGE}.pipeline" in units[f"{PACKAGE}.cli"]  # imported inside a function


def test_units_form_layers(module_graph):
    cycles = _cycles(_unit_graph(module_graph))
    assert not cycles, "import cycles between units:\n" + "\n".join(
        f"{' <-> '.join(c)}: " + "; ".join(_witnesses(module_graph, c)) for c in cycles)


def _layer_of():
    return {(f"{PACKAGE}.{name}" if name else PACKAGE): depth
            for depth, (_, names) in enumerate(LAYERS) for name in names}


def test_units_import_only_their_layer_or_below(module_graph):
    layer = _layer_of()
    units = _unit_graph(module_graph)
    unplaced = sorted(set(units) - set(layer))
    assert not unplaced, f"units missing from LAYERS: {unplaced}"
    assert not set(layer) - set(units), "LAYERS names a unit that does not exist"
    upward = sorted(f"{u} ({LAYERS[layer[u]][0]}) -> {t} ({LAYERS[layer[t]][0]})"
                    for u, targets in units.items() for t in targets if layer[t] < layer[u])
    assert not upward, "imports of a higher layer: " + "; ".join(upward)


def test_modules_have_no_cycle(module_graph):
    cycles = _cycles(module_graph)
    assert not cycles, "module import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def _solver_module(name):
    """``metricopt.solvers.<name>`` (``""``: the registry, ``metricopt.solvers`` itself)."""
    return f"{SOLVERS}.{name}" if name else SOLVERS


def _short(module):
    return module[len(SOLVERS) + 1:] if module != SOLVERS else ""


def _backend_imports_allowed(module, owned, target):
    """Whether ``module`` of a backend owning the modules ``owned`` may import ``target``."""
    if target == SOLVERS:  # the registry
        return False
    if target.startswith(SOLVERS + "."):
        return target in owned or not any(target in _owned(b) for b in _registered())
    layer = _layer_of()
    unit = _unit(target)
    return (unit in {f"{PACKAGE}.{u}" for u in BACKEND_MAY_IMPORT}
            or layer.get(unit) == len(LAYERS) - 1)


def _registered():
    """Every registered backend -> its modules: those of :data:`BACKENDS`, else its public
    module alone (a new one-module backend needs no entry)."""
    from metricopt.solvers import SOLVER_SPECS

    return {name: BACKENDS.get(name, (module.rpartition(".")[2],))
            for name, (module, _) in SOLVER_SPECS.items()}


def _owned(backend):
    return {_solver_module(name) for name in _registered()[backend]}


def _backend_violations(module_graph):
    """``(module, target)`` pairs, short names, of the backends' imports that break the rule."""
    found = set()
    for backend in _registered():
        owned = _owned(backend)
        for module in owned:
            for target in module_graph.get(module, ()):
                if not _backend_imports_allowed(module, owned, target):
                    found.add((_short(module), _short(target)))
    return found


def test_backends_list_every_registered_backend(module_graph):
    from metricopt.solvers import SOLVER_SPECS

    assert set(BACKENDS) <= set(SOLVER_SPECS), "BACKENDS names a backend not registered"
    for name, (module, _) in SOLVER_SPECS.items():
        assert module == _solver_module(_registered()[name][0])
    listed = {m for b in _registered() for m in _owned(b)}
    assert listed <= set(module_graph), f"no such module: {sorted(listed - set(module_graph))}"


def test_backends_import_only_the_core_their_own_modules_and_problems(module_graph):
    found = _backend_violations(module_graph)
    new = sorted(found - KNOWN_BACKEND_IMPORTS)
    assert not new, "backend modules import another backend or the registry: " + "; ".join(
        f"{_solver_module(m)} -> {_solver_module(t)}" for m, t in new)
    gone = sorted(KNOWN_BACKEND_IMPORTS - found)
    assert not gone, f"no longer imported, drop from KNOWN_BACKEND_IMPORTS: {gone}"


def test_core_and_shared_solver_modules_import_no_backend(module_graph):
    backend_modules = {m for b in _registered() for m in _owned(b)}
    bad = sorted(f"{name} -> {t}" for name, targets in module_graph.items()
                 if name.startswith(SOLVERS + ".") and name not in backend_modules
                 for t in targets if t in backend_modules or t == SOLVERS)
    assert not bad, "the solver core or a shared module imports a backend: " + "; ".join(bad)


def test_backend_rule_catches_a_borrowed_module():
    owned = _owned("highs")
    assert _backend_imports_allowed(f"{SOLVERS}.highs", owned, f"{SOLVERS}.core.exact_lp")
    assert _backend_imports_allowed(f"{SOLVERS}.highs", owned, f"{SOLVERS}._highs_common")
    assert _backend_imports_allowed(f"{SOLVERS}.highs", owned, f"{PACKAGE}.problems._pairs")
    assert _backend_imports_allowed(f"{SOLVERS}.highs", owned, f"{PACKAGE}.result")
    assert not _backend_imports_allowed(f"{SOLVERS}.highs", owned, f"{SOLVERS}.dykstra")
    assert not _backend_imports_allowed(f"{SOLVERS}.highs", owned, f"{SOLVERS}._pf_scan")
    assert not _backend_imports_allowed(f"{SOLVERS}.highs", owned, SOLVERS)
    assert not _backend_imports_allowed(f"{SOLVERS}.highs", owned, f"{PACKAGE}.rounding")


def test_no_solver_module_imports_io(module_graph):
    io = f"{PACKAGE}.io"
    bad = sorted(f"{name} -> {t}" for name, targets in module_graph.items()
                 if name.startswith(f"{PACKAGE}.solvers") for t in targets
                 if t == io or t.startswith(io + "."))
    assert not bad, "solver modules import the io package: " + "; ".join(bad)


def test_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_relative_imports_resolve(tmp_path):
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import mod\n")
    (pkg / "sub" / "mod.py").write_text(
        "def f():\n    from ..low import g\n    from .. import low\n    import metricopt.sub\n")
    names = _module_names(pkg)
    assert _imports(f"{PACKAGE}.sub.mod", pkg / "sub" / "mod.py", names) == {
        f"{PACKAGE}.low", f"{PACKAGE}.sub"}
    assert _imports(f"{PACKAGE}.sub", pkg / "sub" / "__init__.py", names) == {
        f"{PACKAGE}.sub.mod"}
