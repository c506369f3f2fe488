"""Locating input files and reading their bytes (plain or gzip-compressed)."""

import gzip
import sys
import zlib
from pathlib import Path

from metricopt.exceptions import InputError, InvalidParameterError, type_name

__all__ = ["resolve_source", "read_bytes", "read_stdin", "decode_text", "base_name",
           "format_suffix", "STDIN", "STDIN_NAME"]

_GZIP_MAGIC = b"\x1f\x8b"
#: The source that stands for standard input (as for most Unix tools).
STDIN = "-"
#: How messages and reports name standard input.
STDIN_NAME = "<stdin>"


def resolve_source(source, bundled, names):
    """Turn ``source`` into an existing file path.

    Parameters
    ----------
    source : str or os.PathLike
        A path, or the name of a bundled dataset.
    bundled : callable
        ``bundled(name)`` returns the path of a bundled dataset, or ``None`` when there
        is no dataset of that name.
    names : list of str
        The bundled names, listed in the error for a missing bare name.

    Returns
    -------
    path : pathlib.Path
    dataset : str or None
        The dataset name when ``source`` named a bundled dataset.
    """
    if not isinstance(source, (str, Path)) and not hasattr(source, "__fspath__"):
        raise InvalidParameterError(
            f"The 'source' parameter must be a path, a dataset name or a graph object "
            f"(networkx or igraph graph, scipy.sparse or numpy adjacency matrix, pandas "
            f"DataFrame of edges). Got {type_name(source)} instead."
        )
    if str(source) == "":
        raise InvalidParameterError(
            "The 'source' parameter must be a path or a dataset name. Got '' instead."
        )
    path = Path(source)
    if _exists(path):
        _check_is_file(path)
        return path, None
    found = bundled(str(source))
    if found is not None:
        return Path(found), str(source)
    raise InputError(f"File not found: {source}{_name_hint(path, names)}")


def _name_hint(path, names):
    """For a bare word (no folder, no suffix), say that no dataset has that name either."""
    if len(path.parts) == 1 and not path.suffix:
        return f" (and no bundled dataset of that name; bundled: {', '.join(names)})"
    return ""


def _exists(path):
    try:
        return path.exists()
    except (OSError, ValueError):  # a name too long for the filesystem, a NUL byte
        return False


def _check_is_file(path):
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a file")


def read_bytes(path):
    """Read a file's bytes, decompressing gzip data.

    A ``.gz`` suffix requires gzip data; gzip data under another name is decompressed
    too (it is recognised by its magic bytes).

    Returns
    -------
    data : bytes
    gzipped : bool
    """
    _check_is_file(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    if path.suffix.lower() == ".gz" and data[:2] != _GZIP_MAGIC:
        raise InputError(f"{path}: not a gzip file")
    return _decompress(data, path)


def read_stdin():
    """Standard input's bytes (:data:`STDIN` as a source), decompressed when they are
    gzip data.

    Returns
    -------
    data : bytes
    gzipped : bool
    """
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    try:
        data = stream.read()
    except OSError as exc:
        raise InputError(f"{STDIN_NAME}: cannot read ({exc.strerror or exc})") from None
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _decompress(data, STDIN_NAME)


def _decompress(data, where):
    gzipped = data[:2] == _GZIP_MAGIC
    if gzipped:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise InputError(f"{where}: corrupt or truncated gzip data") from None
    return data, gzipped


def decode_text(data, path):
    """Decode the bytes of a text file (UTF-8, optional byte-order mark)."""
    if b"\x00" in data[:65536]:
        raise InputError(f"{path}: binary file, not a text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (bad byte at offset {exc.start})") from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _strip_gz(path):
    name = Path(path).name
    return name[:-3] if name.lower().endswith(".gz") else name


def format_suffix(path):
    """The lower-case suffix that names the format, after removing ``.gz``."""
    return Path(_strip_gz(path)).suffix.lower()


def base_name(path):
    """The file name without ``.gz`` and without its format suffix."""
    stem = Path(_strip_gz(path))
    return stem.stem if stem.suffix else stem.name
