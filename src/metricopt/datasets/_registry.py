"""Registry of the public graphs used in the metric-constrained clustering papers.

The entries live in ``registry.json`` next to this module. Each names a canonical
download (SNAP, SuiteSparse Matrix Collection, or Mark Newman's netdata page), the
archive layout and file format, what the download is checked against, and a citation.
:func:`metricopt.datasets.fetch` downloads and converts an entry into the cache
(:func:`cache_dir`); :func:`resolve_dataset` finds a converted file there.

Checks
------
``sha256``
    SHA-256 of the decompressed data file (the ``.txt`` of a SNAP ``.gz``, the ``.gml``
    inside a Newman ``.zip``, the ``.mtx`` inside a SuiteSparse ``.tar.gz``) after line
    endings are normalised to ``\\n`` (see :func:`content_sha256`). It is recorded only
    where a copy of the original file was available to compute it from; ``None``
    elsewhere.
``n``, ``m``
    Nodes and edges of the largest connected component after
    :func:`metricopt.io.read_graph` has made the graph simple and undirected.
``file_nodes``, ``file_edges``
    Distinct node ids and data lines of the decompressed file, as stated by the source
    (SNAP headers and dataset pages).
"""

import difflib
import functools
import hashlib
import json
import os
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from metricopt.exceptions import InvalidParameterError

__all__ = [
    "Dataset",
    "registry",
    "dataset_names",
    "get_dataset",
    "cache_dir",
    "cached_path",
    "resolve_dataset",
    "content_sha256",
    "DATA_ENV",
]

#: Environment variable naming the dataset cache directory.
DATA_ENV = "METRICOPT_DATA"

ARCHIVES = ("gzip", "tar.gz", "zip")
FORMATS = ("snap", "snap-signed", "gml", "mtx")


@dataclass(frozen=True)
class Dataset:
    """One registry entry.

    Attributes
    ----------
    name : str
        Registry name, also the name of the cached file (``NAME.txt``).
    title : str
    collection : str
        Where the download comes from, e.g. ``"SNAP"`` or ``"SuiteSparse Pajek/USAir97"``.
    url : str
        Canonical download address.
    mirrors : tuple of str
        Other addresses serving the same file, tried in order after ``url``.
    archive : {"gzip", "tar.gz", "zip"}
    member : str
        The data file: its path inside a tar or zip archive, or the name of the
        decompressed file for ``gzip``.
    format : {"snap", "snap-signed", "gml", "mtx"}
        Format of the data file.
    sha256 : str or None
        Checksum of the data file (see :func:`content_sha256`), where known.
    n, m : int or None
        Expected nodes and edges of the largest connected component.
    file_nodes, file_edges : int or None
        Expected distinct node ids and data lines of the data file.
    citation : str
    provenance : str
        Where the checksum and the expected counts come from.
    """

    name: str
    title: str
    collection: str
    url: str
    mirrors: tuple
    archive: str
    member: str
    format: str
    sha256: str | None
    n: int | None
    m: int | None
    file_nodes: int | None
    file_edges: int | None
    citation: str
    provenance: str

    @property
    def signed(self):
        """True for signed edge lists (``u v sign``)."""
        return self.format == "snap-signed"

    @property
    def urls(self):
        """``url`` followed by the mirrors."""
        return (self.url, *self.mirrors)

    def checks(self):
        """What a download of this entry is verified against, as short phrases.

        Returns
        -------
        list of str
        """
        out = []
        if self.sha256:
            out.append(f"sha256 of {self.member_name}")
        if self.n is not None:
            out.append(f"largest component n={self.n}, m={self.m}")
        if self.file_nodes is not None:
            out.append(f"file nodes={self.file_nodes}, lines={self.file_edges}")
        return out

    @property
    def member_name(self):
        """Base name of the data file."""
        return self.member.rsplit("/", 1)[-1]


@functools.cache
def registry():
    """All registry entries, in registry order.

    Returns
    -------
    dict of str to Dataset
    """
    raw = json.loads(files(__package__).joinpath("registry.json").read_text(encoding="utf-8"))
    out = {}
    for entry in raw["datasets"]:
        entry = dict(entry)
        entry["mirrors"] = tuple(entry.get("mirrors", ()))
        ds = Dataset(**entry)
        if ds.archive not in ARCHIVES or ds.format not in FORMATS:
            raise ValueError(f"registry.json: bad archive or format in entry {ds.name!r}")
        out[ds.name] = ds
    return out


def dataset_names():
    """Names of the registered datasets, in registry order.

    Returns
    -------
    list of str
    """
    return list(registry())


def _lookup(name):
    reg = registry()
    if name in reg:
        return reg[name]
    folded = {key.lower(): ds for key, ds in reg.items()}
    return folded.get(str(name).lower())


def get_dataset(name):
    """The registry entry called ``name`` (case-insensitive).

    Parameters
    ----------
    name : str

    Returns
    -------
    Dataset

    Raises
    ------
    InvalidParameterError
        No dataset has that name; the message suggests close names.
    """
    ds = _lookup(name)
    if ds is None:
        close = difflib.get_close_matches(str(name), dataset_names(), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InvalidParameterError(
            f"Unknown dataset {name!r}{hint} (see 'metricopt datasets list')"
        )
    return ds


def cache_dir():
    """Directory holding fetched datasets.

    ``$METRICOPT_DATA`` when set, else the platform's user cache directory for
    metricopt (``platformdirs.user_cache_dir("metricopt")``, e.g.
    ``~/.cache/metricopt`` on Linux). It is not created here.

    Returns
    -------
    pathlib.Path
    """
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("metricopt"))


def cached_path(name):
    """Where the converted edge list of ``name`` is (or would be) cached.

    Parameters
    ----------
    name : str
        A registered dataset name (case-insensitive).

    Returns
    -------
    pathlib.Path
    """
    return cache_dir() / f"{get_dataset(name).name}.txt"


def resolve_dataset(name):
    """The cached edge list of a fetched dataset, or ``None``.

    This never downloads and never raises: an unknown name, a dataset that was not
    fetched, and a non-string argument all give ``None``. Graph readers call it to
    accept dataset names wherever a file path is expected.

    Parameters
    ----------
    name : str

    Returns
    -------
    pathlib.Path or None
    """
    if not isinstance(name, str):
        return None
    ds = _lookup(name)
    if ds is None:
        return None
    path = cache_dir() / f"{ds.name}.txt"
    return path if path.is_file() else None


def content_sha256(data):
    """SHA-256 of a text file's bytes with ``\\r\\n`` and ``\\r`` turned into ``\\n``.

    Copies of the same graph differ only in line endings when they passed through
    Windows tools or git settings; the registry's checksums ignore that difference.
    For a file with ``\\n`` line endings this is its plain SHA-256.

    Parameters
    ----------
    data : bytes

    Returns
    -------
    str
        Lower-case hexadecimal digest.
    """
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return hashlib.sha256(data).hexdigest()
