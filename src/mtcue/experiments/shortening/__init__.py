"""The sequence-shortening experiment (Mąka et al. (2024), Tables 2-3 and Figure 3): its plan (`plan.py`) and its table
(`table.py`). Importing the package imports the plan, which registers the experiment.
"""
from mtcue.experiments.shortening import plan  # noqa: F401
