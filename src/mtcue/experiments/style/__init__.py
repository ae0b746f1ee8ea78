"""Jeong et al.'s style control (Table 5's supervised rows and the level sweep): its plan (`plan.py`) and its figure
(`figure.py`). Importing the package imports the plan, which registers the experiment.
"""
from mtcue.experiments.style import plan  # noqa: F401
