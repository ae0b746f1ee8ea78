"""The ablation experiment (the paper's Table 6): its plan (`plan.py`) and its table (`table.py`). Importing the
package imports the plan, which registers the experiment.
"""
from mtcue.experiments.ablation import plan  # noqa: F401
