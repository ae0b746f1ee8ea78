"""Prompted context stores for zero-shot prompting (IWSLT22 formality, paper appendix D): the test
split with one prompt ("Formal conversation") as its only context. The authors' script prompts with
`--no-doc-context`: not even the sentence itself (doc0) is given, so the prompt is the whole context.

A prompted store keeps its parent's columns, so a model reads it exactly as it reads its training
store: the prompt in one column (`prompt_column`), every other column empty (-1), doc0 included. A
vector store holds only the prompt's vector (embedded with the parent's encoder); a tag store maps the
prompt through the parent's vocabulary, where a prompt never seen in training is the unknown tag, as the
paper's TAGGING reads it.
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
from mtcue.io import check_file_name
from mtcue.outputs import atomic_directory

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


def prompted_index(n: int, columns: Sequence[str], column: str, prompt_entry: int) -> np.ndarray:
    """[n, n_columns]: `prompt_entry` in `column`, -1 elsewhere (doc0 included: the prompt is the only
    context, as the authors' `--no-doc-context` gives it)."""
    out = np.full((n, len(columns)), -1, dtype=np.int32)
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
    if column not in store.columns:
        raise ValueError(f"{store.dir}: the prompt column '{column}' must be a column of the store ({store.columns})")
    n = len(store.index(SPLIT))
    manifest = {**store.manifest, "splits": {SPLIT: n}}
    with atomic_directory(out_dir, "prompted-stores") as tmp:
        if store.kind == "vectors":
            if encoder is None:
                from mtcue.context.embed import load_encoder

                encoder = load_encoder(store.manifest["model"], store.manifest.get("pooling", "mean"))
            prompt_vectors = np.asarray(encoder(list(prompts.values())), dtype=np.float32)
        else:
            vocab = json.loads((store.dir / VOCAB_FILE).read_text(encoding="utf-8"))
            ids = {value: i for i, value in enumerate(vocab) if i}
        for k, (prompt_id, text) in enumerate(prompts.items()):
            folder = tmp / prompt_id
            folder.mkdir()
            if store.kind == "vectors":
                np.save(folder / "vectors.npy", prompt_vectors[k:k + 1])
                index_out = prompted_index(n, store.columns, column, 0)
                meta = {**manifest, "n_vectors": 1}
            else:
                os.symlink(os.path.relpath((store.dir / VOCAB_FILE).resolve(), (Path(out_dir) / prompt_id).resolve()),
                           folder / VOCAB_FILE)
                index_out = prompted_index(n, store.columns, column, ids.get(text, UNKNOWN_TAG))
                meta = dict(manifest)
            np.save(folder / f"{SPLIT}.index.npy", index_out)
            meta["prompt"] = {"id": prompt_id, "text": text, "column": column, "from": str(store.dir)}
            (folder / "manifest.json").write_text(json.dumps(meta, indent=2) + "\n")
    log.info("%d prompted stores of %s (%d test lines, prompt in '%s') -> %s", len(prompts), store.dir, n, column,
             out_dir)
    return {"prompts": len(prompts), "lines": n, "column": column}
