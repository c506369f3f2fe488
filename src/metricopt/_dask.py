"""Connecting to a Dask distributed scheduler, for batch runs and the cluster oracle."""

from .exceptions import InputError, InvalidParameterError

__all__ = ["connect"]


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
