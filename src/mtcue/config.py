"""Configuration: schema validation, defaults, and the derived views the pipeline needs.

Defaults live only in `schemas/config.schema.yaml`; this module fills them in and rejects
unknown keys and wrong types with the offending key path in the message.
"""
from __future__ import annotations

import copy
import math
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from mtcue.context.side_labels import SIDE_COLUMNS
from mtcue.io import TextFileError, read_text

ENGLISH = "en"
# Model type -> the kind of context store it reads (docs/formats.md section 2); None: no context.
# A model with a context encoder ("vectors" types) may read tags instead (`context_kind`).
# "labels": Hoang et al.'s side-information labels, a tag store of their own (context/side_labels.py).
CONTEXT_KIND = {"base": None, "tagging": "tags", "novotney_cue": "vectors", "mtcue": "vectors",
                "voita_context": "tokens", "concat": "tokens", "si_src_prefix": "labels", "si_src_suffix": "labels",
                "si_output_layer": "labels", "si_mtl": "labels", "si_trg_prefix": "labels", "style_token": None,
                "style_dim": None}
# Style-control models (Jeong et al.): no context store; a style level per line (the style store).
STYLE_TYPES = ("style_token", "style_dim")
# The sequence-shortening family (seed sequence_shortening_context_mt.txt): each reads the token store's
# previous `context_sentences` lines (prev1..prevC) through its own plugin file.
SHORTENING_TYPES = ("caching_tokens", "caching_sentence", "pool_mean", "pool_max", "pool_linear", "grouping",
                    "selecting", "multi_encoder")
CONTEXT_KIND |= dict.fromkeys(SHORTENING_TYPES, "tokens")
# The language pairs (English first) each `corpus.source` can provide; a new source adds its row
# (the schema's enum lists the sources). The synthetic generator's are its target languages;
# OpenSubtitles' are the paper's, which the default held-out lists cover (corpus.splits.heldout).
CORPUS_PAIRS: dict[str, tuple[str, ...]] = {"synthetic": ("en-de", "en-fr", "en-pl", "en-ru"),
                                             "opensubtitles": ("en-de", "en-fr", "en-pl", "en-ru")}
# Table 6's zero-shot columns: record kind -> the experiment whose rules write those records.
ZEROSHOT_RECORDS = {"formality": "formality", "eamt22": "fewshot"}


class ConfigError(ValueError):
    """A configuration file or value is wrong; the message says where and what to do."""


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
    if "context_sentences" in model and model["type"] not in SHORTENING_TYPES:
        raise ConfigError(f"models.{name}.context_sentences: only the shortening family ({', '.join(SHORTENING_TYPES)}) "
                          "reads several previous sentences")
    if "context_slot" in model and model["type"] in SHORTENING_TYPES:
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
    if "style_init" in model and model["type"] != "style_dim":
        raise ConfigError(f"models.{name}.style_init: a '{model['type']}' model has no new weights to initialise")
    if style and ("init_from" in model) == ("parent_checkpoint" in model):
        raise ConfigError(f"models.{name}: a style model fine-tunes a parent: give init_from or parent_checkpoint "
                          "(one of them)")
    arch = model["arch"]
    for key, owner in (("side_dim", "si_output_layer"), ("mtl_weight", "si_mtl")):
        if (key in arch) != (model["type"] == owner):
            raise ConfigError(f"models.{name}.arch.{key}: " + (f"a '{owner}' model needs it" if key not in arch else
                                                               f"only a '{owner}' model has it"))
    if not arch["context_positions"] and not has_encoder:
        raise ConfigError(f"models.{name}.arch.context_positions: a '{model['type']}' model has no context encoder")
    if not has_encoder and (not arch["qk_norm"] or arch["qk_norm_scale_init"] is not None):
        raise ConfigError(f"models.{name}.arch: qk_norm and qk_norm_scale_init act on a context encoder; "
                          f"a '{model['type']}' model has none")
    if not arch["qk_norm"] and arch["qk_norm_scale_init"] is not None:
        raise ConfigError(f"models.{name}.arch.qk_norm_scale_init: set, but qk_norm is false")


def _check_urls(cfg: dict) -> None:
    """A URL is saved under results/download/{host}/{path}: one that would leave it is refused here,
    before any rule (its download, log or benchmark) names a file outside."""
    from mtcue.data.sources import configured_urls, url_path

    for key, url in configured_urls(cfg).items():
        try:
            url_path(url)
        except ValueError as err:
            raise ConfigError(f"{key}: {err}") from None


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
    for key, names in experiment_models(cfg).items():
        unknown = [n for n in names if n not in cfg["models"]]
        if unknown:
            where = "rows" if key == "ablation" else "models"
            raise ConfigError(f"experiments.{key}.{where}: {unknown} are not models of this config "
                              f"(known: {', '.join(sorted(cfg['models']))})")
    _check_fewshot(cfg)
    _check_urls(cfg)
    short = cfg["experiments"]["shortening"]
    too_many = [c for c in short["context_sizes"] if c > cfg["context"]["doc_slots"]]
    if short["models"] and too_many:
        raise ConfigError(f"experiments.shortening.context_sizes: {too_many} exceed context.doc_slots "
                          f"({cfg['context']['doc_slots']}), the previous lines the token store keeps")
    runs = {name for _, _, name in shortening_cells(cfg)}
    unknown = [n for n in short["only"] if n not in runs]
    if unknown:
        raise ConfigError(f"experiments.shortening.only: {unknown} are not runs of the experiment "
                          f"(runs: {', '.join(sorted(runs))})")
    style = cfg["experiments"]["style"]
    wrong = [m for m in style["models"] if m in cfg["models"] and cfg["models"][m]["type"] not in STYLE_TYPES]
    if wrong:
        raise ConfigError(f"experiments.style.models: {wrong} are not style models ({', '.join(STYLE_TYPES)})")
    if style["models"] and not {1, 5} <= set(style["levels"]):
        raise ConfigError(f"experiments.style.levels: {style['levels']} must hold 1 and 5 (Table 5's rows)")
    unknown = [n for n in style["only"] if n not in style["models"]]
    if unknown:
        raise ConfigError(f"experiments.style.only: {unknown} are not in experiments.style.models")
    voita = cfg["experiments"]["voita2018"]
    for key, names in (("random_test", voita["random_test"]), ("only", list(voita["only"]))):
        unknown = [n for n in names if n not in voita["models"]]
        if unknown:
            raise ConfigError(f"experiments.voita2018.{key}: {unknown} are not in experiments.voita2018.models")
    without = [n for n in voita["random_test"] if context_kind(cfg["models"][n]) is None]
    if without:
        raise ConfigError(f"experiments.voita2018.random_test: {without} read no context, so none can be random "
                          "at test time; name models that read context")
    for experiment in ("voita2018", "shortening", "style"):
        exp = cfg["experiments"][experiment]
        for name, directions in exp["only"].items():
            # a direction outside the experiment's would leave the model out of it without a word
            outside = [d for d in directions if d not in exp["directions"]]
            if outside:
                raise ConfigError(f"experiments.{experiment}.only.{name}: {outside} are not directions of the "
                                  f"experiment (experiments.{experiment}.directions: {exp['directions']})")
    side = cfg["experiments"]["side_information"]
    wrong = [m for m in side["models"] if m in cfg["models"] and CONTEXT_KIND[cfg["models"][m]["type"]] != "labels"]
    if wrong:
        raise ConfigError(f"experiments.side_information.models: {wrong} are not side-information (si_*) models")
    unknown = [n for n in side["no_labels"] if n not in side["models"]]
    if unknown:
        raise ConfigError(f"experiments.side_information.no_labels: {unknown} are not in "
                          "experiments.side_information.models")
    if side["baseline"] and side["baseline"] in cfg["models"] and is_contextual(cfg["models"][side["baseline"]]):
        raise ConfigError(f"experiments.side_information.baseline: '{side['baseline']}' reads context; the row "
                          "'without side information' is a model without context (base)")
    for key, directions in (("ablation", cfg["experiments"]["ablation"]["directions"]),
                            ("formality", formality_directions(cfg)), ("voita2018", voita["directions"]),
                            ("side_information", side["directions"]), ("shortening", short["directions"]),
                            ("style", style["directions"])):
        unknown = [d for d in directions if d not in cfg["directions"]]
        if unknown:
            raise ConfigError(f"experiments.{key}.directions: {unknown} are not in `directions`")
    official = cfg["evaluation_sets"]["iwslt22"]["pairs"]
    missing = [d for d in formality_directions(cfg) if pair_of(d) not in official]
    if source == "opensubtitles" and missing:
        raise ConfigError(f"experiments.formality.directions: {missing} have no official IWSLT22 test set "
                          f"(evaluation_sets.iwslt22.pairs: {official}); add their pairs there or leave them out")
    selections = {"context.columns": cfg["context"]["columns"],
                  "experiments.fewshot.context_columns": cfg["experiments"]["fewshot"]["context_columns"]}
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
    _check_memory_growth(cfg)


def _check_memory_growth(cfg: dict) -> None:
    models = all_models(cfg)  # context-size runs of an experiment too
    for label, names in cfg["experiments"]["memory_growth"]["models"].items():
        for name in [names] if isinstance(names, str) else names:
            if name not in models:
                raise ConfigError(f"experiments.memory_growth.models.{label}: '{name}' is not a model of this config")
            if context_kind(models[name]) not in ("tokens", "vectors"):
                raise ConfigError(f"experiments.memory_growth.models.{label}: '{name}' reads no document context "
                                  "(a token or vector store)")


def _check_fewshot(cfg: dict) -> None:
    fewshot = cfg["experiments"]["fewshot"]
    unknown = sorted(set(fewshot["directions"]) - set(cfg["directions"]))
    if unknown:
        raise ConfigError(f"experiments.fewshot.directions: {unknown} are not in `directions`")
    for name in fewshot["models"]:
        # the attribute sentences are store columns (cues): a token or label model would never see them
        if context_kind(cfg["models"][name]) not in ("vectors", "tags"):
            raise ConfigError(f"experiments.fewshot.models: '{name}' reads no context columns; the few-shot "
                              "settings fine-tune models reading the context store's columns, where the "
                              "attribute sentences are (vectors or tags: the paper's MTCUE and TAGGING)")
    baseline = fewshot["baseline"]
    if baseline is not None and (baseline not in cfg["models"] or is_contextual(cfg["models"][baseline])):
        raise ConfigError(f"experiments.fewshot.baseline: '{baseline}' is not a non-contextual model of this config")
    if cfg["corpus"]["source"] == "opensubtitles" and fewshot["directions"]:
        if fewshot["directions"] != ["en-pl"]:
            raise ConfigError(f"experiments.fewshot.directions: {fewshot['directions']}; on OpenSubtitles the EAMT22 "
                              "settings run in en-pl only (the annotation reads Polish, the test set is EN->PL)")
        if fewshot["detector"] != "polish":
            raise ConfigError(f"experiments.fewshot.detector: '{fewshot['detector']}' reads the synthetic corpus's "
                              "gold labels; OpenSubtitles output is judged by 'polish'")
    clash = sorted(set(fewshot_models(cfg)) & set(cfg["models"]))
    if clash:
        raise ConfigError(f"models: {clash} are the names of few-shot variants (experiments.fewshot); rename them")
    clash = sorted(set(shortening_models(cfg)) & set(cfg["models"]))
    if clash:
        raise ConfigError(f"models: {clash} are the names of context-size runs (experiments.shortening); rename them")
    clash = sorted(set(ablation_seed_models(cfg)) & set(cfg["models"]))
    if clash:
        raise ConfigError(f"models: {clash} are the names of seeded runs (experiments.ablation.seeds); rename them")


def validate(raw: dict, source: str = "config") -> dict:
    """Return a validated copy of `raw` with every default filled in."""
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
    _check_generation(cfg["generation"], "generation")
    _check_semantics(cfg)
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


class _UniqueKeyLoader(yaml.SafeLoader):
    """yaml.safe_load's loader, but a key written twice in one mapping is an error: safe_load keeps the
    last value silently, so an overlooked earlier line would change the study unnoticed."""

    def construct_mapping(self, node, deep=False):
        seen: list[tuple[Any, int]] = []  # (key, line); a list, as a key may be unhashable (refused below)
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults` may be overridden key by key
                continue
            key, line = self.construct_object(key_node, deep=deep), key_node.start_mark.line + 1
            first = next((n for k, n in seen if k == key), None)
            if first is not None:
                raise ConfigError(f"{self.name}:{line}: key {key!r} is written twice in one mapping (first on "
                                  f"line {first}); keep one")
            seen.append((key, line))
        return super().construct_mapping(node, deep)


def read_yaml(path: str | Path) -> Any:
    """A YAML file's content, refusing a key written twice (the message names file, line and key)."""
    loader = _UniqueKeyLoader(read_text(path))
    loader.name = str(path)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def load(path: str | Path) -> dict:
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
    return validate(raw, source=str(path))


# ---- derived views -------------------------------------------------------------------

def pair_of(direction: str) -> str:
    """The corpus pair of a direction: English first (`de-en` -> `en-de`)."""
    src, tgt = direction.split("-")
    return f"{ENGLISH}-{tgt}" if src == ENGLISH else f"{ENGLISH}-{src}"


def langs_of(direction: str) -> tuple[str, str]:
    """`en-de` -> ("en", "de")."""
    src, tgt = direction.split("-")
    return src, tgt


def pairs(cfg: dict) -> list[str]:
    return sorted({pair_of(d) for d in cfg["directions"]})


def encoder_for(cfg: dict, direction: str, model: str | None = None) -> str:
    """The sentence encoder of `model` in `direction`: the model's own for that direction, its own
    for every direction, the study's for that direction, the study's: the first one set."""
    entry = model_entry(cfg, model) if model else {}
    return (entry.get("context_encoder_per_direction", {}).get(direction) or entry.get("context_encoder")
            or cfg["context"]["encoder_per_direction"].get(direction, cfg["context"]["encoder"]))


def store_name(context: dict) -> str:
    """Folder name of a vector store under results/embed/{direction}/, from a spec's `context`:
    one store per encoder and pooling, shared by every model that reads the same vectors."""
    return f"{context['encoder'].strip('/').replace('/', '--')}.{context['pooling']}"


def column_groups(cfg: dict) -> dict[str, list[str]]:
    """The context store's columns by group, in store order (docs/formats.md, section 2):
    document slots (doc0 = the source sentence, doc1.. = previous lines), metadata, cues."""
    ctx = cfg["context"]
    return {"doc": [f"doc{i}" for i in range(ctx["doc_slots"] + 1)], "metadata": list(ctx["metadata"]),
            "cues": [f"cue{i}" for i in range(1, ctx["max_cues"] + 1)]}


def store_columns(cfg: dict) -> list[str]:
    """Every column of a context store: a store holds them all; each model selects its own."""
    return [c for group in column_groups(cfg).values() for c in group]


def selected_columns(cfg: dict, selection: list[str]) -> list[str]:
    """Store columns named by `selection` (groups or column names), in store order."""
    groups = column_groups(cfg)
    names = {c for item in selection for c in groups.get(item, [item])}
    return [c for c in store_columns(cfg) if c in names]


def model_columns(cfg: dict, model: str) -> list[str]:
    """The context columns `model` reads: its own `context_columns`, else the study's `context.columns`."""
    return selected_columns(cfg, model_entry(cfg, model).get("context_columns", cfg["context"]["columns"]))


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


def formality_directions(cfg: dict) -> list[str]:
    """The directions of the IWSLT22 zero-shot test (null: the paper's en-de and en-ru, where run)."""
    chosen = cfg["experiments"]["formality"]["directions"]
    return [d for d in ("en-de", "en-ru") if d in cfg["directions"]] if chosen is None else chosen


def paper_formality_prompts() -> dict[str, list[str]]:
    """The paper's zero-shot prompts (appendix D), verbatim: the schema's default for
    experiments.formality.prompts."""
    formality = schema()["properties"]["experiments"]["properties"]["formality"]
    return copy.deepcopy(formality["properties"]["prompts"]["default"])


def formality_prompts(cfg: dict) -> list[dict]:
    """The zero-shot prompts, each {"id" (f0.., i0..: file names), "attribute", "text"}."""
    return [{"id": f"{attribute[0]}{i}", "attribute": attribute, "text": text}
            for attribute in ("formal", "informal")
            for i, text in enumerate(cfg["experiments"]["formality"]["prompts"][attribute])]


def fewshot_name(parent: str, setting: str) -> str:
    """The model name of `parent` fine-tuned in a few-shot setting (wildcard, file names, MLflow tag)."""
    return f"{parent}_fewshot_{setting}"


def fewshot_setting(cfg: dict, parent: str, setting: str) -> str:
    """The model that stands for `parent` in `setting`: the parent itself in the zero-shot setting (0)."""
    return parent if cfg["experiments"]["fewshot"]["settings"][setting] == 0 else fewshot_name(parent, setting)


def eamt22_columns(cfg: dict, model: str) -> list[str]:
    """The context `model` is given in the EAMT22 evaluation: the attribute sentences, plus the columns of
    experiments.fewshot.context_columns that it already reads (a model is never shown a column kind it has
    no place for, e.g. document slots without positions)."""
    cues = column_groups(cfg)["cues"]
    own = set(model_columns(cfg, model))
    return [c for c in selected_columns(cfg, cfg["experiments"]["fewshot"]["context_columns"])
            if c in cues or c in own]


def seed_name(model: str, seed: int) -> str:
    """The name of `model`'s run with seed number `seed` (wildcard, file names, MLflow tag): seed 1 is the
    model itself, so a study with one seed trains and reads exactly what it did before seeds existed."""
    return model if seed == 1 else f"{model}_seed{seed}"


def seed_runs(cfg: dict, experiment: str, model: str) -> list[str]:
    """The runs of `model` that `experiment` (ablation, fewshot) averages: a fine-tuning (a model with
    `init_from`) once per seed of experiments.{experiment}.seeds, a model trained from scratch (BASE)
    once, as the parents of the fine-tunings are shared."""
    entry = model_entry(cfg, model)
    seeds = cfg["experiments"][experiment]["seeds"] if entry.get("init_from") else 1
    return [seed_name(model, s) for s in range(1, seeds + 1)]


def _with_seeds(cfg: dict, experiment: str, models: dict[str, dict]) -> dict[str, dict]:
    """`models` and, for each fine-tuning, its runs with seeds 2..n: the same entry with the training seed
    `seed` + n - 1 (fairseq's --seed; `seed_of`: the model it repeats)."""
    seeds = cfg["experiments"][experiment]["seeds"]
    out = dict(models)
    for model, entry in models.items():
        if entry.get("init_from"):
            out |= {seed_name(model, s): {**entry, "seed": cfg["seed"] + s - 1, "seed_of": model}
                    for s in range(2, seeds + 1)}
    return out


def ablation_seed_models(cfg: dict) -> dict[str, dict]:
    """The repeated fine-tunings of Table 6's rows (experiments.ablation.seeds), derived here only."""
    rows = {m: cfg["models"][m] for m in experiment_models(cfg)["ablation"]}
    return {name: entry for name, entry in _with_seeds(cfg, "ablation", rows).items() if name not in rows}


def fewshot_models(cfg: dict) -> dict[str, dict]:
    """The few-shot variants, derived here only: {name: model entry}. Each fine-tunes its parent for the
    experiment's budget on the EAMT22 context; `fewshot` says which setting it is; each is repeated
    with experiments.fewshot.seeds seeds (each run its own sample of annotated lines and training seed)."""
    fewshot = cfg["experiments"]["fewshot"]
    out = {}
    for parent in fewshot["models"]:
        entry = cfg["models"][parent]
        arch = dict(entry["arch"])
        if CONTEXT_KIND[entry["type"]] == "vectors":
            # Keep the parent's document positions although fewer document columns are read.
            arch["context_doc_positions"] = sum(c.startswith("doc") for c in model_columns(cfg, parent))
        for setting, samples in fewshot["settings"].items():
            if samples == 0:
                continue
            out[fewshot_name(parent, setting)] = {
                **{k: v for k, v in entry.items() if k in ("context_encoder", "context_encoder_per_direction",
                                                           "context_pooling", "context_kind", "random_context")},
                "type": entry["type"], "init_from": parent, "arch": arch,
                "training": {**entry["training"], **fewshot["training"]},
                "context_columns": eamt22_columns(cfg, parent),
                "fewshot": {"parent": parent, "setting": setting, "samples": samples},
            }
    return _with_seeds(cfg, "fewshot", out)


def fewshot_points(cfg: dict) -> list[dict]:
    """The points of Figure 4: per few-shot direction, each parent in each setting (`record`: the model
    whose EAMT22 record it is) and the non-contextual baseline (setting "baseline")."""
    fewshot = cfg["experiments"]["fewshot"]
    points = []
    for direction in fewshot["directions"]:
        for parent in fewshot["models"]:
            points += [{"direction": direction, "model": parent, "setting": setting, "per_combination": samples,
                        "record": fewshot_setting(cfg, parent, setting)}
                       for setting, samples in fewshot["settings"].items()]
        if fewshot["baseline"]:
            points.append({"direction": direction, "model": fewshot["baseline"], "setting": "baseline",
                           "per_combination": 0, "record": fewshot["baseline"]})
    # Only the few-shot fine-tunings repeat: the zero-shot parent and the baseline are one run each.
    return [{**p, "records": seed_runs(cfg, "fewshot", p["record"]) if p["record"] in fewshot_models(cfg)
             else [p["record"]]} for p in points]


def all_models(cfg: dict) -> dict[str, dict]:
    """Every model the study can train: the configured ones, the few-shot variants and the repeated
    (seeded) runs of the ablation rows."""
    return {**cfg["models"], **fewshot_models(cfg), **ablation_seed_models(cfg), **shortening_models(cfg)}


def model_entry(cfg: dict, model: str) -> dict:
    """The entry of a configured model, a few-shot variant or a seeded run."""
    if model in cfg["models"]:
        return cfg["models"][model]
    models = all_models(cfg)
    if model not in models:
        raise ConfigError(f"models: no model named '{model}' (known: {', '.join(sorted(models))})")
    return models[model]


def trained_models(cfg: dict) -> dict[tuple[str, str], list[str]]:
    """Every (direction, model) the study trains, with the experiments whose results it gives (quality,
    ablation, fewshot, formality, voita2018); a model trained only as another's starting point has none."""
    models = experiment_models(cfg)
    cells = [*((d, m, "quality") for m in models["quality"] for d in cfg["directions"]),
             *((d, m, "ablation") for m in ablation_runs(cfg) for d in cfg["experiments"]["ablation"]["directions"]),
             *((d, m, "formality") for m in models["formality"] for d in formality_directions(cfg)),
             *((p["direction"], m, "fewshot") for p in fewshot_points(cfg) for m in p["records"]),
             *((d, m, "voita2018") for d, m in voita2018_models(cfg)),
             *((d, m, "side_information") for d, m in side_information_models(cfg)),
             *((d, m, "shortening") for d, m in shortening_runs(cfg)),
             *((d, m, "style") for d, m in style_models(cfg))]
    out: dict[tuple[str, str], set[str]] = {}
    for direction, model, experiment in cells:
        out.setdefault((direction, model), set()).add(experiment)
        parent = model_entry(cfg, model).get("init_from")
        while parent:
            out.setdefault((direction, parent), set())
            parent = model_entry(cfg, parent).get("init_from")
    return {key: sorted(experiments) for key, experiments in sorted(out.items())}


def ablation_seeds(cfg: dict) -> dict[str, list[str]]:
    """{row model: its runs} of Table 6 (seed_runs)."""
    return {m: seed_runs(cfg, "ablation", m) for m in experiment_models(cfg)["ablation"]}


def ablation_runs(cfg: dict) -> list[str]:
    """Every run Table 6 reads: each row model's seeds."""
    return [run for runs in ablation_seeds(cfg).values() for run in runs]


def ablation_zeroshot(cfg: dict) -> dict[str, dict]:
    """Table 6's zero-shot columns: {record kind: {"direction", "unavailable"}}, where
    `unavailable` is None when the ablation models' records of that kind are written in this
    study (results/records/{kind}/{direction}/{model}.json), else the reason they cannot be."""
    ablation, out = cfg["experiments"]["ablation"], {}
    for kind, experiment in ZEROSHOT_RECORDS.items():
        direction = ablation["zeroshot"][kind]
        directions = formality_directions(cfg) if experiment == "formality" else cfg["experiments"][experiment]["directions"]
        if not directions:
            reason = f"this config runs no {experiment} experiment (experiments.{experiment}), which writes them"
        elif direction not in directions:
            reason = f"experiments.{experiment}.directions does not include {direction}"
        elif direction not in ablation["directions"]:
            reason = (f"the ablation models are not trained in {direction} "
                      f"(experiments.ablation.directions: {', '.join(ablation['directions'])})")
        else:
            reason = None
        out[kind] = {"direction": direction, "unavailable": reason}
    return out


def context_kind(model: dict) -> str | None:
    """The kind of context store a config model entry reads: its `context_kind`, else its type's."""
    return model.get("context_kind") or CONTEXT_KIND[model["type"]]


def store_kind(model_type: str) -> str | None:
    """The kind of store a model type reads, as the store's manifest names it: the side-information
    labels are a tag store (of their own columns)."""
    kind = CONTEXT_KIND[model_type]
    return "tags" if kind == "labels" else kind


def is_contextual(spec: dict) -> bool:
    return CONTEXT_KIND[spec["type"]] is not None


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
    return spec


def context_sentences(entry: dict) -> int:
    """How many previous sentences a shortening-family model reads (its `context_sentences`, default 1)."""
    return entry.get("context_sentences", 1)


def context_slots(entry: dict) -> str:
    """The token-store slot(s) a token model reads, as --context-slot takes them: its `context_slot`
    (default prev1), or a shortening-family model's prev1,...,prevC, nearest first."""
    if entry["type"] in SHORTENING_TYPES:
        return ",".join(f"prev{i}" for i in range(1, context_sentences(entry) + 1))
    return entry.get("context_slot", "prev1")


def token_slots(cfg: dict) -> list[str]:
    """The token store's slots (docs/formats.md section 2): as many previous lines as the vector
    store's document slots, most recent first, then the next line."""
    return [f"prev{i}" for i in range(1, cfg["context"]["doc_slots"] + 1)] + ["next1"]


def voita2018_rows(cfg: dict) -> list[dict]:
    """Voita et al. (2018) Table 1's rows in the experiment's order: {"label" (the seed's row name where
    the model is one of its systems), "model", "variant": "" or "random" (random context at test time)}."""
    exp = cfg["experiments"]["voita2018"]
    sentence = {"prev1": "previous sentence", "next1": "next sentence"}
    rows = []
    for model in exp["models"]:
        entry = cfg["models"][model]
        slot = sentence[entry.get("context_slot", "prev1")]
        label = {"base": "baseline (context-agnostic Transformer)", "concat": f"concatenation ({slot})",
                 "voita_context": f"context encoder ({slot})"}.get(entry["type"], model)
        rows.append({"label": label, "model": model, "variant": ""})
        if model in exp["random_test"]:
            rows.append({"label": "context encoder (random context)" if entry["type"] == "voita_context" else
                         f"{label}, random context", "model": model, "variant": "random"})
    labels = [r["label"] for r in rows]
    return [{**r, "label": f"{r['label']} [{r['model']}]"} if labels.count(r["label"]) > 1 else r for r in rows]


def voita2018_models(cfg: dict) -> list[tuple[str, str]]:
    """(direction, model) pairs the voita2018 experiment trains and scores."""
    exp = cfg["experiments"]["voita2018"]
    return [(d, m) for d in exp["directions"] for m in exp["models"] if d in exp["only"].get(m, [d])]



def shortening_name(model: str, context_size: int) -> str:
    """The run of a shortening-family model with `context_size` previous sentences, e.g. grouping_c2."""
    return f"{model}_c{context_size}"


def shortening_cells(cfg: dict) -> list[tuple[str, int | None, str]]:
    """The seed's Tables 2-3 in order: (config model, context size, run name); context size 0 for the
    sentence-level model, 1 for a concat model, None for another model without that notion."""
    exp = cfg["experiments"]["shortening"]
    cells = []
    for model in exp["models"]:
        kind = cfg["models"][model]["type"]
        if kind in SHORTENING_TYPES:
            cells += [(model, c, shortening_name(model, c)) for c in exp["context_sizes"]]
        else:
            cells.append((model, {"base": 0, "concat": 1}.get(kind), model))
    return cells


def shortening_models(cfg: dict) -> dict[str, dict]:
    """The context-size runs, derived here only: {name: the model's entry with context_sentences}."""
    return {name: {**cfg["models"][model], "context_sentences": size}
            for model, size, name in shortening_cells(cfg) if name != model}


def shortening_runs(cfg: dict) -> list[tuple[str, str]]:
    """(direction, run) pairs the shortening experiment trains and scores."""
    exp = cfg["experiments"]["shortening"]
    return [(d, name) for d in exp["directions"] for _, _, name in shortening_cells(cfg)
            if d in exp["only"].get(name, [d])]


def shortening_table_cells(cfg: dict) -> list[dict]:
    """The table's rows in order: {"model", "type", "context_size", "run"} (shortening_cells)."""
    return [{"model": model, "type": cfg["models"][model]["type"], "context_size": size, "run": run}
            for model, size, run in shortening_cells(cfg)]


def side_information_rows(cfg: dict) -> list[str]:
    """The models of Hoang et al.'s Table 3 in row order: the baseline ("without side information"), then
    the variants; TAGGING and MTCUE beside them where configured."""
    exp = cfg["experiments"]["side_information"]
    return list(dict.fromkeys(([exp["baseline"]] if exp["baseline"] else []) + exp["models"] + exp["beside"]))


def side_information_models(cfg: dict) -> list[tuple[str, str]]:
    """(direction, model) pairs the side-information experiment trains and scores."""
    exp = cfg["experiments"]["side_information"]
    return [(d, m) for d in exp["directions"] for m in side_information_rows(cfg)]


def side_information_table_rows(cfg: dict) -> list[dict]:
    """Hoang et al.'s Table 3 rows in order: {"label" (the seed's name where the model is one of its
    systems), "model", "type" (the model's; "control" for a BASE trained on like the variants, which
    separates the labels' effect from that of the extra epochs), "variant": "", "no_context" (decoded
    without labels) or "predicted_labels" (the target-prefix model predicting its labels)}."""
    exp = cfg["experiments"]["side_information"]
    names = {"base": "base (without side information)", "si_src_prefix": "si-src-prefix",
             "si_src_suffix": "si-src-suffix", "si_trg_prefix": "si-trg-prefix-h", "si_output_layer": "output-layer",
             "si_mtl": "mtl", "tagging": "TAGGING", "mtcue": "MTCUE"}
    rows = []
    for model in side_information_rows(cfg):
        kind = cfg["models"][model]["type"]
        if kind == "base" and model != exp["baseline"]:   # BASE trained on like the variants: not a seed's system
            rows.append({"label": "base, fine-tuned as the variants (no labels)", "model": model, "type": "control",
                         "variant": ""})
            continue
        if kind == "si_trg_prefix":  # one model, decoded with the labels predicted (-p) and given (-h)
            rows.append({"label": "si-trg-prefix-p", "model": model, "type": kind, "variant": "predicted_labels"})
        rows.append({"label": names.get(kind, model), "model": model, "type": kind, "variant": ""})
        if model in exp["no_labels"]:
            rows.append({"label": f"{names.get(kind, model)}, w/o side info at test", "model": model, "type": kind,
                         "variant": "no_context"})
    labels = [r["label"] for r in rows]
    return [{**r, "label": f"{r['label']} [{r['model']}]"} if labels.count(r["label"]) > 1 else r for r in rows]


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
def parent_checkpoint(entry: dict, direction: str) -> str | None:
    """A style model's parent checkpoint outside the study, for `direction` (None: none named)."""
    path = entry.get("parent_checkpoint")
    return path.replace("{direction}", direction) if path else None


def style_models(cfg: dict) -> list[tuple[str, str]]:
    """(direction, model) pairs the style experiment trains and translates at every level."""
    exp = cfg["experiments"]["style"]
    return [(d, m) for d in exp["directions"] for m in exp["models"] if d in exp["only"].get(m, [d])]
