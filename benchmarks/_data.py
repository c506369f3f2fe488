"""Where the benchmarks find the graphs of ``shared/data``.

``--data-dir`` when given, else ``$METRICOPT_DATA``, else ``../shared/data`` beside the
repository. The scripts run as ``python benchmarks/<script>.py``, so this folder is on
``sys.path``.
"""

import os
from pathlib import Path

__all__ = ["data_dir"]


def data_dir(arg=None):
    """The folder of the data files: ``arg``, ``$METRICOPT_DATA`` or ``../shared/data``."""
    if arg:
        return Path(arg)
    if os.environ.get("METRICOPT_DATA"):
        return Path(os.environ["METRICOPT_DATA"])
    return Path(__file__).resolve().parents[2] / "shared" / "data"
