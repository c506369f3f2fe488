"""Connecting to a Dask distributed scheduler, for batch runs and the cluster oracles."""

import time

from .exceptions import InputError, InvalidParameterError

__all__ = ["connect", "gather_unless_stopped", "POLL_SECONDS"]

#: How often :func:`gather_unless_stopped` asks its ``stop`` (seconds; a wait, it
#: changes no answer).
POLL_SECONDS = 0.05


def connect(scheduler):
    """A client for ``scheduler`` and whether the caller owns (must close) it.

    Parameters
    ----------
    scheduler : str or distributed.Client
        Address of a scheduler (``tcp://host:8786``) or a connected client.

    Returns
    -------
    client : distributed.Client
    own : bool
        True when the client was opened here.

    Raises
    ------
    InvalidParameterError
        The ``distributed`` package is missing.
    InputError
        No scheduler answers at the address within 30 s.
    """
    try:
        from distributed import Client
    except ImportError:
        raise InvalidParameterError(
            "--scheduler needs the 'distributed' package: pip install 'dask[distributed]'"
        ) from None
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, timeout="30s"), True
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}") from None


def gather_unless_stopped(client, futures, stop):
    """The results of ``futures``, or None when ``stop()`` turned true first.

    ``stop`` (callable or None) is asked every :data:`POLL_SECONDS` while the tasks run;
    the futures are cancelled either way (a stopped call leaves nothing running).
    """
    try:
        while stop is not None:
            if stop():
                return None
            if all(f.done() for f in futures):
                break
            time.sleep(POLL_SECONDS)
        return client.gather(futures)
    finally:
        client.cancel(futures)
