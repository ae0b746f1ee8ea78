"""Which configured models each experiment names, and the repeated (seeded) runs of a fine-tuning.
"""
from __future__ import annotations

from mtcue.plan.side_information import side_information_rows
from mtcue.study import seed_name


def experiment_models(cfg: dict) -> dict[str, list[str]]:
    """{experiment: the configured models it names} (Tables 3-4 default to every model)."""
    fewshot = cfg["experiments"]["fewshot"]
    quality = cfg["experiments"]["quality"]["models"] or list(cfg["models"])
    return {"quality": quality,
            "fewshot": fewshot["models"] + ([fewshot["baseline"]] if fewshot["baseline"] else []),
            "ablation": list(dict.fromkeys(cfg["experiments"]["ablation"]["rows"].values())),
            "formality": cfg["experiments"]["formality"]["models"] or quality,
            "voita2018": list(dict.fromkeys(cfg["experiments"]["voita2018"]["models"]
                                            + cfg["experiments"]["voita2018"]["random_test"])),
            "side_information": side_information_rows(cfg),
            "shortening": cfg["experiments"]["shortening"]["models"],
            "style": cfg["experiments"]["style"]["models"]}


def seed_runs(cfg: dict, experiment: str, model: str, entry: dict) -> list[str]:
    """The runs of `model` that `experiment` (ablation, fewshot) averages (`entry`: its model entry): a fine-tuning (a model with
    `init_from`) once per seed of experiments.{experiment}.seeds, a model trained from scratch (BASE)
    once, as the parents of the fine-tunings are shared."""
    seeds = cfg["experiments"][experiment]["seeds"] if entry.get("init_from") else 1
    return [seed_name(model, s) for s in range(1, seeds + 1)]


def with_seeds(cfg: dict, experiment: str, models: dict[str, dict]) -> dict[str, dict]:
    """`models` and, for each fine-tuning, its runs with seeds 2..n: the same entry with the training seed
    `seed` + n - 1 (fairseq's --seed; `seed_of`: the model it repeats)."""
    seeds = cfg["experiments"][experiment]["seeds"]
    out = dict(models)
    for model, entry in models.items():
        if entry.get("init_from"):
            out |= {seed_name(model, s): {**entry, "seed": cfg["seed"] + s - 1, "seed_of": model}
                    for s in range(2, seeds + 1)}
    return out
