"""Every sbatch submission of a study through the SLURM profile, before anything is queued (`mtcue cluster-plan`;
docs/paper-scale.md, "The cluster's own limits").

A dry run (`snakemake -n --profile slurm`, the caller's arguments added) in a Python of its own, each job it would
submit read where the executor receives it: a job group's request as a SLURM run computes it
(`GroupResources.basic_layered(..., run_local=False)`: steps side by side add up, steps one after another add
their minutes), which a dry run itself neither uses nor prints. A dry run caps every job's threads at its
--cores (1 unless given); a SLURM run caps nothing, so neither does this one.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

UNCAPPED_CORES = 1_000_000
PROFILE = Path("slurm") / "config.yaml"  # the SLURM profile where Snakemake finds it from the repository root
COLUMNS = ("submission", "jobs", "GPUs", "CPUs", "mem_mb", "minutes", "partition")


def profile_jobs(profile: Path = PROFILE) -> int | None:
    """The profile's `jobs` (at most this many queued or running at once), or None where there is no profile."""
    return yaml.safe_load(profile.read_text()).get("jobs") if profile.exists() else None


def request(job) -> dict | None:
    """One submission: {submission (the rule and its wildcards, or the group job), kind (the rule, or the group's
    name in the rules), jobs, GPUs, CPUs, mem_mb, minutes, partition, account}; None for a local rule."""
    from snakemake.resources import GroupResources

    if job.is_group():
        res = GroupResources.basic_layered(toposorted_jobs=job.toposorted, constraints=job.global_resources,
                                           run_local=False, additive_resources=["runtime"], sortby=["runtime"])
        name, kind, jobs = job.groupid, next(iter(job.jobs)).rule.group, len(job.jobs)
    # a local rule: what Workflow.is_local reads on a cluster run (a dry run counts every job as local)
    elif job.rule.norun or job.rule.name in job.rule.workflow._localrules:
        return None
    else:
        res = dict(job.resources.items())
        wildcards = ", ".join(str(v) for v in job.wildcards_dict.values())
        name, kind, jobs = f"{job.rule.name} ({wildcards})" if wildcards else job.rule.name, job.rule.name, 1
    return {"submission": name, "kind": kind, "jobs": jobs, "GPUs": res.get("gpu", 0),
            # the SLURM plugin's --cpus-per-task: cpus_per_task if a job sets it, else its threads
            "CPUs": res.get("cpus_per_task") or res["_cores"], "mem_mb": res.get("mem_mb", 0),
            "minutes": res.get("runtime", 0), "partition": res.get("slurm_partition", "(default)"),
            "account": res.get("slurm_account", "(none)")}


def plan_submissions(snakemake_args: list[str], cwd: str | Path | None = None) -> list[dict]:
    """The submissions (`request`) of `snakemake -n --profile slurm *snakemake_args` in `cwd` (default: the
    current folder), in the order the dry run submits them; a failed dry run raises with the end of its output."""
    with tempfile.TemporaryDirectory(prefix="cluster-plan-") as tmp:
        out = Path(tmp) / "submissions.json"
        run = subprocess.run([sys.executable, "-m", "mtcue.plan.submissions", str(out), *snakemake_args],
                             cwd=cwd, capture_output=True, text=True)
        if run.returncode:
            raise RuntimeError(f"the dry run failed:\n{(run.stdout + run.stderr)[-3000:]}")
        return json.loads(out.read_text())


def _dry_run(out: str, snakemake_args: list[str]) -> None:
    """Run the dry run here, each submission read as the dry-run executor receives it, and write them to `out`."""
    from snakemake import cli
    from snakemake.executors import dryrun

    seen, original = [], dryrun.Executor.run_job

    def run_job(executor, job):
        seen.append(request(job))
        original(executor, job)

    dryrun.Executor.run_job = run_job
    try:
        cli.main(["-n", "--profile", "slurm", "--cores", str(UNCAPPED_CORES), *snakemake_args])
    except SystemExit as exit_:
        if exit_.code:
            raise
    Path(out).write_text(json.dumps([s for s in seen if s is not None]))


def _row(values) -> str:
    return "| " + " | ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in values) + " |"


def _totals(subs: list[dict]) -> list[str]:
    most = {c: max((s[c] for s in subs), default=0) for c in ("minutes", "mem_mb", "GPUs", "CPUs")}
    return [f"- {len(subs):,} submissions of {sum(s['jobs'] for s in subs):,} jobs, "
            f"{sum(s['GPUs'] * s['minutes'] for s in subs) / 60:,.0f} GPU-hours asked; the most one asks: "
            f"{most['minutes']:,} minutes, {most['mem_mb']:,} MB, {most['GPUs']} GPU{'s' * (most['GPUs'] != 1)}, "
            f"{most['CPUs']} CPU{'s' * (most['CPUs'] != 1)}."]


def submissions_markdown(subs: list[dict]) -> str:
    """Every submission, one row each."""
    lines = [_row(COLUMNS), "| --- |" + " ---: |" * 5 + " --- |"]
    lines += [_row(s[c] for c in COLUMNS) for s in subs]
    return "\n".join([*lines, "", *_totals(subs)]) + "\n"


def summary_markdown(subs: list[dict]) -> str:
    """The submissions by rule or group and partition: how many, the range of each request, the GPU-hours asked."""
    kinds: dict[tuple, list[dict]] = {}
    for s in subs:
        kinds.setdefault((s["kind"], s["partition"]), []).append(s)
    span = lambda values: f"{min(values):,}" if min(values) == max(values) else f"{min(values):,}-{max(values):,}"
    lines = [_row(("rule or group", "submissions", "GPUs", "CPUs", "mem_mb", "minutes", "GPU-hours asked",
                   "partition")), "| --- |" + " ---: |" * 6 + " --- |"]
    lines += [_row((kind, len(group), *(span([s[c] for s in group]) for c in ("GPUs", "CPUs", "mem_mb", "minutes")),
                    f"{sum(s['GPUs'] * s['minutes'] for s in group) / 60:,.0f}", partition))
              for (kind, partition), group in sorted(kinds.items())]
    return "\n".join([*lines, "", *_totals(subs)]) + "\n"

if __name__ == "__main__":
    _dry_run(sys.argv[1], sys.argv[2:])
