"""IWSLT22 zero-shot formality control (paper section 4, Table 5; protocol in appendix D).

Each hypothesis is labelled FORMAL, INFORMAL, NEUTRAL (no formality-bearing phrase) or OTHER (both)
as the official IWSLT 2022 scorer does; the accuracy for an attribute is FORMAL / (FORMAL + INFORMAL)
(resp. INFORMAL / ...), NEUTRAL and OTHER left out. A model is prompted once per prompt and keeps its
best prompt per attribute; a model without context translates once, and its formal and informal
accuracies are the two shares of that one output (they sum to 100%). Unlike the official scorer, an
accuracy with nothing judged is None (n/a), not 0.

The phrases come from either
- the official annotated references (`[F]...[/F]` around formality-bearing words): a phrase matches
  when each of its space-separated tokens is one of the hypothesis' space-separated tokens (case and
  attached punctuation count, as in the official scorer), or, for a language written without spaces
  (`no_spaces`), when it occurs in the hypothesis as a substring; or
- the corpus's gold labels (the synthetic corpus: the marker words of each formality value,
  matched as `labels` markers are, docs/formats.md section 1); lines without a formality label are
  not part of the test set.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from mtcue.corpus import marker_tokens, read_corpus
from mtcue.evaluation.score import hyp_provenance, read_lines

FORMAL, INFORMAL = "formal", "informal"
ATTRIBUTES = (FORMAL, INFORMAL)
LABELS = ("FORMAL", "INFORMAL", "NEUTRAL", "OTHER")
_PHRASE = re.compile(r"\[F\](.*?)\[/F\]")
_TAG = re.compile(r"\[/?F\]")


def annotated_phrases(annotated: str, where: str = "annotated reference") -> list[str]:
    """The formality-bearing phrases of one annotated reference line; `where` (file:line) names it
    when its tags do not pair up (the official scorer's pattern would silently skip or merge them)."""
    tags = _TAG.findall(annotated)
    if tags != ["[F]", "[/F]"] * (len(tags) // 2):
        raise ValueError(f"{where}: unbalanced formality tags {' '.join(tags)} in {annotated!r}; every [F] "
                         "must be closed by [/F] before the next [F] opens")
    return _PHRASE.findall(annotated)


def label(shows_formal: bool, shows_informal: bool) -> str:
    if shows_formal and shows_informal:
        return "OTHER"
    return "FORMAL" if shows_formal else "INFORMAL" if shows_informal else "NEUTRAL"


def official_label(hyp: str, formal_phrases: Sequence[str], informal_phrases: Sequence[str],
                   no_spaces: bool = False) -> str:
    # Tokens split on single spaces, as the official scorer splits them.
    tokens = set(hyp.split(" "))
    if no_spaces:
        matches = lambda phrases: any(p in hyp for p in phrases)  # noqa: E731
    else:
        matches = lambda phrases: any(set(p.split(" ")) <= tokens for p in phrases)  # noqa: E731
    return label(matches(formal_phrases), matches(informal_phrases))


def marker_label(hyp: str, markers: Mapping[str, Sequence[str]]) -> str:
    tokens = marker_tokens(hyp)
    return label(any(m in tokens for m in markers.get(FORMAL, ())), any(m in tokens for m in markers.get(INFORMAL, ())))


class FormalityTestSet:
    """The lines judged and how: from a corpus's formality labels or the official annotated references."""

    def __init__(self, labellers: list, where: str):
        self.labellers, self.where = labellers, where

    @classmethod
    def from_corpus(cls, corpus: str | Path, direction: str) -> FormalityTestSet:
        tgt = direction.split("-")[1]
        labellers = []
        for sample in read_corpus(corpus):
            markers = ((sample.get("labels") or {}).get(tgt) or {}).get("formality", {}).get("markers")
            labellers.append(None if markers is None else (lambda h, m=markers: marker_label(h, m)))
        if not any(labellers):
            raise ValueError(f"{corpus}: no line has a formality label for '{tgt}': not a formality test set")
        return cls(labellers, str(corpus))

    @classmethod
    def from_references(cls, formal: str | Path, informal: str | Path, no_spaces: bool = False) -> FormalityTestSet:
        """The official annotated references (IWSLT22's `formal.annotated.XX`, `informal.annotated.XX`)."""
        # Lines stripped, as the official scorer reads them.
        refs = {path: [line.strip() for line in read_lines(Path(path))] for path in (formal, informal)}
        if len(refs[formal]) != len(refs[informal]) or not refs[formal]:
            raise ValueError(f"{formal} has {len(refs[formal])} lines and {informal} {len(refs[informal])}: the "
                             "annotated references must be two non-empty files, line for line the same test set")
        phrases = {path: [annotated_phrases(line, f"{path}:{n}") for n, line in enumerate(lines, 1)]
                   for path, lines in refs.items()}
        return cls([lambda h, f=f, i=i: official_label(h.strip(), f, i, no_spaces)
                    for f, i in zip(phrases[formal], phrases[informal])], f"{formal}, {informal}")

    def counts(self, hyps: list[str], where: str) -> dict[str, int]:
        if len(hyps) != len(self.labellers):
            raise ValueError(f"{where}: {len(hyps)} hypotheses for the {len(self.labellers)} lines of {self.where}; "
                             "translate the whole test set, one line per source line")
        counted = Counter(judge(h) for h, judge in zip(hyps, self.labellers) if judge is not None)
        return {name: counted.get(name, 0) for name in LABELS}


def accuracy(counts: Mapping[str, int], attribute: str) -> float | None:
    judged = counts["FORMAL"] + counts["INFORMAL"]
    return counts[attribute.upper()] / judged if judged else None


def score_formality(hyp_paths: Mapping[str, str | Path], prompts: Sequence[dict], test_set: FormalityTestSet) -> dict:
    """The fields of a formality record. `hyp_paths`: {prompt id: hypotheses}; `prompts`: each
    {"id", "attribute", "text"} (config.formality_prompts). A model without context gives one file
    under the id "none" and no prompts."""
    if set(hyp_paths) == {"none"}:
        hyps = read_lines(Path(hyp_paths["none"]))
        counts = test_set.counts(hyps, str(hyp_paths["none"]))
        scored = [{"id": "none", "attribute": None, "text": None, "counts": counts,
                   **hyp_provenance(hyp_paths["none"], hyps)}]
        best = {a: (accuracy(counts, a), "none") for a in ATTRIBUTES}
        mean = {a: best[a][0] for a in ATTRIBUTES}
    else:
        if set(hyp_paths) != {p["id"] for p in prompts}:
            raise ValueError(f"hypotheses for prompts {sorted(hyp_paths)}, but the prompts are "
                             f"{sorted(p['id'] for p in prompts)}")
        scored = []
        for p in prompts:
            hyps = read_lines(Path(hyp_paths[p["id"]]))
            counts = test_set.counts(hyps, str(hyp_paths[p["id"]]))
            scored.append({**p, "counts": counts, "accuracy": accuracy(counts, p["attribute"]),
                           **hyp_provenance(hyp_paths[p["id"]], hyps)})
        best = {}
        for attribute in ATTRIBUTES:
            mine = [s for s in scored if s["attribute"] == attribute and s["accuracy"] is not None]
            top = max(mine, key=lambda s: s["accuracy"], default=None)
            best[attribute] = (None, None) if top is None else (top["accuracy"], top["id"])
        # The mean over the prompts of an attribute (the authors' code logs it beside the best).
        mean = {a: _mean([s["accuracy"] for s in scored if s["attribute"] == a and s["accuracy"] is not None])
                for a in ATTRIBUTES}
    formal, informal = best[FORMAL][0], best[INFORMAL][0]
    return {"formal": formal, "informal": informal,
            "average": None if formal is None or informal is None else (formal + informal) / 2,
            "formal_mean": mean[FORMAL], "informal_mean": mean[INFORMAL],
            "best_prompt": {a: best[a][1] for a in ATTRIBUTES}, "prompts": scored,
            "lines": sum(j is not None for j in test_set.labellers), "test_set": test_set.where}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def score_standalone(hyp: str | Path, formal_ref: str | Path, informal_ref: str | Path, no_spaces: bool = False) -> dict:
    """The official scorer's result for one hypothesis file: the four counts and both accuracies."""
    test_set = FormalityTestSet.from_references(formal_ref, informal_ref, no_spaces)
    counts = test_set.counts(read_lines(Path(hyp)), str(hyp))
    return {"hyp": str(hyp), "lines": sum(counts.values()), "counts": counts,
            "formal_accuracy": accuracy(counts, FORMAL), "informal_accuracy": accuracy(counts, INFORMAL)}
