"""Contrastive evaluation: every model of an en->xx direction on its direction's suites: its plan (`plan.py`) and its
table (`table.py`). Importing the package imports the plan, which registers the experiment.
"""
from mtcue.experiments.contrastive import plan  # noqa: F401
