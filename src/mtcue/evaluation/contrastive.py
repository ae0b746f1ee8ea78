"""Contrastive evaluation: verdicts and accuracies from candidate scores (docs/formats.md, section 8).

A suite example lists `candidates` (target strings) and the index of the `correct` one; a model gives
each candidate a log-probability (summed over its tokens) and a token count. Each suite is judged by its
own official scorer's rule (`RULES`, `rule_of`). ContraPro's evaluate.py, which Lopes et al.'s set and
the synthetic suites follow: right only when the correct candidate scores strictly above every other
(`better(score, errorscore)` for every error, with `gt`), so a tie is wrong. Voita et al.'s
evaluate_consistency.py: right when the correct candidate is the argmin of the losses, and numpy's
argmin returns the first of tied minima, so a tie is right when the correct candidate comes first among
the tied. Ties (the correct candidate equal to the best other) are counted apart under either rule.
Both the summed and the per-token mean score are judged. Accuracy is reported overall and
per value of every key of the examples' `group` (ContraPro: pronoun, category, antecedent distance;
Lopes et al.: pronoun; Voita et al. 2019: the test set and context distance).

This module reads scores only; the forced decoding that makes them is mtcue.models.contrastive.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from mtcue.corpus import sample_problem
from mtcue.io import read_text_lines

# Sets whose candidates differ where only the *target-side* context decides (Voita et al. 2019: the
# T-V form or the name's translation used in earlier target lines): a model reading source context
# only cannot tell its candidates apart from the context, so its score there is no measure of context use.
NEEDS_TARGET_CONTEXT = frozenset({"voita2019_deixis", "voita2019_lex_cohesion"})
MEASURES = ("sum", "mean")
STRICT, FIRST_AMONG_TIED = "strict", "first_among_tied"
RULES = {STRICT: "ContraPro's evaluate.py: the correct candidate strictly best; a tie is wrong",
         FIRST_AMONG_TIED: "Voita et al.'s evaluate_consistency.py: argmin of the losses; a tie is right when the "
                           "correct candidate is first among the tied"}


def rule_of(suite: str) -> str:
    """The official verdict rule of a suite (by its name): Voita et al. 2019's sets their own, the rest ContraPro's."""
    return FIRST_AMONG_TIED if suite.startswith("voita2019_") else STRICT
DIRECTION = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")


def check_example(example: dict, where: str) -> None:
    candidates, correct = example.get("candidates"), example.get("correct")
    if not isinstance(candidates, list) or len(candidates) < 2 or not all(isinstance(c, str) and c.strip()
                                                                           for c in candidates):
        raise ValueError(f"{where}: 'candidates' must list at least two non-empty target strings")
    if not isinstance(correct, int) or isinstance(correct, bool) or not 0 <= correct < len(candidates):
        raise ValueError(f"{where}: 'correct' must be the index of a candidate (0..{len(candidates) - 1}), "
                         f"got {correct!r}")
    group = example.get("group", {})
    if not isinstance(group, dict):
        raise ValueError(f"{where}: 'group' must be an object such as {{\"pronoun\": \"sie\", \"distance\": 2}}")


def read_suite(path: str | Path, direction: str | None = None) -> list[dict]:
    """The examples of a suite file (JSONL, docs/formats.md section 8), checked; errors name file and line.
    Each example's `direction` is the suite's language pair: its lines' own, else the folder's
    (results/eval/contrastive/{direction}/). `direction`: the scoring model's; a suite of another pair is refused."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: contrastive suite not found (run the step that writes it first)")
    folder = path.parent.name if DIRECTION.fullmatch(path.parent.name) else None
    examples, lines = [], {}
    for lineno, line in read_text_lines(path):
        where = f"{path}:{lineno}"
        try:
            example = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{where}: not valid JSON ({err.msg})") from None
        if not isinstance(example, dict):
            raise ValueError(f"{where}: expected a JSON object")
        for key in ("id", "doc_id", "text", "previous", "meta", "candidates", "correct"):
            if key not in example:
                raise ValueError(f"{where}: missing field '{key}' (see docs/formats.md, section 8)")
        pair = example.setdefault("direction", folder)
        if pair is None:
            raise ValueError(f"{where}: the suite names no language pair: give each line a 'direction' (\"en-de\"), "
                             "or keep the file in results/eval/contrastive/{direction}/")
        if not isinstance(pair, str) or not DIRECTION.fullmatch(pair):
            raise ValueError(f"{where}: 'direction' must be a language pair such as \"en-de\", got {pair!r}")
        if examples and pair != examples[0]["direction"]:
            raise ValueError(f"{where}: an {pair} example, but line 1 is {examples[0]['direction']}: a suite holds "
                             "one language pair")
        # the corpus format's source side: the scoring reads these fields as the translation step does
        problem = sample_problem(example, (pair.split("-")[0],), sides=1)
        if problem:
            raise ValueError(f"{where}: {problem} (see docs/formats.md, sections 1 and 8)")
        check_example(example, where)
        if not isinstance(example["id"], str):
            raise ValueError(f"{where}: 'id' must be a string, got {example['id']!r}")
        if example["id"] in lines:  # it would be counted once per copy
            raise ValueError(f"{where}: id {example['id']!r} again (first on line {lines[example['id']]}): "
                             "each example once")
        lines[example["id"]] = lineno
        examples.append(example)
    if not examples:
        raise ValueError(f"{path}: the suite has no examples")
    if direction is not None:
        check_direction(examples, direction, path)
    return examples


def check_direction(examples: list[dict], direction: str, path: str | Path) -> None:
    """Refuse scoring the suite `examples` (read from `path`) with a model of another language pair."""
    suite = examples[0]["direction"]
    if suite != direction:
        raise ValueError(f"{path}: a suite of {suite}, but the model translates {direction}: score it with a model "
                         f"of {suite}, or give a suite of {direction}")


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


def contrapro_distance(distance: int) -> str:
    """ContraPro's antecedent-distance bucket: 0, 1, 2, 3 or >3 sentences back."""
    return ">3" if int(distance) > 3 else str(int(distance))
