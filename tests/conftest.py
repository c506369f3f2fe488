"""Shared fixtures: a command-line runner, an output directory, the bundled graphs."""

import os

import pytest
from click.testing import CliRunner
from hypothesis import settings

# Property tests draw the same examples on every run, so the suite's verdict does not
# depend on luck; HYPOTHESIS_PROFILE=explore draws fresh ones (for a search by hand).
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture
def runner():
    """A click runner that keeps stdout and stderr apart."""
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        return CliRunner()


@pytest.fixture
def out_dir(tmp_path):
    """A fresh directory path for run outputs (not created: commands create it)."""
    return tmp_path / "out"


@pytest.fixture(scope="session")
def bundled_graph_names():
    """Names of the datasets shipped with the package."""
    from metricopt.datasets import bundled_names

    return list(bundled_names())


@pytest.fixture
def sigint_raises():
    """Python's own SIGINT handler (KeyboardInterrupt) for the test, then the old one.

    A process that a non-interactive shell starts in the background inherits SIGINT
    ignored, and then a Ctrl-C test would see nothing.
    """
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def sigint_from_highs(monkeypatch, sigint_raises):
    """``arm(when)``: a SIGINT sent by HiGHS's own interrupt callbacks, at the first
    callback of any model at which ``when()`` is true (after the callbacks that
    :class:`~metricopt.solvers.core.exact_lp.ExactModel` subscribes itself); returns the
    dict in which ``"sent"`` records that it was. Skips where highspy has no callbacks."""
    import signal

    from metricopt.solvers.core import exact_lp

    if not hasattr(__import__("highspy").Highs(), "cbSimplexInterrupt"):
        pytest.skip("this highspy has no interrupt callbacks")
    watch, seen = exact_lp.ExactModel._watch_interrupts, {}

    def arm(when=lambda: True):
        def signalling(self):
            watch(self)
            if getattr(self, "_armed", False):
                return
            self._armed = True

            def send(event):
                if "sent" not in seen and when():
                    seen["sent"] = True
                    os.kill(os.getpid(), signal.SIGINT)
            for name in ("cbSimplexInterrupt", "cbIpmInterrupt"):
                getattr(self.h, name).subscribe(send)

        monkeypatch.setattr(exact_lp.ExactModel, "_watch_interrupts", signalling)
        return seen

    return arm
