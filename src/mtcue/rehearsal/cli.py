"""The rehearsal's step: `mtcue rehearsal`, registered beside the stages' steps (mtcue.cli)."""
from __future__ import annotations

import logging
import shlex

log = logging.getLogger("mtcue")


def cmd_rehearsal(a):
    from mtcue.rehearsal.run import rehearse

    summary = rehearse(a.repo, a.out, a.study, a.plan, a.targets, a.cores, a.profile, a.dry_run, a.slice,
                       shlex.split(a.snakemake or ""))
    made = list(summary["tables_and_figures"].values())
    log.info("rehearsal: %d jobs planned, %d executed, %d failed; %d of %d tables and figures; %.0f s -> %s/summary.md",
             summary["planned"], summary["executed"], len(summary.get("failed", [])), made.count("made"), len(made),
             summary["wall_s"], a.out)
    if summary["exit"] != 0:
        raise RuntimeError(f"the rehearsal stopped (Snakemake exit {summary['exit']}): {a.out}/summary.md lists "
                           "what failed")


def register(step) -> None:
    s = step("rehearsal", cmd_rehearsal, "run the paper's study on miniature copies of its sources (docs/paper-scale.md)")
    s.add_argument("targets", nargs="*", help="outputs to make (paths under results/); default: the whole study")
    s.add_argument("--study", default="config/paper.yaml", help="the study's config, read as it is")
    s.add_argument("--plan", default="config/rehearsal.yaml", help="what the rehearsal changes (sizes, stand-ins)")
    s.add_argument("--out", default="results-rehearsal", help="folder of the sources, the run and its summary")
    s.add_argument("--repo", default=".", help="the repository whose Snakefile runs")
    s.add_argument("--cores", default="all")
    s.add_argument("--profile", help="a Snakemake profile, e.g. slurm (then --cores is the profile's)")
    s.add_argument("--slice", help="a slice of the study: YAML of directions kept and experiment keys replaced "
                   "(CI's: tests/data/rehearsal_slice.yaml)")
    s.add_argument("--snakemake", help="more options of the run, one string (e.g. "
                   "--snakemake=\"--slurm-status-command squeue\" on the test cluster of tests/local_slurm.py)")
    s.add_argument("--dry-run", action="store_true", help="build the sources and plan the jobs; run none")
