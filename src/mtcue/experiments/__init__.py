"""The study's experiments, one folder each: its plan (`plan.py`, which registers it in `mtcue.plan.EXPERIMENTS`), its
table or figure module (reporting's: `table.py`, `figure.py`), its own rules (`rules.smk`) and captions. The quality
tables (Tables 1, 3 and 4, `mtcue.plan.quality`), which other experiments read, come first.

Importing the package imports every experiment, in the study's order (the order of `EXPERIMENTS`: the GPU-hour
table's rows); an experiment is one more name in the import below.
"""
from pathlib import Path

from mtcue.plan import quality  # noqa: F401, I001
from mtcue.experiments import (formality, ablation, fewshot, voita2018, shortening,  # noqa: F401
                               side_information, style, contrastive, context_usage, memory_growth)


def rule_files() -> list[str]:
    """The experiments' own rule files (`{name}/rules.smk`, where an experiment has steps beyond training, evaluation
    and its tables): what the Snakefile includes, found by folder, so that no shared file lists them."""
    return [str(path) for path in sorted(Path(__file__).parent.glob("*/rules.smk"))]
