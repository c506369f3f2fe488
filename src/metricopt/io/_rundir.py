"""Run directories: one run at a time, and no file of an earlier run left behind.

A run that writes into a directory first *claims* it: it creates the lock file
:data:`LOCK_NAME` with ``O_CREAT | O_EXCL`` (atomic on local and NFSv3+ file systems),
holding its host name and process id, and removes it when it is done. A second run, in
this or another process, that finds the lock is refused with :class:`RunDirBusyError`.
A lock left by a process that no longer exists on this host (a crash, ``kill -9``) is
taken over. A directory that already holds the files of an earlier run is refused with
:class:`RunDirExistsError` unless the caller replaces them (``--force``); replacing
removes exactly :data:`RUN_FILES`, never other files.
"""

import contextlib
import json
import os
import socket
import time
import uuid
from pathlib import Path

from ..exceptions import InputError

__all__ = ["LOCK_NAME", "RUN_FILES", "RunDirBusyError", "RunDirExistsError", "claim_run_dir",
           "existing_run_files", "remove_run_files", "run_dir_busy"]

#: Files a run writes into its directory (``convergence.png`` by ``metricopt plot``, the
#: pictures of the answer by ``metricopt plot clusters``).
RUN_FILES = ("report.json", "iterations.csv", "clusters.csv", "cut.csv", "solution.npz",
             "convergence.png",
             *(f"{stem}.{fmt}" for stem in ("clusters-matrix", "clusters-sizes", "cut-sides",
                                            "certificate", "clusters-network")
               for fmt in ("png", "svg")))
LOCK_NAME = ".metricopt-run.lock"


class RunDirBusyError(InputError):
    """Another process is writing a run into the directory."""


class RunDirExistsError(InputError):
    """The directory holds the files of an earlier run."""


def existing_run_files(directory):
    """Names of :data:`RUN_FILES` present in ``directory``."""
    directory = Path(directory)
    return [name for name in RUN_FILES if (directory / name).exists()]


def remove_run_files(directory):
    """Remove the :data:`RUN_FILES` of an earlier run from ``directory``."""
    for name in existing_run_files(directory):
        with contextlib.suppress(FileNotFoundError):
            (Path(directory) / name).unlink()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, owned by someone else (or unknown: assume alive)
    return True


def _owner(lock):
    try:
        info = json.loads(lock.read_text(encoding="utf-8"))
        return str(info["host"]), int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def _stale(lock, host):
    owner_host, pid = _owner(lock)
    if owner_host is None:
        # unreadable: a lock being written right now, or a damaged one; stale when old
        try:
            return time.time() - lock.stat().st_mtime > 60.0
        except FileNotFoundError:
            return True
    return owner_host == host and not _alive(pid)


def run_dir_busy(directory):
    """True while another process holds the run lock of ``directory`` (a lock left by
    a process that no longer exists does not count)."""
    lock = Path(directory) / LOCK_NAME
    return lock.exists() and not _stale(lock, socket.gethostname())


def _try_create(lock, host):
    """Create the lock holding its owner; a lock that cannot be written whole (a full
    disk) is removed again, so that it does not block the directory."""
    fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"host": host, "pid": os.getpid(), "since": time.time()}, fh)
    except BaseException:
        with contextlib.suppress(OSError):
            lock.unlink()
        raise


@contextlib.contextmanager
def claim_run_dir(directory):
    """Hold the run lock of ``directory`` for the duration of the block.

    Parameters
    ----------
    directory : str or os.PathLike
        An existing directory.

    Raises
    ------
    RunDirBusyError
        Another live process holds the lock.
    OSError
        The lock cannot be written (no permission, a full disk); it names ``directory``.
    """
    lock = Path(directory) / LOCK_NAME
    host = socket.gethostname()
    for _ in range(3):
        try:
            _try_create(lock, host)
            break
        except FileExistsError:
            if not _stale(lock, host):
                owner_host, pid = _owner(lock)
                who = f"process {pid} on {owner_host}" if pid is not None else "another process"
                raise RunDirBusyError(
                    f"{directory}: {who} is writing a run there (lock file {LOCK_NAME}); "
                    f"wait for it, or choose another directory") from None
            # move the stale lock aside atomically, so that two takers cannot both win
            aside = lock.with_name(f"{LOCK_NAME}.{uuid.uuid4().hex}.stale")
            try:
                os.replace(lock, aside)
            except FileNotFoundError:
                continue
            if not _stale(aside, host):  # another taker's fresh lock: put it back
                with contextlib.suppress(OSError):
                    os.link(aside, lock)
            with contextlib.suppress(FileNotFoundError):
                aside.unlink()
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write in the directory: {exc.strerror or exc}",
                          os.fspath(directory)) from None
    else:
        raise RunDirBusyError(f"{directory}: cannot claim the run lock {LOCK_NAME}")
    try:
        yield lock
    finally:
        with contextlib.suppress(FileNotFoundError):
            if _owner(lock) == (host, os.getpid()):
                lock.unlink()
