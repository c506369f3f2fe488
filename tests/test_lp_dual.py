"""The solver-free LP-dual bound, :func:`metricopt.bounds.lp_dual_bound`.

Random small LPs with mixed row types (``<=``, ``>=``, ranges, equalities, free rows)
are solved with ``scipy.optimize.linprog``; the bound must never exceed the optimum,
whatever multipliers it is given (the solver's, perturbed ones, garbage with the wrong
signs, NaN and infinities), and must reach the optimum at the solver's duals.
"""

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from metricopt.bounds import BoundResult, lp_dual_bound
from metricopt.exceptions import InvalidParameterError


def _random_lp(seed):
    """A feasible, bounded LP ``min c'x, L <= A x <= U, lo <= x <= hi`` from a seed."""
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    a = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.7)
    if rng.random() < 0.5:
        a = np.round(a * 2)  # small integers: ties and degenerate vertices
    lo = rng.uniform(-2, 0, n) * (rng.random(n) < 0.7)
    hi = lo + rng.uniform(0, 3, n)
    x0 = rng.uniform(lo, hi)
    ax0 = a @ x0
    lower = ax0 - rng.uniform(0, 1, m)
    upper = ax0 + rng.uniform(0, 1, m)
    kind = rng.integers(0, 5, m)  # 0 range, 1 <=, 2 >=, 3 equality, 4 free
    lower[(kind == 1) | (kind == 4)] = -np.inf
    upper[(kind == 2) | (kind == 4)] = np.inf
    lower[kind == 3] = upper[kind == 3] = ax0[kind == 3]
    cost = rng.normal(size=n)
    return cost, a, lower, upper, lo, hi, float(rng.normal())


def _linprog(cost, a, lower, upper, lo, hi):
    """Optimum and HiGHS-convention row duals (``r = c - A'y``) through linprog."""
    eq = lower == upper
    up = np.isfinite(upper) & ~eq
    dn = np.isfinite(lower) & ~eq
    a_ub = np.vstack([a[up], -a[dn]])
    b_ub = np.concatenate([upper[up], -lower[dn]])
    res = scipy.optimize.linprog(
        cost, A_ub=a_ub if a_ub.size else None, b_ub=b_ub if a_ub.size else None,
        A_eq=a[eq] if eq.any() else None, b_eq=lower[eq] if eq.any() else None,
        bounds=list(zip(lo, hi)), method="highs")
    assert res.status == 0, res.message
    y = np.zeros(a.shape[0])
    k = int(up.sum())
    if a_ub.size:
        y[up] += res.ineqlin.marginals[:k]
        y[dn] -= res.ineqlin.marginals[k:]
    if eq.any():
        y[eq] = res.eqlin.marginals
    return float(res.fun), y


def _slack(opt, cost, lo, hi):
    """linprog's optimum is itself accurate to about 1e-9 of the objective's scale."""
    return 1e-8 * (1.0 + abs(opt) + float(np.abs(cost) @ np.maximum(np.abs(lo), np.abs(hi))))


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), noise=st.sampled_from([0.0, 1e-6, 1e-2, 1.0, 100.0]),
       sparse=st.booleans())
def test_bound_never_exceeds_optimum(seed, noise, sparse):
    cost, a, lower, upper, lo, hi, offset = _random_lp(seed)
    opt, y = _linprog(cost, a, lower, upper, lo, hi)
    rng = np.random.default_rng(seed + 1)
    matrix = sp.csr_matrix(a) if sparse else a
    for trial in (y + noise * rng.normal(size=y.size), rng.normal(size=y.size) * 10 ** rng.uniform(-3, 3)):
        res = lp_dual_bound(cost, matrix, lower, upper, trial, lo, hi, offset=offset)
        assert res.certified
        assert res.value <= opt + offset + _slack(opt, cost, lo, hi)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_bound_reaches_optimum_at_solver_duals(seed):
    cost, a, lower, upper, lo, hi, offset = _random_lp(seed)
    opt, y = _linprog(cost, a, lower, upper, lo, hi)
    res = lp_dual_bound(cost, sp.csc_matrix(a), lower, upper, y, lo, hi, offset=offset)
    assert res.certified and res.clipped == 0
    scale = 1.0 + abs(opt + offset)
    assert abs(res.value - (opt + offset)) <= 1e-9 * scale + _slack(opt, cost, lo, hi) * 1e-1
    assert res.rounding >= 0 and res.rounding < 1e-12 * (scale + 100)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), widen=st.floats(0.0, 10.0))
def test_any_box_holding_an_optimum_gives_a_bound(seed, widen):
    """A wider box than the LP's own column bounds is still a valid box."""
    cost, a, lower, upper, lo, hi, offset = _random_lp(seed)
    opt, y = _linprog(cost, a, lower, upper, lo, hi)
    res = lp_dual_bound(cost, a, lower, upper, y, lo - widen, hi + widen, offset=offset)
    assert res.value <= opt + offset + _slack(opt, cost, lo - widen, hi + widen)


def test_garbage_multipliers_are_clipped():
    # min x1 + x2, x1 + x2 >= 1 (row 0), x1 - x2 <= 0.5 (row 1), free row 2
    a = np.array([[1.0, 1.0], [1.0, -1.0], [1.0, 0.0]])
    args = ([1.0, 1.0], a, [1.0, -np.inf, -np.inf], [np.inf, 0.5, np.inf])
    res = lp_dual_bound(*args, [np.nan, 7.0, -np.inf], [0.0, 0.0], [1.0, 1.0])
    assert res.clipped == 3 and res.clipped_norm == 7.0
    assert res.value == 0.0  # y = 0: min over the box
    best = lp_dual_bound(*args, [1.0, 0.0, 0.0], [0.0, 0.0], [1.0, 1.0])
    assert best.value == pytest.approx(1.0, abs=1e-13) and best.value <= 1.0
    assert best.clipped == 0


def test_infinite_box_side_gives_minus_inf_unless_reduced_cost_is_zero():
    a = np.array([[1.0, 1.0]])
    # min x1 + x2, x1 + x2 >= 1, x >= 0 with no upper bound
    res = lp_dual_bound([1.0, 1.0], a, [1.0], [np.inf], [2.0], [0.0, 0.0], [np.inf, np.inf])
    assert res.value == -np.inf and not res.certified and "infinite side" in res.note
    exact = lp_dual_bound([1.0, 1.0], a, [1.0], [np.inf], [1.0], [0.0, 0.0], [np.inf, np.inf])
    assert exact.certified and exact.value == pytest.approx(1.0)
    low = lp_dual_bound([1.0, 1.0], a, [1.0], [np.inf], [0.5], [0.0, 0.0], np.inf)
    assert low.certified and low.value == pytest.approx(0.5)


def test_result_type_and_fields():
    res = lp_dual_bound([1.0], sp.csr_matrix(np.ones((1, 1))), [0.0], [2.0], [0.5], 0.0, 1.0, offset=3.0)
    assert isinstance(res, BoundResult)
    assert res.of == "lp" and res.method == "lp-dual"
    assert {"row_term", "column_term", "rounding", "clipped", "clipped_norm", "note"} <= set(res)
    assert res.value == pytest.approx(3.0)


@pytest.mark.parametrize("change, match", [
    (dict(cost=[1.0, np.nan]), "cost"),
    (dict(cost=[1.0]), "cost"),
    (dict(row_dual=[1.0, 2.0]), "row_dual"),
    (dict(col_lower=[2.0, 0.0]), "lower <= upper"),
    (dict(row_lower=[5.0]), "lower <= upper"),
    (dict(offset=np.inf), "offset"),
    (dict(matrix=sp.csr_matrix(np.array([[np.inf, 1.0]]))), "matrix"),
])
def test_bad_input_raises(change, match):
    args = dict(cost=[1.0, 1.0], matrix=sp.csr_matrix(np.ones((1, 2))), row_lower=[1.0],
                row_upper=[2.0], row_dual=[1.0], col_lower=[0.0, 0.0], col_upper=[1.0, 1.0])
    args.update(change)
    with pytest.raises(InvalidParameterError, match=match):
        lp_dual_bound(**args)
