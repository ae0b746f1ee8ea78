"""What the stages' command lines share (each stage's `cli.py`, which `mtcue.cli` gathers): option types,
the provenance every record carries and the output files a step declares. Below every stage, it imports none."""
from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable
from pathlib import Path

# The checkout the code runs from (editable install): records name its commit.
CODE_DIR = Path(__file__).resolve().parents[2]


def with_provenance(record: dict, study: str) -> dict:
    """A record with the study name and the commit of the code that made it."""
    from mtcue.records import git_commit

    return {**record, "study": study, "git_commit": git_commit(CODE_DIR)}


def json_option(text: str, option: str):
    """The JSON value of a command-line option; an error naming the option when it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{option}: not valid JSON ({err.msg} at character {err.pos}): {text[:80]!r}") from None


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def significance_level(text: str) -> float:
    """argparse type: a significance level alpha, 0 < alpha <= 0.5 (the config schema's range)."""
    try:
        alpha = float(text)
    except ValueError:
        alpha = None
    if alpha is None or not 0 < alpha <= 0.5:
        raise argparse.ArgumentTypeError(f"{text!r} is not a significance level (0 < alpha <= 0.5, e.g. 0.05)")
    return alpha


def corpora_from_args(args: argparse.Namespace) -> dict[str, str]:
    """--corpus SPLIT=PATH options as {split: path}."""
    return dict(item.split("=", 1) for item in args.corpus)


Outputs = Callable[[argparse.Namespace], Iterable[str | Path | None]]


def options(*names: str) -> Outputs:
    """A step's output files: the values of these options (dest names; one not given is None)."""
    return lambda args: [getattr(args, name) for name in names]
