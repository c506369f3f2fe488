"""Every benchmark script still runs: a quick run of each on its smallest case.

Each script runs in a fresh process from an empty working directory, with
``METRICOPT_DATA`` pointing at an empty folder (the bundled graphs and generated ones
only; no data files), and must exit 0 and print its table. The arguments of each quick
run are in :data:`QUICK` (each script's usage text documents them); a new script fails
:func:`test_every_script_has_a_quick_run` until it has an entry.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
SRC = ROOT / "src"

#: script -> (arguments of its quick run, slow): the slow ones start many fresh processes,
#: compile kernels without numba's cache (which is what they measure), or took 2 s or more
#: with a warm kernel cache on the 2-core test machine; they run with ``-m slow``.
QUICK = {
    "bench_cd_scale.py": (["--quick"], False),
    "bench_certificate.py": (["--sizes", "2000", "--exact-max", "2000", "--threads", "1"], False),
    "bench_checkpoint.py": (["--quick", "--repeat", "1"], False),
    "bench_contract.py": (["--quick", "--threads", "1", "--jobs", "2"], True),
    "bench_dask_oracle.py": (["--quick", "--threads", "1"], True),
    "bench_editing.py": (["--graphs", "karate", "--lp-time", "20", "--iterations-per-node", "2",
                          "--starts", "1"], False),
    "bench_deletion.py": (["--graphs", "karate", "--threads", "1"], False),
    "bench_editing_search.py": (["--graphs", "karate", "--iterations-per-node", "2"], False),
    "bench_dykstra.py": (["--quick", "--highs-cap", "0", "--no-kernels"], True),
    "bench_interrupt.py": (["--overhead", "300", "--dense-overhead", "60", "--threads", "1"],
                           True),
    "bench_kernel_cache.py": ([str(ROOT), "--no-compile", "--repeat", "1", "--scan-sizes", "100",
                               "--path-sizes", "300", "--dykstra-sizes", "60", "--threads", "1"],
                              True),
    "bench_lighttouch.py": (["--quick", "--cases", "karate", "--methods", "lighttouch",
                             "--time-limit", "30", "--skip-warm"], True),
    "bench_lp.py": (["--cases", "cc:karate", "--methods", "dykstra", "--time-limit", "30",
                     "--threads", "1"], False),
    "bench_polish_rows.py": (["--graphs", "dolphins", "--per-column", "1,2", "--dense-cap",
                              "0,default", "--tol", "1e-8",
                              "--gap-tol", "1e-9", "--threads", "1"], True),
    "bench_proximal.py": (["--graphs", "karate", "--time-limit", "30"], False),
    "bench_project_forget.py": (["--quick", "--cases", "grqc-cc", "--backends",
                                 "project-forget", "--threads", "1"], False),
    "bench_pruned_scan.py": (["--sizes", "200", "--no-cc", "--repeat", "1", "--threads", "1"],
                             False),
    "bench_refine.py": (["--cases", "cc:karate", "--no-leiden"], False),
    "bench_signals.py": ([str(ROOT), "--signals", "INT", "--scenarios", "warm-up"], True),
    "bench_signed_graphs.py": (["--shapes", "300", "--solve", "--time-limit", "30",
                                "--threads", "1"], True),
    "bench_support.py": (["--quick", "--threads", "1"], True),
    "bench_startup.py": (["--quick", "--repeat", "1", "--methods", "dykstra"], True),
    "bench_time_limit.py": (["karate", "5", "--method", "dykstra"], False),
    "bench_wedges.py": (["--graphs", "karate", "--time-limit", "30", "--threads", "1"], True),
    "compare_revisions.py": ([str(ROOT), "--cases", "cc:karate", "--threads", "1"], True),
    "pf_pass_costs.py": (["--graphs", "karate", "--threads", "1", "--time-limit", "10"], True),
    "same_passes.py": ([str(ROOT), "--cases", "sc:karate:5", "--repeats", "1"], True),
}

#: scripts whose answer is one JSON line rather than a markdown table
JSON_OUTPUT = {"bench_time_limit.py"}

#: what a quick run's table says when it measured nothing (its case is chosen to measure)
NOTHING_MEASURED = {"bench_polish_rows.py": "ended before a polish"}


def test_every_script_has_a_quick_run():
    # modules named with a leading underscore are the scripts' shared helpers
    assert set(QUICK) == {p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_")}


@pytest.mark.parametrize("script", [
    pytest.param(name, marks=[pytest.mark.slow] if slow else [])
    for name, (_, slow) in sorted(QUICK.items())])
def test_quick_run(script, tmp_path):
    data = tmp_path / "no-data"
    data.mkdir()
    path = os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = dict(os.environ, PYTHONPATH=path, METRICOPT_DATA=str(data))
    # the timeout only stops a hung run (a quick run takes seconds)
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), *QUICK[script][0]],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    if script in JSON_OUTPUT:
        assert isinstance(json.loads(lines[-1]), dict)
    else:
        assert any(line.startswith("|---") for line in lines), proc.stdout[-3000:]
    if script in NOTHING_MEASURED:
        assert NOTHING_MEASURED[script] not in proc.stdout, proc.stdout[-3000:]
