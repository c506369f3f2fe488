"""Numeric tunables shared by the numba kernels and the iterative backends.

Kernels read their fast-math flags from :data:`FASTMATH`, a named set that leaves out
``nnan`` and ``ninf`` so that NaN and infinity tests inside kernels keep working.
Call :func:`reset` to restore every default.
"""

__all__ = ["FASTMATH", "DYKSTRA_BLOCK", "DYKSTRA_MIN_WEIGHT", "DYKSTRA_STALL_STEP",
           "DYKSTRA_DENSE_DUAL_BYTES", "DYKSTRA_EXTRAPOLATE_EVERY",
           "DYKSTRA_EXTRAPOLATE_START", "DYKSTRA_EXTRAPOLATE_MIN",
           "DYKSTRA_EXTRAPOLATE_MAX", "DYKSTRA_CONTINUATION", "DYKSTRA_CONTINUATION_GAP",
           "DYKSTRA_CONTINUATION_PASSES", "reset"]

_DEFAULTS = {
    # LLVM fast-math flags for kernels: no `nnan`/`ninf`, so `x != x` and isinf stay honest.
    "FASTMATH": frozenset({"nsz", "arcp", "contract", "afn", "reassoc"}),
    # Width of the s1-blocks of the diagonal visiting order (pairs (i, i+s1) per block).
    "DYKSTRA_BLOCK": 16,
    # Pair weights below this fraction of the largest weight are raised to it, so that
    # W stays invertible (the Jaccard and unit weights are never below it).
    "DYKSTRA_MIN_WEIGHT": 1e-12,
    # A pass whose largest change of any variable is below this (relative to max |x|)
    # counts as no progress: the run is reported as stalled.
    "DYKSTRA_STALL_STEP": 1e-15,
    # Largest dense triangle-dual storage the dykstra backend picks on its own
    # (duals="auto"): 24 bytes per triplet, 48 with the extrapolation's reference copy;
    # 2 GiB is n = 640 with extrapolation.
    "DYKSTRA_DENSE_DUAL_BYTES": 2 * 2**30,
    # Dual extrapolation of the dykstra backend: passes between attempts, and the first
    # trust region and range of the step factor beta.
    "DYKSTRA_EXTRAPOLATE_EVERY": 5,
    "DYKSTRA_EXTRAPOLATE_START": 2.0,
    "DYKSTRA_EXTRAPOLATE_MIN": 0.5,
    "DYKSTRA_EXTRAPOLATE_MAX": 256.0,
    # gamma-continuation of the dykstra backend: the warm-up stages solve the QP with
    # gamma times these fractions, each until the relative gap is below
    # DYKSTRA_CONTINUATION_GAP or after DYKSTRA_CONTINUATION_PASSES passes.
    "DYKSTRA_CONTINUATION": (0.02, 0.2),
    "DYKSTRA_CONTINUATION_GAP": 1e-2,
    "DYKSTRA_CONTINUATION_PASSES": 2000,
}

FASTMATH = _DEFAULTS["FASTMATH"]
DYKSTRA_BLOCK = _DEFAULTS["DYKSTRA_BLOCK"]
DYKSTRA_MIN_WEIGHT = _DEFAULTS["DYKSTRA_MIN_WEIGHT"]
DYKSTRA_STALL_STEP = _DEFAULTS["DYKSTRA_STALL_STEP"]
DYKSTRA_DENSE_DUAL_BYTES = _DEFAULTS["DYKSTRA_DENSE_DUAL_BYTES"]
DYKSTRA_EXTRAPOLATE_EVERY = _DEFAULTS["DYKSTRA_EXTRAPOLATE_EVERY"]
DYKSTRA_EXTRAPOLATE_START = _DEFAULTS["DYKSTRA_EXTRAPOLATE_START"]
DYKSTRA_EXTRAPOLATE_MIN = _DEFAULTS["DYKSTRA_EXTRAPOLATE_MIN"]
DYKSTRA_EXTRAPOLATE_MAX = _DEFAULTS["DYKSTRA_EXTRAPOLATE_MAX"]
DYKSTRA_CONTINUATION = _DEFAULTS["DYKSTRA_CONTINUATION"]
DYKSTRA_CONTINUATION_GAP = _DEFAULTS["DYKSTRA_CONTINUATION_GAP"]
DYKSTRA_CONTINUATION_PASSES = _DEFAULTS["DYKSTRA_CONTINUATION_PASSES"]


def reset():
    """Restore every tunable to its default (kernels already compiled keep their flags)."""
    globals().update(_DEFAULTS)
