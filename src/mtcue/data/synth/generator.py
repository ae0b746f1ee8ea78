"""Documents to corpus records (docs/formats.md, section 1), and the public entry points."""
from __future__ import annotations

import random
import re
from pathlib import Path

from mtcue.corpus import MAX_PREVIOUS
from mtcue.data.synth.documents import SCENES_PER_FILM, Document, sample_document, sample_film
from mtcue.data.synth.english import ENGLISH, NOUN_WORDS, OBJECTS
from mtcue.data.synth.french import FRENCH
from mtcue.data.synth.german import GERMAN
from mtcue.data.synth.labels import line_labels
from mtcue.data.synth.polish import POLISH
from mtcue.data.synth.russian import RUSSIAN
from mtcue.data.synth.situation import alternatives, cue_sentences
from mtcue.data.synth.template import Language
from mtcue.io import write_jsonl

# One target-language module per pair; English, documents and metadata are shared.
TARGETS: dict[str, Language] = {"en-de": GERMAN, "en-fr": FRENCH, "en-pl": POLISH,
                                 "en-ru": RUSSIAN}
PAIRS = tuple(TARGETS)
SPLITS = ("train", "valid", "test")
_IT = re.compile(r"\b[Ii]t\b")  # the anaphor lines' pronoun


def _target(pair: str) -> Language:
    if pair not in TARGETS:
        raise ValueError(f"unknown language pair {pair!r}: the synthetic corpus supports "
                         f"{', '.join(PAIRS)}")
    return TARGETS[pair]


def _records(document: Document, target: Language, split_id: str, doc_id: str,
             first: int) -> list[dict]:
    """The samples of one document; `split_id` is "<pair>.<split>", `first` the first index."""
    code = target.code
    english, translated, records = [], [], []
    block_start = 0
    for i, line in enumerate(document.lines):
        if line.starts_block:
            block_start = i
        english.append(ENGLISH.render_pattern(line.english, line.slots, line.situation))
        translated.append(target.render(line.frame, line.slots, line.situation))
        window = range(i - 1, max(block_start, i - MAX_PREVIOUS) - 1, -1)  # most recent first
        labels = line_labels(target, line.frame, line.slots, line.situation)
        records.append({
            "id": f"{split_id}.{first + i:06d}",
            "doc_id": doc_id,
            "text": {"en": english[i], code: translated[i]},
            "previous": {"en": [english[j] for j in window], code: [translated[j] for j in window]},
            "meta": dict(document.meta),
            # EAMT22 annotation: the attribute sentences of the line's (known) situation.
            "cues": cue_sentences(line.situation),
            "labels": {code: labels} if labels else {},
        })
    return records


def sample_document_of(pair: str, split: str, d: int, seed: int) -> Document:
    """The `d`-th document of a split: a scene of film d // SCENES_PER_FILM. Film and scene each have their
    own random stream, so splits and seeds never share documents or films and a smaller corpus is a prefix
    of a larger one."""
    film = sample_film(random.Random(f"{seed}/{pair}/{split}/film{d // SCENES_PER_FILM}"), pair)
    return sample_document(random.Random(f"{seed}/{pair}/{split}/{d}"), film)


def generate(pair: str, split: str, n_docs: int, seed: int) -> list[dict]:
    """The samples of `n_docs` documents, in document order; the same arguments give the
    same samples (see `sample_document_of`)."""
    target = _target(pair)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: expected one of {', '.join(SPLITS)}")
    if n_docs < 1:
        raise ValueError(f"n_docs must be at least 1, got {n_docs}")
    samples: list[dict] = []
    for d in range(n_docs):
        document = sample_document_of(pair, split, d, seed)
        samples.extend(_records(document, target, f"{pair}.{split}", f"{pair}.{split}.d{d:04d}",
                                len(samples)))
    return samples


def contrasts(pair: str, split: str, n_docs: int, seed: int, phenomenon: str = "formality"
              ) -> dict[str, dict[str, str]]:
    """{sample id: {value: text}} for the lines of `generate(pair, split, n_docs, seed)` whose translation
    shows `phenomenon` (formality, speaker_gender, addressee_gender): the same line rendered with each
    value of it, everything else kept (IWSLT22's contrastive references, the contrastive suites)."""
    target = _target(pair)
    out, first = {}, 0
    for d in range(n_docs):
        document = sample_document_of(pair, split, d, seed)
        for i, line in enumerate(document.lines):
            if phenomenon in line_labels(target, line.frame, line.slots, line.situation):
                out[f"{pair}.{split}.{first + i:06d}"] = {
                    value: target.render(line.frame, line.slots, situations[0])
                    for value, situations in alternatives(phenomenon, line.situation).items()}
        first += len(document.lines)
    return out


def pronoun_contrasts(pair: str, split: str, n_docs: int, seed: int) -> dict[str, dict]:
    """{sample id: {"candidates": {gender: text}, "gold", "distance", "pronoun", "antecedent", "nouns"}} for
    the anaphor lines of `generate(pair, split, n_docs, seed)`: the line rendered as if its antecedent
    were a noun of each gender the target has (everything else kept), the antecedent's gender, how many
    lines back it is, the English pronoun as written, the antecedent noun and every noun of its line."""
    target = _target(pair)
    stand_in: dict[str, str] = {}  # gender -> an object noun of that gender in the target
    for key in OBJECTS:
        stand_in.setdefault(target.nouns[key][-1], key)
    out, first = {}, 0
    for d in range(n_docs):
        document = sample_document_of(pair, split, d, seed)
        for i, line in enumerate(document.lines):
            if line.antecedent is None:
                continue
            before = document.lines[line.antecedent]
            english = ENGLISH.render_pattern(before.english, before.slots, before.situation)
            words = [w.strip(".,?!").lower() for w in english.split()]
            out[f"{pair}.{split}.{first + i:06d}"] = {
                "candidates": {g: target.render(line.frame, {**line.slots, "obj": key}, line.situation)
                               for g, key in sorted(stand_in.items())},
                "gold": target.nouns[line.slots["obj"]][-1], "distance": i - line.antecedent,
                "pronoun": _IT.search(ENGLISH.render_pattern(line.english, line.slots, line.situation)).group(0),
                "antecedent": OBJECTS[line.slots["obj"]],
                "nouns": [w for w in words if w in NOUN_WORDS]}
        first += len(document.lines)
    return out


def write_split(pair: str, split: str, n_docs: int, seed: int, path: str | Path) -> int:
    """Write one split as JSON lines; the file appears only once complete. Returns the count."""
    return write_jsonl(path, generate(pair, split, n_docs, seed))
