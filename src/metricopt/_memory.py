"""Memory estimates and guards: estimate before allocating, refuse with a clear message."""

import os

from .exceptions import MemoryLimitError

__all__ = ["available_memory", "check_memory", "format_bytes"]


def available_memory():
    """Bytes of memory currently available on this machine (MemAvailable, else total)."""
    try:
        with open("/proc/meminfo") as fh:
            info = {}
            for line in fh:
                key, _, rest = line.partition(":")
                info[key] = int(rest.split()[0]) * 1024
        return info.get("MemAvailable", info.get("MemTotal"))
    except (OSError, ValueError, IndexError):
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return 8 * 2**30


def format_bytes(n):
    """Human-readable size, e.g. ``1.5 GiB``."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def check_memory(needed, what, max_memory=None):
    """Raise :class:`MemoryLimitError` if ``needed`` bytes exceed the allowance.

    Parameters
    ----------
    needed : int
        Estimated bytes.
    what : str
        What the memory is for, used in the message.
    max_memory : int or None
        Allowance in bytes; ``None`` means what the machine has available now.
    """
    limit = available_memory() if max_memory is None else int(max_memory)
    if needed > limit:
        raise MemoryLimitError(
            f"{what} needs about {format_bytes(needed)} but only {format_bytes(limit)} "
            f"is allowed; use a smaller instance, another method, or raise --max-memory"
        )
    return needed
