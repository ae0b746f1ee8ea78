"""EAMT22's attribute annotation of a Polish corpus (Vincent et al., 2022b; MTCue section 3.2): the
few-shot settings of the paper's configuration fine-tune on OpenSubtitles en-pl lines annotated by
what their Polish shows, as EAMT22 annotated its 5.1M lines with its detector.

Each line gets `attributes` (speaker_gender, addressee_gender, addressee_number, formality: a value,
or null where the Polish shows none) and, as its `cues`, the paper's attribute sentences for them
("I am a man", "I'm talking to a group of people", "Formal": data/evalsets.attribute_sentences), the
wording the official test rows are given too, so the few-shot models read in training what they are
given in the test. A line that shows nothing has no cues: it is not annotated.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from mtcue.corpus import read_corpus
from mtcue.data.evalsets import EAMT22_SLOTS, attribute_sentences
from mtcue.io import write_jsonl
from mtcue.polish import detect

ATTRIBUTES = tuple(name for name, _prefix, _values in EAMT22_SLOTS)


def attributes_of(polish: str, english: str | None = None) -> dict[str, str | None]:
    """{attribute: the one value the sentence shows, else None}; `english`: its source, for the
    detector's English checks."""
    found = detect(polish, english)
    return {a: next(iter(found[a])) if len(found.get(a, ())) == 1 else None for a in ATTRIBUTES}


def annotate(samples: Iterator[dict], lang: str, counts: Counter) -> Iterator[dict]:
    for sample in samples:
        english = next((t for language, t in sample["text"].items() if language != lang), None)
        attributes = attributes_of(sample["text"][lang], english)
        cues = attribute_sentences(attributes)
        counts["lines"] += 1
        counts["annotated"] += bool(cues)
        counts.update(f"{a}={v}" for a, v in attributes.items() if v)
        yield {**sample, "attributes": attributes, "cues": cues}


def annotate_corpus(in_path: str | Path, out_path: str | Path, lang: str = "pl") -> dict:
    """Annotate a corpus file by its `lang` side (streaming); returns the counts: lines, annotated lines,
    lines per attribute value, and the attribute combinations that occur."""
    counts: Counter = Counter()
    combinations: Counter = Counter()

    def counted(samples: Iterator[dict]) -> Iterator[dict]:
        for sample in samples:
            if sample["cues"]:
                combinations[" ".join(sample["cues"])] += 1
            yield sample

    write_jsonl(out_path, counted(annotate(read_corpus(in_path), lang, counts)))
    return {**dict(sorted(counts.items())), "combinations": dict(combinations.most_common())}
