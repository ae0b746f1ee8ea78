"""The synthetic test split as a contrastive suite (docs/formats.md, section 7).

For each line of the cleaned test corpus and each phenomenon its translation shows (formality, speaker
gender, addressee gender: the corpus's labels), one example: the English line with its own context
(previous lines, metadata, cues as the corpus has them) and the line rendered with each value of the
phenomenon, everything else kept, so the candidates differ only in the words that the context decides.
"""
from __future__ import annotations

from pathlib import Path

from mtcue.corpus import read_corpus
from mtcue.data.clean import clean_line
from mtcue.data.synth.generator import contrasts
from mtcue.io import write_jsonl

SUITE_PHENOMENA = ("formality", "speaker_gender", "addressee_gender")


def suite_examples(corpus: str | Path, pair: str, n_docs: int, seed: int) -> list[dict]:
    """The examples from the cleaned test corpus that `generate(pair, "test", n_docs, seed)` produced."""
    src, tgt = pair.split("-")
    renderings = {p: contrasts(pair, "test", n_docs, seed, p) for p in SUITE_PHENOMENA}
    examples = []
    for sample in read_corpus(corpus):
        labels = (sample.get("labels") or {}).get(tgt) or {}
        for phenomenon in SUITE_PHENOMENA:
            if phenomenon not in labels:
                continue
            if sample["id"] not in renderings[phenomenon]:
                raise ValueError(f"{corpus}: sample {sample['id']} is not a line of the synthetic test split of "
                                 f"{pair} with {n_docs} documents and seed {seed}; regenerate the corpus")
            values = renderings[phenomenon][sample["id"]]
            candidates = [clean_line(t, tgt) for t in values.values()]
            correct = list(values).index(labels[phenomenon]["gold"])
            if candidates[correct] != sample["text"][tgt]:
                raise ValueError(f"{corpus}: sample {sample['id']} rendered with its own {phenomenon} is "
                                 f"{candidates[correct]!r}, not its translation {sample['text'][tgt]!r}")
            if len(set(candidates)) < len(candidates):
                continue  # cleaning merged the variants: nothing to tell apart
            examples.append({"id": f"{sample['id']}.{phenomenon}", "doc_id": sample["doc_id"],
                             "text": {src: sample["text"][src]}, "previous": {src: sample["previous"][src]},
                             "meta": sample["meta"], "cues": sample.get("cues", []),
                             "candidates": candidates, "correct": correct, "group": {"phenomenon": phenomenon}})
    return examples


def write_suite(corpus: str | Path, pair: str, n_docs: int, seed: int, out: str | Path) -> dict:
    """Write the suite; returns the number of examples per phenomenon."""
    examples = suite_examples(corpus, pair, n_docs, seed)
    write_jsonl(out, examples)
    counts = dict.fromkeys(SUITE_PHENOMENA, 0)
    for ex in examples:
        counts[ex["group"]["phenomenon"]] += 1
    return counts
