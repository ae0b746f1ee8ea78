"""Voita et al. (2018)'s experiment (their Tables 1 and 7): its plan (`plan.py`) and its table (`table.py`). Importing
the package imports the plan, which registers the experiment.
"""
from mtcue.experiments.voita2018 import plan  # noqa: F401
