"""`mtcue <step> ...`: every pipeline step, runnable by hand exactly as Snakemake runs it.

Each stage declares its own steps in its `cli.py` (data, context, models, evaluation, reporting);
`snakemake -n -p <target>` prints the command line of each step.
"""
from __future__ import annotations

import argparse
import importlib
import json
import logging
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterable

from mtcue import config as cfgmod
from mtcue.io import step_outputs

log = logging.getLogger("mtcue")
# The checkout the code runs from (editable install): records name its commit.
CODE_DIR = Path(__file__).resolve().parents[2]
STAGES = ("data", "context", "models", "evaluation", "reporting")


def spec_from_args(args: argparse.Namespace) -> dict:
    """A model spec from --spec (JSON, as Snakemake passes it) or --config + --model (by hand)."""
    if args.spec:
        return json.loads(args.spec)
    if not (args.config and args.model):
        raise cfgmod.ConfigError("give --spec JSON, or --config FILE with --model NAME")
    return cfgmod.model_spec(cfgmod.load(args.config), args.model, args.direction)


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


def corpora_from_args(args: argparse.Namespace) -> dict[str, str]:
    """--corpus SPLIT=PATH options as {split: path}."""
    return dict(item.split("=", 1) for item in args.corpus)


Outputs = Callable[[argparse.Namespace], Iterable[str | Path | None]]


def options(*names: str) -> Outputs:
    """A step's output files: the values of these options (dest names; one not given is None)."""
    return lambda args: [getattr(args, name) for name in names]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtcue", description=__doc__)
    sub = p.add_subparsers(dest="step", required=True, metavar="STEP")

    def step(name: str, fn, help_: str, outputs: Outputs = lambda args: ()):
        """A step; `outputs`: the files it writes by name, guarded by io.step_outputs (a folder it
        writes whole is guarded by io.atomic_directory instead)."""
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(fn=fn, outputs=outputs)
        return sp

    for stage in STAGES:
        importlib.import_module(f"mtcue.{stage}.cli").register(step)
    return p


def _exit(signum, _frame):
    # SIGTERM (Snakemake cancelling a job, SLURM's time limit, kill) unwinds like an error, so every step's
    # temporary and staging folders are removed on the way out.
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _exit)
    try:
        with step_outputs(args.step, *args.outputs(args)):  # refused before any work: nothing changed
            args.fn(args)
    except (cfgmod.ConfigError, ValueError, OSError, RuntimeError) as err:
        log.error("%s failed: %s", args.step, err)
        return 1
    except subprocess.CalledProcessError as err:
        log.error("%s failed: %s exited with %s (its output is above)", args.step, err.cmd[:3], err.returncode)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
