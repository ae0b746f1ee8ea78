"""The style store of the style-control models (Jeong et al.; docs/formats.md, section 2): one level
1..5 per line of each split, from the register label the corpus carries for the target language.

The seed scores every target sentence with an XLM-R formality regressor (-3..3) and bins the score into
5 levels; our data carries a register label where the line shows one (the synthetic corpus's formality
labels; docs/deviations.md), so a label maps to a level by `mapping` ({"informal", "formal", "unlabelled":
level}; the demo: 1, 5 and 3) and levels 2 and 4 are never trained.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from mtcue.config import langs_of
from mtcue.corpus import read_corpus
from mtcue.io import atomic_directory

MAPPING_KEYS = ("informal", "formal", "unlabelled")


def line_levels(corpus: str | Path, direction: str, mapping: dict[str, int]) -> np.ndarray:
    """The level of every line of `corpus` (its target side's formality label mapped by `mapping`)."""
    if sorted(mapping) != sorted(MAPPING_KEYS) or not all(v in range(1, 6) for v in mapping.values()):
        raise ValueError(f"style mapping {mapping}: give a level 1..5 for each of {', '.join(MAPPING_KEYS)}")
    tgt = langs_of(direction)[1]
    levels, labelled = [], False
    for n, sample in enumerate(read_corpus(corpus), 1):
        gold = ((sample.get("labels") or {}).get(tgt) or {}).get("formality", {}).get("gold")
        if gold not in (None, "formal", "informal"):
            raise ValueError(f"{corpus}:{n}: formality label {gold!r} for '{tgt}' is neither formal nor informal")
        levels.append(mapping[gold or "unlabelled"])
        labelled = labelled or gold is not None
    if not labelled:
        raise ValueError(f"{corpus}: no line has a formality label for '{tgt}' (docs/formats.md, section 1): the "
                         "style models would learn nothing from their levels")
    return np.asarray(levels, dtype=np.int8)


def build_style_store(corpora: dict[str, str | Path], direction: str, mapping: dict[str, int],
                      out_dir: str | Path) -> dict:
    """`out_dir`/{split}.npy for each split of `corpora` and manifest.json (mapping, lines per level)."""
    with atomic_directory(out_dir, "style-levels") as out:
        counts = {}
        for split, corpus in corpora.items():
            levels = line_levels(corpus, direction, mapping)
            np.save(out / f"{split}.npy", levels)
            counts[split] = {str(k): v for k, v in sorted(Counter(levels.tolist()).items())}
        manifest = {"kind": "style", "direction": direction, "mapping": mapping, "lines_per_level": counts}
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest
