"""Slow plain-Python references for the Dykstra kernels (tests only).

Each function performs the same Hildreth steps as its kernel in
``metricopt.solvers._triangle_sparse`` (triangle passes) or
``metricopt.solvers._constraint_kernels`` (pair, sum, edge and wedge passes), on
explicit constraint rows and dict-held duals, so the two can be compared entry by entry.
"""


def triplets(n, order, block=16):
    """Triplets ``(i, j, k)``, ``i < j < k``, in the kernel's visiting order."""
    if order == "lexicographic":
        for i in range(n):
            for j in range(i + 1, n):
                for k in range(j + 1, n):
                    yield i, j, k
    elif order == "diagonal":
        for sb in range(1, n - 1, block):
            for s2 in range(1, n - 1):
                for s1 in range(sb, min(sb + block, n - s2)):
                    for i in range(n - s1 - s2):
                        yield i, i + s1, i + s1 + s2
    elif order == "parallel":
        # anti-diagonals of block pairs; the block pairs of one anti-diagonal touch
        # disjoint pairs, so any order of them gives the same result
        nb = (n + block - 1) // block
        for d in range(2 * nb - 1):
            for bi in range(max(0, d - nb + 1), d // 2 + 1):
                klo, khi = (d - bi) * block, min(n, (d - bi + 1) * block)
                for i in range(bi * block, min(n, (bi + 1) * block)):
                    for j in range(i + 1, khi):
                        for k in range(max(klo, j + 1), khi):
                            yield i, j, k
    else:
        raise ValueError(order)


def hildreth(x, winv, row, b, z, signed=False):
    """One Hildreth step on ``sum_k row[k] x[k] <= b`` (``=`` if ``signed``); new dual."""
    v = sum(a * x[k] for k, a in row.items()) - b
    q = sum(a * a * winv[k] for k, a in row.items())
    zn = z + v / q
    if not signed:
        zn = max(0.0, zn)
    dz = zn - z
    for k, a in row.items():
        x[k] -= dz * a * winv[k]
    return zn


def triangle_pass(x, winv, n, order, duals, index, block=16):
    """One pass over the triangle constraints; ``duals`` maps (i, j, k, c) -> z.

    ``index(i, j)`` gives the array position of pair ``i < j``.
    """
    for i, j, k in triplets(n, order, block):
        a, b, c = index(i, j), index(i, k), index(j, k)
        rows = ({a: 1.0, b: -1.0, c: -1.0}, {a: -1.0, b: 1.0, c: -1.0}, {a: -1.0, b: -1.0, c: 1.0})
        for t, row in enumerate(rows):
            duals[(i, j, k, t)] = hildreth(x, winv, row, 0.0, duals.get((i, j, k, t), 0.0))
    return duals


def pair_pass(x, f, winv, d, z, lower, upper, has_f, has_lower, has_upper):
    """Per-pair constraints (f >= |x - d| split in two, lower, upper); ``f`` stored at
    offset ``len(x)`` of a joint vector."""
    nv = len(x)
    v = list(x) + (list(f) if has_f else [])
    wv = list(winv) + (list(winv) if has_f else [])
    for p in range(nv):
        if has_f:
            z[0][p] = hildreth(v, wv, {p: 1.0, nv + p: -1.0}, d[p], z[0][p])
            z[1][p] = hildreth(v, wv, {p: -1.0, nv + p: -1.0}, -d[p], z[1][p])
        if has_lower:
            z[2][p] = hildreth(v, wv, {p: -1.0}, -lower, z[2][p])
        if has_upper:
            z[3][p] = hildreth(v, wv, {p: 1.0}, upper, z[3][p])
    x[:] = v[:nv]
    if has_f:
        f[:] = v[nv:]


def sum_step(x, winv, z, total):
    """Equality ``sum(x) = total``."""
    v = list(x)
    zn = hildreth(v, winv, {p: 1.0 for p in range(len(x))}, total, z, signed=True)
    x[:] = v
    return zn


def edge_pass(x, winv, tri, wed, zt, zw):
    """Explicit triangle rows then wedge rows (``x_a + x_b >= 1``)."""
    for r, (a, b, c) in enumerate(tri):
        rows = ({a: 1.0, b: -1.0, c: -1.0}, {a: -1.0, b: 1.0, c: -1.0}, {a: -1.0, b: -1.0, c: 1.0})
        for t, row in enumerate(rows):
            zt[3 * r + t] = hildreth(x, winv, row, 0.0, zt[3 * r + t])
    for r, (a, b) in enumerate(wed):
        zw[r] = hildreth(x, winv, {a: -1.0, b: -1.0}, -1.0, zw[r])
