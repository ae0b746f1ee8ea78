"""Configuration: loading, schema validation and defaults.

Defaults live only in `schemas/config.schema.yaml`; this module fills them in and rejects
unknown keys and wrong types with the offending key path in the message, then checks what the schema
cannot say (a switch on a part the model lacks, an experiment naming an unknown model) and runs each
experiment's own checks (`mtcue.plan.EXPERIMENTS`). The study's vocabulary is `mtcue.study`, its plan (which
runs each experiment trains) `mtcue.plan`.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from mtcue.experiments.fewshot.plan import FEWSHOT
from mtcue.io import TextFileError, read_text
from mtcue.plan import EXPERIMENTS
from mtcue.study import (ARCH_KEY_TYPES, CONTEXT_KIND, CONTEXT_SENTENCES_TYPES, CORPUS_PAIRS, ENGLISH,
                         MODEL_TYPES, SHORTENER_TYPES, SHORTENING_TYPES, STYLE_TYPES, ConfigError, column_groups,
                         context_kind, pair_of, selected_columns, store_columns)
from mtcue.yaml_loader import ConfigLoader


def _is_integer(_checker, value) -> bool:
    """A whole number written as one: fairseq's argparse refuses `--beam 2.0` (int("2.0")), which JSON
    Schema's integer accepts."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(_checker, value) -> bool:
    """A finite number: NaN passes every minimum and maximum, infinity overflows fairseq's int()."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number}))


def schema() -> dict:
    text = resources.files("mtcue").joinpath("schemas/config.schema.yaml").read_text()
    return yaml.safe_load(text)


def _resolve(node: dict, root: dict) -> dict:
    if "$ref" in node:
        target = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _fill_defaults(value: Any, node: dict, root: dict) -> None:
    """Fill missing keys from `default`s, descending into objects (after validation)."""
    node = _resolve(node, root)
    if not isinstance(value, dict) or not node.get("x-fill-defaults", True):
        return
    for key, sub in node.get("properties", {}).items():
        sub_resolved = _resolve(sub, root)
        if key not in value and "default" in sub_resolved:
            value[key] = copy.deepcopy(sub_resolved["default"])
        if key in value:
            _fill_defaults(value[key], sub, root)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        for key in value.keys() - node.get("properties", {}).keys():
            _fill_defaults(value[key], extra, root)


def _check_switches(name: str, model: dict) -> None:
    """Each switch of a model entry must act on a part the model has."""
    kind, has_encoder = context_kind(model), CONTEXT_KIND[model["type"]] == "vectors"
    if "context_kind" in model and not has_encoder:
        raise ConfigError(f"models.{name}.context_kind: a '{model['type']}' model has no context encoder")
    for key in ("context_encoder", "context_encoder_per_direction", "context_pooling"):
        if key in model and kind != "vectors":
            raise ConfigError(f"models.{name}.{key}: this '{model['type']}' model reads no context vectors")
    if "context_slot" in model and kind != "tokens":
        raise ConfigError(f"models.{name}.context_slot: a '{model['type']}' model reads no token store")
    if "context_sentences" in model and model["type"] not in CONTEXT_SENTENCES_TYPES:
        raise ConfigError(f"models.{name}.context_sentences: only the shortening family and concat "
                          f"({', '.join(CONTEXT_SENTENCES_TYPES)}) read several previous sentences")
    if "shortening_groups" in model["arch"] and model["type"] not in SHORTENER_TYPES:
        raise ConfigError(f"models.{name}.arch.shortening_groups: a '{model['type']}' model has no shortener; K is "
                          f"for {', '.join(SHORTENER_TYPES)}")
    if "context_slot" in model and (model["type"] in SHORTENING_TYPES or "context_sentences" in model):
        raise ConfigError(f"models.{name}.context_slot: a '{model['type']}' model reads prev1..prevC "
                          "(context_sentences: C)")
    if "context_columns" in model and kind == "tokens":
        raise ConfigError(f"models.{name}.context_columns: a '{model['type']}' model reads a token slot (context_slot)")
    if model["random_context"] == "noise" and kind == "tokens":
        raise ConfigError(f"models.{name}.random_context: noise replaces context vectors; a '{model['type']}' model "
                          "reads tokens (use shuffle)")
    if model["random_context"] and kind is None:
        raise ConfigError(f"models.{name}.random_context: a '{model['type']}' model reads no context")
    if model["random_context"] == "noise" and kind != "vectors":
        raise ConfigError(f"models.{name}.random_context: noise replaces context vectors; this "
                          f"'{model['type']}' model reads none (use shuffle)")
    style = model["type"] in STYLE_TYPES
    for key in ("style_freeze", "style_init", "parent_checkpoint"):
        if key in model and not style:
            raise ConfigError(f"models.{name}.{key}: a '{model['type']}' model is not a style-control model")
    if "style_init" in model and MODEL_TYPES[model["type"]].style_mode != "value":  # a level's new projection
        raise ConfigError(f"models.{name}.style_init: a '{model['type']}' model has no new weights to initialise")
    if style and ("init_from" in model) == ("parent_checkpoint" in model):
        raise ConfigError(f"models.{name}: a style model fine-tunes a parent: give init_from or parent_checkpoint "
                          "(one of them)")
    arch = model["arch"]
    if arch["embed_dim"] % arch["heads"]:  # fairseq's attention splits the width into equal heads
        raise ConfigError(f"models.{name}.arch: embed_dim {arch['embed_dim']} must be a multiple of heads "
                          f"({arch['heads']})")
    for key, owners in ARCH_KEY_TYPES.items():
        if (key in arch) != (model["type"] in owners):
            raise ConfigError(f"models.{name}.arch.{key}: " + (
                f"a '{model['type']}' model needs it" if key not in arch
                else f"only a {' or '.join(map(repr, owners))} model has it"))
    if not arch["context_positions"] and not has_encoder:
        raise ConfigError(f"models.{name}.arch.context_positions: a '{model['type']}' model has no context encoder")
    if not has_encoder and (not arch["qk_norm"] or arch["qk_norm_scale_init"] is not None):
        raise ConfigError(f"models.{name}.arch: qk_norm and qk_norm_scale_init act on a context encoder; "
                          f"a '{model['type']}' model has none")
    if not arch["qk_norm"] and arch["qk_norm_scale_init"] is not None:
        raise ConfigError(f"models.{name}.arch.qk_norm_scale_init: set, but qk_norm is false")


def _fill_shortening_groups(cfg: dict, root: dict) -> None:
    """K's default (the schema's x-default, its one place) for a shortener model that sets none; other models
    have no K (`_check_switches`)."""
    default = root["$defs"]["model"]["properties"]["arch"]["properties"]["shortening_groups"]["x-default"]
    for model in cfg["models"].values():
        if model["type"] in SHORTENER_TYPES and "shortening_groups" not in model["arch"]:
            # a new dict: YAML aliases (`arch: *base`) share one with models that have no K
            model["arch"] = {**model["arch"], "shortening_groups": default}


def _check_semantics(cfg: dict) -> None:
    for direction in cfg["directions"]:
        src, tgt = direction.split("-")
        if src == tgt or ENGLISH not in (src, tgt):
            raise ConfigError(f"directions: '{direction}' must translate from or into English (en-xx or xx-en)")
    source = cfg["corpus"]["source"]
    unavailable = [d for d in cfg["directions"] if pair_of(d) not in CORPUS_PAIRS[source]]
    if unavailable:
        raise ConfigError(f"directions: {unavailable} need language pairs that corpus.source '{source}' cannot "
                          f"provide (it provides {', '.join(CORPUS_PAIRS[source])}, in either direction)")
    for name, model in cfg["models"].items():
        _check_switches(name, model)
        parent = model.get("init_from")
        if parent is not None and parent not in cfg["models"]:
            raise ConfigError(
                f"models.{name}.init_from: '{parent}' is not a model of this config "
                f"(known: {', '.join(sorted(cfg['models']))})")
        seen = {name}
        while parent is not None:
            if parent in seen:
                raise ConfigError(f"models.{name}.init_from: initialisation cycle through '{parent}'")
            seen.add(parent)
            parent = cfg["models"].get(parent, {}).get("init_from")
    for name, experiment in EXPERIMENTS.items():  # before the experiments' checks, which read the entries
        unknown = [n for n in experiment.names(cfg) if n not in cfg["models"]] if experiment.names else []
        if unknown:
            raise ConfigError(f"experiments.{name}.{experiment.names_key}: {unknown} are not models of this config "
                              f"(known: {', '.join(sorted(cfg['models']))})")
    for experiment in EXPERIMENTS.values():
        experiment.check(cfg)
    selections = {"context.columns": cfg["context"]["columns"],
                  f"experiments.{FEWSHOT.key}.context_columns": FEWSHOT.config(cfg)["context_columns"]}
    selections.update({f"models.{name}.context_columns": m["context_columns"]
                       for name, m in cfg["models"].items() if "context_columns" in m})
    known = [*column_groups(cfg), *store_columns(cfg)]
    for key, selection in selections.items():
        unknown = [item for item in selection if item not in known]
        if unknown:
            raise ConfigError(f"{key}: {unknown} are neither column groups nor store columns (known: {known})")
        doc = [c for c in selected_columns(cfg, selection) if c.startswith("doc")]
        if doc != column_groups(cfg)["doc"][:len(doc)]:
            raise ConfigError(f"{key}: document slots must run from doc0 without gaps (slot positions), got {doc}")
    overrides = {"context.encoder_per_direction": cfg["context"]["encoder_per_direction"]}
    overrides |= {f"models.{name}.context_encoder_per_direction": m["context_encoder_per_direction"]
                  for name, m in cfg["models"].items() if "context_encoder_per_direction" in m}
    for key, per_direction in overrides.items():
        unknown = set(per_direction) - set(cfg["directions"])
        if unknown:
            raise ConfigError(f"{key}: {sorted(unknown)} are not in `directions`")


def validate(raw: dict, source: str = "config", checks: Iterable[Callable[[dict], None]] = ()) -> dict:
    """Return a validated copy of `raw` with every default filled in. `checks`: a stage's own checks of the
    filled-in config (each raises ConfigError), e.g. the data stage's `sources.check_urls`, so this module
    needs no stage's code."""
    root = schema()
    cfg = copy.deepcopy(raw)
    errors = sorted(_Validator(root).iter_errors(cfg), key=lambda e: list(e.path))
    if errors:
        lines = []
        for err in errors:
            where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
            lines.append(f"  {where}: {err.message}")
        raise ConfigError(f"{source}: invalid configuration\n" + "\n".join(lines)
                          + "\nSee src/mtcue/schemas/config.schema.yaml for the allowed keys.")
    _fill_defaults(cfg, root, root)
    _fill_shortening_groups(cfg, root)
    _check_generation(cfg["generation"], "generation")
    _check_semantics(cfg)
    for check in checks:
        check(cfg)
    return cfg


def generation_settings(given: Any, source: str = "--generation") -> dict:
    """Beam-search settings: `given` checked against the schema's `generation` (a misspelt key or a beam
    of 0 is an error naming `source`, never ignored), the schema's defaults for the rest."""
    root = schema()
    node = root["properties"]["generation"]
    errors = list(_Validator(node).iter_errors(given))
    if errors:
        problems = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" if e.absolute_path else e.message
                    for e in errors]
        raise ConfigError(f"{source}: " + "; ".join(problems) + f" (settings: {', '.join(node['properties'])})")
    settings = copy.deepcopy(given)
    _fill_defaults(settings, node, root)
    _check_generation(settings, source)
    return settings


def _check_generation(settings: dict, source: str) -> None:
    """fairseq's SequenceGenerator asserts int(max_len_a * source length + max_len_b) >= min_len (1) for
    every batch; a source is at least one token (</s>)."""
    if settings["max_len_a"] + settings["max_len_b"] < 1:
        raise ConfigError(f"{source}: max_len_a + max_len_b is {settings['max_len_a'] + settings['max_len_b']}: "
                          "hypotheses of a one-token source could have no token, which fairseq refuses; "
                          "make the sum at least 1")


def read_yaml(path: str | Path) -> Any:
    """A YAML file's content, as ConfigLoader reads it (a refusal names the file, and the line and key)."""
    loader = ConfigLoader(read_text(path))
    loader.name = str(path)
    try:
        return loader.get_single_data()
    except RecursionError:  # PyYAML reads nesting by recursion
        raise ConfigError(f"{path}: nested too deeply to read (thousands of levels); is it the right file?") from None
    finally:
        loader.dispose()


def merge(base: dict, over: dict) -> dict:
    """`over` merged into a copy of `base` as Snakemake merges config files (mapping into mapping)."""
    from snakemake.utils import update_config

    merged = copy.deepcopy(base)
    update_config(merged, copy.deepcopy(over))
    return merged


def load_files(paths: Iterable[str | Path], checks: Iterable[Callable[[dict], None]] = ()) -> dict:
    """The study that `snakemake --configfile A B ...` would run, validated: the files merged as Snakemake merges
    them, but each read by read_yaml first, which refuses what Snakemake would run or never finish reading
    (YTE templating, aliases that expand without end) before Snakemake sees the file."""
    merged: dict = {}
    for path in paths:
        merged = merge(merged, _read_config(path))
    return validate(merged, source=" + ".join(map(str, paths)), checks=checks)


def _read_config(path: str | Path) -> dict:
    """A config file's mapping, read by read_yaml; each refusal a ConfigError naming the file."""
    path = Path(path)
    try:
        raw = read_yaml(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except TextFileError as err:
        raise ConfigError(str(err)) from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys at the top level")
    return raw


def load(path: str | Path) -> dict:
    return validate(_read_config(path), source=str(path))


def paper_formality_prompts() -> dict[str, list[str]]:
    """The paper's zero-shot prompts (appendix D), verbatim: the schema's default for
    experiments.formality.prompts."""
    formality = schema()["properties"]["experiments"]["properties"]["formality"]
    return copy.deepcopy(formality["properties"]["prompts"]["default"])
