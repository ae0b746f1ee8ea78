"""TAGGING's tag store (docs/formats.md, section 2): one discrete id per context value.

The vocabulary is built once, from the training split only, and saved with the store, so the
same string maps to the same tag in every split and in any later input; a value not in the
vocabulary maps to the explicit unknown tag 0. (The authors' code drew fresh random vectors per
run, so test contexts embedded later did not match training.) A value needs to occur in at least
`min_docs` training documents to get a tag of its own: a tag seen in one document only cannot be
learned to generalise, and this keeps the table small (most previous lines are unique).
"""
from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from mtcue.context.embed import context_strings
from mtcue.corpus import read_corpus
from mtcue.outputs import atomic_directory
from mtcue.study import langs_of

log = logging.getLogger(__name__)
UNKNOWN = "<unk>"
UNKNOWN_TAG = 0  # the id of UNKNOWN
VOCAB_FILE = "tags.json"


def build_vocab(train: Iterable[dict], src: str, columns: Sequence[str], min_docs: int) -> list[str]:
    """[UNKNOWN, values...]: values in at least `min_docs` training documents, by descending
    document count, then alphabetically (deterministic whatever the sample order)."""
    docs: dict[str, set[str]] = defaultdict(set)
    for sample in train:
        for value in context_strings(sample, src, columns):
            if value is not None:
                docs[value].add(sample["doc_id"])
    kept = sorted((v for v, d in docs.items() if len(d) >= min_docs), key=lambda v: (-len(docs[v]), v))
    return [UNKNOWN, *kept]


def tag_index(samples: Iterable[dict], src: str, columns: Sequence[str], vocab: Sequence[str]) -> np.ndarray:
    """int32 [n_samples, n_columns]: tag ids, 0 = unknown value, -1 = no context in that column."""
    ids = {value: i for i, value in enumerate(vocab) if i}
    rows = [[-1 if v is None else ids.get(v, 0) for v in context_strings(s, src, columns)] for s in samples]
    return np.asarray(rows, dtype=np.int32).reshape(len(rows), len(columns))


def tags_in(index: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    """The tag ids that occur in `columns` (positions) of a store index: what a model trained on those
    columns learns. A model reads the store's other tags as UNKNOWN_TAG (tagging_model)."""
    return np.unique(np.asarray(index)[:, list(columns)]).clip(min=UNKNOWN_TAG)


def build_tag_store(corpora: dict[str, str | Path], direction: str, columns: Sequence[str], min_docs: int,
                    out_dir: str | Path) -> dict:
    """Build the vocabulary from corpora["train"] and index every split into a fresh store at
    `out_dir` (written to a temporary folder, moved into place when complete); returns the manifest."""
    if "train" not in corpora:
        raise ValueError(f"{direction}: the tag vocabulary is built from the training split; got {sorted(corpora)}")
    src, _ = langs_of(direction)
    vocab = build_vocab(read_corpus(corpora["train"]), src, columns, min_docs)
    indices = {split: tag_index(read_corpus(path), src, columns, vocab) for split, path in corpora.items()}
    with atomic_directory(out_dir, "tags") as tmp:
        (tmp / VOCAB_FILE).write_text(json.dumps(vocab, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
        for split, index in indices.items():
            np.save(tmp / f"{split}.index.npy", index)
        manifest = {
            "kind": "tags", "n_tags": len(vocab), "min_docs": min_docs, "vocab": VOCAB_FILE,
            "columns": list(columns), "doc_columns": sum(c.startswith("doc") for c in columns),
            "splits": {split: int(index.shape[0]) for split, index in indices.items()},
            "unknown_share": {split: _unknown_share(index) for split, index in indices.items()},
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    log.info("tag store %s: %d tags (values in >= %d training documents); unknown share of present contexts %s",
             out_dir, len(vocab) - 1, min_docs, manifest["unknown_share"])
    return manifest


def _unknown_share(index: np.ndarray) -> float | None:
    present = index >= 0
    return round(float((index[present] == 0).mean()), 4) if present.any() else None
