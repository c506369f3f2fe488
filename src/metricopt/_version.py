"""The package version, in a module that imports nothing (any layer may record it)."""

__version__ = "0.1.0"
