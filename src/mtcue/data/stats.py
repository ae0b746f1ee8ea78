"""What a corpus file holds, as the paper's Table 1 counts it: pairs, and how many samples carry each
context (n-1..n-5 previous lines, each metadata field)."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from mtcue.corpus import MAX_PREVIOUS, META_FIELDS, read_corpus

ENGLISH = "en"


def corpus_stats(path: str | Path, pair: str) -> dict:
    """Counts over one corpus file. Document context is counted on the English side (both sides
    hold the same lines, up to cleaning); a metadata field counts when present."""
    samples, previous, meta, any_context = 0, Counter(), Counter(), 0
    for sample in read_corpus(path, tuple(pair.split("-"))):
        samples += 1
        depth = len(sample["previous"][ENGLISH])
        for j in range(1, depth + 1):
            previous[j] += 1
        present = [f for f in META_FIELDS if sample["meta"][f]]
        meta.update(present)
        any_context += bool(depth or present)
    return {"pair": pair, "samples": samples, "previous": {str(j): previous[j] for j in range(1, MAX_PREVIOUS + 1)},
            "meta": {f: meta[f] for f in META_FIELDS}, "any_context": any_context}
