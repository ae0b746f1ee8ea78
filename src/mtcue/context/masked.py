"""Few-shot context stores (EAMT22 settings, paper section 3.2): a store whose attribute-sentence
columns (`cue1..`) are kept for a balanced subset of lines and cleared (-1) everywhere else.

Every setting trains on the same binarised data and the same vectors (or tags): only which lines
show their attribute sentences differs, so a few-shot store is a new index beside links to the full
store's vectors.npy (or tags.json), not a new corpus or embedding. The rest of the context columns
are left as they are; a few-shot model selects the ones it reads (experiments.fewshot.plan.Fewshot.eamt22_columns).

A line's attribute combination is its list of attribute sentences (the corpus's `cues`: speaker,
addressee, formality); lines without any are not annotated and never selected. Subsets are drawn per
combination from a seeded shuffle, so the lines of a smaller setting are among those of a larger one,
and every model of a setting (MTCUE, TAGGING) is shown the same lines.
"""
from __future__ import annotations

import json
import logging
import os
import random
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from mtcue.context.store import ContextStore
from mtcue.corpus import read_corpus
from mtcue.outputs import atomic_directory

log = logging.getLogger(__name__)
ALL = "all"
# Splits a few-shot model trains on; the test split is read from the full store.
SPLITS = ("train", "valid")
SHARED_FILES = ("vectors.npy", "tags.json")


def combinations(samples: Iterable[dict]) -> list[tuple[str, ...] | None]:
    """Each line's attribute combination (its attribute sentences), None where it has none."""
    return [tuple(s["cues"]) if s.get("cues") else None for s in samples]


def select_rows(combos: list[tuple[str, ...] | None], per_combination: int | str, seed: int | str) -> np.ndarray:
    """bool [n_lines]: `per_combination` lines of each combination that occurs (all of a rarer one), or
    every annotated line for "all". Drawn from one seeded shuffle per combination, so a smaller
    `per_combination` selects a subset of a larger one's lines."""
    keep = np.zeros(len(combos), dtype=bool)
    if per_combination == ALL:
        keep[[i for i, c in enumerate(combos) if c is not None]] = True
        return keep
    rows: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, combo in enumerate(combos):
        if combo is not None:
            rows[combo].append(i)
    for combo, members in rows.items():
        random.Random(f"{seed}/{'|'.join(combo)}").shuffle(members)
        keep[members[:per_combination]] = True
    return keep


def mask_index(index: np.ndarray, columns: list[str], keep: np.ndarray) -> np.ndarray:
    """A copy of `index` whose cue columns are -1 in the rows `keep` leaves out."""
    out = np.array(index, dtype=np.int32)
    cues = [j for j, c in enumerate(columns) if c.startswith("cue")]
    if not cues:
        raise ValueError(f"the store has no attribute-sentence (cue) columns: {columns}")
    out[np.ix_(~keep, cues)] = -1
    return out


def build_masked_store(store_dir: str | Path, corpora: dict[str, str | Path], per_combination: int | str,
                       seed: int, out_dir: str | Path) -> dict:
    """The few-shot store of one setting at `out_dir` (written to a temporary folder, moved into place
    when complete): `train` and `valid` indices masked alike, links to the full store's shared files,
    and a manifest that adds `masked` (the setting and how many lines keep their attribute sentences)."""
    store = ContextStore(store_dir)
    missing = sorted(set(SPLITS) - set(corpora))
    if missing:
        raise ValueError(f"a few-shot store needs the corpora of {list(SPLITS)}; missing {missing}")
    if per_combination != ALL and (not isinstance(per_combination, int) or per_combination < 1):
        raise ValueError(f"lines per combination must be a positive integer or '{ALL}', got {per_combination!r}")
    out_dir = Path(out_dir)
    indices, supervised, n_combinations = {}, {}, {}
    for split in SPLITS:
        index = store.index(split)
        combos = combinations(read_corpus(corpora[split]))
        if len(combos) != len(index):
            raise ValueError(f"{corpora[split]} has {len(combos)} lines but {store.dir}/{split}.index.npy "
                             f"has {len(index)} rows: not the corpus of this store")
        keep = select_rows(combos, per_combination, f"{seed}/{split}")
        indices[split] = mask_index(index, store.columns, keep)
        supervised[split] = int(keep.sum())
        n_combinations[split] = len({c for c in combos if c is not None})
    with atomic_directory(out_dir, "mask-store") as tmp:
        for name in SHARED_FILES:
            if (store.dir / name).exists():  # the same depth as out_dir: one relative link serves both
                os.symlink(os.path.relpath((store.dir / name).resolve(), out_dir.parent.resolve() / out_dir.name),
                           tmp / name)
        for split, index in indices.items():
            np.save(tmp / f"{split}.index.npy", index)
        manifest = {**store.manifest, "splits": {s: int(i.shape[0]) for s, i in indices.items()},
                    "masked": {"from": str(store.dir), "per_combination": per_combination, "seed": seed,
                               "supervised": supervised, "combinations": n_combinations}}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    log.info("few-shot store %s: %s lines per combination -> %s annotated lines of %s (%s combinations)",
             out_dir, per_combination, supervised, manifest["splits"], n_combinations)
    return manifest
