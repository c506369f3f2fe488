"""Constraint rows and objective columns of a :class:`MetricProblem`, in HiGHS form.

Rows are produced in blocks of compressed sparse rows (``starts``, ``index``, ``value``
with int32 indices, as ``highspy.Highs.addRows`` takes them) so that the full triangle
family of a dense problem, ``3 * C(n, 3)`` rows, is never held twice: each block is
handed to HiGHS and dropped. Blocks are built by vectorised numpy code or a numba
kernel; nothing here loops over triangles in Python.

Model layout (columns): the problem's pair variables first (for the dense embedding of
a sparse problem, all pairs of K_n in packed order), then one auxiliary column
``t_v >= |x_v - d_v|`` for every l1 term that cannot be linearised directly.

Inputs are assumed checked (contiguous int64 / float64 arrays).
"""

from typing import NamedTuple

import numba
import numpy as np

from ...problems._pairs import n_pairs, pair_index
from ...problems._triangles import _row_offsets

__all__ = [
    "DEFAULT_BLOCK_ROWS",
    "RowBlock",
    "ObjectiveModel",
    "objective_model",
    "certificate_box",
    "sum_row",
    "count_dense_triangle_rows",
    "dense_triangle_blocks",
    "triangle_rows",
    "edge_family_size",
    "edge_family_rows",
    "edge_family_blocks",
    "edge_family_violations",
    "cycle_rows",
    "model_size",
    "embedding_columns",
]

#: Rows per block handed to HiGHS at a time (about 36 MiB of index/value arrays for
#: three-term triangle rows).
DEFAULT_BLOCK_ROWS = 1 << 20

INF = np.inf


class RowBlock(NamedTuple):
    """Rows ``lower <= A x <= upper`` in compressed sparse row form (HiGHS ``addRows``)."""

    lower: np.ndarray
    upper: np.ndarray
    starts: np.ndarray  # int32, start of each row in index/value
    index: np.ndarray  # int32 column indices
    value: np.ndarray  # float64 coefficients

    @property
    def n_rows(self):
        return int(self.lower.shape[0])

    @property
    def n_nonzeros(self):
        return int(self.index.shape[0])


def _uniform_block(index, coef, lower, upper):
    """Block of rows that all have ``len(coef)`` entries with coefficients ``coef``."""
    width = len(coef)
    nrows = index.size // width
    return RowBlock(
        lower=np.full(nrows, lower, dtype=np.float64),
        upper=np.full(nrows, upper, dtype=np.float64),
        starts=np.arange(0, nrows * width, width, dtype=np.int32),
        index=np.ascontiguousarray(index, dtype=np.int32).ravel(),
        value=np.tile(np.asarray(coef, dtype=np.float64), nrows),
    )


# ---------------------------------------------------------------- objective
class ObjectiveModel(NamedTuple):
    """Columns, objective and objective-linearisation rows of a model.

    ``hessian_diag`` is ``None`` for LPs; for QPs HiGHS minimises
    ``cost @ z + offset + 0.5 * z @ diag(hessian_diag) @ z``.
    """

    cost: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    offset: float
    rows: RowBlock | None
    hessian_diag: np.ndarray | None
    n_x: int  # columns that are pair variables (the rest are auxiliary)


def objective_model(problem, x_columns, n_x):
    """Columns and objective of ``problem`` with its variables placed at ``x_columns``.

    Parameters
    ----------
    problem : MetricProblem
    x_columns : ndarray of shape (problem.n_variables,), int64
        Model column of each problem variable.
    n_x : int
        Number of pair columns in the model (``n_variables``, or ``n(n-1)/2`` for the
        dense embedding of a sparse problem; extra pairs get objective 0).

    Returns
    -------
    ObjectiveModel

    Notes
    -----
    ``linear``: the cost as given. ``l1``: a term ``w |x - d|`` whose target lies at or
    outside a bound (``d <= lower`` or ``d >= upper``; e.g. the 0/1 targets of
    correlation clustering inside ``[0, 1]``) is linear on the box, ``w (x - d)`` or
    ``w (d - x)``; every other term gets a column ``t >= 0`` with cost ``w`` and rows
    ``x - t <= d``, ``x + t >= d``. ``l2``: ``w (x - d)^2`` is
    ``w x^2 - 2 w d x + w d^2``, so the Hessian diagonal is ``2 w``, the cost ``-2 w d``
    and the offset ``sum w d^2``. The problem's ``constant`` is added to the offset.
    """
    lo, hi = float(problem.lower), float(problem.upper)
    cost = np.zeros(n_x)
    offset = float(problem.constant)
    rows = None
    hess = None
    aux_cost = np.empty(0)
    if problem.objective == "linear":
        np.add.at(cost, x_columns, problem.cost)
    else:
        w = np.asarray(problem.weights, dtype=np.float64)
        d = np.asarray(problem.target, dtype=np.float64)
        if problem.objective == "l2":
            hess = np.zeros(n_x)
            np.add.at(hess, x_columns, 2.0 * w)
            np.add.at(cost, x_columns, -2.0 * w * d)
            offset += float(w @ (d * d))
        else:
            below, above, inside = _l1_split(problem)
            np.add.at(cost, x_columns[below], w[below])
            offset -= float(w[below] @ d[below])
            np.add.at(cost, x_columns[above], -w[above])
            offset += float(w[above] @ d[above])
            k = int(np.count_nonzero(inside))
            if k:
                cols = x_columns[inside]
                aux = n_x + np.arange(k, dtype=np.int64)
                di = d[inside]
                aux_cost = w[inside]
                # row 2r: x - t <= d ; row 2r+1: x + t >= d
                index = np.empty((2 * k, 2), dtype=np.int64)
                index[0::2, 0] = cols
                index[0::2, 1] = aux
                index[1::2, 0] = cols
                index[1::2, 1] = aux
                value = np.empty((2 * k, 2))
                value[:, 0] = 1.0
                value[0::2, 1] = -1.0
                value[1::2, 1] = 1.0
                lower = np.empty(2 * k)
                upper = np.empty(2 * k)
                lower[0::2], upper[0::2] = -INF, di
                lower[1::2], upper[1::2] = di, INF
                rows = RowBlock(lower, upper, np.arange(0, 4 * k, 2, dtype=np.int32),
                                index.ravel().astype(np.int32), value.ravel())
    n_aux = aux_cost.size
    full_cost = np.concatenate([cost, aux_cost])
    col_lower = np.concatenate([np.full(n_x, lo), np.zeros(n_aux)])
    col_upper = np.concatenate([np.full(n_x, hi), np.full(n_aux, INF)])
    return ObjectiveModel(full_cost, col_lower, col_upper, offset, rows, hess, n_x)


def _l1_split(problem):
    """Masks of the l1 terms linear on the box from below / above, and those needing ``t``."""
    lo, hi = float(problem.lower), float(problem.upper)
    w = np.asarray(problem.weights, dtype=np.float64)
    d = np.asarray(problem.target, dtype=np.float64)
    below = (d <= lo) & (w != 0)
    above = (d >= hi) & (w != 0) & ~below
    inside = (w != 0) & ~below & ~above
    return below, above, inside


def pair_certificate_box(problem):
    """``(lo, hi, reason)``: :func:`metricopt.bounds.optimum_box` with its reasons."""
    from ...bounds import optimum_box

    return optimum_box(problem, with_reason=True)


def certificate_box(problem, objective):
    """A finite box of the model's columns that contains an LP optimum, or ``None``.

    The box the LP-dual certificate (:func:`metricopt.bounds.lp_dual_bound`) is taken
    over. Pair columns get :func:`pair_certificate_box` (for the dense embedding of a
    sparse problem, the pairs outside the graph too: an optimum of MET(G) inside the box
    extends to a metric of K_n inside it, by shortest paths capped at ``hi``, with the
    same cost, since those pairs cost 0). An auxiliary column ``t_v >= |x_v - d_v|`` of
    :func:`objective_model` gets ``[0, max(d_v - lo, hi - d_v)]``: at an optimum
    ``t_v = |x_v - d_v|`` (its weight is positive) and ``x_v`` lies in ``[lo, hi]``.

    Parameters
    ----------
    problem : MetricProblem
    objective : ObjectiveModel
        From :func:`objective_model` for the same problem.

    Returns
    -------
    (ndarray, ndarray) or None
        Column lower and upper bounds (a side may be infinite only when no argument
        applies, see :func:`pair_certificate_box`). ``None`` for l2 problems: a QP has no
        LP-dual certificate, and its solvers keep their own lower bound.
    """
    if problem.objective == "l2" or objective.hessian_diag is not None:
        return None
    lo, hi, _ = pair_certificate_box(problem)
    n_x = objective.n_x
    n_aux = objective.cost.size - n_x
    col_lower = np.concatenate([np.full(n_x, lo), np.zeros(n_aux)])
    col_upper = np.concatenate([np.full(n_x, hi), np.zeros(n_aux)])
    if n_aux:
        _, _, inside = _l1_split(problem)
        d = np.asarray(problem.target, dtype=np.float64)[inside]
        w = np.asarray(problem.weights, dtype=np.float64)[inside]
        col_upper[n_x:] = np.where(w > 0, np.maximum(d - lo, hi - d), INF)
    return col_lower, col_upper


def sum_row(x_columns, value):
    """The equality row ``sum_v x_v = value`` over the given columns."""
    cols = np.sort(np.asarray(x_columns, dtype=np.int64))
    return RowBlock(np.array([value], dtype=np.float64), np.array([value], dtype=np.float64),
                    np.zeros(1, dtype=np.int32), cols.astype(np.int32), np.ones(cols.size))


# ----------------------------------------------------- dense triangle family
def count_dense_triangle_rows(n):
    """``3 * C(n, 3)``: triangle rows of a dense problem on ``n`` nodes."""
    return 3 * (n * (n - 1) * (n - 2) // 6)


@numba.njit(cache=True)
def _dense_triangle_index(n, blocks, n_triples):
    """Column indices of the triangle rows of the triples in ``blocks``.

    ``blocks[b] = (i, j0, j1)`` stands for the triples ``(i, j, k)``, ``j0 <= j < j1``,
    ``j < k < n``. Each triple gives three rows ``x_a - x_b - x_c <= 0`` with the long
    side ``a`` first: ``(ij | ik, jk)``, ``(ik | ij, jk)``, ``(jk | ij, ik)``.
    """
    off = _row_offsets(n)
    idx = np.empty(9 * n_triples, dtype=np.int32)
    t = 0
    for bk in range(blocks.shape[0]):
        i = blocks[bk, 0]
        for j in range(blocks[bk, 1], blocks[bk, 2]):
            a = off[i] + j
            for k in range(j + 1, n):
                b = off[i] + k
                c = off[j] + k
                p = 9 * t
                idx[p] = a
                idx[p + 1] = b
                idx[p + 2] = c
                idx[p + 3] = b
                idx[p + 4] = a
                idx[p + 5] = c
                idx[p + 6] = c
                idx[p + 7] = a
                idx[p + 8] = b
                t += 1
    return idx


def _triples_in_range(n, j0, j1):
    """Triples ``(i, j, k)`` of one ``i`` with ``j0 <= j < j1``: ``sum_j (n - 1 - j)``."""
    cnt = j1 - j0
    return cnt * (n - 1) - (j0 + j1 - 1) * cnt // 2


def dense_triangle_blocks(n, block_rows=DEFAULT_BLOCK_ROWS):
    """Yield the ``3 * C(n, 3)`` triangle rows ``x_ij <= x_ik + x_kj`` in blocks.

    Parameters
    ----------
    n : int
    block_rows : int
        Target rows per block (a block may exceed it by less than ``3 n``).

    Yields
    ------
    RowBlock
        Rows ``-inf <= x_a - x_b - x_c <= 0`` over packed pair columns.
    """
    max_triples = max(1, block_rows // 3)
    pending = []
    count = 0
    for i in range(n - 2):
        j = i + 1
        while j < n - 1:
            # extend [j, j1) while the block stays under budget (at least one j)
            room = max_triples - count
            j1 = j + 1
            per = n - 1 - j
            if per < room:
                # largest j1 with triples(j..j1) <= room, by a short search
                lo, hi = j + 1, n - 1
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if _triples_in_range(n, j, mid) <= room:
                        lo = mid
                    else:
                        hi = mid - 1
                j1 = lo
            pending.append((i, j, j1))
            count += _triples_in_range(n, j, j1)
            j = j1
            if count >= max_triples:
                yield _dense_block(n, pending, count)
                pending, count = [], 0
    if pending:
        yield _dense_block(n, pending, count)


def _dense_block(n, pending, n_triples):
    blocks = np.asarray(pending, dtype=np.int64).reshape(-1, 3)
    idx = _dense_triangle_index(n, blocks, n_triples)
    return _uniform_block(idx, (1.0, -1.0, -1.0), -INF, 0.0)


def triangle_rows(rows, columns=None):
    """Rows ``x_a - x_b - x_c <= 0`` for given index triples.

    Parameters
    ----------
    rows : ndarray of shape (k, 3), int
        Variable indices ``(a, b, c)``; ``a`` is the long side.
    columns : ndarray or None
        Model column of each variable (identity when ``None``).
    """
    rows = np.asarray(rows, dtype=np.int64).reshape(-1, 3)
    if columns is not None:
        rows = columns[rows]
    return _uniform_block(rows, (1.0, -1.0, -1.0), -INF, 0.0)


# ------------------------------------------------------ edge (cd) families
def edge_family_size(problem):
    """``(rows, nonzeros)`` of the triangle and wedge rows of an ``edges`` problem."""
    t, w = len(problem.triangles), len(problem.wedges)
    return 3 * t + w, 9 * t + 2 * w


def edge_family_rows(problem, ids):
    """Rows of the triangle/wedge family of an ``edges`` problem, by family id.

    Family ids ``0 .. 3T-1`` are triangle rows (triangle ``id // 3``, long side
    ``id % 3``); ids ``3T .. 3T+W-1`` are the wedge rows ``x_a + x_b >= 1``.

    Returns
    -------
    list of RowBlock
    """
    ids = np.asarray(ids, dtype=np.int64)
    tri, wed = problem.triangles, problem.wedges
    nt = 3 * len(tri)
    out = []
    tid = ids[ids < nt]
    if tid.size:
        t, s = np.divmod(tid, 3)
        a = tri[t, s]
        b = tri[t, (s + 1) % 3]
        c = tri[t, (s + 2) % 3]
        out.append(_uniform_block(np.stack([a, b, c], axis=1), (1.0, -1.0, -1.0), -INF, 0.0))
    wid = ids[ids >= nt] - nt
    if wid.size:
        out.append(_uniform_block(wed[wid], (1.0, 1.0), 1.0, INF))
    return out


def edge_family_blocks(problem, block_rows=DEFAULT_BLOCK_ROWS):
    """Yield all triangle and wedge rows of an ``edges`` problem in blocks."""
    total, _ = edge_family_size(problem)
    for start in range(0, total, block_rows):
        yield from edge_family_rows(problem, np.arange(start, min(total, start + block_rows)))


def edge_family_violations(problem, x):
    """Violation of every row of the triangle/wedge family, in family-id order."""
    tri, wed = problem.triangles, problem.wedges
    xa, xb, xc = x[tri[:, 0]], x[tri[:, 1]], x[tri[:, 2]]
    tv = np.stack([xa - xb - xc, xb - xc - xa, xc - xa - xb], axis=1).ravel()
    wv = 1.0 - x[wed[:, 0]] - x[wed[:, 1]]
    return np.concatenate([tv, wv])


# ----------------------------------------------------------- cycle family
def cycle_rows(offsets, members):
    """Rows ``x_e - sum(rest of cycle) <= 0`` from flat cycle lists.

    ``members[offsets[c]:offsets[c+1]]`` are the variable ids of cycle ``c``, the
    edge whose inequality is meant first (as :func:`violated_cycles` returns them).
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    k = offsets.size - 1
    value = np.full(members.size, -1.0)
    value[offsets[:-1]] = 1.0
    return RowBlock(np.full(k, -INF), np.zeros(k), offsets[:-1].astype(np.int32),
                    np.asarray(members, dtype=np.int32), value)


# ------------------------------------------------------------------- sizes
def model_size(problem, *, embed=None):
    """Columns, rows and nonzeros of the full LP/QP the ``highs`` backend would build.

    Parameters
    ----------
    problem : MetricProblem
    embed : bool or None
        Whether a sparse problem is embedded in K_n (default: yes for sparse problems).

    Returns
    -------
    dict
        ``cols``, ``rows``, ``nonzeros``, ``hessian`` (nonzeros of the Hessian).
    """
    sparse = problem.structure == "sparse"
    if embed is None:
        embed = sparse
    n_x = n_pairs(problem.n) if (problem.structure == "dense" or embed) else problem.n_variables
    cols, rows, nnz = n_x, 0, 0
    if problem.structure in ("dense", "sparse"):
        rows = count_dense_triangle_rows(problem.n)
        nnz = 3 * rows
    else:
        rows, nnz = edge_family_size(problem)
    if problem.objective == "l1":
        d = np.asarray(problem.target)
        w = np.asarray(problem.weights)
        k = int(np.count_nonzero((w != 0) & (d > problem.lower) & (d < problem.upper)))
        cols += k
        rows += 2 * k
        nnz += 4 * k
    if problem.sum_value is not None:
        rows += 1
        nnz += problem.n_variables
    hess = n_x if problem.objective == "l2" else 0
    return dict(cols=int(cols), rows=int(rows), nonzeros=int(nnz), hessian=int(hess))


def embedding_columns(problem):
    """Packed K_n column of each variable of a sparse problem."""
    return pair_index(problem.pairs[:, 0], problem.pairs[:, 1], problem.n)
