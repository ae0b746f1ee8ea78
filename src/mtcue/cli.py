"""`mtcue <step> ...`: every pipeline step, runnable by hand exactly as Snakemake runs it.

Each stage declares its own steps in its `cli.py` (data, context, models, evaluation, reporting), and so does
the rehearsal above them (`mtcue.rehearsal.cli`), with the option helpers of `mtcue.options`;
`snakemake -n -p <target>` prints the command line of each step.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import signal
import subprocess
import sys

from mtcue import warm
from mtcue.options import Outputs
from mtcue.outputs import step_outputs
from mtcue.study import ConfigError

log = logging.getLogger("mtcue")
STAGES = ("data", "context", "models", "evaluation", "reporting")
STEP_PACKAGES = (*STAGES, "rehearsal")  # each with a cli.py that registers its steps


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtcue", description=__doc__)
    sub = p.add_subparsers(dest="step", required=True, metavar="STEP")

    def step(name: str, fn, help_: str, outputs: Outputs = lambda args: ()):
        """A step; `outputs`: the files it writes by name, guarded by outputs.step_outputs (a folder it
        writes whole is guarded by outputs.atomic_directory instead)."""
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(fn=fn, outputs=outputs)
        return sp

    for package in STEP_PACKAGES:
        importlib.import_module(f"mtcue.{package}.cli").register(step)
    p.set_defaults(run_step=main)  # a step that runs others (`mtcue evaluate`) runs each as `mtcue <step>` would
    return p


def _exit(signum, _frame):
    # SIGTERM (Snakemake cancelling a job, SLURM's time limit, kill) unwinds like an error, so every step's
    # temporary and staging folders are removed on the way out.
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    # The command line, handed to the warm server (mtcue.warm); help is printed here: it must answer even when
    # a server is stopped (SIGSTOP), which holds a step's command until it goes on.
    if argv is None and warm.enabled() and not {"-h", "--help"} & set(sys.argv[1:]) and len(sys.argv) > 1:
        code = warm.run(sys.argv)
        if code is not None:
            return code
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _exit)
    try:
        with step_outputs(args.step, *args.outputs(args)):  # refused before any work: nothing changed
            args.fn(args)
    except (ConfigError, ValueError, OSError, RuntimeError) as err:
        log.error("%s failed: %s", args.step, err)
        return 1
    except subprocess.CalledProcessError as err:
        log.error("%s failed: %s exited with %s (its output is above)", args.step, err.cmd[:3], err.returncode)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
