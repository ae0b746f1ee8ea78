"""The rehearsal's configs: its plan file (config/rehearsal.yaml), the one override it writes after the study's
config, and a slice of the study (`--slice`)."""
from __future__ import annotations

import copy
from pathlib import Path

from mtcue.config import merge, read_yaml

PLAN_KEYS = {"sources", "every_model", "config"}
SOURCE_SIZES = {"links": int, "links_per_film": int, "heldout_films": int, "docs": int}


def load_plan(path: str | Path) -> dict:
    """config/rehearsal.yaml: `sources` (sizes of the copies), `every_model` (arch and training keys
    set in each model of the study; an arch key only where the model's arch has it) and `config` (keys
    merged over the study's config)."""
    plan = read_yaml(path)
    if not isinstance(plan, dict) or set(plan) != PLAN_KEYS:
        raise ValueError(f"{path}: expected exactly the keys {', '.join(sorted(PLAN_KEYS))}")
    _mappings(plan, sorted(PLAN_KEYS), path)
    for key, kind in SOURCE_SIZES.items():
        value = plan["sources"].get(key)
        if not isinstance(value, kind) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{path}: sources.{key} must be a positive integer, got {value!r:.60}")
    if set(plan["every_model"]) - {"arch", "training"}:
        raise ValueError(f"{path}: every_model holds only arch and training")
    _mappings(plan["every_model"], plan["every_model"], path, "every_model.")
    return plan


def _mappings(holder: dict, keys, path: str | Path, prefix: str = "") -> None:
    """Each of `keys` of `holder` a mapping (`key: value` lines), else a ValueError naming `path` and the key."""
    for key in keys:
        if not isinstance(holder[key], dict):
            raise ValueError(f"{path}: {prefix}{key} must be a mapping (key: value lines), got {holder[key]!r:.60}")


def is_study(cfg: object) -> bool:
    """A study's config as `override` and `slice_study` read it, before it is validated with the override."""
    return isinstance(cfg, dict) and isinstance(cfg.get("directions"), list) and isinstance(cfg.get("models"), dict) \
        and all(isinstance(entry, dict) for entry in cfg["models"].values())


def override(study: dict, plan: dict) -> dict:
    """The one override file given after the study's config: the plan's `config`, and each model of
    the study with `every_model`'s keys."""
    arch, training = plan["every_model"].get("arch", {}), plan["every_model"].get("training", {})
    models = {}
    for name, entry in study["models"].items():
        models[name] = {"arch": {k: v for k, v in arch.items() if k in (entry.get("arch") or {})},
                        "training": dict(training)}
    return _encoders_of(merge(plan["config"], {"models": models}), study["directions"])


def _only(mapping: dict, keys: set[str]) -> dict:
    return {k: v for k, v in mapping.items() if k in keys}


def _encoders_of(cfg: dict, directions: list[str]) -> dict:
    """`cfg` with its per-direction encoders (context's, each model's) of `directions` only: the config
    refuses one of a direction it does not run."""
    context = cfg.get("context", {})
    if "encoder_per_direction" in context:
        context["encoder_per_direction"] = _only(context["encoder_per_direction"], set(directions))
    for entry in cfg.get("models", {}).values():
        if "context_encoder_per_direction" in entry:
            entry["context_encoder_per_direction"] = _only(entry["context_encoder_per_direction"], set(directions))
    return cfg


def slice_study(study: dict, cut: dict, where: str = "slice") -> dict:
    """A slice of the study (e.g. CI's): `cut["directions"]` keeps those of the study's directions (every
    per-direction key and experiment direction of the others left out); each key of
    `cut["experiments"][name]` replaces that key of the study's experiment (fewer models, rows,
    settings). Nothing else changes."""
    if not isinstance(cut, dict):
        raise ValueError(f"{where}: a slice is a mapping of directions and experiments, got {cut!r:.60}")
    other = sorted(str(k) for k in cut if k not in ("directions", "experiments"))
    if other:
        raise ValueError(f"{where}: a slice holds directions and experiments only, not {', '.join(other)}")
    directions, replaced = cut.get("directions") or study["directions"], cut.get("experiments") or {}
    if not isinstance(directions, list) or not all(isinstance(d, str) for d in directions):
        raise ValueError(f"{where}: directions must list the directions kept, e.g. [en-de, en-pl], got "
                         f"{directions!r:.60}")
    if not isinstance(replaced, dict):
        raise ValueError(f"{where}: experiments must be a mapping (experiment: keys replaced), got {replaced!r:.60}")
    _mappings(replaced, replaced, where, "experiments.")
    unknown = [d for d in directions if d not in study["directions"]]
    if unknown:
        raise ValueError(f"{where}: {', '.join(unknown)} not among the study's directions {study['directions']}")
    kept = copy.deepcopy(study)
    kept["directions"] = [d for d in study["directions"] if d in directions]
    _encoders_of(kept, directions)
    experiments = kept.setdefault("experiments", {})
    for experiment in experiments.values():
        if isinstance(experiment, dict) and "directions" in experiment:
            experiment["directions"] = [d for d in experiment["directions"] if d in directions]
        if isinstance(experiment, dict) and "only" in experiment:
            experiment["only"] = {run: [d for d in ds if d in directions] for run, ds in experiment["only"].items()
                                  if any(d in directions for d in ds)}
    for name, keys in replaced.items():
        experiments.setdefault(name, {}).update(copy.deepcopy(keys))
    suites = kept.get("evaluation", {}).get("contrastive", {})
    if "suites" in suites:
        suites["suites"] = _only(suites["suites"], set(directions))
    return kept


