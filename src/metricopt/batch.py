"""Many runs from a manifest, on local processes or a Dask distributed cluster.

A manifest (CSV or TOML) lists jobs: a graph, a problem, a method and parameters, and an
output directory. :func:`read_manifest` turns it into :class:`Job` objects and
:func:`run_batch` runs them, each through :func:`metricopt.pipeline.run`, writing the
usual ``report.json`` and friends into the job's directory. A failing job never stops
the others: its summary row records the error. A job whose ``report.json`` already
exists is skipped (resume) unless ``force`` is set. Two batches of one manifest run each
job once: a job the other batch is running is skipped, and waited for at the end, so
that each batch's summary holds the values of every job (read from its report).

Manifest format
---------------
CSV, one row per job (a header row names the columns), or TOML with a ``[[jobs]]``
array of tables and an optional ``[defaults]`` table merged into every job.

``graph`` (required)
    A file path (relative paths are taken from the manifest's directory when such a
    file exists there), a bundled dataset name, or a fetched dataset name.
``problem`` (required)
    ``cc``, ``sc``, ``mn`` or ``cd``.
``method``
    A backend name or ``auto`` (the default).
``out``
    The job's output directory; relative paths are taken from the manifest's directory.
    Default: ``<out_root>/<id>``, where ``out_root`` defaults to ``<manifest stem>-runs``
    next to the manifest.
``id``
    A name for the job (default: ``<graph>-<problem>-<method>``, plus a short hash of
    the parameters when there are any). Ids must be unique.
``params``
    ``key=value`` pairs separated by ``;`` (CSV), or a table (TOML).
any other column
    One parameter, as if it were in ``params``. Empty CSV cells are ignored, so rows
    may set different parameters.

Values are read as the command line reads them (one parser,
:func:`metricopt.solvers.core.options.parse_value`): a solver option's value by its
declaration (``max_memory=8G``, ``polish=false``, ``tol=1e-6``; ``none`` or ``null`` for
None), any other value as JSON when it can be (numbers, ``true``, ``false``, ``null``),
else as a string.
Each parameter goes where the pipeline expects it: a parameter of the problem's builder
(``weights``, ``delta``, ``epsilon``, ``resolution``, ``relaxation``, ``p``, ``source``) to
``problem_params``; ``round``, ``round_tries``, ``round_seed``, ``refine`` to the rounding
options (method, n_tries, seed, refine); ``format`` and ``keep_all_components`` to the graph
reader; everything else (``tol``, ``gap_tol``, ``max_iter``, ``time_limit``, ``threads``,
``seed``, ``gamma``, ``lam``, ...) to the solver options, where an unknown name fails
that job. A prefix forces the destination: ``problem.KEY``, ``solver.KEY``,
``round.KEY``, ``read.KEY``.
"""

import concurrent.futures
import contextlib
import csv
import hashlib
import json
import math
import multiprocessing
import os
import sys
import time
import warnings
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from .exceptions import InputError, InvalidParameterError, MetricOptError
from .io._rundir import RunDirBusyError, RunDirExistsError

__all__ = [
    "BatchCounts",
    "Job",
    "read_manifest",
    "run_batch",
    "run_job",
    "write_summary",
    "SUMMARY_COLUMNS",
]

#: Columns of the batch summary CSV, in order.
SUMMARY_COLUMNS = (
    "job",
    "state",
    "error",
    "graph",
    "problem",
    "method",
    "out",
    "seconds",
    "status_name",
    "lp_value",
    "lower_bound",
    "rounded_objective",
    "approximation_ratio",
    "gap",
    "max_violation",
    "iterations",
)

_RESERVED = ("id", "graph", "problem", "method", "out", "params")
_ROUNDING_KEYS = {"round": "method", "round_tries": "n_tries", "round_seed": "seed",
                  "refine": "refine"}
_READ_KEYS = {"format": "fmt", "fmt": "fmt", "keep_all_components": "keep_all_components"}
_PREFIXES = ("problem", "solver", "round", "read")
_CRASH = "the worker process died (out of memory, or a crash in native code)"
_BUSY = "running in another process"
#: Seconds between two looks at the lock of a job another process runs.
_POLL_S = 0.5
_RESULT_KEYS = ("status_name", "lp_value", "lower_bound", "rounded_objective",
                "approximation_ratio", "gap", "max_violation", "iterations")


@dataclass
class Job:
    """One run of a batch.

    Attributes
    ----------
    id : str
    graph : str
    problem : str
    method : str
    out : str
        Absolute output directory.
    problem_params, solver_options, rounding, read_options : dict
        Arguments of :func:`metricopt.pipeline.run`.
    row : int
        1-based position in the manifest.
    error : str or None
        Why the row cannot run (bad problem name, malformed parameters); such a job is
        reported as failed without running.
    """

    id: str
    graph: str
    problem: str
    method: str = "auto"
    out: str = ""
    problem_params: dict = field(default_factory=dict)
    solver_options: dict = field(default_factory=dict)
    rounding: dict = field(default_factory=dict)
    read_options: dict = field(default_factory=dict)
    row: int = 0
    error: str | None = None

    @property
    def report_path(self):
        """``<out>/report.json``."""
        return Path(self.out) / "report.json"


# ------------------------------------------------------------------ manifest
def read_manifest(path, *, out_root=None):
    """Read a CSV or TOML manifest into jobs.

    Parameters
    ----------
    path : str or os.PathLike
        ``.toml`` files are read as TOML, anything else as CSV.
    out_root : str or os.PathLike or None, default=None
        Parent of the output directories of jobs without an ``out`` value (default:
        ``<manifest stem>-runs`` next to the manifest).

    Returns
    -------
    list of Job
        In manifest order. Rows that cannot run carry an ``error``.

    Raises
    ------
    InputError
        The manifest is unreadable, lacks the ``graph`` or ``problem`` column, has no
        jobs, or two jobs share an id or an output directory.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"File not found: {path}")
    rows = _toml_rows(path) if path.suffix.lower() == ".toml" else _csv_rows(path)
    if not rows:
        raise InputError(f"{path}: the manifest lists no jobs")
    base = path.resolve().parent
    root = Path(out_root).resolve() if out_root is not None else base / f"{path.stem}-runs"
    jobs = [_make_job(number, raw, base, root) for number, raw in rows]
    _check_unique(jobs, path)
    return jobs


def _csv_rows(path):
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read manifest ({exc})") from None
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    reader = csv.DictReader(lines, skipinitialspace=True)
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [col for col in ("graph", "problem") if col not in header]
    if missing:
        raise InputError(
            f"{path}: the manifest needs a column named {missing[0]!r} (header: {', '.join(header)})"
        )
    rows = []
    for number, rec in enumerate(reader, start=1):
        if None in rec:
            raise InputError(f"{path}: job {number} has more cells than the header has columns")
        rows.append((number, {k.strip(): (v or "").strip() for k, v in rec.items() if (v or "").strip()}))
    return rows


def _toml_rows(path):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise InputError("TOML manifests need Python >= 3.11 or the 'tomli' package; "
                             "use a CSV manifest instead") from None
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: cannot read TOML manifest ({exc})") from None
    defaults = doc.get("defaults", {})
    jobs = doc.get("jobs", doc.get("job", []))
    if not isinstance(defaults, dict) or not isinstance(jobs, list):
        raise InputError(f"{path}: expected an optional [defaults] table and a [[jobs]] array")
    rows = []
    for number, job in enumerate(jobs, start=1):
        merged = {**defaults, **job}
        params = {**defaults.get("params", {}), **job.get("params", {})}
        if params:
            merged["params"] = params
        for key in ("graph", "problem"):
            if key not in merged:
                raise InputError(f"{path}: job {number} has no {key!r}")
        rows.append((number, merged))
    return rows


def _split_params(cell):
    """``"a=1; b=x"`` -> ``{"a": "1", "b": "x"}`` (values as written); a dict passes
    through."""
    if isinstance(cell, dict):
        return dict(cell)
    out = {}
    for item in str(cell).split(";"):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidParameterError(f"params: {item.strip()!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


def _route(kind, params):
    """Split parameters into pipeline arguments: problem, solver, rounding, reading.

    A value written as text is read as the command line reads it
    (:func:`metricopt.solvers.core.options.parse_value`): by the declaration of the solver
    option it goes to, else as JSON when it can be.
    """
    from .pipeline import problem_parameters
    from .solvers import declared_options
    from .solvers.core.options import parse_value

    accepted = problem_parameters(kind)
    declared = declared_options()
    dest = {"problem": {}, "solver": {}, "round": {}, "read": {}}
    for raw_key, raw in params.items():
        prefix, dot, rest = raw_key.partition(".")
        forced = prefix if dot and prefix in _PREFIXES else None
        key = (rest if forced else raw_key).replace("-", "_")
        solver_key = forced in (None, "solver") and key in declared
        value = parse_value(raw, declared[key] if solver_key else None)
        if forced == "round" or (forced is None and key in _ROUNDING_KEYS):
            dest["round"][_ROUNDING_KEYS.get(key, key)] = value
        elif forced == "read" or (forced is None and key in _READ_KEYS):
            dest["read"][_READ_KEYS.get(key, key)] = value
        elif forced == "problem" or (forced is None and key in accepted):
            dest["problem"][key] = value
            if forced is None and key == "max_memory":
                dest["solver"][key] = value
        else:
            dest["solver"][key] = value
    return dest


def _default_id(graph, problem, method, params):
    stem = Path(graph).name
    for suffix in (".gz", ".txt", ".mtx", ".edges", ".tsv", ".csv", ".npy"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    name = f"{stem}-{problem}-{method}"
    if params:
        digest = hashlib.sha1(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()
        name += f"-{digest[:8]}"
    return name


def _make_job(number, raw, base, root):
    from .solvers.core.options import parse_value

    graph = str(raw.get("graph", ""))
    problem = str(raw.get("problem", "")).lower()
    method = str(raw.get("method") or "auto").lower()
    job = Job(id="", graph=graph, problem=problem, method=method, row=number)
    params = {}
    try:
        if "params" in raw:
            params.update(_split_params(raw["params"]))
        for key, value in raw.items():
            if key not in _RESERVED:
                params[key] = value
    except InvalidParameterError as exc:
        job.error = str(exc)
        params = {key: value for key, value in raw.items() if key not in _RESERVED[:5]}
    # the id hashes the manifest's values read as JSON, whatever the declarations say
    job.id = str(raw["id"]) if raw.get("id") else _default_id(
        graph, problem, method, {key: parse_value(value) for key, value in params.items()})
    candidate = base / graph
    if graph and not Path(graph).is_absolute() and candidate.is_file():
        job.graph = str(candidate)
    out = raw.get("out")
    job.out = str((base / out).resolve()) if out else str(root / job.id)
    if job.error is None:
        from .problems import PROBLEM_KINDS

        if problem not in PROBLEM_KINDS:
            job.error = f"unknown problem {problem!r}; choose one of {', '.join(PROBLEM_KINDS)}"
        else:
            try:
                dest = _route(problem, params)
            except InvalidParameterError as exc:
                job.error = _one_line(exc)
                return job
            job.problem_params, job.solver_options = dest["problem"], dest["solver"]
            job.rounding, job.read_options = dest["round"], dest["read"]
            job.error = _argument_error(job)
    return job


def _argument_error(job):
    """Why the job's method, options or parameters cannot run, found without reading
    its input (:func:`metricopt.pipeline.check_run_arguments`); ``None`` when they can."""
    from .pipeline import check_run_arguments

    try:
        check_run_arguments(job.problem, job.method, job.solver_options,
                            job.rounding.get("method", "auto"),
                            problem_params=job.problem_params)
    except MetricOptError as exc:
        return _one_line(exc)
    return None


def _check_unique(jobs, path):
    for attr, what in (("id", "id"), ("out", "output directory")):
        seen = {}
        for job in jobs:
            key = getattr(job, attr)
            if key in seen:
                raise InputError(
                    f"{path}: jobs {seen[key]} and {job.row} have the same {what} {key!r}; "
                    f"give them distinct 'id' or 'out' values"
                )
            seen[key] = job.row


# ------------------------------------------------------------------ one job
def _report_values(report):
    return {key: report.get(key) for key in _RESULT_KEYS}


def _row(job, state, error=None):
    """A summary row without results."""
    return {"job": job.id, "graph": job.graph, "problem": job.problem, "method": job.method,
            "out": job.out, "state": state, "error": error, "seconds": None}


def _cpus():
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _limit_threads(job, n_workers):
    """Give a job without a ``threads`` option an equal share of the cores for numba.

    ``n_workers`` jobs run side by side; a backend that is given ``threads`` sets its own
    count, and one that is not uses numba's default, which this lowers.
    """
    if job.solver_options.get("threads") is not None:
        return
    import numba

    numba.set_num_threads(max(1, min(numba.config.NUMBA_NUM_THREADS, _cpus() // max(1, n_workers))))


def run_job(job, *, force=False, command=None, n_workers=None):
    """Run one job through :func:`metricopt.pipeline.run`; never raises.

    Parameters
    ----------
    job : Job
    force : bool, default=False
        Remove an existing ``report.json`` first, so that a failed re-run does not
        leave the old report looking current.
    command : list of str or None
        Recorded in the report.
    n_workers : int or None
        When given, the job runs in a fresh process alongside ``n_workers - 1`` others;
        unless the job sets ``threads``, numba's thread count is lowered to an equal
        share of the cores.

    Returns
    -------
    dict
        A summary row (see :data:`SUMMARY_COLUMNS`).
    """
    start = time.perf_counter()
    row = _row(job, "failed", job.error)
    if job.error is not None:
        return row
    try:
        from .pipeline import run

        if n_workers is not None:
            _limit_threads(job, n_workers)
        if force:
            with contextlib.suppress(FileNotFoundError):
                job.report_path.unlink()
        with warnings.catch_warnings(record=True):  # the report lists them; keep stderr clean
            warnings.simplefilter("always")
            outcome = run(job.graph, job.problem, method=job.method,
                          problem_params=job.problem_params, solver_options=job.solver_options,
                          rounding=job.rounding or None, read_options=job.read_options,
                          out=job.out, command=command, force=force)
        row.update(_report_values(outcome.report), state="done", error=None)
        row["method"] = outcome.report.get("method") or job.method
    except RunDirBusyError:  # another batch claimed the job first
        return dict(_skipped_row(job), error=_BUSY)
    except RunDirExistsError:  # ... and finished it since this batch looked
        return _skipped_row(job)
    except Exception as exc:  # one job's failure is data for the summary, not a crash
        row["error"] = _one_line(exc)
    row["seconds"] = time.perf_counter() - start
    return row


def _one_line(exc):
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _skipped_row(job):
    """The summary row of a job that is not run: its values, and its time, from its report."""
    row = _row(job, "skipped")
    try:
        report = json.loads(job.report_path.read_text(encoding="utf-8"))
        row.update(_report_values(report))
        row["method"] = report.get("method") or job.method
        seconds = report.get("total_seconds")
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
            row["seconds"] = float(seconds)
    except (OSError, ValueError, AttributeError):
        pass
    return row


# ------------------------------------------------------------------ many jobs
@dataclass
class BatchCounts:
    """Progress of a batch: how many jobs are in each state."""

    total: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0
    running: int = 0

    @property
    def finished(self):
        return self.done + self.failed + self.skipped


def run_batch(jobs, *, n_jobs=None, scheduler=None, force=False, progress=None, command=None,
              runner=run_job):
    """Run jobs in parallel; one failure never stops the others.

    Parameters
    ----------
    jobs : list of Job
    n_jobs : int or None, default=None
        Local worker processes (default: the number of CPUs, at most the number of
        jobs). Each job runs in a fresh process, so the reported peak memory is the
        job's own. Ignored with ``scheduler``.
    scheduler : str or distributed.Client or None, default=None
        Address of a Dask distributed scheduler (``tcp://host:8786``), or a connected
        client: jobs are submitted to that cluster instead of local processes.
    force : bool, default=False
        Re-run jobs whose ``report.json`` exists (default: skip them).
    progress : callable or None
        Called as ``progress(counts, row)`` once before any job runs (``row`` None) and
        after each job ends, with a :class:`BatchCounts`.
    command : list of str or None
        Recorded in each report.
    runner : callable, default=run_job
        Runs one job in a worker: ``runner(job, force=..., command=..., n_workers=...)``
        returning a summary row (``n_workers`` is None on a Dask cluster). It must be
        importable by the workers (a module-level function).

    Returns
    -------
    list of dict
        One summary row per job, in input order (see :data:`SUMMARY_COLUMNS`);
        ``state`` is ``done``, ``failed`` or ``skipped``. A job another process was
        running is waited for once this batch's own jobs ended, and its row holds the
        values of its report.
    """
    counts = BatchCounts(total=len(jobs))
    rows = {}
    todo = []
    for job in jobs:
        if job.error is not None:
            rows[job.id] = run_job(job)
            counts.failed += 1
        elif not force and job.report_path.is_file():
            rows[job.id] = _skipped_row(job)
            counts.skipped += 1
        else:
            todo.append(job)

    def finished(job, row, running):
        rows[job.id] = row
        counts.running = running
        if row["state"] == "done":
            counts.done += 1
        elif row["state"] == "skipped":
            counts.skipped += 1
        else:
            counts.failed += 1
        if progress is not None:
            progress(counts, row)

    if progress is not None:
        progress(counts, None)
    if todo:
        if scheduler is not None:
            _run_dask(todo, scheduler, runner, force, command, counts, finished, progress)
        else:
            workers = max(1, min(n_jobs or _cpus(), len(todo)))
            _run_local(todo, workers, runner, force, command, counts, finished, progress)
    for job in jobs:
        if rows[job.id].get("error") == _BUSY:
            rows[job.id] = _awaited_row(job)
    return [rows[job.id] for job in jobs]


def _awaited_row(job):
    """The row of a job another process is running, once that process released the
    job's directory: the values of its report (or why there are none)."""
    from .io._rundir import run_dir_busy

    while run_dir_busy(job.out):
        time.sleep(_POLL_S)
    row = _skipped_row(job)
    if not job.report_path.is_file():
        row["error"] = "ran in another process, which wrote no report"
    return row


def _pool(workers):
    kwargs = {"max_workers": workers, "mp_context": multiprocessing.get_context("spawn")}
    if sys.version_info >= (3, 11):
        kwargs["max_tasks_per_child"] = 1
    return concurrent.futures.ProcessPoolExecutor(**kwargs)


def _run_local(todo, workers, runner, force, command, counts, finished, progress):
    """Run on a process pool; recover from worker crashes (out of memory, segfault).

    A crash breaks the whole pool, and every unfinished job with it. Those jobs go to
    the next round; a job caught in two crashes is then run alone, so that a job that
    crashes its process is identified and reported, and the others complete.
    """
    crashes = {}
    pending = list(todo)
    while pending:
        isolate = [job for job in pending if crashes.get(job.id, 0) >= 2]
        batch = [job for job in pending if crashes.get(job.id, 0) < 2]
        pending = []
        for group, size in ((batch, workers), *(([job], 1) for job in isolate)):
            if not group:
                continue
            with _pool(min(size, len(group))) as pool:
                futures = {pool.submit(runner, job, force=force, command=command, n_workers=size): job
                           for job in group}
                remaining = len(futures)
                counts.running = min(remaining, size)
                if progress is not None:
                    progress(counts, None)
                broken = []
                for future in concurrent.futures.as_completed(futures):
                    job = futures[future]
                    remaining -= 1
                    try:
                        row = future.result()
                    except BrokenProcessPool:
                        broken.append(job)
                        continue
                    finished(job, row, min(remaining, size))
            for job in broken:
                crashes[job.id] = crashes.get(job.id, 0) + 1
                if size == 1:
                    finished(job, _row(job, "failed", _CRASH), 0)
                else:
                    pending.append(job)


def _run_dask(todo, scheduler, runner, force, command, counts, finished, progress):
    from ._dask import connect

    client, own = connect(scheduler)
    from distributed import as_completed

    try:
        capacity = max(1, sum(client.nthreads().values()))
        futures = {}
        for job in todo:
            fut = client.submit(runner, job, force=force, command=command, n_workers=None, pure=False,
                                key=f"metricopt-{job.id}-{os.urandom(4).hex()}")
            futures[fut] = job
        remaining = len(futures)
        counts.running = min(remaining, capacity)
        if progress is not None:
            progress(counts, None)
        for future in as_completed(futures):
            job = futures[future]
            remaining -= 1
            try:
                row = future.result()
            except Exception as exc:  # worker lost (KilledWorker), cancelled, ...
                row = _row(job, "failed", _one_line(exc))
            finished(job, row, min(remaining, capacity))
    finally:
        if own:
            client.close()


# ------------------------------------------------------------------ summary
def _csv_cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    return str(value)


def write_summary(rows, path):
    """Write the batch summary CSV (columns :data:`SUMMARY_COLUMNS`) atomically.

    Parameters
    ----------
    rows : list of dict
        From :func:`run_batch`.
    path : str or os.PathLike
    """
    from .io.reports import atomic_write

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(SUMMARY_COLUMNS)
        for row in rows:
            writer.writerow([_csv_cell(row.get(col)) for col in SUMMARY_COLUMNS])
