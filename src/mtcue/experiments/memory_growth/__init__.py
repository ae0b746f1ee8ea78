"""Memory growth with context size (Mąka et al. (2024), Figure 4): its plan (`plan.py`). Importing the package imports
the plan, which registers the experiment.
"""
from mtcue.experiments.memory_growth import plan  # noqa: F401
