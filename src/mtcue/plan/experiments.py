"""What several experiments share: the configured models each names (from the registry), the repeated (seeded)
runs of a fine-tuning, the contrastive suites of each direction, and the config checks they have in common.
"""
from __future__ import annotations

from mtcue import layout
from mtcue.plan.models import trained_models
from mtcue.plan.registry import EXPERIMENTS
from mtcue.study import ConfigError, seed_name


def experiment_models(cfg: dict) -> dict[str, list[str]]:
    """{experiment: the configured models it names} of every experiment that names some (Tables 3-4 default
    to every model)."""
    return {name: experiment.names(cfg) for name, experiment in EXPERIMENTS.items() if experiment.names}


class Keyed:
    """An experiment's plan that reads its config section by its key (experiments.{key}), so that a variant of
    the experiment is the same class with another key (and a schema section of its own)."""

    def __init__(self, key: str):
        self.key = key

    def config(self, cfg: dict) -> dict:
        return cfg["experiments"][self.key]


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


def suites(cfg: dict) -> dict[str, list[str]]:
    """{en->xx direction: its contrastive suites} (the synthetic one, or on the paper's data the configured
    real ones): what experiments/contrastive/rules.smk scores, and the sentences of the shortening experiment's groupings."""
    configured, paper = cfg["evaluation"]["contrastive"]["suites"], cfg["corpus"]["source"] == "opensubtitles"
    return {d: configured.get(d, []) if paper else ["synthetic"] for d in cfg["directions"] if d.startswith("en-")}


def bootstrap(cfg: dict) -> dict:
    """A table's significance options (`evaluation.bootstrap`: samples, alpha), its `params` where it marks them."""
    return {"bootstrap": cfg["evaluation"]["bootstrap"]}


def check_directions(cfg: dict, experiment: str, directions: list[str]) -> None:
    """An experiment's directions are the study's."""
    unknown = [d for d in directions if d not in cfg["directions"]]
    if unknown:
        raise ConfigError(f"experiments.{experiment}.directions: {unknown} are not in `directions`")


def check_only(cfg: dict, experiment: str) -> None:
    """experiments.{experiment}.only names directions of the experiment: one outside it would leave the model
    out of the experiment without a word."""
    exp = cfg["experiments"][experiment]
    for name, directions in exp["only"].items():
        outside = [d for d in directions if d not in exp["directions"]]
        if outside:
            raise ConfigError(f"experiments.{experiment}.only.{name}: {outside} are not directions of the "
                              f"experiment (experiments.{experiment}.directions: {exp['directions']})")


def check_derived_names(cfg: dict, derived: dict[str, dict], what: str) -> None:
    """The runs an experiment derives (`what` they are) take no configured model's name."""
    clash = sorted(set(derived) & set(cfg["models"]))
    if clash:
        raise ConfigError(f"models: {clash} are the names of {what}; rename them")


def study_targets(cfg: dict) -> list[str]:
    """Every experiment's tables, figures and other files (`Targets`), in the registry's order: what `all`
    builds of the experiments."""
    out = []
    for experiment in EXPERIMENTS.values():
        made = experiment.targets(cfg)
        out += [*made.tables, *made.figures, *made.others]
    return out


def report_files(cfg: dict) -> list[str]:
    """Every experiment's tables and figures: what the study's MLflow run holds."""
    return [f for experiment in EXPERIMENTS.values() for made in [experiment.targets(cfg)]
            for f in (*made.tables, *made.figures)]


def model_records(cfg: dict) -> list[str]:
    """Every record of a trained model, which the MLflow sync mirrors into the model's run: each training's and
    each experiment's `Targets.records`."""
    return sorted({*(str(layout.train_record(d, m)) for d, m in trained_models(cfg)),
                   *(r for experiment in EXPERIMENTS.values() for r in experiment.targets(cfg).records)})
