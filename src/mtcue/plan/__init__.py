"""The study plan: one module per experiment says which runs it trains, in which directions, from which
parents, what it checks in the config and what it makes (`targets`), and registers itself in `EXPERIMENTS`
(plan/registry.py); `workflow/rules/common.smk` reads them. `models` gathers every run of every experiment
(entries, specs); `experiments` what several experiments share.

Importing the package imports every experiment's module, in the study's order (the order of `EXPERIMENTS`:
the GPU-hour table's rows), so `from mtcue.plan import EXPERIMENTS` lists them all.
"""
from mtcue.plan import (quality, formality, ablation, fewshot, voita2018, shortening,  # noqa: F401, I001
                        side_information, style, contrastive, context_usage, memory_growth)
from mtcue.plan.registry import EXPERIMENTS, Experiment, Targets, register  # noqa: F401
