"""Shared click options and the helpers that turn them into library arguments.

Choices come from the library: ``--method`` from the solver registry, ``--format`` from
:data:`metricopt.io.FORMATS`, problem options from the builders' signatures, the solver
flags, their help and the reading of their values from the backends' option declarations
(:mod:`metricopt.solvers.core.options`), which batch manifests read values with too. Only
the options a user set are passed on, so a backend never receives an option it did not ask
for, and an option it does not accept is reported by the dispatcher.
"""

import json
import math
import re

import click

from .._choices import (
    DELTA_RANGE,
    EPSILON_MIN,
    FORMATS,
    LAYOUTS,
    PROBLEM_KINDS,
    REFINE_METHODS,
    RELAXATIONS,
    ROUNDING_METHODS,
    WEDGE_WEIGHTS,
    WEIGHT_MODES,
)
from .._choices import MN_SOURCES as SOURCES
from ..exceptions import InvalidParameterError
from ..solvers import declared_options, registered_solvers
from ..solvers.core.options import COMMON, MAX_MEMORY, parse_value

__all__ = [
    "KINDS",
    "ByteSize",
    "Real",
    "problem_options",
    "read_options",
    "solver_options",
    "rounding_options",
    "output_options",
    "given_problem_params",
    "collect_problem_params",
    "collect_read_options",
    "collect_solver_options",
    "check_applicable",
]



class ProblemKind(click.ParamType):
    """A problem code (``cc``, ``sc``, ``mn``, ``cd``) or its name written out
    (``correlation-clustering``, ``sparsest-cut``, ``metric-nearness``,
    ``cluster-deletion``; case and ``_`` for ``-`` do not matter); converted to the code."""

    name = "PROBLEM"
    #: long name -> code, from the descriptions of PROBLEM_KINDS
    NAMES = {desc.split(" (")[0].replace(" ", "-"): code for code, desc in PROBLEM_KINDS.items()}

    def convert(self, value, param, ctx):
        key = str(value).strip().lower().replace("_", "-")
        if key in PROBLEM_KINDS:
            return key
        if key in self.NAMES:
            return self.NAMES[key]
        choices = ", ".join(f"{code} ({name})" for name, code in self.NAMES.items())
        self.fail(f"{value!r} is not a problem; choose one of {choices}", param, ctx)


KINDS = ProblemKind()

#: CLI parameter name -> problem-builder parameter name.
_PROBLEM_PARAMS = {"weights": "weights", "delta": "delta", "epsilon": "epsilon",
                   "resolution": "resolution", "relaxation": "relaxation", "p": "p",
                   "source": "source", "layout": "layout"}
#: Weight modes of cc that take --resolution, and whether they need it.
_RESOLUTION_MODES = {"lambda": True, "lambda-degree": True, "modularity": False}
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class ByteSize(click.ParamType):
    """A memory size such as ``8G``, ``512M``, ``1.5GiB`` or a number of bytes."""

    name = "SIZE"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            size = MAX_MEMORY.parse(str(value))
        except InvalidParameterError:
            self.fail(f"{value!r} is not a size (examples: 8G, 512M, 1048576)", param, ctx)
        if size is None or size <= 0:
            self.fail(f"{value!r} must be positive", param, ctx)
        return size


class Real(click.ParamType):
    """A finite real number in an interval (NaN and infinities are refused).

    Parameters
    ----------
    low, high : float or None
        Bounds of the interval (``None``: unbounded on that side).
    low_open, high_open : bool
        Whether the bound itself is excluded.
    """

    name = "FLOAT"

    def __init__(self, low=None, high=None, *, low_open=False, high_open=False):
        self.low, self.high = low, high
        self.low_open, self.high_open = low_open, high_open

    def _interval(self):
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        left = "(" if self.low_open or self.low is None else "["
        right = ")" if self.high_open or self.high is None else "]"
        return f"{left}{lo}, {hi}{right}"

    def convert(self, value, param, ctx):
        if isinstance(value, float) and math.isfinite(value):
            number = value
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number", param, ctx)
        ok = math.isfinite(number)
        if ok and self.low is not None:
            ok = number > self.low if self.low_open else number >= self.low
        if ok and self.high is not None:
            ok = number < self.high if self.high_open else number <= self.high
        if not ok:
            self.fail(f"{value!r} is not a finite number in {self._interval()}", param, ctx)
        return number




class OptionValue(click.ParamType):
    """The value of a backend option's own flag, read and checked by its declaration
    (:class:`~metricopt.solvers.core.options.Option`); files as ``click.Path`` does."""

    def __init__(self, option):
        self.option = option
        self.name = option.cli_metavar
        self._path = {"file": click.Path(dir_okay=False),
                      "existing-file": click.Path(exists=True, dir_okay=False)}.get(option.kind)

    def convert(self, value, param, ctx):
        if self._path is not None:
            return self._path.convert(value, param, ctx)
        try:
            parsed = self.option.parse(value)
        except InvalidParameterError as exc:
            self.fail(str(exc), param, ctx)
        if not self.option.accepts(parsed):
            self.fail(f"{value}: must be {self.option.requirement}", param, ctx)
        return parsed


class KeyValue(click.ParamType):
    """``KEY=VALUE``; the value is read by the option's declaration (as a batch manifest
    reads it), or as JSON when it can be (numbers, true/false) for a name no backend
    declares (the dispatcher refuses it)."""

    name = "KEY=VALUE"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        key, sep, raw = str(value).partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not _KEY.match(key):
            self.fail(f"{value!r} is not KEY=VALUE (example: --option gamma=5)", param, ctx)
        option = declared_options().get(key)
        try:
            return key, parse_value(raw, option)
        except InvalidParameterError:
            self.fail(f"{key}={raw}: must be {option.requirement}", param, ctx)


def flagged_options():
    """The backend options with a flag of their own, in the order of the command line:
    name -> the declaration that gives the flag's help and check (the common one when
    there is one, :data:`~metricopt.solvers.core.options.COMMON`)."""
    declared = declared_options()
    names = [n for n in COMMON if n in declared] + [n for n in declared if n not in COMMON]
    return {name: COMMON.get(name, declared[name]) for name in names
            if declared[name].flag is not None}


def _apply(fn, options):
    for option in reversed(options):
        fn = option(fn)
    return fn


def problem_options(fn):
    """``--weights --delta --epsilon --resolution --relaxation --p --source``: parameters
    of the relaxation."""
    return _apply(fn, [
        click.option("--weights", type=click.Choice(WEIGHT_MODES), default=None,
                     help="cc: pair weights: jaccard (default for unsigned graphs), unit "
                          "(cluster editing), signed (the file's signed weights; sparse), "
                          "lambda (LambdaCC: edges 1-R toward together, non-edges R toward "
                          "apart), lambda-degree (LambdaCC with degrees: signed weight "
                          "A_ij - R d_i d_j), modularity (signed weight A_ij - gamma d_i "
                          "d_j/2m; the report adds the modularity).  [default: auto]"),
        click.option("--delta", type=Real(*DELTA_RANGE, low_open=True, high_open=True),
                     default=None,
                     help="cc/mn: shift of the Jaccard transform, in (0, 1).  [default: 0.05]"),
        click.option("--epsilon", type=Real(EPSILON_MIN), default=None,
                     help="cc/mn: offset added to Jaccard weights, >= 0.  [default: 0.01]"),
        click.option("--resolution", type=Real(0.0, low_open=True), default=None,
                     help="cc: resolution R of --weights lambda (in (0, 1), required) and "
                          "lambda-degree (> 0, required), or gamma of --weights modularity "
                          "(> 0).  [default for modularity: 1]"),
        click.option("--relaxation", type=click.Choice(list(RELAXATIONS)), default=None,
                     help="cc: full (every triangle inequality) or wedges (only those of "
                          "the open wedges, Veldt's STC+ LP; --weights unit or lambda): a "
                          "weaker but cheaper LP, its certified bound still below every "
                          "clustering; the report says which. editing (--weights unit): the "
                          "full LP, then the cluster-editing bound (critical cliques, "
                          "exhaustive search, 2-partition rows) and a search of the "
                          "clustering; the ratio uses the larger bound.  [default: full]"),
        click.option("--layout", type=click.Choice(list(LAYOUTS)), default=None,
                     help="cc: how the pairs are stored: dense (every pair) or support (only "
                          "the pairs away from 1, the rest in closed form: graphs beyond "
                          "20,000 nodes; weights jaccard, unit, lambda, lambda-degree, "
                          "modularity; method project-forget).  [default: auto: support "
                          "above 20,000 nodes, or from 2,000 when the explicit pairs are at "
                          "most 5% of all]"),
        click.option("--p", "p", type=click.Choice(["1", "2"]), default=None,
                     help="mn: exponent of the objective sum w|x - d|^p.  [default: 2]"),
        click.option("--source", type=click.Choice(SOURCES), default=None,
                     help="mn: where d comes from: a dense matrix, a weighted edge list, or "
                          "the Jaccard transform of a graph.  [default: auto]"),
    ])


def read_options(fn):
    """``--format --keep-all-components``: how the input is read."""
    return _apply(fn, [
        click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
                     help="Input format (default: from the file suffix; GRAPH - reads "
                          "standard input, an edge list unless this says otherwise)."),
        click.option("--keep-all-components", is_flag=True, default=False,
                     help="Keep every connected component (default: only the largest)."),
    ])


def solver_options(fn, *, with_method=True):
    """``--method``, the flags of the backend options that have one (``--gamma --lambda
    --tol --gap-tol --max-iter --time-limit --threads --seed --max-memory --checkpoint
    --checkpoint-every --resume --scheduler``) and ``--option KEY=VALUE`` for the others,
    all from the backends' declarations: forwarded only when set."""
    opts = []
    if with_method:
        opts.append(click.option(
            "--method", type=click.Choice(["auto", *registered_solvers()], case_sensitive=False),
            default="auto", show_default=True,
            help="Backend; 'auto' picks one by size and structure (see 'metricopt solvers')."))
    flagged = flagged_options()
    opts += [click.option(option.flag, name, type=OptionValue(option), default=None,
                          help=option.doc) for name, option in flagged.items()]
    others = [name for name in declared_options() if name not in flagged]
    opts.append(click.option(
        "--option", "extra_options", type=KeyValue(), multiple=True,
        help=f"Backend option KEY=VALUE, repeatable: {', '.join(others)} (see 'metricopt "
             f"solvers METHOD')."))
    return _apply(fn, opts)


def rounding_options(fn):
    """``--round --round-tries --refine --round-time-limit``; methods come from
    :data:`metricopt.rounding.METHODS`."""
    names = list(dict.fromkeys(m for methods in ROUNDING_METHODS.values() for m in methods))
    per_kind = "; ".join(f"{k}: {', '.join(v)}" for k, v in ROUNDING_METHODS.items())
    return _apply(fn, [
        click.option("--round", "round_method", type=click.Choice(["auto", *names], case_sensitive=False),
                     default="auto", show_default=True,
                     help=f"Rounding method ({per_kind}); 'auto' tries the suitable ones and "
                          "keeps the best. 'leiden' (cc): the Leiden clustering for the "
                          "quality function matching --weights, certified and compared with "
                          "the LP roundings (pip install 'metricopt[leiden]')."),
        click.option("--round-tries", type=click.IntRange(min=1), default=20, show_default=True,
                     help="Seeded tries per randomised rounding method; the best is kept."),
        click.option("--refine", "refine", type=click.Choice(REFINE_METHODS, case_sensitive=False),
                     default="auto", show_default=True,
                     help="Local search on the rounded answer: node moves and cluster merges "
                          "(cc; cd keeping every cluster a clique), Fiduccia-Mattheyses moves "
                          "(sc), each made only when it lowers the objective; its budget is a "
                          "fixed number of sweeps over the problem, seeded by --seed. 'auto' "
                          "is 'local'; 'none' reports the rounding as it is."),
        click.option("--round-time-limit", type=Real(0.0), default=None, metavar="SECONDS",
                     help="Wall-clock budget of the rounding and its refinement together "
                          "(each rounding method makes at least one try; the report's "
                          "rounding.tries_run says how many ran). Default: --time-limit "
                          "when it is given, else none (all --round-tries)."),
    ])


def output_options(fn):
    """``--out --force --json --quiet``."""
    return _apply(fn, [
        click.option("--out", type=click.Path(file_okay=False, writable=True), default=None,
                     help="Directory for report.json, iterations.csv, clusters.csv or cut.csv, "
                          "and solution.npz (created if needed)."),
        click.option("--force", is_flag=True, default=False,
                     help="Replace the files of an earlier run in --out (default: refuse a "
                          "directory that holds one)."),
        click.option("--json", "as_json", is_flag=True, default=False,
                     help="Print the run summary as JSON on stdout."),
        click.option("--quiet", is_flag=True, default=False,
                     help="No progress and no summary on stderr (warnings and errors still show)."),
    ])


def given_problem_params(opts):
    """Problem parameters the user set, by builder parameter name."""
    params = {}
    for cli_name, name in _PROBLEM_PARAMS.items():
        value = opts.get(cli_name)
        if value is not None:
            params[name] = int(value) if cli_name == "p" else value
    return params


def collect_problem_params(kind, opts, accepted):
    """Problem parameters the user set, checked against what ``kind`` accepts.

    Parameters
    ----------
    kind : str
    opts : dict
        The command's parameters.
    accepted : set of str
        Parameters the builder of ``kind`` accepts.

    Returns
    -------
    dict
        Includes ``max_memory`` when it was set and the builder accepts it.
    """
    params = given_problem_params(opts)
    for name in params:
        if name not in accepted:
            flag = next(c for c, n in _PROBLEM_PARAMS.items() if n == name)
            raise click.UsageError(f"--{flag.replace('_', '-')} does not apply to {kind}")
    if opts.get("max_memory") is not None and "max_memory" in accepted:
        params["max_memory"] = opts["max_memory"]
    return params


def collect_read_options(opts):
    """Arguments for :func:`metricopt.io.read_graph` that the user set."""
    out = {}
    if opts.get("fmt") is not None:
        out["fmt"] = opts["fmt"]
    if opts.get("keep_all_components"):
        out["keep_all_components"] = True
    return out


def collect_solver_options(opts):
    """Solver options the user set (named flags and ``--option KEY=VALUE``)."""
    out = {name: opts[name] for name in flagged_options() if opts.get(name) is not None}
    for key, value in opts.get("extra_options") or ():
        if key in out:
            raise click.UsageError(f"option {key!r} given twice ({_flag(key)} and --option "
                                   f"{key}=...)")
        out[key] = value
    return out


def _flag(name):
    """The command-line spelling of solver option ``name``."""
    option = flagged_options().get(name)
    return option.flag if option is not None else f"--option {name}"


def _given(ctx, name):
    source = ctx.get_parameter_source(name)
    return source is not None and source != click.core.ParameterSource.DEFAULT


def _check_resolution(ctx, kind, opts):
    """``--resolution`` goes with the resolution-based ``--weights`` of cc, and back."""
    weights, resolution = opts.get("weights"), opts.get("resolution")
    if kind != "cc":
        return  # collect_problem_params refuses --resolution for the other problems
    if resolution is not None and weights not in _RESOLUTION_MODES:
        raise click.UsageError(f"--resolution applies to --weights "
                               f"{', '.join(_RESOLUTION_MODES)} only", ctx)
    if resolution is None and _RESOLUTION_MODES.get(weights):
        raise click.UsageError(f"--weights {weights} needs --resolution R", ctx)
    if weights == "lambda" and resolution is not None and resolution >= 1.0:
        raise click.UsageError(f"--resolution {resolution:g}: --weights lambda needs R in "
                               f"(0, 1)", ctx)


def check_applicable(ctx, kind, opts, *, bound_only):
    """Refuse, before any input is read, options that do not apply (usage error, exit 2).

    Checks ``--lambda`` (sparsest cut only), ``--checkpoint-every`` (needs
    ``--checkpoint``), ``--resolution`` against ``--weights``, the rounding options
    against the problem, and the solver options
    against the backend: an explicit ``--method`` must accept every one of them; with
    ``auto`` each must be an option of some backend (``auto`` drops, with a warning, those
    the backend it picks has no use for).

    Parameters
    ----------
    ctx : click.Context
    kind : str
    opts : dict
        The command's parameters.
    bound_only : bool
    """
    if opts.get("lam") is not None and kind != "sc":
        raise click.UsageError(f"--lambda applies to sc (sparsest cut) only, not to {kind}",
                               ctx)
    if opts.get("checkpoint_every") is not None and opts.get("checkpoint") is None:
        raise click.UsageError("--checkpoint-every needs --checkpoint FILE", ctx)
    _check_resolution(ctx, kind, opts)
    if not bound_only:
        if kind == "mn":
            for name, flag in (("round_method", "--round"), ("round_tries", "--round-tries"),
                               ("refine", "--refine"), ("round_time_limit", "--round-time-limit")):
                if _given(ctx, name):
                    raise click.UsageError(f"{flag} does not apply to mn (metric nearness "
                                           f"has no rounding)", ctx)
        else:
            method = opts["round_method"].lower()
            valid = ("auto", *ROUNDING_METHODS[kind])
            if method not in valid:
                raise click.UsageError(f"--round {method} does not apply to {kind}; choose "
                                       f"one of: {', '.join(valid)}", ctx)
    options = collect_solver_options(opts)
    method = opts["method"].lower()
    accepted = set(declared_options(method))
    owner = "any method" if method == "auto" else f"method {method!r}"
    for name in options:
        if name not in accepted:
            raise click.UsageError(f"{_flag(name)} does not apply to {owner} (its options: "
                                   f"{', '.join(sorted(accepted))})", ctx)
    _check_relaxation(ctx, kind, method, opts)
    _check_layout(ctx, kind, method, opts)
    _check_values(ctx, method, options, {key for key, _ in opts.get("extra_options") or ()})


def _check_layout(ctx, kind, method, opts):
    """``--layout support`` needs a method that solves the support-sized layout."""
    from ..solvers import get_solver

    if kind != "cc" or opts.get("layout") != "support" or method == "auto":
        return
    if "support" not in get_solver(method).structures:
        takers = [name for name in registered_solvers()
                  if "support" in get_solver(name).structures]
        raise click.BadParameter(
            f"support needs --method {' or '.join(takers)} (or auto); {method} stores every "
            f"pair", ctx, param_hint="'--layout'")


def _check_relaxation(ctx, kind, method, opts):
    """``--relaxation wedges`` needs 0/1 targets and a method that takes its rows;
    ``--relaxation editing`` needs cc with unit weights, or cd."""
    from ..solvers import get_solver

    if opts.get("relaxation") == "editing" and kind != "cd" \
            and (kind != "cc" or opts.get("weights") != "unit"):
        what = f"problem {kind}" if kind != "cc" else f"--weights {opts.get('weights') or 'auto'}"
        raise click.BadParameter(f"editing (cluster editing or deletion) needs cc --weights unit "
                                 f"or cd, not {what}", ctx, param_hint="'--relaxation'")
    if kind == "cd" and opts.get("relaxation") == "wedges":
        raise click.BadParameter("wedges (the open-wedge LP) is cc's; cd has full and editing",
                                 ctx, param_hint="'--relaxation'")
    if kind != "cc" or opts.get("relaxation") != "wedges":
        return
    weights = opts.get("weights") or "auto"
    if weights not in WEDGE_WEIGHTS:
        what = "auto (jaccard, or signed for a signed graph)" if weights == "auto" else weights
        raise click.BadParameter(
            f"wedges needs --weights {' or '.join(WEDGE_WEIGHTS)} (targets 1 - adjacency), "
            f"not {what}", ctx, param_hint="'--relaxation'")
    if method != "auto" and not get_solver(method).explicit_rows:
        takers = [name for name in registered_solvers() if get_solver(name).explicit_rows]
        raise click.BadParameter(
            f"wedges needs --method {' or '.join(takers)} (or auto); {method} solves the "
            f"full triangle family only", ctx, param_hint="'--relaxation'")


def _check_values(ctx, method, options, via_option):
    """The backends' checks of the option values (:func:`metricopt.solvers.
    check_option_values`), reported against the flag that gave the value (``--option``
    for the names in ``via_option``)."""
    from ..solvers import check_option_values

    try:
        check_option_values(method, options)
    except InvalidParameterError as exc:
        if exc.parameter is None:
            raise click.UsageError(" ".join(str(exc).split()), ctx) from None
        flag = "--option" if exc.parameter in via_option else _flag(exc.parameter)
        value = exc.value
        if not isinstance(value, str):
            value = json.dumps(value, default=str)
        if flag.startswith("--option"):
            flag, value = "--option", f"{exc.parameter}={value}"
        raise click.BadParameter(f"{value}: must be {exc.requirement}", ctx,
                                 param_hint=f"'{flag}'") from None
