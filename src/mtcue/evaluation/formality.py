"""IWSLT22 zero-shot formality control (paper section 4, Table 5; protocol in appendix D).

Each hypothesis is labelled FORMAL, INFORMAL, NEUTRAL (no formality-bearing phrase) or OTHER (both)
as the official IWSLT 2022 scorer does; the accuracy for an attribute is FORMAL / (FORMAL + INFORMAL)
(resp. INFORMAL / ...), NEUTRAL and OTHER left out. A model is prompted once per prompt and keeps its
best prompt per attribute, chosen on the validation split where one is given (else on the test split
itself) and reported on the test split, over all prompts and per kind of prompt (`prompt_kind`); a
model without context translates once, and its formal and informal accuracies are the two shares of
that one output (they sum to 100%). Unlike the official scorer, an accuracy with nothing judged is
None (n/a), not 0. Each scored output keeps its label per line (`labels`: one of F, I, N, O, or "-"
for a line outside the test set), from which the report draws bootstrap intervals.

Kinds of prompt: a prompt is `in_distribution` when one of its content words occurs in some training
context of the direction (a metadata value or a previous line of the training corpus), `unseen` when
none does: the second kind tests zero-shot prompting, the first may only recall a training context.

Supervised control (`score_style`, Jeong et al.'s style-control models): no prompt; the model translates
at each style level, its formal accuracy is that of level 5, its informal that of level 1. Each level's
meaning preservation (`meaning_chrf`) is the semantic half of Jeong et al.'s Table 1: their sentence chrF
averaged over the test set, here against the plain references (both registers, the better one per line:
meaning, not register) rather than the source (their text says source; a source in another language shares
no character n-grams with the output).

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
KINDS = ("in_distribution", "unseen")
_WORD = re.compile(r"[^\W\d_]+")
# English function words: not content words (a prompt's kind rests on its content words only).
FUNCTION_WORDS = frozenset(
    "a an the of to in on at for with from by and or but not no nor is are was were be been being am i you he "
    "she it we they me him us them my your his her its our their this that these those as so if then than do "
    "does did have has had can could will would shall should may might must what which who whom whose when "
    "where why how all any some up out down over about into just very too also there here".split())
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


def content_words(text: str) -> set[str]:
    """Lower-cased words of two letters or more that are not function words."""
    return {w for w in map(str.lower, _WORD.findall(text)) if len(w) > 1 and w not in FUNCTION_WORDS}


def training_context_words(corpus: str | Path, direction: str) -> set[str]:
    """The words of every training context of a corpus: its metadata values and its previous lines
    (source side), the contexts the main models read."""
    src = direction.split("-")[0]
    words: set[str] = set()
    for sample in read_corpus(corpus):
        for text in [*(v for v in sample["meta"].values() if v), *sample["previous"][src]]:
            words |= {w.lower() for w in _WORD.findall(text)}
    return words


def prompt_kind(text: str, vocabulary: set[str]) -> str:
    return KINDS[0] if content_words(text) & vocabulary else KINDS[1]


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

    def labels(self, hyps: list[str], where: str) -> str:
        """One letter per line: the first of its label (F, I, N, O), "-" for a line outside the test set."""
        if len(hyps) != len(self.labellers):
            raise ValueError(f"{where}: {len(hyps)} hypotheses for the {len(self.labellers)} lines of {self.where}; "
                             "translate the whole test set, one line per source line")
        return "".join("-" if judge is None else judge(h)[0] for h, judge in zip(hyps, self.labellers))

    def counts(self, hyps: list[str], where: str) -> dict[str, int]:
        return counts_of(self.labels(hyps, where))


def counts_of(labels: str) -> dict[str, int]:
    counted = Counter(labels)
    return {name: counted.get(name[0], 0) for name in LABELS}


def accuracy(counts: Mapping[str, int], attribute: str) -> float | None:
    judged = counts["FORMAL"] + counts["INFORMAL"]
    return counts[attribute.upper()] / judged if judged else None


def _scored(path: str | Path, test_set: FormalityTestSet) -> dict:
    hyps = read_lines(Path(path))
    labels = test_set.labels(hyps, str(path))
    return {"counts": counts_of(labels), "labels": labels, **hyp_provenance(path, hyps)}


def score_formality(hyp_paths: Mapping[str, str | Path], prompts: Sequence[dict], test_set: FormalityTestSet,
                    valid: tuple[Mapping[str, str | Path], FormalityTestSet] | None = None,
                    kinds: Mapping[str, str] | None = None) -> dict:
    """The fields of a formality record. `hyp_paths`: {prompt id: hypotheses}; `prompts`: each
    {"id", "attribute", "text"} (experiments.formality.plan.Formality.prompts). A model without context gives one file
    under the id "none" and no prompts. `valid`: the same prompts' hypotheses on the validation split
    and its test set, where the best prompt is chosen (else on the test split); `kinds`: {prompt id:
    prompt_kind}."""
    if set(hyp_paths) == {"none"}:
        scored = [{"id": "none", "attribute": None, "text": None, **_scored(hyp_paths["none"], test_set)}]
        counts = scored[0]["counts"]
        best = {a: (accuracy(counts, a), "none") for a in ATTRIBUTES}
        mean = {a: best[a][0] for a in ATTRIBUTES}
        by_kind, chosen_on = {}, None
    else:
        ids = {p["id"] for p in prompts}
        for given, name in ((hyp_paths, "hypotheses"), *(((valid[0], "validation hypotheses"),) if valid else ())):
            if set(given) != ids:
                raise ValueError(f"{name} for prompts {sorted(given)}, but the prompts are {sorted(ids)}")
        scored = []
        for p in prompts:
            entry = {**p, **({"kind": kinds[p["id"]]} if kinds else {}), **_scored(hyp_paths[p["id"]], test_set)}
            entry["accuracy"] = accuracy(entry["counts"], p["attribute"])
            if valid:
                entry["valid_counts"] = valid[1].counts(read_lines(Path(valid[0][p["id"]])), str(valid[0][p["id"]]))
                entry["valid_accuracy"] = accuracy(entry["valid_counts"], p["attribute"])
            scored.append(entry)
        chosen_on = "valid" if valid else "test"
        best, mean = _choose(scored, f"{chosen_on}_accuracy" if valid else "accuracy")
        by_kind = {kind: dict(zip(("best_prompt", "accuracy", "mean"), _kind_summary(
            [s for s in scored if s.get("kind") == kind], f"{chosen_on}_accuracy" if valid else "accuracy")))
            for kind in KINDS if kinds}
    formal, informal = best[FORMAL][0], best[INFORMAL][0]
    return {"formal": formal, "informal": informal,
            "average": None if formal is None or informal is None else (formal + informal) / 2,
            "formal_mean": mean[FORMAL], "informal_mean": mean[INFORMAL],
            "best_prompt": {a: best[a][1] for a in ATTRIBUTES}, "chosen_on": chosen_on, "by_kind": by_kind,
            "prompts": scored, "lines": sum(j is not None for j in test_set.labellers), "test_set": test_set.where}


def meaning_chrf(hyps: Sequence[str], references: Sequence[Sequence[str]], where: str) -> float:
    """Mean sentence chrF (sacrebleu's chrF2, 0-100) of `hyps` against `references` (one list of lines per
    reference file; a line scores against its best-matching reference, as sacrebleu does)."""
    from sacrebleu.metrics import CHRF

    if not hyps or any(len(ref) != len(hyps) for ref in references):
        raise ValueError(f"{where}: {len(hyps)} hypotheses, references of {[len(r) for r in references]} lines; "
                         "translate the whole test set, one line per source line")
    metric = CHRF()
    return sum(metric.sentence_score(h, list(refs)).score for h, *refs in zip(hyps, *references)) / len(hyps)


def score_style(hyp_paths: Mapping[int, str | Path], test_set: FormalityTestSet,
                meaning_references: Sequence[str | Path]) -> dict:
    """The fields of a supervised style-control record (Jeong et al.'s models; Table 5's supervised rows):
    `hyp_paths` {level 1..5: hypotheses at that level}. The formal accuracy is that of the output at level 5,
    the informal that of level 1 (Jeong et al.'s extremes; nothing is chosen); `levels`: every level's counts,
    formal accuracy, FORMAL / (FORMAL + INFORMAL) (the sweep), and `meaning_chrf` against the plain
    `meaning_references` (`meaning_chrf`)."""
    if not {1, 5} <= set(hyp_paths):
        raise ValueError(f"style levels {sorted(hyp_paths)}: the outputs at levels 1 and 5 are needed")
    if not meaning_references:
        raise ValueError("style levels: meaning preservation needs the plain references (one file or more)")
    references = [read_lines(Path(r)) for r in meaning_references]
    prompts = [{"id": "level5", "attribute": FORMAL, "text": "style level 5"},
               {"id": "level1", "attribute": INFORMAL, "text": "style level 1"}]
    scores = score_formality({"level5": hyp_paths[5], "level1": hyp_paths[1]}, prompts, test_set)
    levels = []
    for level, path in sorted(hyp_paths.items()):
        scored = _scored(path, test_set)
        levels.append({"level": level, "counts": scored["counts"], "hyp_sha256": scored.get("hyp_sha256"),
                       "formal_accuracy": accuracy(scored["counts"], FORMAL),
                       "meaning_chrf": meaning_chrf(read_lines(Path(path)), references, str(path))})
    return {**scores, "chosen_on": None, "control": "supervised", "levels": levels,
            "meaning_references": [str(r) for r in meaning_references]}


def _choose(scored: list[dict], key: str) -> tuple[dict, dict]:
    """Per attribute: (test accuracy, id) of the prompt with the best `key` accuracy (ties: the first),
    and the mean test accuracy over the attribute's prompts (the authors' code logs it beside the best)."""
    best, mean = {}, {}
    for attribute in ATTRIBUTES:
        mine = [s for s in scored if s["attribute"] == attribute]
        top = max((s for s in mine if s.get(key) is not None), key=lambda s: s[key], default=None)
        best[attribute] = (None, None) if top is None else (top["accuracy"], top["id"])
        mean[attribute] = _mean([s["accuracy"] for s in mine if s["accuracy"] is not None])
    return best, mean


def _kind_summary(scored: list[dict], key: str) -> tuple[dict, dict, dict]:
    best, mean = _choose(scored, key)
    return {a: best[a][1] for a in ATTRIBUTES}, {a: best[a][0] for a in ATTRIBUTES}, mean


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def score_standalone(hyp: str | Path, formal_ref: str | Path, informal_ref: str | Path, no_spaces: bool = False) -> dict:
    """The official scorer's result for one hypothesis file: the four counts and both accuracies."""
    test_set = FormalityTestSet.from_references(formal_ref, informal_ref, no_spaces)
    counts = test_set.counts(read_lines(Path(hyp)), str(hyp))
    return {"hyp": str(hyp), "lines": sum(counts.values()), "counts": counts,
            "formal_accuracy": accuracy(counts, FORMAL), "informal_accuracy": accuracy(counts, INFORMAL)}
