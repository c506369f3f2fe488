"""Memory rules the dispatcher and the backends share.

The dense triangle duals of ``dykstra`` (24 bytes per triplet, twice that with the
extrapolation's reference copy) are its fast path; :func:`dense_duals_fit` says whether
``duals="auto"`` keeps them, which the dispatcher's choice of method also reads.
"""

from ... import _config

__all__ = ["dense_dual_bytes", "auto_dense_fits", "dense_duals_fit"]


def dense_dual_bytes(n, with_reference=True):
    """Bytes of dense triangle duals on ``n`` nodes (24 per triplet, twice that with the
    extrapolation's reference copy)."""
    return (48 if with_reference else 24) * (n * (n - 1) * (n - 2) // 6)


def auto_dense_fits(need, max_memory=None):
    """Whether ``duals="auto"`` takes ``need`` bytes of dense duals: at most
    ``_config.DYKSTRA_DENSE_DUAL_BYTES``, ``max_memory`` and a quarter of the available
    memory."""
    from ..._memory import available_memory

    if need > _config.DYKSTRA_DENSE_DUAL_BYTES or (max_memory is not None and need > max_memory):
        return False
    avail = available_memory()
    return avail is None or need <= avail / 4


def dense_duals_fit(n, max_memory=None):
    """Whether ``duals="auto"`` keeps dense triangle duals (with the extrapolation's
    reference) on ``n`` nodes: the fast path of the ``dykstra`` backend."""
    return auto_dense_fits(dense_dual_bytes(n), max_memory)
