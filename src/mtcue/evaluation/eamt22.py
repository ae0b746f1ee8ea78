"""EAMT22 control of attributes about the dialogue participants (Vincent et al., 2022b; MTCue paper
section 3.2): each test line asks, through its attribute sentences ("I am a man", "I'm talking to a
group of people", "Formal": the paper's wording, data/evalsets.attribute_sentences), for one value of
each attribute; per attribute, a hypothesis is correct when it shows the requested value, incorrect
when it shows another, and ignored otherwise. Accuracy = correct / (correct + incorrect); the summary
is the mean over the attributes. BLEU as in score.py.

How a hypothesis shows a value (the detector):
- `labels`: the marker words of the corpus's gold labels (the synthetic corpus renders every line once per
  value, docs/formats.md section 1); only the attributes the line's reference shows are judged;
- `polish`: Morfeusz-2 rules over Polish (mtcue.polish, the official detector's logic; the line's
  English source feeds its English checks), for output without labels; every
  requested attribute is judged, except on a row of the official test set, which tests one (`target`)
  and counts as incorrect only the official evaluator's opposite value (OFFICIAL_OPPOSITE).
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from mtcue.corpus import ADDRESSEE_CUES, FORMALITY_CUES, GROUP, SPEAKER_CUES, marker_tokens
from mtcue.data.evalsets import ADDRESSEE_SENTENCES
from mtcue.evaluation.score import (
    bleu,
    direction_langs,
    hyp_provenance,
    judge_markers,
    outcome,
    read_hyps_and_corpus,
    with_accuracy,
)

ATTRIBUTES = ("speaker_gender", "addressee_gender", "addressee_number", "formality")
DETECTORS = ("labels", "polish")
# What each attribute sentence requests (EAMT22: a group of people is of mixed gender).
REQUESTS: dict[str, dict[str, str]] = {
    **{sentence: {"speaker_gender": g} for g, sentence in SPEAKER_CUES.items()},
    **{sentence: {"addressee_number": number, **({"addressee_gender": gender} if gender else {})}
       for (number, gender), sentence in ADDRESSEE_SENTENCES.items() if sentence != ADDRESSEE_CUES[GROUP]},
    ADDRESSEE_CUES[GROUP]: {"addressee_gender": "mixed", "addressee_number": "plural"},
    **{sentence: {"formality": f} for f, sentence in FORMALITY_CUES.items()},
}


def requested(cues: list[str], where: str = "") -> dict[str, str]:
    """{attribute: value} that a line's attribute sentences ask for."""
    out: dict[str, str] = {}
    for sentence in cues:
        if sentence not in REQUESTS:
            raise ValueError(f"{where}: {sentence!r} is not an EAMT22 attribute sentence "
                             f"(known: {sorted(REQUESTS)})")
        out.update(REQUESTS[sentence])
    return out


def judge_by_labels(hyp: str, request: Mapping[str, str], labels: Mapping[str, dict], where: str = "") -> dict:
    """{attribute: outcome} for the attributes the line's gold labels mark."""
    tokens = marker_tokens(hyp)
    out = {}
    for attribute, label in labels.items():
        if attribute not in ATTRIBUTES:
            continue
        if request.get(attribute, label["gold"]) != label["gold"]:
            raise ValueError(f"{where}: the attribute sentences ask for {attribute}={request[attribute]} but the "
                             f"gold label is {label['gold']}")
        out[attribute] = judge_markers(tokens, label["gold"], label["markers"])
    return out


def judge_by_detector(found: Mapping[str, set[str]], request: Mapping[str, str]) -> dict:
    """{attribute: outcome} for every requested attribute, from the values a detector found."""
    return {attribute: outcome(value in found.get(attribute, ()), bool(found.get(attribute, set()) - {value}))
            for attribute, value in request.items()}


# The official evaluator's "incorrect" value for each requested one (its reverse_map): a group asked
# for as mixed is wrong only when the hypothesis addresses women.
OFFICIAL_OPPOSITE = {"feminine": "masculine", "masculine": "feminine", "mixed": "feminine",
                     "singular": "plural", "plural": "singular", "formal": "informal", "informal": "formal"}


def judge_official(found: Mapping[str, set[str]], attribute: str, value: str) -> str:
    """An official EAMT22 test row's outcome: only the attribute it tests (`target`), by the official rule."""
    shown = found.get(attribute, set())
    return outcome(value in shown, OFFICIAL_OPPOSITE[value] in shown)


def detector_agreement(rows: list[dict]) -> dict:
    """The Polish detector on the official EAMT22 rows' own references (`polish`, with `english`,
    `context_csv`, `marking`): the share of rows it judges (correct or incorrect by the official rule)
    and, of those, the share that agree with the row's gold `marking`."""
    from mtcue.data.evalsets import official_target
    from mtcue.polish import detect

    counts = {"correct": 0, "incorrect": 0, "ignored": 0}
    for i, row in enumerate(rows):
        attribute, value = official_target(row, f"row {i}")
        counts[judge_official(detect(row["polish"], row["english"]), attribute, value)] += 1
    judged = counts["correct"] + counts["incorrect"]
    return {**counts, "rows": len(rows), "judged_share": judged / len(rows) if rows else None,
            "agreement": counts["correct"] / judged if judged else None}


def score_eamt22(hyp_path, corpus_path, direction: str, detector: str = "labels") -> dict:
    """Per-attribute counts and accuracy, their mean (`accuracy_mean`, None when nothing was judged) and
    BLEU of a hypothesis file against the cleaned test corpus of `direction`."""
    tgt = direction_langs(direction)[1]
    if detector not in DETECTORS:
        raise ValueError(f"unknown detector {detector!r} (known: {', '.join(DETECTORS)})")
    if detector == "polish" and tgt != "pl":
        raise ValueError(f"the 'polish' detector reads Polish output; {direction} translates into {tgt}")
    hyps, samples = read_hyps_and_corpus(hyp_path, corpus_path, direction)
    if detector == "polish":
        from mtcue.polish import detect
    counts = {a: {"correct": 0, "incorrect": 0, "ignored": 0} for a in ATTRIBUTES}
    annotated, segments = 0, []
    for i, (hyp, sample) in enumerate(zip(hyps, samples)):
        where = f"{corpus_path}, line {i + 1}"
        if sample.get("target"):  # a row of the official test set (data/evalsets.py)
            if detector != "polish":
                raise ValueError(f"{where}: an official EAMT22 row is judged by the 'polish' detector, not '{detector}'")
            target = sample["target"]
            if not isinstance(target, dict) or target.get("attribute") not in ATTRIBUTES \
                    or target.get("value") not in OFFICIAL_OPPOSITE:
                raise ValueError(f"{where}: 'target' must name the attribute the row tests ({', '.join(ATTRIBUTES)}) "
                                 f"and its value, got {target!r:.80}: convert the set again (mtcue evalset)")
            found = detect(hyp, sample["text"].get("en"))
            judged = {target["attribute"]: judge_official(found, target["attribute"], target["value"])}
            annotated += 1
        else:
            request = requested(sample.get("cues") or [], where)
            annotated += bool(request)
            if detector == "labels":
                judged = judge_by_labels(hyp, request, (sample.get("labels") or {}).get(tgt, {}), where)
            else:
                judged = judge_by_detector(detect(hyp, sample["text"].get("en")), request)
        for attribute, result in judged.items():
            counts[attribute][result] += 1
        segments.append(segment_stats(judged))
    if not annotated:
        raise ValueError(f"{corpus_path}: no line carries EAMT22 attribute sentences (`cues`)")
    attributes = {a: with_accuracy(c) for a, c in counts.items()}
    judged_accuracies = [c["accuracy"] for c in attributes.values() if c["accuracy"] is not None]
    scores = bleu(hyps, [s["text"][tgt] for s in samples])
    return {
        "detector": detector, "attributes": attributes, "annotated_lines": annotated,
        "accuracy_mean": sum(judged_accuracies) / len(judged_accuracies) if judged_accuracies else None,
        "bleu": scores["bleu"], "bleu_signature": scores["bleu_signature"], "bleu_stats": scores["bleu_stats"],
        "segment_stats": segments, **hyp_provenance(hyp_path, hyps),
    }


def segment_stats(judged: Mapping[str, str]) -> list[int]:
    """A line's statistics for the paired bootstrap of `accuracy_mean`: per attribute (ATTRIBUTES order)
    1/0 correct and 1/0 judged (correct or incorrect)."""
    return [int(n) for a in ATTRIBUTES for n in (judged.get(a) == "correct", judged.get(a) in ("correct", "incorrect"))]


def accuracy_mean_from_stats(stats) -> float:
    """`accuracy_mean` (a fraction) of summed segment_stats; of several runs' statistics side by side
    (one block per run), the mean over runs. NaN where a run judged nothing."""
    width = 2 * len(ATTRIBUTES)
    means = []
    for run in np.asarray(stats, dtype=float).reshape(-1, width):
        correct, judged = run[0::2], run[1::2]
        means.append(float(np.mean(correct[judged > 0] / judged[judged > 0])) if (judged > 0).any() else math.nan)
    return float(np.mean(means))
