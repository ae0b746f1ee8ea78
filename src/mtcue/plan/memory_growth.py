"""Mąka et al. (2024), Figure 4 (figures.smk): what `mtcue memory-growth` measures.
"""
from __future__ import annotations

from mtcue.plan.models import model_spec


def memory_growth_plan(cfg: dict) -> dict:
    """What `mtcue memory-growth` measures (None: no curve configured): per label the model of each
    context size c = 1..N (the k-th of a list for c = k, its last beyond), each model's spec in the
    first direction, the batch, the beam and the vocabulary size."""
    exp = cfg["experiments"]["memory_growth"]
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


def targets(cfg: dict) -> list[str]:
    """The figure's files, where experiments.memory_growth names models."""
    return ["results/figures/memory_growth.csv", "results/figures/memory_growth.svg"] if memory_growth_plan(cfg) else []
