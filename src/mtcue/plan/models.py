"""The study's models: every model it trains (configured, few-shot variants, seeded and context-size runs),
their entries and specs, and which experiments each serves.
"""
from __future__ import annotations

from mtcue.layout import record_run
from mtcue.plan.registry import EXPERIMENTS
from mtcue.study import (SHORTENER_TYPES, SHORTENING_TYPES, SIDE_COLUMNS, STYLE_TYPES, ConfigError, columns_of,
                         context_kind, context_sentences, context_slots, parent_checkpoint, shortening_groups,
                         store_name, token_slots)


def model_entry(cfg: dict, model: str) -> dict:
    """The entry of a configured model, a few-shot variant or a seeded run."""
    if model in cfg["models"]:
        return cfg["models"][model]
    models = all_models(cfg)
    if model not in models:
        raise ConfigError(f"models: no model named '{model}' (known: {', '.join(sorted(models))})")
    return models[model]


def all_models(cfg: dict) -> dict[str, dict]:
    """Every model the study can train: the configured ones and the runs each experiment derives from them
    (the ablation rows' seeded runs, the few-shot variants, the context-size runs)."""
    return {**cfg["models"], **{name: entry for experiment in EXPERIMENTS.values()
                                for name, entry in experiment.derives(cfg).items()}}


def model_spec(cfg: dict, model: str, direction: str) -> dict:
    """Everything that determines how `model` is trained in `direction`: its type, sizes, training
    settings and, for a contextual model, what its context is made of (a change retrains it)."""
    entry = model_entry(cfg, model)
    spec = {
        "model": model,
        "type": entry["type"],
        # a style model's parent may be a checkpoint outside the study (parent_checkpoint)
        "init_from": entry.get("init_from") or parent_checkpoint(entry, direction),
        "arch": entry["arch"],
        "training": {**cfg["training"], **entry["training"]},
        "seed": entry.get("seed", cfg["seed"]),
    }
    if "fewshot" in entry:
        spec["fewshot"] = entry["fewshot"]
    if entry["type"] in STYLE_TYPES:
        spec["style"] = {"freeze": entry.get("style_freeze", "none"), "init": entry.get("style_init", "zero"),
                         "mapping": cfg["experiments"]["style"]["mapping"]}
    kind = context_kind(entry)
    if kind is not None:
        spec["context"] = {"kind": kind, "columns": model_columns(cfg, model), "random": entry["random_context"]}
    if kind == "vectors":
        spec["context"] |= {"encoder": encoder_for(cfg, direction, model), "pooling": entry.get("context_pooling", "mean")}
    elif kind == "tags":
        spec["context"]["tags_min_docs"] = cfg["context"]["tags_min_docs"]
    elif kind == "labels":
        spec["context"] |= {"columns": list(SIDE_COLUMNS), "tags_min_docs": cfg["context"]["tags_min_docs"]}
    elif kind == "tokens":
        spec["context"] = {"kind": kind, "slot": context_slots(entry), "random": entry["random_context"],
                           "slots": token_slots(cfg)}
    if entry["type"] in SHORTENING_TYPES:
        spec["arch"] = {**spec["arch"], "context_sentences": context_sentences(entry)}
    if entry["type"] in SHORTENER_TYPES:  # K of the model's pair (config: one value or one per pair)
        spec["arch"]["shortening_groups"] = shortening_groups(entry, model, direction)
    return spec


def encoder_for(cfg: dict, direction: str, model: str | None = None) -> str:
    """The sentence encoder of `model` in `direction`: the model's own for that direction, its own
    for every direction, the study's for that direction, the study's: the first one set."""
    entry = model_entry(cfg, model) if model else {}
    return (entry.get("context_encoder_per_direction", {}).get(direction) or entry.get("context_encoder")
            or cfg["context"]["encoder_per_direction"].get(direction, cfg["context"]["encoder"]))


def model_columns(cfg: dict, model: str) -> list[str]:
    """The context columns `model` reads (`columns_of` its entry)."""
    return columns_of(cfg, model_entry(cfg, model))


def trained_models(cfg: dict) -> dict[tuple[str, str], list[str]]:
    """Every (direction, model) the study trains, with the experiments whose results it gives (each
    experiment's `trains`); a model trained only as another's starting point has none."""
    out: dict[tuple[str, str], set[str]] = {}
    for name, experiment in EXPERIMENTS.items():
        for key in with_parents(cfg, experiment.trains(cfg)):
            out.setdefault(key, set())
        for key in experiment.trains(cfg):
            out[key].add(name)
    return {key: sorted(experiments) for key, experiments in sorted(out.items())}


def with_parents(cfg: dict, cells: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """`cells` ((direction, model) pairs) and every model each is trained from (init_from, in its direction),
    each once, sorted: what training those cells takes."""
    out = set()
    for direction, model in cells:
        while model and (direction, model) not in out:
            out.add((direction, model))
            model = model_entry(cfg, model).get("init_from")
    return sorted(out)


def experiment_trainings(cfg: dict, name: str) -> list[tuple[str, str]]:
    """The trainings experiment `name`'s targets need: the (direction, model) pairs whose results it gives, those
    its records and the other records it reads are of (contrastive suites score other experiments' models) and
    their parents."""
    experiment = EXPERIMENTS[name]
    scored = [cell for cell in map(record_run, [*experiment.targets(cfg).records, *experiment.reads(cfg)]) if cell]
    return with_parents(cfg, [*experiment.trains(cfg), *scored])


def trained_entries(cfg: dict) -> list[str]:
    """The configured models the study trains, in the config's order: under their own name, as the parent of a
    trained model, or through the runs an experiment that trains derives from the models it names (seeded,
    few-shot and context-size runs). A model only defined (for another config or the tests) is not one."""
    trained = {m for _, m in trained_models(cfg)}
    named = {m for e in EXPERIMENTS.values() if e.names and e.trains(cfg) for m in e.names(cfg)}
    return [m for m in cfg["models"] if m in trained or m in named]


def vector_stores(cfg: dict) -> dict[str, tuple[dict, list[str]]]:
    """{store name: (spec context, the directions whose trained models read it)} of every vector store of the
    study (an ablation's store only where the ablation runs)."""
    stores: dict[str, tuple[dict, list[str]]] = {}
    trained = trained_models(cfg)
    for direction in cfg["directions"]:
        contexts = [model_spec(cfg, m, direction).get("context") for d, m in trained if d == direction]
        for context in {store_name(c): c for c in contexts if c and "encoder" in c}.values():
            stores.setdefault(store_name(context), (context, []))[1].append(direction)
    return stores
