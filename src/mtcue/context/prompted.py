"""Prompted context stores for zero-shot prompting (IWSLT22 formality, paper appendix D): the test
split with the sentence itself (doc0) and one prompt ("Formal conversation") as its only context.

A prompted store keeps its parent's columns, so a model reads it exactly as it reads its training
store: doc0 as in the parent, the prompt in one column (`prompt_column`), every other column empty
(-1). A vector store holds only the vectors it needs (the test split's doc0 vectors and the prompt's,
embedded with the parent's encoder); a tag store maps the prompt through the parent's vocabulary,
where a prompt never seen in training is the unknown tag, as the paper's TAGGING reads it.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mtcue.context.store import ContextStore
from mtcue.context.tags import UNKNOWN_TAG, VOCAB_FILE
from mtcue.io import atomic_directory, check_file_name

log = logging.getLogger(__name__)
SPLIT = "test"


def prompt_column(columns: Sequence[str]) -> str:
    """Where a model that reads `columns` is given the prompt: its first metadata or cue column (MTCUE
    gives those no position, so any of them is the same to it), else the previous line (doc1)."""
    other = [c for c in columns if not c.startswith("doc")]
    if other:
        return other[0]
    if "doc1" in columns:
        return "doc1"
    raise ValueError(f"a model reading only {list(columns)} has no column for a prompt")


def prompted_index(index: np.ndarray, columns: Sequence[str], column: str, prompt_entry: int,
                   doc0_entries: np.ndarray | None = None) -> np.ndarray:
    """[n, n_columns]: doc0 as in `index` (or `doc0_entries`, its renumbering), `prompt_entry` in
    `column`, -1 elsewhere."""
    out = np.full(index.shape, -1, dtype=np.int32)
    out[:, columns.index("doc0")] = index[:, columns.index("doc0")] if doc0_entries is None else doc0_entries
    out[:, columns.index(column)] = prompt_entry
    return out


def build_prompted_stores(store_dir: str | Path, prompts: dict[str, str], column: str, out_dir: str | Path,
                          encoder=None) -> dict:
    """`out_dir/{prompt id}/`: one prompted store of the test split per prompt ({id: text}), written
    together (the encoder loads once) and moved into place when complete. `encoder`: texts -> float32
    vectors (default: the parent's, from its manifest)."""
    for prompt_id in prompts:
        check_file_name(prompt_id, "prompt id")
    store = ContextStore(store_dir)
    if column not in store.columns or "doc0" not in store.columns:
        raise ValueError(f"{store.dir}: the prompt column '{column}' and doc0 must be columns of the store "
                         f"({store.columns})")
    index = np.asarray(store.index(SPLIT))
    doc0 = index[:, store.columns.index("doc0")]
    manifest = {**store.manifest, "splits": {SPLIT: int(len(index))}}
    with atomic_directory(out_dir) as tmp:
        if store.kind == "vectors":
            if encoder is None:
                from mtcue.context.embed import load_encoder

                encoder = load_encoder(store.manifest["model"], store.manifest.get("pooling", "mean"))
            prompt_vectors = encoder(list(prompts.values()))
            used, renumbered = np.unique(doc0[doc0 >= 0], return_inverse=True)
            doc0_entries = np.full(len(doc0), -1, dtype=np.int32)
            doc0_entries[doc0 >= 0] = renumbered
            base = np.asarray(store.vectors[used], dtype=np.float32)
        else:
            vocab = json.loads((store.dir / VOCAB_FILE).read_text(encoding="utf-8"))
            ids = {value: i for i, value in enumerate(vocab) if i}
        for n, (prompt_id, text) in enumerate(prompts.items()):
            folder = tmp / prompt_id
            folder.mkdir()
            if store.kind == "vectors":
                np.save(folder / "vectors.npy", np.concatenate([base, prompt_vectors[n:n + 1]]))
                index_out = prompted_index(index, store.columns, column, len(base), doc0_entries)
                meta = {**manifest, "n_vectors": len(base) + 1}
            else:
                os.symlink(os.path.relpath((store.dir / VOCAB_FILE).resolve(), (Path(out_dir) / prompt_id).resolve()),
                           folder / VOCAB_FILE)
                index_out = prompted_index(index, store.columns, column, ids.get(text, UNKNOWN_TAG))
                meta = dict(manifest)
            np.save(folder / f"{SPLIT}.index.npy", index_out)
            meta["prompt"] = {"id": prompt_id, "text": text, "column": column, "from": str(store.dir)}
            (folder / "manifest.json").write_text(json.dumps(meta, indent=2) + "\n")
    log.info("%d prompted stores of %s (%d test lines, prompt in '%s') -> %s", len(prompts), store.dir,
             len(index), column, out_dir)
    return {"prompts": len(prompts), "lines": int(len(index)), "column": column}
