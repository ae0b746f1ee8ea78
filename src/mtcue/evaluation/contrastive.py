"""Contrastive evaluation: verdicts and accuracies from candidate scores (docs/formats.md, section 8).

A suite example lists `candidates` (target strings) and the index of the `correct` one; a model gives
each candidate a log-probability (summed over its tokens) and a token count. Each suite is judged by its
own official scorer's rule (`RULES`), which its lines record (`rule`, written by the step that builds it).
ContraPro's evaluate.py, which Lopes et al.'s set and the synthetic suites follow: right only when the
correct candidate scores strictly above every other (`better(score, errorscore)` for every error, with
`gt`), so a tie is wrong. Voita et al.'s
evaluate_consistency.py: right when the correct candidate is the argmin of the losses, and numpy's
argmin returns the first of tied minima, so a tie is right when the correct candidate comes first among
the tied. Ties (the correct candidate equal to the best other) are counted apart under either rule.
Both the summed and the per-token mean score are judged. Accuracy is reported overall and
per value of every key of the examples' `group` (ContraPro: pronoun, category, antecedent distance;
Lopes et al.: pronoun; Voita et al. 2019: the test set and context distance).

This module reads scores only; the forced decoding that makes them is mtcue.models.contrastive, the suite
format both read mtcue.suites.
"""
from __future__ import annotations

from collections import defaultdict

from mtcue.suites import FIRST_AMONG_TIED, RULES, STRICT, check_example

# Sets whose candidates differ where only the *target-side* context decides (Voita et al. 2019: the
# T-V form or the name's translation used in earlier target lines): a model reading source context
# only cannot tell its candidates apart from the context, so its score there is no measure of context use.
# Known by the suite's content (its examples' group "set", which the converter writes), not by its file's name,
# which a copy renames.
TARGET_CONTEXT_SETS = frozenset({"deixis", "lex_cohesion"})
MEASURES = ("sum", "mean")


def needs_target_context(examples: list[dict]) -> bool:
    """Whether the suite is one of the sets only target-side context decides (TARGET_CONTEXT_SETS)."""
    return any(example.get("group", {}).get("set") in TARGET_CONTEXT_SETS for example in examples)


def verdict(scores: list[float], correct: int, rule: str = STRICT) -> tuple[bool, bool]:
    """(right, tie) by `rule` (`RULES`): tie when the correct candidate equals the best other."""
    if rule not in RULES:
        raise ValueError(f"unknown verdict rule {rule!r}: {', '.join(RULES)}")
    best_other = max(s for k, s in enumerate(scores) if k != correct)
    tie = scores[correct] == best_other
    if rule == FIRST_AMONG_TIED:  # np.argmin(-scores) == correct
        return scores[correct] >= best_other and all(s < scores[correct] for s in scores[:correct]), tie
    return scores[correct] > best_other, tie


def _tally() -> dict:
    return {"right": 0, "n": 0, "ties": 0}


def _summary(t: dict) -> dict:
    return {"accuracy": t["right"] / t["n"] if t["n"] else None, "n": t["n"], "ties": t["ties"]}


def evaluate(examples: list[dict], scores: list[list[tuple[float, int]]], rule: str = STRICT) -> dict:
    """Verdicts and accuracies of `scores` (per example, per candidate: (summed log-prob, tokens)) by `rule`.

    Returns {"rule", "n", "accuracy", "ties" (summed scores), "mean": {"accuracy", "ties"} (per-token mean),
    "groups": {key: {value: {"accuracy", "n", "ties", "mean": {...}}}}, "examples": [per example: id,
    group, correct, sum, tokens, right, tie, right_mean, tie_mean]}."""
    if len(examples) != len(scores):
        raise ValueError(f"{len(examples)} examples but {len(scores)} score lists")
    overall = {m: _tally() for m in MEASURES}
    groups: dict[str, dict[str, dict]] = defaultdict(lambda: defaultdict(lambda: {m: _tally() for m in MEASURES}))
    rows = []
    for i, (example, per_candidate) in enumerate(zip(examples, scores)):
        check_example(example, f"example {i + 1} ({example.get('id')})")
        if len(per_candidate) != len(example["candidates"]):
            raise ValueError(f"example {i + 1} ({example.get('id')}): {len(example['candidates'])} candidates but "
                             f"{len(per_candidate)} scores")
        sums = [float(s) for s, _ in per_candidate]
        tokens = [int(t) for _, t in per_candidate]
        judged = {"sum": verdict(sums, example["correct"], rule),
                  "mean": verdict([s / t for s, t in zip(sums, tokens)], example["correct"], rule)}
        tallies = [overall] + [groups[key][str(value)] for key, value in example.get("group", {}).items()]
        for measure, (right, tie) in judged.items():
            for t in tallies:
                t[measure]["n"] += 1
                t[measure]["right"] += right
                t[measure]["ties"] += tie
        rows.append({"id": example.get("id"), "group": example.get("group", {}), "correct": example["correct"],
                     "sum": sums, "tokens": tokens, "right": judged["sum"][0], "tie": judged["sum"][1],
                     "right_mean": judged["mean"][0], "tie_mean": judged["mean"][1]})

    def block(t: dict) -> dict:
        mean = _summary(t["mean"])
        return {**_summary(t["sum"]), "mean": {"accuracy": mean["accuracy"], "ties": mean["ties"]}}

    return {"rule": rule, **block(overall),
            "groups": {key: {value: block(t) for value, t in sorted(values.items())}
                       for key, values in sorted(groups.items())},
            "examples": rows}
