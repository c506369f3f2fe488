"""Block pruning of project-forget's dense scans (:mod:`metricopt.solvers._pf_scan`).

The pruned scans (``chunk > 0``) must return exactly what the unpruned ones
(``chunk = 0``) return, and both what a plain numpy reference returns: the violated
inequalities in visiting order, and the largest violation.
"""

import numpy as np
import pytest

from metricopt.solvers import _pf_scan as D

BLOCK = 16


def reference_scan(x, n, block, add_tol):
    """Slow reference of ``dense_detect``: ``(list of (a, b, c | side << 29), worst)``,
    line by line in the visiting order (numpy within a line, no pruning)."""
    off = D.diagonal_offsets(n)
    found, worst = [], 0.0
    for sb in range(1, n - 1, block):
        for s2 in range(1, n - 1):
            for s1 in range(sb, min(sb + block, n - s2)):
                q = np.arange(n - s1 - s2)
                a, b, c = off[s1] + q, off[s1 + s2] + q, off[s2] + s1 + q
                xa, xb, xc = x[a], x[b], x[c]
                sides = np.stack([xa - xb - xc, xb - xa - xc, xc - xa - xb], axis=1)
                worst = max(worst, float(sides.max()))
                for t, side in zip(*np.nonzero(sides > add_tol)):  # q, then side
                    found.append((int(a[t]), int(b[t]), int(c[t]) | (int(side) << 29)))
    return found, worst


def detect(x, n, add_tol, threads, chunk, cap=None):
    """``dense_detect`` to the end through the oracle's driver (rows grown as it does);
    ``(found, worst, skipped, met)``."""
    from metricopt.solvers._pf_oracles import full_scan

    cap = 3 * BLOCK * n + 8 if cap is None else cap
    found, worst, skipped, met, _ = full_scan(x, n, add_tol, D.scan_rows(n, BLOCK, threads),
                                              chunk=chunk, cap=cap, block=BLOCK)
    return list(zip(*(a.tolist() for a in found))), worst, skipped, met


def naive_max_violation(x, n):
    """Largest violation over every triplet ``i < j < k`` (pair matrix, no layout)."""
    off = D.diagonal_offsets(n)
    d = np.zeros((n, n))
    i, j = np.triu_indices(n, 1)
    d[i, j] = d[j, i] = x[off[j - i] + i]
    worst = 0.0
    for k in range(n):  # d_ij - d_ik - d_kj over every i, j and middle node k
        v = d - d[:, [k]] - d[[k], :]
        v[k, :] = v[:, k] = -np.inf
        np.fill_diagonal(v, -np.inf)
        worst = max(worst, float(v.max()))
    return worst


def instance(kind, n, rng, share=0.1):
    """``x`` in the diagonal layout of one of the families of the tests."""
    m = n * (n - 1) // 2
    if kind == "plateau":  # mostly 1, some low pairs: dyadic, so every sum is exact
        x = np.ones(m)
        low = rng.choice(m, max(1, int(share * m)), replace=False)
        x[low] = rng.integers(0, 9, low.size) / 8
        return x
    if kind == "levels":  # runs of equal values along the diagonals
        return np.repeat(rng.integers(0, 5, m // 7 + 1) / 4, 7)[:m]
    if kind == "noise":
        return rng.choice([0.0, 1.0], m) + rng.normal(0, 0.1, m)
    if kind == "negative":
        return rng.normal(0, 1, m)
    # metric-like: distances of points (sorted along a line, so that the chunks of a
    # diagonal hold close values, or in random order) plus a little noise
    pts = rng.uniform(0, 1, (n, 2))
    if kind == "metric-sorted":
        pts[:, 1] *= 0.05
        pts = pts[np.argsort(pts[:, 0])]
    i, j = np.triu_indices(n, 1)
    off = D.diagonal_offsets(n)
    x = np.empty(m)
    x[off[j - i] + i] = np.linalg.norm(pts[i] - pts[j], axis=1)
    return x + rng.normal(0, 1e-3, m)


KINDS = ["plateau", "levels", "noise", "negative", "metric-sorted", "metric-random"]


def test_chunk_extremes_per_diagonal():
    n, chunk = 23, 5
    x = np.random.default_rng(0).normal(size=n * (n - 1) // 2)
    off = D.diagonal_offsets(n)
    coff = D.chunk_offsets(n, chunk)
    lo, hi = D.chunk_extremes(x, n, chunk)
    assert lo.shape == hi.shape == (coff[n],)
    for s in range(1, n):
        diag = x[off[s]: off[s] + n - s]
        parts = [diag[q: q + chunk] for q in range(0, n - s, chunk)]
        assert coff[s + 1] - coff[s] == len(parts)
        np.testing.assert_array_equal(lo[coff[s]: coff[s + 1]], [p.min() for p in parts])
        np.testing.assert_array_equal(hi[coff[s]: coff[s + 1]], [p.max() for p in parts])


@pytest.mark.parametrize("n", [3, 4, 9, 37])
@pytest.mark.parametrize("kind", KINDS)
def test_pruned_detect_matches_reference(n, kind):
    """Small chunks (several stretches per line, c over two chunks) and the default."""
    rng = np.random.default_rng(n * 31 + KINDS.index(kind))
    x = instance(kind, n, rng)
    worst = detect(x, n, np.inf, 1, 0)[1]
    # worst itself: the largest violation is not emitted (no reference there: numpy
    # and the fast-math kernel may round it one ulp apart)
    for add_tol in (0.0, 1e-3, 0.05, 0.5 * worst, worst, worst + 1.0):
        plain = detect(x, n, add_tol, 1, 0)
        if add_tol != worst:
            ref, ref_worst = reference_scan(x, n, BLOCK, add_tol)
            assert plain[0] == ref
            assert plain[1] == pytest.approx(ref_worst, abs=1e-13)
        for threads in (1, 2):
            for chunk in (1, 4, 7, D.CHUNK):
                got = detect(x, n, add_tol, threads, chunk)
                assert got[0] == plain[0]
                assert got[1] == plain[1]  # bit for bit
                assert 0 <= got[2] <= got[3]


@pytest.mark.parametrize("n", [64, 131])
@pytest.mark.parametrize("kind", KINDS)
def test_pruned_detect_matches_unpruned(n, kind):
    """The default chunk on lines longer than it (n not a multiple of it, too), with
    output rows that overflow (the scan resumes)."""
    rng = np.random.default_rng(n + KINDS.index(kind))
    x = instance(kind, n, rng)
    worst = detect(x, n, np.inf, 1, 0)[1]
    for add_tol in (0.0, 0.01, 0.5 * worst, worst + 1.0):
        plain = detect(x, n, add_tol, 1, 0)
        for threads in (1, 2):
            for chunk in (D.CHUNK, 13):
                got = detect(x, n, add_tol, threads, chunk, cap=3 * BLOCK * n)
                assert got[:2] == plain[:2]
    assert plain[0] == reference_scan(x, n, BLOCK, add_tol)[0]


def test_pruning_skips_stretches():
    """The bounds do skip where x is near-constant along the diagonals (a plateau with
    a few low pairs, as the correlation clustering LP's iterates)."""
    n = 150
    x = instance("plateau", n, np.random.default_rng(7), share=0.002)
    found, worst, skipped, met = detect(x, n, 0.0, 2, D.CHUNK)
    assert met > 0 and skipped > 0.5 * met
    assert (found, worst) == detect(x, n, 0.0, 1, 0)[:2]
    w, s, m = D.max_violation_stretches(x, n, D.CHUNK)
    assert w == worst and m == met and s > 0.5 * m
    # noise on the short diagonals (nothing to skip: the scans pause their bounds),
    # the plateau on the others (they skip again)
    off = D.diagonal_offsets(n)
    x[: off[20]] = instance("noise", n, np.random.default_rng(8))[: off[20]]
    for add_tol in (0.0, 0.3):
        found, worst, skipped, met = detect(x, n, add_tol, 2, D.CHUNK)
        assert skipped > 0.1 * met
        assert (found, worst) == detect(x, n, add_tol, 1, 0)[:2]
    assert D.dense_max_violation(x, n) == D.dense_max_violation(x, n, 0)


@pytest.mark.parametrize("n", [2, 3, 4, 10, 70])
@pytest.mark.parametrize("kind", KINDS)
def test_dense_max_violation_matches_naive(n, kind):
    rng = np.random.default_rng(n * 7 + KINDS.index(kind))
    x = instance(kind, n, rng) if n > 2 else rng.normal(size=1)
    plain = D.dense_max_violation(x, n, 0)
    if kind in ("plateau", "levels"):  # dyadic: every rounding is exact
        assert plain == naive_max_violation(x, n)
    else:
        assert plain == pytest.approx(naive_max_violation(x, n), abs=1e-13)
    for chunk in (1, 4, 7, D.CHUNK):
        assert D.dense_max_violation(x, n, chunk) == plain
    assert D.dense_max_violation(x, n) == plain


def test_non_finite_entries_are_not_skipped_wrongly():
    """An infinite entry disables the skips (the slack is infinite); results agree."""
    n = 40
    x = instance("plateau", n, np.random.default_rng(3))
    x[5] = np.inf
    plain = detect(x, n, 0.0, 1, 0)
    got = detect(x, n, 0.0, 2, 8)
    assert got[:2] == plain[:2] and got[2] == 0
    assert D.dense_max_violation(x, n, 8) == D.dense_max_violation(x, n, 0)


@pytest.mark.filterwarnings("ignore::metricopt.exceptions.ConvergenceWarning")
def test_solve_same_with_and_without_pruning(monkeypatch):
    """A dense project-forget solve on full scans (the support scan turned off) gives
    the same iterate, bit for bit, with the pruned and the unpruned scans."""
    import metricopt
    from metricopt.solvers import _pf_list
    from metricopt.solvers.project_forget import solve_project_forget

    prob = metricopt.build_problem("cc", metricopt.read_graph("karate"))
    monkeypatch.setattr(_pf_list, "support_layout", lambda *a, **k: None)
    detect, skipped = D.dense_detect, []

    def counted(*args):
        out = detect(*args)
        skipped.append(out[0])
        return out

    monkeypatch.setattr(D, "dense_detect", counted)
    runs = []
    for chunk in (4, 0):  # chunks shorter than the default: n = 34
        monkeypatch.setattr(D, "CHUNK", chunk)
        runs.append(solve_project_forget(prob, gamma=100.0, tol=1e-7, max_iter=40,
                                         threads=2))
        if chunk:
            assert sum(skipped) > 0
    np.testing.assert_array_equal(runs[0]["x"], runs[1]["x"])
    assert runs[0]["max_violation"] == runs[1]["max_violation"]
    assert runs[0]["nit"] == runs[1]["nit"]


@pytest.mark.parametrize("cap", [None, 40])
def test_scan_in_parts_finds_what_one_scan_finds(monkeypatch, cap):
    """A full scan asked to stop runs in parts (rows grown in between when ``cap`` is
    small) and returns what one scan returns; a stop that answers yes ends it."""
    from metricopt.solvers import _pf_oracles as PF

    n, add_tol, threads = 70, 1e-3, 2
    x = instance("noise", n, np.random.default_rng(4))
    rows = D.scan_rows(n, BLOCK, threads)
    ref = PF.full_scan(x, n, add_tol, rows, block=BLOCK, cap=cap)
    monkeypatch.setattr(PF, "SCAN_PART_TRIPLETS", 550)  # about 50 parts
    asked = []
    got = PF.full_scan(x, n, add_tol, rows, block=BLOCK, cap=cap,
                       stop=lambda: bool(asked.append(1)))
    assert len(asked) >= 40
    for a, b in zip(ref[0], got[0]):
        np.testing.assert_array_equal(a, b)
    assert got[1] == ref[1] and got[3] == ref[3]
    assert PF.full_scan(x, n, add_tol, rows, block=BLOCK, cap=cap, stop=lambda: True) is None
