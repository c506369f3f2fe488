"""``metricopt report --html``: one self-contained page, opened in headless Chromium."""

import base64
import html
import json
import re
import shutil
import subprocess
import warnings

import pytest

from metricopt import pipeline
from metricopt.html_report import html_report, write_html_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: The browser flags of the check: no network, no sync, no first-run or component setup.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run")

#: Injected first: collects uncaught errors and console.error calls.
_CATCH = """<script>window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push(String(e.message)); });
(function () { var orig = console.error; console.error = function () {
  window.__errors.push(Array.prototype.join.call(arguments, " ")); orig.apply(console, arguments); };
})();</script>"""

#: Injected last: after the load event, writes what loaded (and one sort) into the page.
_REPORT = """<script>window.addEventListener("load", function () {
  var imgs = Array.from(document.images);
  var bad = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
                .map(function (i) { return i.alt; });
  var table = document.querySelector("table.runs"), sorted = null;
  if (table) {
    var heads = Array.from(table.tHead.rows[0].cells);
    var col = heads.findIndex(function (h) { return h.textContent === "lower_bound"; });
    heads[col].click();
    sorted = Array.from(table.tBodies[0].rows).map(function (r) { return r.cells[col].dataset.v; });
  }
  var pre = document.createElement("pre"); pre.id = "browser-check";
  pre.textContent = JSON.stringify({images: imgs.length, bad: bad, errors: window.__errors,
                                    sorted: sorted});
  document.body.appendChild(pre);
});</script>"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """Six runs: three problems, two graphs, three backends (one stopped early)."""
    root = tmp_path_factory.mktemp("html-batch")
    jobs = [("karate", "cc", "highs", {}), ("karate", "cc", "dykstra", {"max_iter": 3}),
            ("karate", "sc", "highs", {}), ("karate", "cd", "highs", {}),
            ("dolphins", "cc", "dykstra", {}), ("dolphins", "sc", "auto", {})]
    for graph, kind, method, options in jobs:
        with warnings.catch_warnings():  # the dykstra run stops early on purpose
            warnings.simplefilter("ignore")
            pipeline.run(graph, kind, method=method, solver_options={"seed": 0, **options},
                         out=root / f"{graph}-{kind}-{method}")
    return root


@pytest.fixture(scope="module")
def page(batch):
    """The page of the six runs."""
    return write_html_report([batch], batch.parent / "report.html")


def test_page_is_self_contained(page):
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text)
    assert "<link" not in text and "@import" not in text and "url(" not in text
    assert "<script src" not in text
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(images) == text.count("<img")
    assert all(base64.b64decode(i).startswith(PNG_SIGNATURE) for i in images)
    # per run: certificate, convergence, matrix, sizes or cut, node-link; and the comparison
    assert len(images) == 6 * 5 + 1
    assert text.count('<table class="runs">') == 1 and text.count("<section") == 6
    assert "stopped" in text or "iteration limit" in text  # the dykstra run's warning


def test_one_run_has_no_table(batch):
    text = html_report([batch / "karate-cc-highs"])
    assert '<table class="runs">' not in text and text.count("<section") == 1


def test_cli_writes_the_page(batch, runner, tmp_path):
    from metricopt.cli import cli

    out = tmp_path / "r.html"
    runs = [str(batch / "karate-cc-highs"), str(batch / "karate-sc-highs")]
    result = runner.invoke(cli, ["report", *runs, "--html", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and str(out) in result.stderr
    text = out.read_text(encoding="utf-8")
    assert text.count("<section") == 2 and '<table class="runs">' in text


def test_opens_in_headless_chromium(page, tmp_path):
    browser = chromium()
    if browser is None:
        pytest.skip("no Chromium or Chrome installed (Debian: apt-get install chromium)")
    text = page.read_text(encoding="utf-8")
    checked = tmp_path / "checked.html"
    checked.write_text(text.replace("<head>", "<head>" + _CATCH, 1)
                       .replace("</body>", _REPORT + "</body>", 1), encoding="utf-8")
    common = [browser, *CHROMIUM_FLAGS, "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run([*common, f"--user-data-dir={tmp_path / 'profile-a'}",
                          "--virtual-time-budget=10000", "--dump-dom", checked.as_uri()],
                         capture_output=True, text=True, timeout=180)
    match = re.search(r'<pre id="browser-check">(.*?)</pre>', dom.stdout, re.S)
    assert match, f"the page did not finish loading:\n{dom.stderr[-2000:]}"
    check = json.loads(html.unescape(match.group(1)))
    assert check["errors"] == []
    assert check["images"] == text.count("<img") and check["bad"] == []
    values = [float(v) for v in check["sorted"] if v != ""]
    assert len(values) == 6 and values == sorted(values)  # the inline sort works
    assert "Uncaught" not in dom.stderr
    shot = tmp_path / "report.png"  # kept with the test's files (pytest keeps the last runs)
    subprocess.run([*common, f"--user-data-dir={tmp_path / 'profile-b'}",
                    "--window-size=1280,2000", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, text=True, timeout=180)
    assert shot.read_bytes().startswith(PNG_SIGNATURE) and shot.stat().st_size > 20_000


def test_a_run_whose_graph_cannot_be_read_again(batch, tmp_path):
    moved = tmp_path / "moved"
    shutil.copytree(batch / "karate-cc-highs", moved)
    report = json.loads((moved / "report.json").read_text())
    report["graph"]["source"] = report["graph"]["summary"]["path"] = str(tmp_path / "gone.txt")
    (moved / "report.json").write_text(json.dumps(report))
    text = html_report([moved])
    assert "no pictures of the answer" in text and text.count("<img") == 2  # certificate, convergence
