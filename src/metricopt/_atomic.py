"""Atomic file writes: a temporary file next to the destination, renamed over it.

A reader never sees a half-written file, and an interrupted or failed write leaves none
behind. A failure (a full disk, a directory without write permission) raises ``OSError``
naming the destination, never the hidden temporary file.
Every writer of the package (run outputs, checkpoints, the dataset cache) goes through
:func:`atomic_write`; the module imports nothing of the package, so any layer may use it.
"""

import contextlib
import os
import tempfile
import threading
from pathlib import Path

__all__ = ["atomic_write", "current_umask"]

_UMASK_LOCK = threading.Lock()


def current_umask():
    """The process umask (read by setting and restoring it, under a lock)."""
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_write(path, mode="w"):
    """Open a temporary file next to ``path``; on success rename it to ``path``.

    The file gets the permissions an ordinary ``open`` would give it (``0666`` less the
    process umask, so ``0644`` under the usual umask ``022``), not the ``0600`` of a
    temporary file.

    Parameters
    ----------
    path : str or os.PathLike
    mode : {"w", "wb"}, default="w"
        Text mode writes UTF-8 with ``\\n`` line endings.

    Yields
    ------
    file object

    Raises
    ------
    OSError
        The file cannot be written; its ``filename`` is ``path``.
    """
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        kwargs = {"encoding": "utf-8", "newline": ""} if "b" not in mode else {}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename in (None, tmp):
            raise _naming(exc, path) from None
        raise


def _naming(exc, path):
    """``exc`` as an ``OSError`` of the same errno (and subclass) naming ``path``."""
    if exc.errno is None:
        return OSError(f"{path}: {exc}")
    return OSError(exc.errno, exc.strerror or os.strerror(exc.errno), os.fspath(path))
