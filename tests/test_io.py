"""Tests for metricopt.io (graph and matrix readers) and the bundled datasets."""

import gzip
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from metricopt.datasets import bundled_names, bundled_path, load_bundled
from metricopt.exceptions import InputError, InvalidParameterError, MetricOptWarning
from metricopt.graph import Dissimilarity, Graph
from metricopt.io import detect_format, read_dissimilarity, read_graph
from metricopt.io._edgelist import _parse_fast, _parse_slow
from metricopt.io._records import strip_comments
from shared_data import SHARED_DATA

DATA = Path(__file__).parent / "data"
SHARED = SHARED_DATA
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="shared graph data not available")


def write(path, text, gz=False, crlf=False):
    data = text.replace("\n", "\r\n").encode() if crlf else text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def gzipped_copy(src, tmp_path):
    dst = tmp_path / (src.name + ".gz")
    dst.write_bytes(gzip.compress(src.read_bytes()))
    return dst


def edge_set(g):
    """Edges as frozensets of labels, for comparisons independent of numbering."""
    return {frozenset((g.labels[u], g.labels[v])) for u, v in g.edges}


def check_invariants(g):
    assert isinstance(g, Graph)
    assert g.edges.dtype == np.int64 and g.edges.shape == (g.m, 2)
    assert np.all(g.edges[:, 0] < g.edges[:, 1])
    assert np.all(g.edges < g.n)
    keys = g.edges[:, 0] * g.n + g.edges[:, 1]
    assert np.all(np.diff(keys) > 0)  # sorted, no duplicates
    assert len(g.labels) == g.n and len(set(g.labels)) == g.n
    assert g.weights is None or g.weights.shape == (g.m,)
    s = g.summary
    assert (s["kept_nodes"], s["kept_edges"]) == (g.n, g.m)
    assert s["dropped_nodes"] == s["input_nodes"] - g.n
    assert s["dropped_edges"] == s["input_edges"] - g.m
    assert s["weighted"] == (g.weights is not None)


@pytest.fixture
def snap(tmp_path):
    """The SNAP fixture, with CRLF line endings guaranteed."""
    text = (DATA / "io_snap_crlf.txt").read_bytes().decode().replace("\r\n", "\n")
    return write(tmp_path / "toy.txt", text, crlf=True)


# --------------------------------------------------------------------------- edge lists


def test_snap_crlf_both_directions_loops_duplicates(snap):
    g = read_graph(snap)
    check_invariants(g)
    assert g.name == "toy"
    # components {1,2,3} and {10,11,12} tie at 3 nodes: the one holding node "1" wins
    assert list(g.labels) == ["1", "2", "3"]
    assert g.edges.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert g.weights is None
    s = g.summary
    assert s["input_lines"] == 14
    assert s["input_nodes"] == 9
    assert s["input_edges"] == 7
    assert (s["self_loops"], s["duplicates"], s["components"]) == (2, 5, 4)
    assert (s["dropped_nodes"], s["dropped_edges"]) == (6, 4)
    assert s["format"] == "edgelist" and s["gzip"] is False
    assert s["message"] == (
        "read 9 nodes and 9 edges; dropped 2 self-loops and 5 duplicate pairs; "
        "kept the largest of 4 components (3 nodes, 3 edges)"
    )


def test_keep_all_components(snap):
    g = read_graph(snap, keep_all_components=True)
    check_invariants(g)
    # integer labels are ordered numerically; node 7 (only a self-loop) is isolated
    assert list(g.labels) == ["1", "2", "3", "4", "5", "7", "10", "11", "12"]
    assert g.m == 7
    assert g.degrees()[5] == 0
    assert g.summary["message"].endswith("kept all 4 components (9 nodes, 7 edges)")


def test_signed_edge_list_weights_are_averaged():
    g = read_graph(DATA / "io_signed.txt")
    check_invariants(g)
    assert g.is_signed
    assert list(g.labels) == ["1", "2", "3", "4"]
    assert g.edges.tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [2, 3]]
    # "3 4 -1" and "4 3 -3" merge into their mean
    np.testing.assert_array_equal(g.weights, [1.0, 1.0, 1.0, -1.0, -2.0])
    assert g.summary["duplicates"] == 2


def test_weighted_string_labels_first_appearance():
    g = read_graph(DATA / "io_weighted.tsv")
    check_invariants(g)
    assert list(g.labels) == ["a", "b", "c"]
    assert g.edges.tolist() == [[0, 1], [0, 2], [1, 2]]
    np.testing.assert_allclose(g.weights, [1.0, 2.5, 0.1])
    assert not g.is_signed


def test_string_labels_preserved():
    g = read_graph(DATA / "io_labels.txt")
    assert list(g.labels) == ["alice", "bob", "carol", "dave"]
    assert edge_set(g) == {
        frozenset(p) for p in [("alice", "bob"), ("bob", "carol"), ("carol", "alice"), ("dave", "alice")]
    }


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("10 9\n9 100\n", ["9", "10", "100"]),  # numeric, not lexicographic
        ("-3 5\n5 0\n", ["-3", "0", "5"]),
        ("007 1\n1 2\n", ["1", "2", "007"]),  # spelling kept, numeric order
        ("+5 1\n1 2\n", ["1", "2", "+5"]),
        ("b 10\n10 a\n", ["b", "10", "a"]),  # mixed: first appearance
        ("99999999999999999999 1\n1 2\n", ["1", "2", "99999999999999999999"]),
        ("1.0 2\n2 3\n", ["1.0", "2", "3"]),
    ],
)
def test_label_order_rules(tmp_path, text, labels):
    g = read_graph(write(tmp_path / "g.txt", text))
    assert list(g.labels) == labels


def test_commas_spaces_and_blank_lines(tmp_path):
    g = read_graph(write(tmp_path / "g.edges", "1,2\n\n  2 , 3\n3\t1\n"))
    assert g.edges.tolist() == [[0, 1], [0, 2], [1, 2]]


def test_weighted_parameter_on_edge_lists():
    assert read_graph(DATA / "io_signed.txt", weighted=False).weights is None
    g = read_graph(DATA / "io_labels.txt", weighted=True)
    np.testing.assert_array_equal(g.weights, np.ones(g.m))
    assert g.summary["weighted"] is True


def test_weighted_false_ignores_the_third_column(tmp_path):
    g = read_graph(write(tmp_path / "t.txt", "1 2 1600000000\n2 3 oops\n"), weighted=False)
    assert g.m == 2 and g.weights is None


@pytest.mark.parametrize(
    "text",
    [
        "# c\n1 2\n2 3\n3 1\n",
        "x y 1.5\ny z -2\nz x 3\nx y 0.5\n",
        "1 2 1\n2 3 -1\n",
        "1,2,1e-3\n2,3,inf\n",
        "1 2\n2 3 4\n",
        "1 2 3\n2 3\n",
        "1 2 nan\n",
        "a b\nc\n",
        "1 2 +1\n2 1 -1\n3 2 +0.5\n",
    ],
)
def test_fast_and_slow_paths_agree(text):
    """The vectorised parser either gives the line-by-line result or defers to it."""
    try:
        slow = _parse_slow(text, "f", parse_weights=True)
    except InputError:
        assert _parse_fast(strip_comments(text.replace(",", " ")), True) is None
        return
    fast = _parse_fast(strip_comments(text.replace(",", " ")), True)
    assert fast is not None
    np.testing.assert_array_equal(fast.src, slow.src)
    np.testing.assert_array_equal(fast.dst, slow.dst)
    assert list(fast.labels) == list(slow.labels)
    np.testing.assert_array_equal(fast.weights, slow.weights)


# --------------------------------------------------------------------------- Matrix Market


def test_mtx_pattern_symmetric_declared_nodes():
    g = read_graph(DATA / "io_pattern_sym.mtx")
    check_invariants(g)
    assert g.name == "io_pattern_sym"
    assert list(g.labels) == ["1", "2", "3", "4", "5"]
    assert g.edges.tolist() == [[0, 1], [0, 2], [1, 2], [2, 3], [3, 4]]
    s = g.summary
    assert s["format"] == "mtx"
    assert (s["input_nodes"], s["input_lines"], s["self_loops"], s["components"]) == (7, 6, 1, 3)
    g_all = read_graph(DATA / "io_pattern_sym.mtx", keep_all_components=True)
    assert g_all.n == 7 and g_all.m == 5
    assert list(g_all.degrees()[5:]) == [0, 0]


def test_mtx_real_general_values_dropped_by_default():
    g = read_graph(DATA / "io_real_general.mtx")
    check_invariants(g)
    assert g.weights is None
    assert g.edges.tolist() == [[0, 1], [0, 3], [1, 2], [2, 3]]
    assert (g.summary["duplicates"], g.summary["self_loops"]) == (1, 1)


def test_mtx_real_general_weighted():
    g = read_graph(DATA / "io_real_general.mtx", weighted=True)
    check_invariants(g)
    np.testing.assert_array_equal(g.weights, [1.0, 1.0, -2.0, 3.25])


def test_mtx_integer_symmetric():
    g = read_graph(DATA / "io_integer.mtx", weighted=True)
    assert g.edges.tolist() == [[0, 1], [0, 2], [1, 2]]
    np.testing.assert_array_equal(g.weights, [4.0, 2.0, -7.0])
    assert read_graph(DATA / "io_integer.mtx").weights is None


def test_mtx_skew_symmetric_is_a_pattern():
    g = read_graph(DATA / "io_skew.mtx", weighted=True)
    assert g.edges.tolist() == [[0, 1], [1, 2]]
    np.testing.assert_array_equal(g.weights, [1.0, 1.0])


def test_mtx_matches_networkx_on_fixture():
    g = read_graph(DATA / "io_real_general.mtx", fmt="mtx", keep_all_components=True)
    nxg = nx.Graph()
    nxg.add_edges_from([(1, 2), (2, 3), (3, 4), (4, 1)])
    assert edge_set(g) == {frozenset((str(u), str(v))) for u, v in nxg.edges}


@pytest.mark.parametrize(
    "name",
    ["io_snap_crlf.txt", "io_signed.txt", "io_weighted.tsv", "io_pattern_sym.mtx",
     "io_real_general.mtx", "io_integer.mtx"],
)
def test_gzip_gives_the_same_graph(tmp_path, name):
    plain = read_graph(DATA / name, weighted=True)
    packed = read_graph(gzipped_copy(DATA / name, tmp_path), weighted=True)
    assert packed.summary["gzip"] is True
    assert packed.name == plain.name
    np.testing.assert_array_equal(packed.edges, plain.edges)
    np.testing.assert_array_equal(packed.weights, plain.weights)
    assert list(packed.labels) == list(plain.labels)


def test_format_detection_and_override(tmp_path):
    assert detect_format("a/b.mtx.gz") == "mtx"
    assert detect_format("b.MM") == "mtx"
    assert detect_format("b.npy") == "npy"
    assert detect_format("b.csv.gz") == "matrix-csv"
    assert detect_format("b.txt") == detect_format("b.weird") == detect_format("b") == "edgelist"
    mtx_as_txt = tmp_path / "graph.dat"
    mtx_as_txt.write_bytes((DATA / "io_integer.mtx").read_bytes())
    assert read_graph(mtx_as_txt, fmt="mtx").m == 3
    assert read_graph(DATA / "io_signed.txt", name="custom").name == "custom"



# --------------------------------------------------------------------------- the reader table
def test_reader_table_has_every_format_once():
    from metricopt.io import FORMATS, READERS

    assert tuple(READERS) == FORMATS
    suffixes = [s for r in READERS.values() for s in r.suffixes]
    assert len(suffixes) == len(set(suffixes))
    for fmt, reader in READERS.items():
        assert all(detect_format(f"x{s}.gz") == fmt for s in reader.suffixes)
    assert detect_format("a.gml") == "gml" and detect_format("a.NET") == "pajek"
    assert detect_format("a.mat.gz") == "mat"


def _path_graph_edges(g):
    return {frozenset((str(g.labels[u]), str(g.labels[v]))) for u, v in g.edges}


def test_gml_reads_declared_nodes_and_edges(tmp_path):
    path = tmp_path / "g.gml"
    path.write_text('Creator "x"\ngraph [\n  directed 0\n  node [ id 1 label "a" ]\n'
                    '  node [ id 2 ]\n  node [ id 3 ]\n  node [ id 9 ]\n'
                    '  edge [ source 1 target 2 value 4 ]\n  edge [ source 3 target 2 ]\n'
                    '  edge [ source 2 target 1 ]\n]\n')
    g = read_graph(path, keep_all_components=True)
    assert g.n == 4 and g.m == 2 and g.weights is None
    assert list(g.labels) == ["1", "2", "3", "9"]
    assert _path_graph_edges(g) == {frozenset("12"), frozenset("23")}
    assert read_graph(path).n == 3  # the isolated node 9 is not in the largest component
    path.write_text("graph [ node [ id 1 ] edge [ source 1 target 5 ] ]")
    with pytest.raises(InputError, match="g.gml: GML edge refers to undeclared node '5'"):
        read_graph(path)
    path.write_text("graph [ node [ id 1 ]")
    with pytest.raises(InputError, match="unclosed"):
        read_graph(path)


def test_pajek_reads_edges_arcs_and_lists(tmp_path):
    path = tmp_path / "g.net"
    path.write_text('*Vertices 5\n1 "a"\n2 "b"\n3 "c"\n4 "d"\n5 "e"\n*Edges\n1 2 1.0\n'
                    '*Arcs\n3 2\n*Edgeslist\n4 1 2\n')
    g = read_graph(path, keep_all_components=True)
    assert g.n == 5 and g.m == 4
    assert _path_graph_edges(g) == {frozenset("12"), frozenset("23"), frozenset("14"),
                                    frozenset("24")}
    path.write_text("*Vertices 2\n*Matrix\n0 1\n1 0\n")
    with pytest.raises(InputError, match=r"g.net, line 2: unsupported Pajek section \*Matrix"):
        read_graph(path)


def test_mat_reads_a_sparse_matrix_with_or_without_values(tmp_path):
    import scipy.io
    import scipy.sparse as sp

    path = tmp_path / "g.mat"
    a = sp.coo_matrix(([2.0, 2.0, 3.0, 3.0], ([0, 1, 1, 2], [1, 0, 2, 1])), shape=(4, 4))
    scipy.io.savemat(path, {"A": a.tocsc()})
    g = read_graph(path, keep_all_components=True)
    assert g.n == 4 and g.m == 2 and g.weights is None
    assert list(g.labels) == ["1", "2", "3", "4"]
    weighted = read_graph(path, weighted=True)
    assert sorted(weighted.weights.tolist()) == [2.0, 3.0]
    path.write_bytes(b"MATLAB 5.0 not really")
    with pytest.raises(InputError, match="g.mat: not a readable MATLAB file"):
        read_graph(path)


def test_other_formats_of_karate_give_the_bundled_graph(tmp_path):
    karate = read_graph("karate")
    gml = tmp_path / "karate.gml"
    gml.write_text("graph [\n" + "".join(f"  node [ id {v} ]\n" for v in karate.labels)
                   + "".join(f"  edge [ source {karate.labels[u]} target {karate.labels[v]} ]\n"
                             for u, v in karate.edges) + "]\n")
    net = tmp_path / "karate.net.gz"
    net.write_bytes(gzip.compress((f"*Vertices {karate.n}\n*Edges\n" + "".join(
        f"{karate.labels[u]} {karate.labels[v]}\n" for u, v in karate.edges)).encode()))
    for path in (gml, net):
        g = read_graph(path)
        assert (g.n, g.m) == (karate.n, karate.m) and g.name == "karate"
        assert _path_graph_edges(g) == _path_graph_edges(karate)

# --------------------------------------------------------------------------- dense matrices

EXPECTED = np.array([[0, 1, 2], [1, 0, 1.5], [2, 1.5, 0]])


def test_matrix_csv_without_header():
    d = read_graph(DATA / "io_matrix.csv")
    assert isinstance(d, Dissimilarity)
    np.testing.assert_array_equal(d.values, EXPECTED)
    assert list(d.labels) == ["0", "1", "2"]
    assert d.name == "io_matrix"
    assert d.summary["format"] == "matrix-csv"


def test_matrix_csv_with_header():
    d = read_dissimilarity(DATA / "io_matrix_header.csv")
    np.testing.assert_array_equal(d.values, EXPECTED)
    assert list(d.labels) == ["a", "b", "c"]


def test_matrix_csv_numeric_header_and_whitespace(tmp_path):
    d = read_dissimilarity(write(tmp_path / "m.txt", "10 20\n0 3\n3 0\n"))
    assert list(d.labels) == ["10", "20"]
    assert d.values[0, 1] == 3


def test_npy_and_gz(tmp_path):
    path = tmp_path / "d.npy"
    noisy = EXPECTED.copy()
    noisy[0, 2] *= 1 + 1e-12  # within the symmetry tolerance
    noisy[1, 1] = 7.0  # the diagonal is ignored
    np.save(path, noisy)
    d = read_graph(path)
    assert isinstance(d, Dissimilarity) and d.n == 3 and d.name == "d"
    assert d.values[1, 1] == 0 and np.array_equal(d.values, d.values.T)
    np.testing.assert_allclose(d.values, EXPECTED, rtol=1e-11)
    assert list(d.labels) == ["0", "1", "2"]
    packed = gzipped_copy(path, tmp_path)
    np.testing.assert_array_equal(read_dissimilarity(packed).values, d.values)
    csv_gz = gzipped_copy(DATA / "io_matrix_header.csv", tmp_path)
    assert list(read_graph(csv_gz).labels) == ["a", "b", "c"]


def test_npy_integer_matrix(tmp_path):
    np.save(tmp_path / "i.npy", np.array([[0, 2], [2, 0]], dtype=np.int32))
    assert read_dissimilarity(tmp_path / "i.npy").values.dtype == np.float64


def test_matrix_ignores_graph_options_with_warning():
    with pytest.warns(MetricOptWarning, match="do not apply"):
        read_graph(DATA / "io_matrix.csv", keep_all_components=True)


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.zeros((2, 3)), "expected a square matrix, got shape (2, 3)"),
        (np.zeros(4), "expected a square matrix, got shape (4,)"),
        (np.zeros((1, 1)), "the matrix must be at least 2 x 2, got 1 x 1"),
        (np.array([[0, 1], [np.nan, 0]]), "entry [1, 0] is not finite (nan)"),
        (np.array([[0, 1], [1.1, 0]]), "the matrix is not symmetric: entry [0, 1] = 1.0 but [1, 0] = 1.1"),
        (np.array([[0, -1], [-1, 0]]), "entry [0, 1] is negative (-1.0)"),
        (np.array([[0, 1j], [1j, 0]]), "expected a real numeric matrix, got dtype complex128"),
    ],
)
def test_npy_errors(tmp_path, array, message):
    path = tmp_path / "bad.npy"
    np.save(path, array)
    with pytest.raises(InputError) as err:
        read_dissimilarity(path)
    assert str(err.value) == f"{path}: {message}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0,1\n1,0,2\n", ", line 2: expected 2 values, found 3"),
        ("0,1\n1,x\n", ": entry [1, 1] is not a number: 'x'"),
        ("a,a\n0,1\n1,0\n", ": duplicate label 'a' in the header row"),
        ("a,b,c\n0,1\n1,0\n", ", line 2: expected 3 values, found 2"),
        ("# only a comment\n", ": no matrix data found"),
        ("0,1,1\n1,0,1\n", ": expected a square matrix, got shape (2, 3)"),
    ],
)
def test_matrix_csv_errors(tmp_path, text, message):
    path = write(tmp_path / "bad.csv", text)
    with pytest.raises(InputError) as err:
        read_graph(path)
    assert str(err.value) == f"{path}{message}"


def test_not_an_npy_file(tmp_path):
    path = write(tmp_path / "fake.npy", "0 1\n1 0\n")
    with pytest.raises(InputError) as err:
        read_graph(path)
    assert str(err.value) == f"{path}: not a valid .npy file"


# --------------------------------------------------------------------------- errors


def raises(path_or_source, **kwargs):
    with pytest.raises(InputError) as err:
        read_graph(path_or_source, **kwargs)
    return str(err.value)


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.txt"
    assert raises(missing) == f"File not found: {missing}"
    assert raises(str(missing)) == f"File not found: {missing}"
    assert raises("nope") == (
        "File not found: nope (and no bundled dataset of that name; "
        "bundled: dolphins, football, karate, lesmis)"
    )


def test_directory(tmp_path):
    assert raises(tmp_path) == f"{tmp_path}: is a directory, not a file"


def test_binary_and_undecodable(tmp_path):
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"1 2\n\x00\x01\x02")
    assert raises(binary) == f"{binary}: binary file, not a text file"
    latin = tmp_path / "l.txt"
    latin.write_bytes(b"caf\xe9 bar\n")
    assert raises(latin) == f"{latin}: not UTF-8 text (bad byte at offset 3)"


def test_unreadable(tmp_path, monkeypatch):
    path = write(tmp_path / "g.txt", "1 2\n")

    def deny(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", deny)
    assert raises(path) == f"{path}: cannot read file (Permission denied)"


def test_gzip_errors(tmp_path):
    fake = write(tmp_path / "g.txt.gz", "1 2\n")
    assert raises(fake) == f"{fake}: not a gzip file"
    truncated = tmp_path / "t.txt.gz"
    truncated.write_bytes(gzip.compress(b"1 2\n" * 1000)[:-10])
    assert raises(truncated) == f"{truncated}: corrupt or truncated gzip data"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# c\n1 2\n3\n", ", line 3: cannot parse '3'"),
        ("1 2\n\n1 2 3 4\n", ", line 3: cannot parse '1 2 3 4'"),
        ("%c\n1 2 1\n2 3\n", ", line 3: cannot parse '2 3' (expected 3 columns as on line 2)"),
        ("1 2\n2 3 1\n", ", line 2: cannot parse '2 3 1' (expected 2 columns as on line 1)"),
        ("1 2 1\n2 3 heavy\n", ", line 2: cannot parse '2 3 heavy'"),
        ("# c\n\n1 2 0.5\n2 3 nan\n", ", line 4: weight is not finite"),
        ("1 2 -inf\n", ", line 1: weight is not finite"),
        ("", ": no edges found"),
        ("# nothing but comments\n\n", ": no edges found"),
        ("1 1\n2 2\n", ": the largest connected component has only one node"),
    ],
)
def test_edge_list_errors(tmp_path, text, message):
    path = write(tmp_path / "bad.txt", text)
    assert raises(path) == f"{path}{message}"


def test_error_line_numbers_count_comments_with_crlf(tmp_path):
    path = write(tmp_path / "bad.txt", "# a\n# b\n1 2\n2 x y z\n", crlf=True)
    assert raises(path) == f"{path}, line 4: cannot parse '2 x y z'"


def test_errors_in_gz_files(tmp_path):
    path = write(tmp_path / "bad.txt.gz", "1 2 1\n2 3 inf\n", gz=True)
    assert raises(path) == f"{path}, line 2: weight is not finite"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 2\n", ": not a Matrix Market file (bad or missing %%MatrixMarket header)"),
        ("%%MatrixMarket matrix array real general\n2 2\n0\n1\n1\n0\n",
         ": only Matrix Market 'coordinate' files are supported, not 'array'"),
        ("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1 0\n",
         ": unsupported Matrix Market field 'complex' (use pattern, real or integer)"),
        ("%%MatrixMarket matrix coordinate pattern hermitian\n2 2 1\n1 2\n",
         ": unsupported Matrix Market symmetry 'hermitian'"),
        ("%%MatrixMarket matrix coordinate pattern general\n% only comments\n",
         ": Matrix Market size line is missing"),
        ("%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 2\n",
         ": the matrix is 2 x 3; a graph needs a square matrix"),
        ("%%MatrixMarket matrix coordinate pattern general\n3 3 x\n",
         ", line 2: cannot parse '3 3 x' (expected 'rows columns entries')"),
        ("%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n",
         ": the header declares 3 entries but the file has 2"),
        ("%%MatrixMarket matrix coordinate pattern general\n%\n3 3 2\n1 2\n2 4\n",
         ", line 5: index 4 is outside 1..3"),
        ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 3\n",
         ", line 4: cannot parse '2 3'"),
        ("%%MatrixMarket matrix coordinate pattern general\n3 3 0\n", ": no edges found"),
    ],
)
def test_mtx_errors(tmp_path, text, message):
    path = write(tmp_path / "bad.mtx", text)
    assert raises(path) == f"{path}{message}"


def test_mtx_non_finite_weight(tmp_path):
    text = "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 3 nan\n"
    path = write(tmp_path / "bad.mtx", text)
    assert raises(path, weighted=True) == f"{path}, line 4: weight is not finite"
    assert read_graph(path).m == 2  # values dropped: not checked


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"fmt": "graphml"}, "'fmt' parameter of read_graph"),
        ({"weighted": "yes"}, "'weighted' parameter"),
        ({"weighted": 1}, "'weighted' parameter"),
        ({"keep_all_components": 1}, "'keep_all_components' parameter"),
        ({"name": 3}, "'name' parameter"),
    ],
)
def test_invalid_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        read_graph(DATA / "io_signed.txt", **kwargs)


def test_invalid_source_and_matrix_fmt():
    for source in (42, ""):
        with pytest.raises(InvalidParameterError, match="'source' parameter"):
            read_graph(source)
    assert raises("x" * 5000) == "File not found: " + "x" * 5000 + (
        " (and no bundled dataset of that name; bundled: dolphins, football, karate, lesmis)"
    )
    with pytest.raises(InvalidParameterError, match="'fmt' parameter of read_dissimilarity"):
        read_dissimilarity(DATA / "io_matrix.csv", fmt="mtx")


# --------------------------------------------------------------------------- bundled datasets

BUNDLED_SIZES = {"karate": (34, 78), "lesmis": (77, 254), "dolphins": (62, 159), "football": (115, 613)}


def test_bundled_names_and_paths():
    assert bundled_names() == sorted(BUNDLED_SIZES)
    for name in bundled_names():
        path = bundled_path(name)
        assert path.is_file() and path.read_text().startswith(f"# name: {name}\n")
    with pytest.raises(InvalidParameterError, match="Unknown bundled dataset 'nope'"):
        bundled_path("nope")


@pytest.mark.parametrize("name", sorted(BUNDLED_SIZES))
def test_bundled_graph_sizes(name):
    g = read_graph(name)
    check_invariants(g)
    assert (g.n, g.m) == BUNDLED_SIZES[name]
    assert g.name == name
    g2 = load_bundled(name, keep_all_components=True)
    assert (g2.n, g2.m, g2.name) == (g.n, g.m, name)


def test_bundled_copies_are_byte_identical():
    if not SHARED.is_dir():
        pytest.skip("shared graph data not available")
    for name in bundled_names():
        assert bundled_path(name).read_bytes() == (SHARED / f"{name}.txt").read_bytes()


def test_existing_path_wins_over_dataset_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "karate", "a b\nb c\n")
    assert read_graph("karate").n == 3


# --------------------------------------------------------------------------- shared SNAP / Newman graphs


@needs_shared
@pytest.mark.parametrize(
    ("file", "n", "m"),
    [("ca-GrQc.txt", 4158, 13422), ("jazz.txt", 198, 2742), ("netscience.txt", 379, 914)],
)
def test_shared_graph_sizes(file, n, m):
    g = read_graph(SHARED / file)
    check_invariants(g)
    assert (g.n, g.m) == (n, m)


@needs_shared
def test_raw_ca_grqc_snap_file_matches_networkx():
    raw = SHARED / "raw" / "CA-GrQc.txt"
    if not raw.is_file():
        pytest.skip("raw CA-GrQc.txt not available")
    g = read_graph(raw)
    assert (g.n, g.m) == (4158, 13422)
    s = g.summary
    assert (s["input_nodes"], s["input_lines"], s["self_loops"], s["components"]) == (5242, 28980, 12, 355)
    assert s["message"] == (
        "read 5242 nodes and 14496 edges; dropped 12 self-loops and 14484 duplicate pairs; "
        "kept the largest of 355 components (4158 nodes, 13422 edges)"
    )
    ref = nx.read_edgelist(raw, comments="#", nodetype=str)
    ref.remove_edges_from(list(nx.selfloop_edges(ref)))
    lcc = ref.subgraph(max(nx.connected_components(ref), key=len))
    assert edge_set(g) == {frozenset(e) for e in lcc.edges}


@needs_shared
def test_shared_mtx_matches_its_edge_list():
    mtx = SHARED / "raw" / "ia-email-univ.mtx"
    if not mtx.is_file():
        pytest.skip("raw ia-email-univ.mtx not available")
    g = read_graph(mtx)
    assert (g.n, g.m) == (1133, 5451)
    assert edge_set(g) == edge_set(read_graph(SHARED / "email.txt"))
