"""Mąka et al. (2024), Figure 4 (its rules.smk): what `mtcue memory-growth` measures. `MemoryGrowth` reads its config
section by its key, so a variant (other curves or batch) is `MemoryGrowth(key, label)` registered beside it, with
its own schema section.
"""
from __future__ import annotations

import functools
from mtcue import layout
from mtcue.plan.experiments import Keyed
from mtcue.plan.models import all_models, model_spec
from mtcue.plan.registry import Experiment, Section, Targets, register
from mtcue.study import ConfigError, context_kind


class MemoryGrowth(Keyed):
    """The memory-growth curves of config section experiments.{key}, `label` in the GPU-hour table."""

    def __init__(self, key: str = "memory_growth", label: str = "memory growth (Mąka et al. (2024), Figure 4)"):
        super().__init__(key)
        self.label = label

    def plan(self, cfg: dict) -> dict | None:
        """What `mtcue memory-growth` measures (None: no curve configured): per label the model of each
        context size c = 1..N (the k-th of a list for c = k, its last beyond), each model's spec in the
        first direction, the batch, the beam and the vocabulary size."""
        exp = self.config(cfg)
        if not exp["models"]:
            return None
        n = exp["context_sentences"]
        curves = {}
        for label, names in exp["models"].items():
            names = [names] if isinstance(names, str) else names
            curves[label] = [names[min(c, len(names)) - 1] for c in range(1, n + 1)]
        used = dict.fromkeys(m for ms in curves.values() for m in ms)
        return {"curves": curves, "specs": {m: model_spec(cfg, m, cfg["directions"][0]) for m in used},
                "batch": {"sentences": exp["sentences"], "length": exp["length"]},
                "beam": cfg["generation"]["beam"], "vocab_size": cfg["spm"]["vocab_size"], "seed": cfg["seed"]}

    def targets(self, cfg: dict) -> Targets:
        """The figure's files, where experiments.{key} names models."""
        return Targets(figures=[layout.figure("memory_growth", suffix) for suffix in ("csv", "svg")]
                       if self.plan(cfg) else [])

    def check(self, cfg: dict) -> None:
        models = all_models(cfg)  # context-size runs of an experiment too
        for label, names in self.config(cfg)["models"].items():
            for name in [names] if isinstance(names, str) else names:
                if name not in models:
                    raise ConfigError(f"experiments.{self.key}.models.{label}: '{name}' is not a model of this "
                                      "config")
                if context_kind(models[name]) not in ("tokens", "vectors"):
                    raise ConfigError(f"experiments.{self.key}.models.{label}: '{name}' reads no document context "
                                      "(a token or vector store)")

    def experiment(self, **declared) -> Experiment:
        """The experiment to register; `declared`, its other Experiment fields (the README's sections)."""
        return Experiment(self.key, self.label, self.targets, check=self.check, **declared)


MEMORY_GROWTH = MemoryGrowth()

register(MEMORY_GROWTH.experiment(
    sections=(Section("mtcue.reporting.readme_sections:memory_section", 110),),
    results={"memory": functools.partial(layout.figure, "memory_growth", "csv")}))
