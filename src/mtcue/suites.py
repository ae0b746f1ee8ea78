"""The contrastive suite format (docs/formats.md, section 8): corpus-format samples with candidate
translations and the index of the correct one. The data stage writes suites (its converters, the synthetic
generator), the models stage force-decodes them and evaluation judges the scores: all three read it here.
"""
from __future__ import annotations

import re
from pathlib import Path

from mtcue.corpus import sample_problem
from mtcue.io import parse_json, read_text_lines

DIRECTION = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")
# The official verdict rules. A suite's own is written into each of its lines (`rule`) by the step that builds
# it, from the set it converts: a file's or a suite's name says nothing to the scorer (a Voita et al. set
# saved under another name keeps its rule).
STRICT, FIRST_AMONG_TIED = "strict", "first_among_tied"
RULES = {STRICT: "ContraPro's evaluate.py: the correct candidate strictly best; a tie is wrong",
         FIRST_AMONG_TIED: "Voita et al.'s evaluate_consistency.py: argmin of the losses; a tie is right when the "
                           "correct candidate is first among the tied"}


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
        example = parse_json(line, path, lineno)
        if not isinstance(example, dict):
            raise ValueError(f"{where}: expected a JSON object")
        if "rule" not in example:
            raise ValueError(f"{where}: the suite records no verdict rule ('rule'; written before suites carried "
                             f"their rule): rebuild {path} with `mtcue contrastive-suite` (or delete it and rerun "
                             "Snakemake)")
        for key in ("id", "doc_id", "text", "previous", "meta", "candidates", "correct"):
            if key not in example:
                raise ValueError(f"{where}: missing field '{key}' (see docs/formats.md, section 8)")
        if not isinstance(example["rule"], str) or example["rule"] not in RULES:
            raise ValueError(f"{where}: 'rule' must be one of {', '.join(RULES)}, got {example['rule']!r}")
        if examples and example["rule"] != examples[0]["rule"]:
            raise ValueError(f"{where}: rule {example['rule']!r}, but line 1's is {examples[0]['rule']!r}: a suite "
                             "is judged by one rule")
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



def contrapro_distance(distance: int) -> str:
    """ContraPro's antecedent-distance bucket (0, 1, 2, 3 or >3 sentences back): a contrastive suite's
    `group.distance` (docs/formats.md, section 8), written by the data stage, read by evaluation."""
    return ">3" if int(distance) > 3 else str(int(distance))
