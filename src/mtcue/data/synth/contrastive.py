"""The synthetic contrastive suite of an en->xx direction (docs/formats.md, section 8).

Its documents are those of the test split: `n_docs` of them, the first ones being the test corpus's
(each document has its own random stream, so more documents extend the split with documents that no
training split holds). Each line whose translation depends on the context gives one example per
phenomenon: the English line with its own context (previous lines, metadata, cues, as the corpus
gives them) and the line rendered with each value of the phenomenon, everything else kept, so the
candidates differ only in the words the context decides:
- formality, speaker gender, addressee gender (the corpus's labels);
- pronoun: "it" for an object named 1-3 lines back; the candidates are the line as if that object
  were of each gender of the target language, so only the earlier line tells them apart.
Texts are normalised as the cleaning step normalises them (Moses punctuation and detokenisation).
"""
from __future__ import annotations

from pathlib import Path

from mtcue.corpus import marker_tokens
from mtcue.data.clean import clean_line
from mtcue.data.synth.generator import contrasts, generate, pronoun_contrasts
from mtcue.io import write_jsonl
from mtcue.suites import STRICT

SUITE_PHENOMENA = ("formality", "speaker_gender", "addressee_gender", "pronoun")


def _distinct(texts: dict[str, str], gold: str) -> tuple[list[str], int]:
    """The distinct renderings (first value of each kept) and the index of the gold value's."""
    candidates = list(dict.fromkeys(texts.values()))
    return candidates, candidates.index(texts[gold])


def _differing_word(candidates: list[str], correct: int) -> str:
    """The first word of the correct candidate that no other has (lower-cased): the pronoun."""
    words = [marker_tokens(c.replace("-", " ")) for c in candidates]  # French "Prends-le": two words
    others = set().union(*(w for k, w in enumerate(words) if k != correct))
    return next(w for w in candidates[correct].replace("-", " ").split()
                if w.strip(".,?!") and w.strip(".,?!") not in others).strip(".,?!").lower()


def suite_examples(pair: str, n_docs: int, seed: int, per_phenomenon: int | None = None) -> list[dict]:
    """The examples of the first `n_docs` documents of the test split of `pair` (corpus seed `seed`), at
    most `per_phenomenon` (the first) of each phenomenon."""
    renderings = {p: contrasts(pair, "test", n_docs, seed, p) for p in SUITE_PHENOMENA[:3]}  # checks the pair
    src, tgt = pair.split("-")
    pronouns = pronoun_contrasts(pair, "test", n_docs, seed)
    examples = []
    for sample in generate(pair, "test", n_docs, seed):
        labels = sample["labels"].get(tgt, {})
        base = {"doc_id": sample["doc_id"], "direction": pair, "text": {src: clean_line(sample["text"][src], src)},
                "previous": {src: [clean_line(p, src) for p in sample["previous"][src]]},
                "meta": sample["meta"], "cues": sample["cues"]}
        found = {p: (renderings[p][sample["id"]], labels[p]["gold"], {}) for p in SUITE_PHENOMENA[:3]
                 if p in labels}
        if sample["id"] in pronouns:
            p = pronouns[sample["id"]]
            found["pronoun"] = (p["candidates"], p["gold"], p)
        for phenomenon, (texts, gold, anaphor) in found.items():
            candidates, correct = _distinct({v: clean_line(t, tgt) for v, t in texts.items()}, gold)
            if candidates[correct] != clean_line(sample["text"][tgt], tgt):
                raise ValueError(f"{sample['id']}: rendered with its own {phenomenon} it is {candidates[correct]!r}, "
                                 f"not its translation {sample['text'][tgt]!r}")
            if len(candidates) < 2:
                continue  # the variants read the same (Russian его for masculine and neuter)
            example = {"id": f"{sample['id']}.{phenomenon}", **base, "candidates": candidates, "correct": correct,
                       "group": {"phenomenon": phenomenon}, "rule": STRICT}
            if anaphor:
                example["group"] |= {"pronoun": _differing_word(candidates, correct), "distance": anaphor["distance"]}
                example["anaphor"] = {k: anaphor[k] for k in ("pronoun", "antecedent", "nouns")}
            examples.append(example)
    if per_phenomenon is None:
        return examples
    kept = dict.fromkeys(SUITE_PHENOMENA, 0)
    out = []
    for ex in examples:
        kept[ex["group"]["phenomenon"]] += 1
        if kept[ex["group"]["phenomenon"]] <= per_phenomenon:
            out.append(ex)
    return out


def write_suite(pair: str, n_docs: int, seed: int, out: str | Path, per_phenomenon: int | None = None) -> dict:
    """Write the suite; returns the number of examples per phenomenon."""
    examples = suite_examples(pair, n_docs, seed, per_phenomenon)
    if not examples:  # scored, it would be no accuracy at all
        raise ValueError(f"{out}: the first {n_docs} test documents of {pair} give no example: raise --docs")
    write_jsonl(out, examples)
    counts = dict.fromkeys(SUITE_PHENOMENA, 0)
    for ex in examples:
        counts[ex["group"]["phenomenon"]] += 1
    return counts
