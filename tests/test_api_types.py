"""The public API is typed: every parameter and return of the entry points is annotated,
and the annotated fields of the result types are the fields they hold.

``mypy`` checks these annotations against the code (``[tool.mypy]`` in pyproject.toml,
run by ``.ci/run``); these tests keep them complete and true to the runtime objects.
"""

import dataclasses
import inspect

import numpy as np
import pytest

from metricopt.io import detect_format, read_dissimilarity, read_graph, read_input
from metricopt.pipeline import RunOutcome
from metricopt.problems import build_problem
from metricopt.result import COMMON_FIELDS, SolveResult
from metricopt.rounding import Rounding, round_solution
from metricopt.solvers import solve

PUBLIC = (read_graph, read_dissimilarity, read_input, detect_format, build_problem, solve,
          round_solution)


@pytest.mark.parametrize("func", PUBLIC, ids=lambda f: f.__name__)
def test_every_parameter_and_return_is_annotated(func):
    sig = inspect.signature(func)
    missing = [name for name, p in sig.parameters.items() if p.annotation is p.empty]
    assert missing == []
    assert sig.return_annotation is not sig.empty


def test_solve_result_annotates_exactly_the_common_fields():
    assert set(inspect.get_annotations(SolveResult)) == set(COMMON_FIELDS)


def test_run_outcome_fields_are_typed():
    loose = [f.name for f in dataclasses.fields(RunOutcome) if f.type in (object, "object")]
    assert loose == []


@pytest.mark.parametrize("kind, extras", [
    ("cc", {"tries_run"}),  # tries_run: with a time limit only
    ("sc", {"in_cut", "cut_edges", "side_sizes"}),
    ("cd", {"tries_run", "n_repaired"}),
])
def test_a_rounding_holds_only_annotated_fields(kind, extras):
    problem = build_problem(kind, "karate")
    x = np.random.default_rng(0).uniform(0, 1, problem.n_variables)
    rounding = round_solution(problem, x, n_tries=2, seed=0, time_limit=60)
    assert extras <= set(rounding)
    assert set(rounding) <= set(inspect.get_annotations(Rounding))
