"""Every reader, fed any bytes: a parsed graph or matrix, or a documented error.

The documented errors are the subclasses of :class:`metricopt.exceptions.MetricOptError`
(``InputError`` for bad content, ``MemoryLimitError`` for a header that declares more
than memory holds). Anything else (a ValueError, IndexError, UnicodeDecodeError,
zlib.error, a MemoryError, ...) would reach a user as a traceback.
"""

import gzip
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metricopt.exceptions import MetricOptError
from metricopt.io import FORMATS, read_graph

SUFFIX = {"edgelist": ".txt", "mtx": ".mtx", "gml": ".gml", "pajek": ".net", "mat": ".mat",
          "npy": ".npy", "matrix-csv": ".csv"}

_TOKENS = st.one_of(
    st.integers(-5, 40).map(str),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "%", "%%MatrixMarket", "matrix",
                     "coordinate", "array", "real", "integer", "pattern", "complex",
                     "symmetric", "general", "skew-symmetric", "hermitian", "#", ",", ";",
                     "\"", "a", "é", "\u2028", "0x10", "-0.0", "", "\t", "\x00"]),
)
_LINES = st.lists(st.lists(_TOKENS, max_size=5).map(" ".join), max_size=8).map("\n".join)
_TEXT = st.one_of(_LINES, _LINES.map(lambda t: t.replace(" ", ",")))
_BYTES = st.one_of(
    st.binary(max_size=300),
    _TEXT.map(lambda t: t.encode("utf-8")),
    _TEXT.map(lambda t: t.encode("utf-16")),
    st.sampled_from([b"\x93NUMPY", b"PK\x03\x04", b"\x1f\x8b\x08", b"%%MatrixMarket matrix "
                     b"coordinate real general\n3 3 2\n1 2 1\n2 3 nan\n"]),
)


def _read(tmp_path, data, fmt, gz):
    path = tmp_path / f"fuzz{SUFFIX[fmt]}{'.gz' if gz else ''}"
    path.write_bytes(gzip.compress(data) if gz else data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            read_graph(str(path), fmt=fmt)
        except MetricOptError as exc:
            text = str(exc)
            assert text and "\n" not in text.strip(), text  # one line
        try:  # the suffix alone decides the format too
            read_graph(str(path))
        except MetricOptError:
            pass


def _fuzz(max_examples):
    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=_BYTES, fmt=st.sampled_from(FORMATS), gz=st.booleans())
    def run(tmp_path_factory, data, fmt, gz):
        _read(tmp_path_factory.mktemp("fz", numbered=True), data, fmt, gz)

    return run


def test_every_reader_gives_a_graph_or_a_documented_error(tmp_path_factory):
    _fuzz(200)(tmp_path_factory)


@pytest.mark.slow
def test_every_reader_gives_a_graph_or_a_documented_error_long(tmp_path_factory):
    _fuzz(5000)(tmp_path_factory)


@pytest.mark.parametrize("fmt,data", [
    ("mtx", b"%%MatrixMarket matrix coordinate pattern symmetric\n"
            b"1000000000000 1000000000000 1\n1 2\n"),
    ("npy", b"PK\x03\x04"),
    ("edgelist", b"1 2\n2 1000000000000000000000000\n"),
    ("matrix-csv", b"1,2\n3\n"),
])
def test_found_cases_give_one_line_errors(tmp_path, fmt, data):
    path = tmp_path / f"case{SUFFIX[fmt]}"
    path.write_bytes(data)
    try:
        read_graph(str(path), fmt=fmt)
    except MetricOptError as exc:
        assert "\n" not in str(exc)
