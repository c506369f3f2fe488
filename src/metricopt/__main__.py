"""``python -m metricopt``: the same commands as the ``metricopt`` script."""

from metricopt.cli import main

if __name__ == "__main__":
    main()
