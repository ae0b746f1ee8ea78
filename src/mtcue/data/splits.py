"""Train, valid and test splits of the extracted OpenSubtitles pairs (paper, section 3.1 and appendix A).

Films named by the public held-out lists (the authors' block lists, derived from ContraPro, Lopes et
al. and the EAMT22 test set, plus ContraPro's and Lopes et al.'s own document lists) never reach
train. A seeded shuffle gives half of them to valid and half to test; valid and test pairs are then
sampled with the same seed from the films that have metadata (from every held-out film when no film
has any, e.g. without an OMDb key). Every pair receives its film's metadata; the files keep
document order.
"""
from __future__ import annotations

import json
import os
import random
import re
from collections import Counter
from pathlib import Path

from mtcue.corpus import META_FIELDS
from mtcue.data.evalsets import checked_entries
from mtcue.data.omdb import load_metadata
from mtcue.io import atomic_path, atomic_write_text, parse_json, read_text

SPLITS = ("train", "valid", "test")
# de/2008/1014051/6733127.xml (block lists) and 1919_10113_4183310.fr (Lopes et al., ContraPro).
OPUS_PATH = re.compile(r"(?:^|/)[a-z]{2,3}/\d+/(\d+)/\d+\.xml(?:\.gz)?$")
DOC_NAME = re.compile(r"^\d+_(\d+)_\d+\.[a-z]+")
IMDB_FIELD = re.compile(r'"imdb_id": "(tt\d+)"')


def _imdb(number: str) -> str:
    return f"tt{int(number):07d}"


def heldout_films(path: str | Path) -> set[str]:
    """IMDb ids named by one held-out list: OPUS document paths or document names, one per line, or
    ContraPro's JSON (its "document id"s)."""
    path = Path(path)
    text = read_text(path)
    if text.lstrip().startswith("["):
        examples = checked_entries(parse_json(text, path), path, "ContraPro examples", ("document id",))
        names = [(f"{path}: entry {i}", example["document id"]) for i, example in enumerate(examples)]
    else:
        names = [(f"{path}:{n}", line.strip()) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    films = set()
    for where, name in names:
        match = OPUS_PATH.search(name) or DOC_NAME.match(name)
        if not match:
            raise ValueError(f"{where}: {name!r} names no film (expected an OPUS path such as "
                             "de/2008/1014051/6733127.xml or a document name such as 1919_10113_4183310.fr)")
        films.add(_imdb(match.group(1)))
    return films


def _assign(films: set[str], seed: int) -> dict[str, str]:
    """Held-out films -> "valid" (first half of a seeded shuffle) or "test"."""
    order = sorted(films)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return {film: "valid" if i < half else "test" for i, film in enumerate(order)}


def make_splits(extracted: str | Path, heldout_lists: list[str | Path], out_dir: str | Path,
                metadata: str | Path | None = None, valid_pairs: int = 10_000, test_pairs: int = 10_000,
                seed: int = 1) -> dict:
    """Write `{out_dir}/{train,valid,test}.jsonl` from the extraction's output; returns the counts."""
    extracted, out_dir = Path(extracted), Path(out_dir)
    listed = set().union(*(heldout_films(p) for p in heldout_lists)) if heldout_lists else set()
    meta = load_metadata(metadata) if metadata else {}
    split_of = _assign(listed, seed)

    def eligible(film: str) -> bool:
        return film in split_of and (film in meta or not meta)

    # Pass 1: how many pairs each held-out split could draw from (the id is read without parsing JSON).
    available, films, heldout_seen = Counter(), set(), set()
    with extracted.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            match = IMDB_FIELD.search(line)
            if not match:
                raise ValueError(f"{extracted}:{lineno}: no \"imdb_id\" (not written by extract-opensubtitles?)")
            film = match.group(1)
            films.add(film)
            if film in split_of:
                heldout_seen.add(film)
                if eligible(film):
                    available[split_of[film]] += 1
    rng = random.Random(seed)
    wanted = {"valid": valid_pairs, "test": test_pairs}
    for split in ("valid", "test"):
        if available[split] == 0:
            raise ValueError(f"{extracted}: no pair of a held-out {split} film{' with metadata' if meta else ''}: "
                             "check corpus.splits.heldout (the lists name films by IMDb id)")
    chosen = {split: set(rng.sample(range(available[split]), min(wanted[split], available[split])))
              for split in ("valid", "test")}

    # Pass 2: route every pair, with its film's metadata.
    counts, seen = Counter(), Counter()
    empty = dict.fromkeys(META_FIELDS)
    handles = {split: atomic_path(out_dir / f"{split}.jsonl") for split in SPLITS}
    outputs = {split: os.fdopen(fd, "w", encoding="utf-8") for split, (fd, _) in handles.items()}
    try:
        with extracted.open(encoding="utf-8") as handle:
            for line in handle:
                sample = json.loads(line)
                film = sample["imdb_id"]
                split = "train"
                if film in split_of:
                    split = split_of[film]
                    index = seen[split] if eligible(film) else -1
                    seen[split] += index >= 0
                    if index not in chosen[split]:
                        counts["heldout_not_sampled"] += 1
                        continue
                sample["meta"] = meta.get(film, empty)
                outputs[split].write(json.dumps(sample, ensure_ascii=False) + "\n")
                counts[split] += 1
        for split, out in outputs.items():
            out.close()
            os.replace(handles[split][1], out_dir / f"{split}.jsonl")
    finally:
        for split, out in outputs.items():
            out.close()
            Path(handles[split][1]).unlink(missing_ok=True)
    report = {
        "pairs": {split: counts[split] for split in (*SPLITS, "heldout_not_sampled")},
        "films": {"in_corpus": len(films), "heldout_listed": len(listed), "heldout_in_corpus": len(heldout_seen),
                  "with_metadata": len(films & set(meta))},
        "sampled_from": "held-out films with metadata" if meta else "every held-out film (no film has metadata)",
        "seed": seed,
    }
    for split in ("valid", "test"):
        if counts[split] < wanted[split]:
            report.setdefault("short", {})[split] = f"{counts[split]} of {wanted[split]} pairs available"
    return report


def write_report(report: dict, path: str | Path) -> None:
    atomic_write_text(path, json.dumps(report, indent=2) + "\n")
