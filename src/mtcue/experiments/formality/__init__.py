"""The IWSLT22 zero-shot formality experiment (the paper's Table 5): its plan (`plan.py`) and its table (`table.py`).
Importing the package imports the plan, which registers the experiment.
"""
from mtcue.experiments.formality import plan  # noqa: F401
