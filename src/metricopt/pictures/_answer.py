"""The answer a picture shows: a graph, a clustering or cut of it, and the run's report.

:func:`answer_of` takes what the library hands back (a :class:`~metricopt.pipeline.RunOutcome`,
a fitted estimator of :mod:`metricopt.estimators`) or a run directory. A run directory
does not hold the graph: it is read again from the file the report names (the path the
reader recorded, else the run's GRAPH argument) with the run's read options, or from
``graph`` when given.
"""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..exceptions import InputError, InvalidParameterError

__all__ = ["Answer", "answer_of", "read_run"]


@dataclass
class Answer:
    """A clustering (or cut) of a graph, with the report of the run that found it.

    Attributes
    ----------
    kind : {"cc", "sc", "cd"}
    graph : Graph
        The graph as the run saw it (after pre-processing).
    labels : ndarray of int64, shape (n,)
        Cluster of each node (``sc``: 1 for the side S of the cut, else 0).
    report : dict
        The run's report (its fields: :mod:`metricopt.io.reports`).
    name : str
        A short name for titles (the run directory's name, else the graph's).
    """

    kind: str
    graph: object
    labels: np.ndarray
    report: dict = field(default_factory=dict)
    name: str = ""

    def __post_init__(self):
        self.labels = np.asarray(self.labels, dtype=np.int64)
        if self.labels.shape != (self.graph.n,):
            raise InputError(f"{self.name or 'answer'}: {self.labels.size} labels for a graph "
                             f"of {self.graph.n} nodes")
        self.name = self.name or str(getattr(self.graph, "name", "") or "run")


def answer_of(result, *, graph=None):
    """The :class:`Answer` of a run outcome, a fitted estimator or a run directory.

    Parameters
    ----------
    result : RunOutcome, fitted estimator, Answer, str or os.PathLike
        What :func:`metricopt.pipeline.run` returned, an estimator after ``fit``, or a
        run directory (written by ``metricopt solve --out``).
    graph : str, os.PathLike, object or None, default=None
        For a run directory: the graph to read instead of the one its report names
        (anything :func:`metricopt.read_graph` reads).

    Returns
    -------
    Answer

    Raises
    ------
    InputError
        A run without a clustering or cut (bounds only, metric nearness), or a run
        directory whose graph cannot be read again.
    InvalidParameterError
        ``result`` is none of the above.
    """
    if isinstance(result, Answer):
        return result
    if isinstance(result, (str, Path)) or hasattr(result, "__fspath__"):
        return read_run(result, graph=graph)
    outcome = getattr(result, "result_", result)  # a fitted estimator keeps its outcome
    if not all(hasattr(outcome, a) for a in ("report", "data", "rounding", "problem")):
        raise InvalidParameterError(
            f"Expected a run outcome (metricopt.pipeline.run), a fitted metricopt estimator "
            f"or a run directory; got {type(result).__name__} instead.")
    kind = outcome.problem.kind
    if outcome.rounding is None or kind == "mn":
        raise InputError("this run has no clustering or cut to draw (bounds only, metric "
                         "nearness, or no solution)")
    rounding = outcome.rounding
    labels = (np.asarray(rounding["in_cut"], dtype=np.int64) if kind == "sc"
              else rounding["labels"])
    name = Path(outcome.out).name if getattr(outcome, "out", None) is not None else ""
    return Answer(kind, outcome.data, labels, outcome.report, name)


def read_run(run, *, graph=None):
    """The :class:`Answer` of a run directory (its report, clustering or cut, and graph).

    Parameters
    ----------
    run : str or os.PathLike
    graph : str, os.PathLike, object or None, default=None
        The graph to read instead of the one the report names.

    Returns
    -------
    Answer
    """
    from ..io import read_input
    from ..io.reports import read_clusters, read_cut, read_report_json

    run = Path(run)
    report = read_report_json(run / "report.json")
    kind = (report.get("problem") or {}).get("kind")
    if kind not in ("cc", "sc", "cd"):
        raise InputError(f"{run}: a {kind or 'unknown'} run has no clustering or cut to draw")
    answer_file = run / ("cut.csv" if kind == "sc" else "clusters.csv")
    if not answer_file.is_file():
        raise InputError(f"{run}: no {answer_file.name} (a bound-only run, or one without a "
                         f"solution, has nothing to draw)")
    section = report.get("graph") or {}
    options = dict(section.get("read_options") or {})
    if graph is not None:
        candidates = [graph]
    else:
        recorded = (section.get("summary") or {}).get("path")
        candidates = [c for c in (recorded, section.get("source")) if c]
        candidates = [c for i, c in enumerate(candidates) if c not in candidates[:i]]
    data, errors = None, []
    for candidate in candidates:
        try:
            data = read_input(candidate, kind, **options)
            break
        except InputError as exc:
            errors.append(str(exc))
    if data is None:
        why = f" ({errors[-1]})" if errors else ""
        raise InputError(f"{run}: cannot read its graph again{why}; give the graph file "
                         f"(--graph FILE, graph=...)")
    n = section.get("n")
    if isinstance(n, int) and data.n != n:
        raise InputError(f"{run}: the graph read has {data.n} nodes, the run's had {n}; give "
                         f"the run's graph file (--graph FILE, graph=...)")
    if kind == "sc":
        labels = read_cut(answer_file, data.labels).astype(np.int64)
    else:
        labels = read_clusters(answer_file, data.labels)
    return Answer(kind, data, labels, report, run.resolve().name)
