"""The study plan: what every experiment shares (`registry`: `EXPERIMENTS`, each experiment's `Targets`, tables and
sections; `experiments`: `Keyed` and the helpers several share; `models`: every run of every experiment, entries
and specs; `evaluation`, `gpu_hours`, `resources`, `submissions`) and the quality tables (`quality`). Each
experiment's own plan is in its folder, `mtcue/experiments/{name}/plan.py`, and registers itself in `EXPERIMENTS`;
`workflow/rules/common.smk` reads them.

Importing the package imports every experiment (`mtcue.experiments`), in the study's order, so `from mtcue.plan
import EXPERIMENTS` lists them all.
"""
from mtcue import experiments  # noqa: F401, I001
from mtcue.plan.registry import EXPERIMENTS, Experiment, Targets, register  # noqa: F401
