"""The README is executed: every shell and Python example runs, and the numbers it quotes
are the ones printed.

The fenced blocks of README.md are grouped by their ``##`` section; each section runs in
its own temporary directory, its blocks in order (a later block uses the files an earlier
one wrote). A ``bash`` block runs as one script (``set -e``). In a ``console`` block each
``$ `` line is a command and the lines up to the next one its expected output. A
``python`` block runs with ``exec``; comment lines that end it are the output of its last
``print``. Output is compared by its numbers: every number the README quotes must be
printed, in the same order (lines left out, ``...``, and cells shown as ``…`` are not
compared). An HTML comment on the line before a block changes this:
``<!-- readme-test: skip (reason) -->`` does not run it, and
``<!-- readme-test: file NAME -->`` writes it to the file NAME instead.
"""

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import metricopt

README = Path(__file__).resolve().parents[1] / "README.md"
#: Sections whose examples take long (the worked batch example: four jobs, about 40 s on
#: a loaded 2-core machine, most of it loading the kernels in each job's process).
#: sections run only with ``-m slow`` (each 4 s or more; their commands have tests of their own)
SLOW = {"Pipelines: many graphs, many runs", "Look at the answer", "Graphs beyond 20,000 nodes",
        "Cluster editing: a certified bound above the LP, `--relaxation editing`"}
RUN = ("bash", "console", "python")

_FENCE = re.compile(r"^```([\w-]*)\s*$")
_MARKER = re.compile(r"^<!--\s*readme-test:\s*(skip|file)\s*(.*?)\s*-->$")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass
class Block:
    section: str
    line: int
    lang: str
    text: str
    marker: tuple = None


def _blocks(path=README):
    blocks, section, fence, lines, marker, previous = [], "", None, [], None, ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if fence is not None:
            if line.strip() == "```":
                blocks.append(Block(section, fence[0], fence[1], "\n".join(lines) + "\n",
                                    marker))
                fence, lines = None, []
            else:
                lines.append(line)
            continue
        match = _FENCE.match(line)
        if match:
            found = _MARKER.match(previous.strip())
            marker = (found.group(1), found.group(2)) if found else None
            fence = (number, match.group(1))
        elif line.startswith("## "):
            section = line[3:].strip()
        if line.strip():
            previous = line
    assert fence is None, f"README.md: the block at line {fence[0]} is not closed"
    return blocks


def _sections():
    grouped = {}
    for block in _blocks():
        grouped.setdefault(block.section, []).append(block)
    return {name: blocks for name, blocks in grouped.items()
            if any(b.lang in RUN and (b.marker or ("",))[0] != "skip" for b in blocks)}


def _numbers(text):
    return _NUMBER.findall(text)


def _assert_quoted(expected, printed, where):
    """Every number of ``expected`` is in ``printed``, in the same order."""
    rest = iter(_numbers(printed))
    for number in _numbers(expected):
        assert any(number == seen for seen in rest), (
            f"{where}: the README quotes {number}, which is not printed (in this order):\n"
            f"{printed}")


def _environment():
    env = dict(os.environ)
    src = str(Path(metricopt.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    env.update(MPLBACKEND="Agg", COLUMNS="100")
    return env


def _shell(script, cwd, where):
    prelude = (f"set -e -o pipefail\n"
               f"metricopt() {{ {shlex.quote(sys.executable)} -m metricopt \"$@\"; }}\n")
    proc = subprocess.run(["bash", "-c", prelude + script], cwd=cwd, env=_environment(),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{where}: exit {proc.returncode}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def _console(block, cwd):
    commands = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            assert commands, f"README.md line {block.line}: output before any command"
            commands[-1][1].append(line)
    for command, expected in commands:
        where = f"README.md line {block.line}, {command!r}"
        _assert_quoted("\n".join(expected), _shell(command, cwd, where), where)


def _python(block):
    lines = block.text.rstrip("\n").splitlines()
    expected = []
    while lines and lines[-1].startswith("#"):
        expected.insert(0, lines.pop()[1:])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile("\n".join(lines), f"README.md:{block.line}", "exec"),
             {"__name__": "__readme__"})
    _assert_quoted("\n".join(expected), out.getvalue(), f"README.md line {block.line}")


def _run(block, cwd, monkeypatch):
    kind, arg = block.marker or ("", "")
    if kind == "skip":
        return
    if kind == "file":
        (cwd / arg).write_text(block.text, encoding="utf-8")
    elif block.lang == "bash":
        _shell(block.text, cwd, f"README.md line {block.line}")
    elif block.lang == "console":
        _console(block, cwd)
    elif block.lang == "python":
        _python(block)


@pytest.mark.parametrize("section", [
    pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name
    for name in _sections()])
def test_readme_section_runs_and_prints_what_it_quotes(section, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for block in _sections()[section]:
        _run(block, tmp_path, monkeypatch)


def test_every_block_is_run_or_says_why_not():
    blocks = _blocks()
    assert blocks
    for block in blocks:
        where = f"README.md line {block.line}"
        assert block.lang, f"{where}: label the block (bash, console, python, text, ...)"
        if block.marker is None:
            continue
        kind, arg = block.marker
        if kind == "skip":
            assert re.fullmatch(r"\(.+\)", arg), f"{where}: a skipped block gives its reason"
            assert block.lang in RUN, f"{where}: only runnable blocks are skipped"
        else:
            assert arg and "/" not in arg, f"{where}: file NAME"
    skipped = [b for b in blocks if b.marker and b.marker[0] == "skip"]
    assert len(skipped) <= 3, [b.line for b in skipped]  # installs and downloads only


def test_slow_sections_exist():
    assert SLOW <= set(_sections()), SLOW - set(_sections())


def test_quoted_numbers_are_compared():
    # the comparison itself: order matters, and a number not printed fails
    _assert_quoted("ratio 1.0079, LP 60.1845", "LP 60.1845 ratio 1.0079 LP 60.1845", "x")
    with pytest.raises(AssertionError, match="quotes 60.1846"):
        _assert_quoted("60.1846", "60.1845", "x")
    with pytest.raises(AssertionError, match="quotes 1"):
        _assert_quoted("2 1", "1 2", "x")
