"""The ``metricopt`` command-line interface (click); the only package that prints.

>>> from metricopt.cli import cli, main
"""

from .main import cli, main

__all__ = ["cli", "main"]
