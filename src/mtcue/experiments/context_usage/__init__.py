"""Context usage (CXMI, Fernandes et al. 2021): its plan (`plan.py`) and its table (`table.py`). Importing the package
imports the plan, which registers the experiment.
"""
from mtcue.experiments.context_usage import plan  # noqa: F401
