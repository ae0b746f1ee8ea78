"""Hoang et al. (2018)'s side-information experiment (their Table 3): its plan (`plan.py`) and its table (`table.py`).
Importing the package imports the plan, which registers the experiment.
"""
from mtcue.experiments.side_information import plan  # noqa: F401
