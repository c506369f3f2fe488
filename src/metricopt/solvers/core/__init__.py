"""The solver core: what every backend shares and no backend owns.

The iteration loop and its stages, the options' declarations, the exact LP on a set of
rows (HiGHS) and the LP polish built on it. A backend is a strategy module that imports
the core, its own kernels and the problems, never another backend.
"""
