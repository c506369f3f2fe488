"""Downloading, verifying and converting registry datasets into the cache.

:func:`fetch` turns one registry entry into ``<cache>/NAME.txt``: a SNAP-style edge list
with a ``#`` provenance header. It works in temporary files inside the cache directory
and renames the result into place only after every check passed, so a failed, corrupted
or interrupted download leaves nothing behind.
"""

import contextlib
import gzip
import io
import os
import socket
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from metricopt._atomic import current_umask
from metricopt.datasets._registry import cache_dir, content_sha256, get_dataset
from metricopt.exceptions import InputError

__all__ = ["fetch", "FetchResult", "DatasetError", "DownloadError", "VerificationError"]

_CHUNK = 1 << 16
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = b"PK\x03\x04"


class DatasetError(InputError):
    """A dataset could not be fetched or registered."""


class DownloadError(DatasetError):
    """Every download address failed (no network, HTTP error, timeout)."""


class VerificationError(DatasetError):
    """A downloaded or given file is not the registered dataset (checksum or counts)."""


@dataclass
class FetchResult:
    """What :func:`fetch` did.

    Attributes
    ----------
    name : str
    path : pathlib.Path
        The cached edge list.
    origin : str
        The address downloaded from, or the local file registered.
    checked : list of str
        The checks that were made and passed.
    skipped : bool
        True when the dataset was already cached and nothing was done.
    """

    name: str
    path: Path
    origin: str
    checked: list
    skipped: bool = False


def fetch(name, *, from_file=None, url=None, force=False, verify_checksum=True,
          progress=None, timeout=60.0):
    """Download (or register) a dataset, verify it and cache it as an edge list.

    Parameters
    ----------
    name : str
        A registered dataset name (case-insensitive).
    from_file : str or os.PathLike or None, default=None
        Use this local file instead of downloading: the original download (``.gz``,
        ``.tar.gz``, ``.zip``), its decompressed data file, or the same graph in another
        format (SNAP edge list, Matrix Market ``.mtx``, GML, Pajek ``.net``, or a MATLAB
        ``.mat`` holding a sparse matrix). The checksum applies only to the registry's own
        data file; every other form is verified by its node and edge counts.
    url : str or None, default=None
        Download from this address instead of the registry's (a local mirror).
    force : bool, default=False
        Replace a cached copy.
    verify_checksum : bool, default=True
        When False, a data file whose SHA-256 differs from the registry is accepted if
        its counts match (for deliberately modified copies); the header records it.
    progress : callable or None, default=None
        Called as ``progress(done_bytes, total_bytes)`` while downloading (``total`` is
        ``None`` when the server does not say).
    timeout : float, default=60.0
        Seconds to wait for the server on each network operation.

    Returns
    -------
    FetchResult

    Raises
    ------
    DownloadError
        No address could be downloaded; the message explains ``--from``.
    VerificationError
        The data does not match the registry (checksum or counts).
    DatasetError
        The file cannot be read or has no usable data file.
    InvalidParameterError
        Unknown dataset name.
    """
    ds = get_dataset(name)
    directory = cache_dir()
    target = directory / f"{ds.name}.txt"
    if target.is_file() and not force:
        return FetchResult(ds.name, target, "cache", [], skipped=True)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(f"cannot create the dataset cache {directory}: {exc.strerror or exc}") from None

    if from_file is not None:
        path = Path(from_file)
        if not path.is_file():
            raise DatasetError(f"{path}: no such file")
        checked = _install(ds, path, str(path.resolve()), target, verify_checksum, local=True)
        return FetchResult(ds.name, target, str(path.resolve()), checked)

    failures, bad_data = [], None
    for address in ([url] if url else ds.urls):
        with _temp_file(directory, f".{ds.name}.", ".download") as tmp:
            try:
                _download(address, tmp, progress, timeout)
            except DownloadError as exc:
                failures.append(f"{address}: {exc}")
                continue
            try:
                checked = _install(ds, tmp, address, target, verify_checksum, local=False)
            except DatasetError as exc:  # bad data from this address: a mirror may do better
                bad_data = bad_data or exc
                continue
            return FetchResult(ds.name, target, address, checked)
    if bad_data is not None:
        raise bad_data
    raise DownloadError(
        f"cannot download {ds.name} ({'; '.join(failures)}). Without network access, get the "
        f"file elsewhere and run: metricopt datasets fetch {ds.name} --from FILE"
    )


# ------------------------------------------------------------------ temp files, download
@contextlib.contextmanager
def _temp_file(directory, prefix, suffix):
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    os.close(fd)
    try:
        yield Path(name)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _download(address, dest, progress, timeout):
    request = urllib.request.Request(address, headers={"User-Agent": "metricopt"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response, open(dest, "wb") as fh:
            length = response.headers.get("Content-Length") if hasattr(response, "headers") else None
            total = int(length) if length and length.isdigit() else None
            done = 0
            if progress is not None:
                progress(done, total)
            while chunk := response.read(_CHUNK):
                fh.write(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise DownloadError(str(getattr(exc, "reason", exc))) from None
    except (socket.timeout, TimeoutError):
        raise DownloadError(f"no answer within {timeout:g} s") from None
    except (ConnectionError, OSError, ValueError) as exc:
        raise DownloadError(str(exc) or type(exc).__name__) from None
    if total is not None and done != total:
        raise DownloadError(f"connection closed after {done} of {total} bytes")


# ------------------------------------------------------------------ unpacking
def _unpack(ds, path, local):
    """Return ``(data, fmt, is_member)``: the data file's bytes, its format, and whether
    it is the registry's own data file (so that the checksum applies)."""
    with open(path, "rb") as fh:
        head = fh.read(512)
    try:
        if head[:4] == _ZIP_MAGIC:
            return _from_zip(ds, path)
        if head[:2] == _GZIP_MAGIC:
            with gzip.open(path, "rb") as fh:
                data = fh.read()
            if _is_tar(data[:512]):
                return _from_tar(ds, io.BytesIO(data), path)
            inner = Path(path).name[:-3] if Path(path).name.lower().endswith(".gz") else ds.member_name
            return _plain(ds, data, inner if local else ds.member_name)
        if _is_tar(head):
            with open(path, "rb") as fh:
                return _from_tar(ds, io.BytesIO(fh.read()), path)
        data = Path(path).read_bytes()
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile, tarfile.TarError) as exc:
        raise DatasetError(f"{_shown(path, local)}: corrupt or unreadable archive ({exc})") from None
    return _plain(ds, data, Path(path).name if local else ds.member_name)


def _shown(path, local):
    return str(path) if local else "download"


def _is_tar(head):
    return len(head) >= 262 and head[257:262] == b"ustar"


def _pick(names, ds, where):
    if ds.member in names:
        return ds.member
    base = [n for n in names if n.rsplit("/", 1)[-1] == ds.member_name]
    if len(base) == 1:
        return base[0]
    listing = ", ".join(sorted(names)[:8])
    raise DatasetError(f"{where}: no {ds.member_name} in the archive (it holds: {listing})")


def _from_zip(ds, path):
    with zipfile.ZipFile(path) as zf:
        member = _pick([i.filename for i in zf.infolist() if not i.is_dir()], ds, path)
        return zf.read(member), ds.format, True


def _from_tar(ds, fileobj, path):
    with tarfile.open(fileobj=fileobj, mode="r:") as tf:
        members = {m.name: m for m in tf.getmembers() if m.isfile()}
        member = _pick(list(members), ds, path)
        return tf.extractfile(members[member]).read(), ds.format, True


def _plain(ds, data, name):
    """A non-archive file: the registry's data file, or the graph in another format."""
    from metricopt.io import READERS, detect_format

    fmt = detect_format(name)
    if fmt == "edgelist" or READERS[fmt].matrix:
        fmt = "snap-signed" if ds.signed else "snap"
    if data[:10] == b"MATLAB 5.0" or data[:7] == b"\x89HDF\r\n\x1a":
        fmt = "mat"
    is_member = fmt == ds.format or (fmt.startswith("snap") and ds.format.startswith("snap"))
    return data, fmt, is_member


# ------------------------------------------------------------------ parsing into edges
@dataclass
class _Edges:
    """Parsed data file: ``lines`` are the output rows (``u\\tv`` or ``u\\tv\\tsign``)."""

    lines: list
    file_nodes: int
    file_edges: int
    self_loops: int
    note: str


def _text(data, where):
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    if "\x00" in text[:4096]:
        raise DatasetError(f"{where}: binary data where a text file was expected")
    return text.replace("\r\n", "\n").replace("\r", "\n")


#: Formats of the registry and of local files -> the io reader that parses them.
_READER = {"snap": "edgelist", "snap-signed": "edgelist", "gml": "gml", "mtx": "mtx",
           "pajek": "pajek", "mat": "mat"}
_LABELS = {"gml": "GML ids as labels; ", "mtx": "Matrix Market 1-based indices as labels; ",
           "pajek": "Pajek vertex numbers as labels; ", "mat": "MATLAB 1-based indices as labels; "}


def _parse(data, fmt, where, signed):
    """Parse a data file with the reader of :mod:`metricopt.io` for its format."""
    from metricopt.io import READERS

    signed = signed and fmt.startswith("snap")  # another format's graph is undirected
    reader = READERS[_READER[fmt]]
    content = data if reader.binary else _text(data, where)
    try:
        records = reader.parse(content, where, bool(signed))
    except InputError as exc:
        raise DatasetError(str(exc)) from None
    if signed:
        return _signed(records, where)
    return _undirected(records, f"{_LABELS.get(fmt, '')}undirected, each pair once")


def _signed(records, where):
    """Signed arcs as listed: ``u v sign`` for every entry."""
    if records.n_lines and records.weights is None:
        raise DatasetError(f"{where}: expected 3 fields (u v sign)")
    labels = records.labels
    lines = [f"{labels[a]}\t{labels[b]}\t{_number(w)}"
             for a, b, w in zip(records.src.tolist(), records.dst.tolist(),
                                [] if records.weights is None else records.weights.tolist())]
    loops = int(np.count_nonzero(records.src == records.dst))
    return _Edges(lines, records.n, records.n_lines, loops, "signed arcs kept as listed (u v sign)")


def _number(value):
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _undirected(records, note):
    """Each unordered pair once, self-loops dropped, in the order of the node ids (numeric
    order of the labels when they are all integers)."""
    src, dst = records.src, records.dst
    loops = int(np.count_nonzero(src == dst))
    keep = src != dst
    pairs = np.stack([np.minimum(src, dst)[keep], np.maximum(src, dst)[keep]], axis=1)
    pairs = np.unique(pairs.reshape(-1, 2), axis=0)
    labels = records.labels
    lines = [f"{labels[a]}\t{labels[b]}" for a, b in pairs.tolist()]
    return _Edges(lines, records.n, records.n_lines, loops, f"{note}, self-loops dropped")


# ------------------------------------------------------------------ install
def _install(ds, path, origin, target, verify_checksum, *, local):
    """Unpack, check, convert and move into place; return the checks made."""
    where = str(path) if local else f"{ds.name} from {origin}"
    data, fmt, is_member = _unpack(ds, path, local)
    checked, notes = [], []
    if ds.sha256 and is_member:
        digest = content_sha256(data)
        if digest == ds.sha256:
            checked.append(f"sha256 of {ds.member_name}")
        elif verify_checksum:
            hint = ("; for a deliberately modified copy use --no-checksum (sizes are still "
                    "checked)") if local else ""
            raise VerificationError(
                f"{where}: sha256 of {ds.member_name} is {digest}, expected {ds.sha256} "
                f"(corrupted or different file; nothing was cached){hint}"
            )
        else:
            notes.append(f"sha256 {digest} differs from the registry's (accepted by request)")
    elif ds.sha256:
        notes.append(f"sha256 not checked: the file is {fmt}, the registry's checksum is for "
                     f"{ds.member_name}")
    edges = _parse(data, fmt, where, ds.signed)
    if not edges.lines:
        raise DatasetError(f"{where}: no edges found")
    if ds.file_nodes is not None and is_member:
        got = (edges.file_nodes, edges.file_edges)
        if got != (ds.file_nodes, ds.file_edges):
            raise VerificationError(
                f"{where}: {got[0]} nodes and {got[1]} lines, expected {ds.file_nodes} and "
                f"{ds.file_edges} (nothing was cached)"
            )
        checked.append(f"file nodes={ds.file_nodes}, lines={ds.file_edges}")
    if ds.n is not None:  # checked below; the file is only kept if it passes
        checked.append(f"largest component n={ds.n}, m={ds.m}")
    with _temp_file(target.parent, f".{ds.name}.", ".txt.tmp") as tmp:
        _write_edgelist(tmp, ds, origin, fmt, edges, checked, notes)
        _check_counts(ds, tmp, where)
        os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp makes 0600 files; cache files are ordinary
        os.replace(tmp, target)
    return checked


def _check_counts(ds, path, where):
    """Read the converted file back with the package reader and compare n, m."""
    from metricopt.io import read_graph

    try:
        graph = read_graph(path, fmt="edgelist", weighted=True if ds.signed else False, name=ds.name)
    except InputError as exc:
        raise VerificationError(f"{where}: the converted file does not read back ({exc})") from None
    if ds.n is None:
        return
    if (graph.n, graph.m) != (ds.n, ds.m):
        raise VerificationError(
            f"{where}: largest component has n={graph.n}, m={graph.m}, expected n={ds.n}, "
            f"m={ds.m} (corrupted or different graph; nothing was cached)"
        )


def _write_edgelist(path, ds, origin, fmt, edges, checked, notes):
    from metricopt._version import __version__

    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    header = [
        f"# metricopt dataset: {ds.name} ({ds.title})",
        f"# collection: {ds.collection}",
        f"# source: {origin}",
        f"# data file: {ds.member_name} (read as {fmt})",
        f"# fetched: {stamp} by metricopt {__version__}",
        "# checked: " + ("; ".join(checked) or "nothing (no reference values)"),
        f"# file: {edges.file_nodes} nodes, {edges.file_edges} entries, {edges.self_loops} "
        f"self-loops; converted: {edges.note}",
        *(f"# note: {text}" for text in notes),
        f"# citation: {ds.citation}",
        "# FromNodeId\tToNodeId" + ("\tSign" if ds.signed else ""),
    ]
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\n".join(header) + "\n")
        fh.write("\n".join(edges.lines) + "\n")
