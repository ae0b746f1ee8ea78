"""The corpus format (docs/formats.md, section 1): reading with validation, and the names every stage
shares: metadata fields, attribute values and the EAMT22 attribute sentences. It lives beside io.py and
records.py, outside any stage, because every stage reads it."""
from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Iterator

from mtcue.io import parse_json, read_text_lines

META_FIELDS = ("genre", "pg_rating", "writers", "year", "country", "plot")
MAX_PREVIOUS = 5

# Attribute values as the corpus labels them (formality, speaker and addressee gender, a group addressed).
FORMAL, INFORMAL = "formal", "informal"
FEMININE, MASCULINE = "feminine", "masculine"
GROUP = "group"
# EAMT22's context sentences (Vincent et al. 2022b), one per attribute: the cues of annotated lines, the
# wording the EAMT22 evaluation reads, and the cues the synthetic corpus writes.
SPEAKER_CUES = {FEMININE: "I am a woman", MASCULINE: "I am a man"}
ADDRESSEE_CUES = {FEMININE: "I'm talking to a woman", MASCULINE: "I'm talking to a man",
                  GROUP: "I'm talking to a group of people"}
FORMALITY_CUES = {FORMAL: "Formal", INFORMAL: "Informal"}


def split_punctuation(word: str) -> tuple[str, str, str]:
    """(leading punctuation, the word, trailing punctuation), by Unicode category."""
    start, end = 0, len(word)
    while start < end and unicodedata.category(word[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(word[end - 1]).startswith("P"):
        end -= 1
    return word[:start], word[start:end], word[end:]


def _strip_punctuation(word: str) -> str:
    return split_punctuation(word)[1]


def marker_tokens(text: str) -> set[str]:
    """The tokens that `labels` markers are matched against: whitespace tokens with leading and
    trailing Unicode punctuation stripped, case kept (the generator and scoring share this)."""
    return {t for t in map(_strip_punctuation, text.split()) if t}


SIDES = {1: "one language code (the source)", 2: "two language codes"}


class CorpusError(ValueError):
    """A corpus file does not follow docs/formats.md; the message names file and line."""


def sample_problem(sample: object, langs: tuple[str, ...] | None = None, sides: int = 2) -> str | None:
    """What is wrong with one record, or None. `sides`: the languages its `text` holds (a contrastive suite's
    example: its source only, docs/formats.md section 8)."""
    if not isinstance(sample, dict):
        return "expected a JSON object"
    for key in ("id", "doc_id", "text", "previous", "meta"):
        if key not in sample:
            return f"missing field '{key}'"
    text = sample["text"]
    if not isinstance(text, dict) or len(text) != sides or not all(isinstance(t, str) for t in text.values()):
        return f"'text' must map exactly {SIDES[sides]} to strings"
    if langs is not None and set(text) != set(langs):
        return f"'text' has languages {sorted(text)}, expected {sorted(langs)}"
    previous = sample["previous"]
    if not isinstance(previous, dict) or set(previous) != set(text):
        return "'previous' must have one list per language of 'text'"
    for lang, lines in previous.items():
        if not isinstance(lines, list) or len(lines) > MAX_PREVIOUS or not all(isinstance(x, str) for x in lines):
            return f"'previous.{lang}' must be a list of at most {MAX_PREVIOUS} strings"
    meta = sample["meta"]
    if not isinstance(meta, dict) or set(meta) != set(META_FIELDS):
        return f"'meta' must have exactly the fields {', '.join(META_FIELDS)}"
    if not all(v is None or isinstance(v, str) for v in meta.values()):
        return "'meta' values must be strings or null"
    cues = sample.get("cues", [])
    if not isinstance(cues, list) or not all(isinstance(c, str) for c in cues):
        return "'cues' must be a list of strings"
    return _labels_problem(sample.get("labels", {}))


def _labels_problem(labels: object) -> str | None:
    """What is wrong with a sample's `labels` ({language: {phenomenon: {gold, markers}}}), or None: scoring
    reads every one of them."""
    if not isinstance(labels, dict):
        return "'labels' must be an object"
    for lang, phenomena in labels.items():
        if not isinstance(phenomena, dict):
            return f"'labels.{lang}' must map phenomena to {{gold, markers}}"
        for name, label in phenomena.items():
            where = f"labels.{lang}.{name}"
            if not isinstance(label, dict) or not isinstance(label.get("gold"), str):
                return f"'{where}' must be an object with 'gold' (a value's name) and 'markers'"
            markers = label.get("markers")
            if not isinstance(markers, dict) or not all(isinstance(m, list) and all(isinstance(w, str) for w in m)
                                                        for m in markers.values()):
                return f"'{where}.markers' must map each value to a list of marker words"
    return None


def read_corpus(path: str | Path, langs: tuple[str, str] | None = None) -> Iterator[dict]:
    """Yield validated samples; a malformed line stops reading with file:line and the cause."""
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: corpus file not found (run the step that writes it first)")
    try:
        for lineno, line in read_text_lines(path):
            sample = parse_json(line, path, lineno)
            problem = sample_problem(sample, langs)
            if problem:
                raise CorpusError(f"{path}:{lineno}: {problem} (see docs/formats.md)")
            yield sample
    except ValueError as err:  # not UTF-8, not JSON (a CorpusError above is one too)
        raise CorpusError(str(err)) from None
