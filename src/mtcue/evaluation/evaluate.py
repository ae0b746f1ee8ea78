"""`mtcue evaluate`: a trained model's evaluation in one process, its steps one after another.

Each task is the command line of an existing step (`["translate", "--spec", ...]`, `["score", ...]`), run as
`mtcue <step> ...` would run it, so that its outputs are byte for byte the step's own (records but for their
`created` time): the process imports torch and fairseq once for all of them instead of once per step. The
first task that fails stops the rest, and the step fails with its status; each task writes its outputs
atomically, so a task that did not finish leaves nothing that passes for its output. This module imports
neither fairseq nor a scoring module: it only runs the steps it is given, through the CLI's own dispatcher.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence

log = logging.getLogger("mtcue")

# The steps an evaluation runs: translations (a split, prompts, style levels, an evaluation set), their scores, and
# the forced-decoding measures of a trained model.
EVALUATION_STEPS = frozenset({
    "translate", "translate-prompts", "translate-levels", "translate-corpus",
    "score", "comet", "score-formality", "score-eamt22",
    "context-usage", "score-contrastive", "attention-agreement", "groupings"})


def parse_tasks(text: str) -> list[list[str]]:
    """The tasks of `--tasks` (JSON: a list of command lines, each a list of strings starting with a step of
    EVALUATION_STEPS)."""
    try:
        tasks = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"--tasks: not valid JSON ({err.msg} at character {err.pos})") from None
    if not isinstance(tasks, list) or not tasks:
        raise ValueError("--tasks: a JSON list of command lines, e.g. [[\"score\", \"--hyps\", ...], ...]")
    for i, task in enumerate(tasks):
        if not (isinstance(task, list) and task and all(isinstance(arg, str) for arg in task)):
            raise ValueError(f"--tasks: task {i + 1} is not a command line (a list of strings): {task!r:.80}")
        if task[0] not in EVALUATION_STEPS:
            raise ValueError(f"--tasks: task {i + 1} runs {task[0]!r}, not an evaluation step "
                             f"({', '.join(sorted(EVALUATION_STEPS))})")
    return tasks


def run(tasks: Sequence[Sequence[str]], run_step: Callable[[list[str]], int]) -> int:
    """Run each task through `run_step` (the CLI's `main`, given a command line: its status); the first one to
    fail stops the rest. Returns 0, or the failed task's status."""
    for i, task in enumerate(tasks, 1):
        log.info("evaluate: task %d of %d: mtcue %s", i, len(tasks), task[0])
        code = run_step(list(task))
        if code:
            log.error("evaluate: task %d of %d (mtcue %s) failed with status %s; the %d after it were not run", i,
                      len(tasks), task[0], code, len(tasks) - i)
            return code
    return 0
