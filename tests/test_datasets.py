"""Dataset registry, verified fetching into the cache, and the datasets commands.

Downloads go to a loopback HTTP server (127.0.0.1, port 0) that serves archives built
from the shared copies of the original files; nothing here touches the internet.
"""

import dataclasses
import gzip
import http.server
import io
import re
import socket
import tarfile
import threading
import zipfile
from pathlib import Path

import click
import pytest

from metricopt.cli.pipelines import COMMANDS
from metricopt.datasets import (
    DatasetError,
    DownloadError,
    VerificationError,
    cache_dir,
    dataset_names,
    fetch,
    get_dataset,
    registry,
    resolve_dataset,
)
from metricopt.datasets._registry import content_sha256
from metricopt.exceptions import InputError, InvalidParameterError
from metricopt.io import read_graph
from shared_data import SHARED_DATA

RAW = SHARED_DATA / "raw"

#: Registry name -> the shared copy of its original data file.
RAW_COPIES = {
    "ca-GrQc": "CA-GrQc.txt", "ca-HepTh": "CA-HepTh.txt", "ca-HepPh": "CA-HepPh.txt",
    **{name: f"{name}.gml" for name in ("karate", "lesmis", "dolphins", "football", "polbooks",
                                         "adjnoun", "netscience", "power", "polblogs",
                                         "celegansneural")},
}
#: Registry name -> a shared copy of the same graph in another format.
OTHER_COPIES = {
    "jazz": "jazz.net", "email": "ia-email-univ.mtx", "celegans_metabolic": "bio-celegans.mtx",
    "USAir97": "USAir97.mat", "Erdos991": "Erdos991A.mat", "SmaGri": "SmaGri.net",
    "SmallW": "SmallW.mat", "Roget": "Roget.mat", "Harvard500": "Harvard500.mat",
}
ISSUE_NAMES = {"ca-GrQc", "ca-HepTh", "ca-HepPh", "soc-sign-epinions", "power", "netscience",
               "polblogs", "email", "jazz", "celegansneural", "celegans_metabolic", "USAir97",
               "Erdos991", "SmaGri", "SmallW", "Roget", "Harvard500", "karate", "lesmis",
               "dolphins", "football", "polbooks", "adjnoun"}


def raw(name):
    path = RAW / name
    if not path.is_file():
        pytest.skip(f"no shared copy {path}")
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty dataset cache in METRICOPT_DATA."""
    path = tmp_path / "cache"
    monkeypatch.setenv("METRICOPT_DATA", str(path))
    return path


def cache_files(path):
    return sorted(p.name for p in path.iterdir()) if path.exists() else []


# ------------------------------------------------------------------ loopback server
class _Handler(http.server.BaseHTTPRequestHandler):
    routes = {}

    def do_GET(self):  # noqa: N802 (http.server's name)
        route = self.routes.get(self.path)
        if route is None:
            self.send_error(404, "Not Found")
            return
        body, declared = route
        self.send_response(200)
        self.send_header("Content-Length", str(declared if declared is not None else len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    """A loopback HTTP server; ``serve(path, body, declared_length=None)`` adds a file."""
    handler = type("Handler", (_Handler,), {"routes": {}})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"

    def serve(path, body, declared_length=None):
        handler.routes[path] = (body, declared_length)
        return base + path

    yield serve
    httpd.shutdown()
    httpd.server_close()


def zip_bytes(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def tar_gz_bytes(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def unused_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ------------------------------------------------------------------ registry
def test_registry_entries_load():
    reg = registry()
    assert ISSUE_NAMES <= set(reg)
    assert any(name.startswith("soc-sign-Slashdot") for name in reg)
    assert dataset_names() == list(reg)
    for ds in reg.values():
        assert re.fullmatch(r"https?://\S+", ds.url), ds.name
        assert all(re.fullmatch(r"https?://\S+", u) for u in ds.mirrors)
        assert ds.archive in ("gzip", "tar.gz", "zip") and ds.format in ("snap", "snap-signed", "gml", "mtx")
        assert ds.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", ds.sha256)
        assert (ds.n is None) == (ds.m is None) and (ds.n is None or 0 < ds.n <= ds.m + 1)
        assert ds.checks(), f"{ds.name}: nothing to verify a download against"
        assert ds.citation and ds.provenance and ds.title
    snap = reg["ca-GrQc"]
    assert snap.url == "https://snap.stanford.edu/data/ca-GrQc.txt.gz"
    usair = reg["USAir97"]
    assert usair.url == "https://sparse.tamu.edu/MM/Pajek/USAir97.tar.gz"
    assert usair.member == "USAir97/USAir97.mtx"
    assert reg["karate"].archive == "zip" and reg["karate"].member == "karate.gml"


def test_get_dataset_is_case_insensitive_and_suggests():
    assert get_dataset("usair97").name == "USAir97"
    with pytest.raises(InvalidParameterError, match="did you mean karate"):
        get_dataset("karat")


@pytest.mark.parametrize("name", sorted(RAW_COPIES))
def test_checksums_match_shared_copies(name):
    ds = get_dataset(name)
    assert ds.sha256 == content_sha256(raw(RAW_COPIES[name]).read_bytes())


def test_content_sha256_ignores_line_endings():
    assert content_sha256(b"1 2\r\n2 3\r\n") == content_sha256(b"1 2\n2 3\n")
    assert content_sha256(b"1 2\n") != content_sha256(b"1 3\n")


@pytest.mark.parametrize("name", sorted({**RAW_COPIES, **OTHER_COPIES}))
def test_shared_copies_pass_every_check(name, cache):
    """Each shared copy, registered with from_file, matches the registry's counts."""
    copy = raw({**RAW_COPIES, **OTHER_COPIES}[name])
    result = fetch(name, from_file=copy)
    ds = get_dataset(name)
    assert f"largest component n={ds.n}, m={ds.m}" in result.checked
    assert (f"sha256 of {ds.member_name}" in result.checked) == (name in RAW_COPIES)
    graph = read_graph(result.path)
    assert (graph.n, graph.m) == (ds.n, ds.m)
    assert cache_files(cache) == [f"{ds.name}.txt"]


def test_converted_file_keeps_labels_and_edges(cache):
    result = fetch("karate", from_file=raw("karate.gml"))
    text = result.path.read_text()
    assert text.startswith("# metricopt dataset: karate")
    assert "# checked: sha256 of karate.gml; largest component n=34, m=78" in text
    fetched, bundled = read_graph(result.path), read_graph("karate")
    as_labels = lambda g: {frozenset((g.labels[u], g.labels[v])) for u, v in g.edges}  # noqa: E731
    assert as_labels(fetched) == as_labels(bundled)


# ------------------------------------------------------------------ fetch over HTTP
def test_fetch_zip_over_http_with_progress(cache, server):
    gml = raw("karate.gml").read_bytes()
    url = server("/karate.zip", zip_bytes({"karate.txt": b"info", "karate.gml": gml}))
    seen = []
    result = fetch("karate", url=url, progress=lambda done, total: seen.append((done, total)))
    assert result.origin == url and result.path == cache / "karate.txt"
    assert resolve_dataset("karate") == result.path == resolve_dataset("KARATE")
    assert seen[-1][0] == seen[-1][1] > 0
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert fetch("karate", url=url).skipped  # cached: nothing to do


def test_fetch_snap_gzip_over_http(cache, server):
    url = server("/ca-GrQc.txt.gz", gzip.compress(raw("CA-GrQc.txt").read_bytes()))
    result = fetch("ca-GrQc", url=url)
    assert result.checked == ["sha256 of ca-GrQc.txt", "file nodes=5242, lines=28980",
                              "largest component n=4158, m=13422"]
    assert read_graph(result.path).n == 4158


def test_fetch_suitesparse_tar_over_http(cache, server):
    import scipy.io

    matrix = scipy.io.loadmat(raw("USAir97.mat"))["Problem"]["A"][0, 0]
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, matrix)
    url = server("/USAir97.tar.gz", tar_gz_bytes({"USAir97/USAir97.mtx": buf.getvalue(),
                                                  "USAir97/USAir97_coord.mtx": b"%%MatrixMarket\n"}))
    result = fetch("USAir97", url=url)
    assert result.checked == ["largest component n=332, m=2126"]


def test_signed_snap_file_keeps_arcs_and_checks_file_counts(cache, server, monkeypatch):
    text = (b"# Nodes: 4 Edges: 5\r\n# FromNodeId\tToNodeId\tSign\r\n"
            b"1\t2\t1\r\n2\t1\t-1\r\n2\t3\t1\r\n3\t4\t-1\r\n4\t4\t1\r\n")
    url = server("/signed.txt.gz", gzip.compress(text))
    ds = dataclasses.replace(get_dataset("soc-sign-epinions"), file_nodes=4, file_edges=5)
    monkeypatch.setattr("metricopt.datasets._fetch.get_dataset", lambda name: ds)
    result = fetch("soc-sign-epinions", url=url)
    assert result.checked == ["file nodes=4, lines=5"]
    body = [line for line in result.path.read_text().splitlines() if not line.startswith("#")]
    assert body == ["1\t2\t1", "2\t1\t-1", "2\t3\t1", "3\t4\t-1", "4\t4\t1"]
    assert read_graph(result.path).is_signed
    monkeypatch.setattr("metricopt.datasets._fetch.get_dataset",
                        lambda name: dataclasses.replace(ds, file_edges=6))
    with pytest.raises(VerificationError, match="4 nodes and 5 lines, expected 4 and 6"):
        fetch("soc-sign-epinions", url=url, force=True)


def test_corrupted_download_leaves_nothing(cache, server):
    gml = raw("karate.gml").read_bytes()
    edge = re.search(rb"\s*edge\s*\[\s*source 2\s*target 1\s*\]", gml)
    url = server("/karate.zip", zip_bytes({"karate.gml": gml[:edge.start()] + gml[edge.end():]}))
    with pytest.raises(VerificationError, match="sha256 of karate.gml is .*nothing was cached"):
        fetch("karate", url=url)
    assert cache_files(cache) == []
    assert resolve_dataset("karate") is None


def test_wrong_counts_leave_nothing(cache, server, monkeypatch):
    """Where no checksum is known, the component size is the check."""
    ds = dataclasses.replace(get_dataset("USAir97"), m=2127)
    monkeypatch.setattr("metricopt.datasets._fetch.get_dataset", lambda name: ds)
    with pytest.raises(VerificationError, match="n=332, m=2126, expected n=332, m=2127"):
        fetch("USAir97", from_file=raw("USAir97.mat"))
    assert cache_files(cache) == []


def test_truncated_download_leaves_nothing(cache, server):
    body = zip_bytes({"karate.gml": raw("karate.gml").read_bytes()})
    url = server("/karate.zip", body[:500], declared_length=len(body))
    with pytest.raises(DownloadError):
        fetch("karate", url=url, timeout=5)
    assert cache_files(cache) == []


def test_html_error_page_is_rejected(cache, server):
    url = server("/USAir97.tar.gz", b"<html><body>Service unavailable</body></html>")
    with pytest.raises(DatasetError):
        fetch("USAir97", url=url)
    assert cache_files(cache) == []


def test_unreachable_url_gives_clean_error(cache):
    url = f"http://127.0.0.1:{unused_port()}/karate.zip"
    with pytest.raises(DownloadError) as info:
        fetch("karate", url=url, timeout=5)
    message = str(info.value)
    assert isinstance(info.value, InputError)
    assert "\n" not in message
    assert "metricopt datasets fetch karate --from FILE" in message
    assert cache_files(cache) == []


def test_mirror_is_tried_after_a_failing_url(cache, server, monkeypatch):
    good = server("/mirror/karate.zip", zip_bytes({"karate.gml": raw("karate.gml").read_bytes()}))
    ds = dataclasses.replace(get_dataset("karate"), url=good.replace("/mirror/", "/missing/"),
                             mirrors=(good,))
    monkeypatch.setattr("metricopt.datasets._fetch.get_dataset", lambda name: ds)
    assert fetch("karate").origin == good


def test_mirror_is_tried_after_bad_data(cache, server, monkeypatch):
    gml = raw("karate.gml").read_bytes()
    bad = server("/a/karate.zip", zip_bytes({"karate.gml": gml.replace(b"target 1", b"target 3", 1)}))
    good = server("/b/karate.zip", zip_bytes({"karate.gml": gml}))
    ds = dataclasses.replace(get_dataset("karate"), url=bad, mirrors=(good,))
    monkeypatch.setattr("metricopt.datasets._fetch.get_dataset", lambda name: ds)
    assert fetch("karate").origin == good
    ds = dataclasses.replace(ds, mirrors=(f"http://127.0.0.1:{unused_port()}/karate.zip",))
    with pytest.raises(VerificationError, match="sha256 of karate.gml"):
        fetch("karate", force=True)
    assert cache_files(cache) == ["karate.txt"]  # the earlier verified copy stays


def test_archive_without_the_data_file(cache, server):
    url = server("/karate.zip", zip_bytes({"other.gml": b"graph [ ]"}))
    with pytest.raises(DatasetError, match="no karate.gml in the archive"):
        fetch("karate", url=url)
    assert cache_files(cache) == []


def test_from_file_other_format_skips_checksum_but_checks_counts(cache):
    result = fetch("jazz", from_file=raw("jazz.net"))
    assert result.checked == ["largest component n=198, m=2742"]
    karate_txt = cache.parent / "karate-edges.txt"
    karate_txt.write_text("".join(f"{u} {v}\n" for u, v in
                                  read_graph("karate").labels[read_graph("karate").edges].tolist()))
    result = fetch("karate", from_file=karate_txt)
    assert result.checked == ["largest component n=34, m=78"]
    assert "# note: sha256 not checked" in result.path.read_text()


def test_no_checksum_accepts_a_modified_copy_with_right_counts(cache, tmp_path):
    gml = raw("karate.gml").read_bytes().replace(b"Creator", b"Comment", 1)
    copy = tmp_path / "karate.gml"
    copy.write_bytes(gml)
    with pytest.raises(VerificationError):
        fetch("karate", from_file=copy)
    result = fetch("karate", from_file=copy, verify_checksum=False)
    assert result.checked == ["largest component n=34, m=78"]
    assert "differs from the registry's (accepted by request)" in result.path.read_text()


def test_resolve_dataset_never_raises(cache):
    assert resolve_dataset("no-such-dataset") is None
    assert resolve_dataset(None) is None
    assert resolve_dataset(Path("karate")) is None
    assert resolve_dataset("karate") is None
    assert cache_dir() == cache


# ------------------------------------------------------------------ commands
@pytest.fixture
def cli():
    return click.Group("metricopt", commands={c.name: c for c in COMMANDS})


def test_cli_fetch_from_then_path(cli, runner, cache):
    result = runner.invoke(cli, ["datasets", "path", "polbooks"])
    assert result.exit_code == 1
    assert result.stderr.strip() == ("Error: polbooks is not fetched yet; run: metricopt datasets "
                                     "fetch polbooks (offline: --from FILE)")
    copy = raw("polbooks.gml")
    result = runner.invoke(cli, ["datasets", "fetch", "polbooks", "--from", str(copy)],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "verified: sha256 of polbooks.gml" in " ".join(result.stderr.split())
    result = runner.invoke(cli, ["datasets", "path", "polbooks"], catch_exceptions=False)
    assert result.stdout.strip() == str(cache / "polbooks.txt")


def test_cli_fetch_unreachable(cli, runner, cache):
    url = f"http://127.0.0.1:{unused_port()}/karate.zip"
    result = runner.invoke(cli, ["datasets", "fetch", "karate", "--url", url, "--timeout", "5"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: cannot download karate")
    assert lines[0].endswith("run: metricopt datasets fetch karate --from FILE")


def test_cli_list_info_and_bad_name(cli, runner, cache):
    result = runner.invoke(cli, ["datasets", "list", "--names"], catch_exceptions=False)
    assert result.stdout.split() == dataset_names()
    result = runner.invoke(cli, ["datasets", "info", "karate", "--json"], catch_exceptions=False)
    assert '"sha256": "f05e321c' in result.stdout
    result = runner.invoke(cli, ["datasets", "info", "karat"])
    assert result.exit_code == 1
    assert result.stderr.strip().startswith("Error: Unknown dataset 'karat'; did you mean karate?")
    result = runner.invoke(cli, ["datasets", "fetch", "karate", "jazz", "--from", str(raw("jazz.net"))])
    assert result.exit_code == 2


def test_bundled_dataset_path(cli, runner, cache):
    result = runner.invoke(cli, ["datasets", "path", "karate"], catch_exceptions=False)
    assert result.exit_code == 0
    assert Path(result.stdout.strip()).name == "karate.txt"
    assert read_graph(result.stdout.strip()).n == 34


def test_graph_arguments_accept_fetched_dataset_names(cache):
    """read_graph resolves a fetched dataset by name, and says how to fetch one that is not."""
    from metricopt.exceptions import InputError

    with pytest.raises(InputError, match="metricopt datasets fetch polbooks"):
        read_graph("polbooks")
    fetch("polbooks", from_file=raw("polbooks.gml"))
    graph = read_graph("polbooks")
    assert (graph.n, graph.m) == (105, 441)
    assert graph.name == "polbooks"
