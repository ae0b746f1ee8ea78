"""The EAMT22 few-shot experiment (the paper's Figure 4): its plan (`plan.py`) and its figure (`figure.py`). Importing
the package imports the plan, which registers the experiment.
"""
from mtcue.experiments.fewshot import plan  # noqa: F401
