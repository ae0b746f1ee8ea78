"""The study's vocabulary, below every stage: languages and pairs, the model types and the kind of context
each reads, the context store's columns, run names, and the error a wrong configuration raises.

Everything here is a pure function of a validated config (`mtcue.config`) or of a model entry; it imports
nothing of the project, so any module may read it.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace

MAX_GENRES = 3
# Hoang et al.'s side-information labels (context/side_labels.py): the columns of their tag store.
GENRE_COLUMNS = [f"si_genre{i}" for i in range(1, MAX_GENRES + 1)]
SIDE_COLUMNS = [*GENRE_COLUMNS, "si_pg_rating", "si_country", "si_decade"]
ENGLISH = "en"
# The synthetic corpus's dialogue lengths, lines per document (drawn by data.synth.documents): a study's size
# in sentences, which the plan sizes its cluster jobs by (plan/resources.py), follows from it.
LINES_PER_DOCUMENT = (5, 15)


@dataclass(frozen=True)
class ModelType:
    """What the study knows of a model type, its one row: `family`, its plugin folder (models/plugin/{family}/;
    None: fairseq's own transformer); `context`, the kind of context store it reads (docs/formats.md section 2;
    None: none; "labels": Hoang et al.'s side-information labels, a tag store of their own); `arch`, its fairseq
    architecture (None: the type's name); `shortener`, whether it has K (`arch.shortening_groups`: a pooling
    window, a number of groups or of selected tokens; models/plugin/shortening/shorteners.py);
    `context_sentences`, whether it reads the previous `context_sentences` lines (prev1..prevC);
    `context_attention`, whether each decoder layer attends to the context encoder's output (MTCue's own sublayer,
    which `mtcue gpu-hours` prices); `criterion`, its fairseq training criterion, with `mtl_weight` the weight of
    its auxiliary loss where the type fixes it (`arch_keys` names `mtl_weight` where the config gives it);
    `arch_keys`, the `arch` keys only this type has (the config requires them of it and refuses them elsewhere);
    `style_mode`, a style model's `--style-mode` (task style_translation)."""
    family: str | None
    context: str | None
    arch: str | None = None
    shortener: bool = False
    context_sentences: bool = False
    context_attention: bool = False
    criterion: str = "label_smoothed_cross_entropy"
    mtl_weight: float | None = None
    arch_keys: tuple[str, ...] = ()
    style_mode: str | None = None


_SIDE_INFORMATION = ModelType("side_information", "labels")
# Hoang et al.'s multi-task models: a label classifier's loss (si_mtl, weighted by the config's lambda) or the
# predicted label prefix's (si_trg_prefix: target tokens of the one loss, weight 1) beside the translation's.
_MTL = "label_smoothed_cross_entropy_mtl"
_SHORTENING = ModelType("shortening", "tokens", context_sentences=True)
_SHORTENER = ModelType("shortening", "tokens", shortener=True, context_sentences=True)
# Every model type, its family's rows together. A model with a context encoder ("vectors" types) may read tags
# instead (`context_kind`). Style-control models (Jeong et al.) read no context store but a style level per
# line (the style store). The sequence-shortening family (Mąka et al., 2024) reads the token store's previous
# lines, each type through its own plugin file; the concatenation baseline reads several for C > 1 (the
# shortening paper's single-encoder rows at C = 1-3).
MODEL_TYPES: dict[str, ModelType] = {
    "base": ModelType(None, None, arch="transformer"),
    "tagging": ModelType("mtcue", "tags"), "novotney_cue": ModelType("mtcue", "vectors"),
    "mtcue": ModelType("mtcue", "vectors", context_attention=True),
    "voita_context": ModelType("voita", "tokens"), "concat": ModelType("voita", "tokens", context_sentences=True),
    "si_src_prefix": _SIDE_INFORMATION, "si_src_suffix": _SIDE_INFORMATION,
    "si_output_layer": replace(_SIDE_INFORMATION, arch_keys=("side_dim",)),
    "si_mtl": replace(_SIDE_INFORMATION, criterion=_MTL, arch_keys=("mtl_weight",)),
    "si_trg_prefix": replace(_SIDE_INFORMATION, criterion=_MTL, mtl_weight=1),
    "style_token": ModelType("style", None, style_mode="token"),
    "style_dim": ModelType("style", None, style_mode="value"),
    "caching_tokens": _SHORTENING, "caching_sentence": _SHORTENING, "pool_mean": _SHORTENER, "pool_max": _SHORTENER,
    "pool_linear": _SHORTENER, "grouping": _SHORTENER, "selecting": _SHORTENER, "multi_encoder": _SHORTENING,
}
# Read off MODEL_TYPES: model type -> the kind of context store it reads, and the types of a family or trait.
CONTEXT_KIND = {t: m.context for t, m in MODEL_TYPES.items()}
STYLE_TYPES = tuple(t for t, m in MODEL_TYPES.items() if m.family == "style")
SHORTENING_TYPES = tuple(t for t, m in MODEL_TYPES.items() if m.family == "shortening")
CONTEXT_SENTENCES_TYPES = (*SHORTENING_TYPES, *(t for t, m in MODEL_TYPES.items()
                                                if m.context_sentences and t not in SHORTENING_TYPES))
SHORTENER_TYPES = tuple(t for t, m in MODEL_TYPES.items() if m.shortener)
ARCH_KEY_TYPES = {key: tuple(t for t, m in MODEL_TYPES.items() if key in m.arch_keys)
                  for m in MODEL_TYPES.values() for key in m.arch_keys}  # an own arch key -> the types that have it

# The language pairs (English first) each `corpus.source` can provide; a new source adds its row
# (the schema's enum lists the sources). The synthetic generator's are its target languages;
# OpenSubtitles' are the paper's, which the default held-out lists cover (corpus.splits.heldout).
CORPUS_PAIRS: dict[str, tuple[str, ...]] = {"synthetic": ("en-de", "en-fr", "en-pl", "en-ru"),
                                             "opensubtitles": ("en-de", "en-fr", "en-pl", "en-ru")}



class ConfigError(ValueError):
    """A configuration file or value is wrong; the message says where and what to do."""


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


def store_name(context: dict) -> str:
    """Folder name of a vector store under results/embed/{direction}/, from a spec's `context`:
    one store per encoder and pooling, shared by every model that reads the same vectors. It is also a rule's
    name and a path in the DAG: an encoder path with other characters than letters, digits, '.', '_', '-'
    (a space, a brace Snakemake would read as a wildcard, `..`) keeps only those, and a hash of the encoder
    that keeps two such encoders apart."""
    name = context["encoder"].strip("/").replace("/", "--")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        digest = hashlib.sha256(context["encoder"].encode()).hexdigest()[:12]
        name = f"{re.sub(r'[^A-Za-z0-9._-]+', '_', name).strip('._-') or 'encoder'}-{digest}"
    return f"{name}.{context['pooling']}"


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


def seed_name(model: str, seed: int) -> str:
    """The name of `model`'s run with seed number `seed` (wildcard, file names, MLflow tag): seed 1 is the
    model itself, so a study with one seed trains and reads exactly what it did before seeds existed."""
    return model if seed == 1 else f"{model}_seed{seed}"


def fewshot_name(parent: str, setting: str) -> str:
    """The model name of `parent` fine-tuned in a few-shot setting (wildcard, file names, MLflow tag)."""
    return f"{parent}_fewshot_{setting}"


def shortening_name(model: str, context_size: int) -> str:
    """The run of a shortening-family model with `context_size` previous sentences, e.g. grouping_c2."""
    return f"{model}_c{context_size}"


def context_sentences(entry: dict) -> int:
    """How many previous sentences a shortening-family or concatenation model reads (its `context_sentences`,
    default 1)."""
    return entry.get("context_sentences", 1)


def shortening_groups(entry: dict, model: str, direction: str) -> int:
    """A shortener model's K in `direction`: its `arch.shortening_groups`, one value or one per pair."""
    groups = entry["arch"]["shortening_groups"]
    if isinstance(groups, int):
        return groups
    pair = pair_of(direction)
    if pair not in groups:
        raise ConfigError(f"models.{model}.arch.shortening_groups: no K for {pair} (it names {', '.join(groups)}); "
                          f"give one per pair the model is trained in, or one number for all")
    return groups[pair]


def context_slots(entry: dict) -> str:
    """The token-store slot(s) a token model reads, as --context-slot takes them: its `context_slot`
    (default prev1), or a shortening-family model's (a concatenation model's with `context_sentences`)
    prev1,...,prevC, nearest first."""
    if entry["type"] in SHORTENING_TYPES or "context_sentences" in entry:
        return ",".join(f"prev{i}" for i in range(1, context_sentences(entry) + 1))
    return entry.get("context_slot", "prev1")


def token_slots(cfg: dict) -> list[str]:
    """The token store's slots (docs/formats.md section 2): as many previous lines as the vector
    store's document slots, most recent first, then the next line."""
    return [f"prev{i}" for i in range(1, cfg["context"]["doc_slots"] + 1)] + ["next1"]


def parent_checkpoint(entry: dict, direction: str) -> str | None:
    """A style model's parent checkpoint outside the study, for `direction` (None: none named)."""
    path = entry.get("parent_checkpoint")
    return path.replace("{direction}", direction) if path else None


def display_name(model: str) -> str:
    """Config key to the paper's spelling: "base_pm" -> "BASE-PM", "mtcue" -> "MTCUE"."""
    return model.upper().replace("_", "-")


def columns_of(cfg: dict, entry: dict) -> list[str]:
    """The context columns a model entry reads: its own `context_columns`, else the study's `context.columns`."""
    return selected_columns(cfg, entry.get("context_columns", cfg["context"]["columns"]))
