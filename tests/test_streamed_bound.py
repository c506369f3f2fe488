"""The streamed V Thm 5 bound of correlation clustering against the exact inner solver."""

import numpy as np
import pytest

from metricopt.bounds import _streamed_kernels as K
from metricopt.bounds import correlation_clustering_bound
from metricopt.bounds.streamed import correlation_clustering_bound_streamed


def _instance(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 2500))
    d = (rng.random(n) < 0.3).astype(float)
    x = np.clip(d + rng.normal(0.0, 0.3, n), 0.0, 1.0) if seed % 2 else rng.random(n)
    f = np.abs(x - d) + rng.random(n) * 0.05 * (seed % 3)
    w = rng.uniform(0.0, 2.0, n)
    w[rng.random(n) < 0.1] = 0.0
    wr = np.maximum(w, 0.1)
    gamma = float(rng.choice([0.5, 1.0, 10.0]))
    # -b'y near the cost of f (a converged iterate), sometimes far below
    mby = float(w @ f) * float(rng.choice([0.95, 0.5, -0.2]))
    return x, f, w, d, wr, gamma, mby


def _reference_terms(x, f, w0, d, wr, gamma, xl, xu, mu):
    """G(mu) in plain numpy, from the two pieces of correlation_clustering_bound."""
    pe = wr * (x - d) / gamma
    pf = wr * f / gamma + (wr - w0)
    room = np.where(pe >= 0, xu - d, d - xl)
    big = np.maximum(d - xl, xu - d)
    return float(np.sum(np.maximum(pf + np.abs(pe) - mu * w0, 0) * room
                        + np.maximum(pf - mu * w0, 0) * (big - room)))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mu", [0.0, 0.3, 7.0])
def test_kernel_matches_reference(seed, mu):
    x, f, w, d, wr, gamma, _ = _instance(seed)
    tot, absolute, magnitude = K.cc_lagrangian_terms(x, f, w, d, wr, gamma, 0.0, 1.0, mu, 64)
    ref = _reference_terms(x, f, w, d, wr, gamma, 0.0, 1.0, mu)
    assert tot.sum() == pytest.approx(ref, rel=1e-12, abs=1e-12)
    assert absolute.sum() >= abs(tot.sum()) - 1e-12
    assert magnitude.sum() >= absolute.sum() - 1e-9


@pytest.mark.parametrize("seed", range(24))
def test_streamed_equals_exact_and_never_exceeds_it(seed):
    x, f, w, d, wr, gamma, mby = _instance(seed)
    exact = correlation_clustering_bound(x - d, f, w, d, gamma=gamma, minus_b_dot_y=mby,
                                         regularizer=wr, qp_cost=wr)
    got = correlation_clustering_bound_streamed(x, f, w, d, gamma=gamma, minus_b_dot_y=mby,
                                                regularizer=wr)
    assert got.certified
    # the best of the family (the exact fixed point), or the floor LP* >= min w'f = 0
    best = max(exact.value, 0.0)
    scale = max(1.0, abs(best))
    assert got.value <= best + 1e-12 * scale
    assert got.value >= best - 1e-9 * scale


def test_box_of_metric_nearness():
    """``x_upper = max d`` (l1 metric nearness), targets beyond 1."""
    rng = np.random.default_rng(5)
    n = 600
    d = rng.uniform(0.0, 3.0, n)
    x = np.clip(d + rng.normal(0.0, 0.2, n), 0.0, 3.0)
    f = np.abs(x - d)
    w = rng.random(n)
    wr = np.maximum(w, 0.05)
    mby = 0.9 * float(w @ f)
    exact = correlation_clustering_bound(x - d, f, w, d, gamma=2.0, minus_b_dot_y=mby,
                                         regularizer=wr, qp_cost=wr, x_upper=3.0)
    got = correlation_clustering_bound_streamed(x, f, w, d, gamma=2.0, minus_b_dot_y=mby,
                                                regularizer=wr, x_upper=3.0)
    assert exact.value - 1e-9 * abs(exact.value) <= got.value <= exact.value + 1e-12 * abs(exact.value)
