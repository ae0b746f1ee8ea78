"""The study on more cores: its critical path, its total work and a projected wall time per core count,
from Snakemake's `benchmark:` files and the study's DAG (docs/benchmarks.md, "The demo on more cores").

A job's time is the wall seconds (column `s`) of its benchmark file; a job without one (rule `all`) or
whose file is missing (an unfinished study) counts 0 s and is listed. The projection is a list schedule:
a job starts once its inputs are done and its threads' cores are free, the ready job with the longest
remaining path first; a stand-in for Snakemake's scheduler, which has no such priority (it favours rule
priority), so the projection is what a good scheduler reaches. No schedule beats max(critical path,
total work / cores), given as the lower bound.
"""
from __future__ import annotations

import csv
import math
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mtcue.schedule import Job, critical_path, list_schedule, total_work

log = logging.getLogger("mtcue")
CORES = (2, 4, 8, 16)


def projection(jobs: list[Job], cores: tuple[int, ...] = CORES) -> dict:
    """Total work, critical path, its chain and the projected and lowest possible wall time per core count."""
    seconds, chain = critical_path(jobs)
    work = total_work(jobs)
    return {
        "total_work_s": round(work, 2),
        "critical_path_s": round(seconds, 2),
        "chain": chain,
        "projected_wall_s": {str(c): round(list_schedule(jobs, c), 2) for c in cores},
        "lower_bound_s": {str(c): round(max(seconds, sum(j.time * min(j.threads, c) for j in jobs) / c), 2)
                          for c in cores},
    }


def job_name(rule: str, wildcards: dict[str, str]) -> str:
    """'train en-de/base': the rule, then its wildcards' values in the order of its output pattern."""
    return " ".join([rule, "/".join(str(v) for v in wildcards.values())]) if wildcards else rule


def benchmark_seconds(path: Path) -> float:
    """Wall seconds of a benchmark file: column `s`, summed over its rows (one per repeat of the job).
    A file that is not one Snakemake wrote whole is an error naming its line and column."""
    redo = "run its job again, or remove the file to count the job as unmeasured"
    with open(path, newline="", encoding="utf-8") as f:
        rows = csv.DictReader(f, delimiter="\t")
        if rows.fieldnames is None:
            raise ValueError(f"{path}: empty, not a Snakemake benchmark file; {redo}")
        if "s" not in rows.fieldnames:
            raise ValueError(f"{path}:1: no column 's' (columns: {', '.join(rows.fieldnames)}); {redo}")
        total, n = 0.0, 0
        for row in rows:
            try:
                seconds = float(row["s"])
            except (TypeError, ValueError):
                seconds = math.nan
            if not (math.isfinite(seconds) and seconds >= 0):
                raise ValueError(f"{path}:{rows.line_num}: column 's' is {row['s']!r}, not a number of seconds >= 0; "
                                 f"{redo}")
            total, n = total + seconds, n + 1
    if not n:
        raise ValueError(f"{path}: no row below its header; {redo}")
    return total


@dataclass(frozen=True)
class DagJob:
    name: str
    deps: tuple[str, ...]
    threads: int
    benchmark: str | None  # relative to the study's folder


def study_dag(snakefile: Path, configfiles: list[Path], cores: int = max(CORES)) -> list[DagJob]:
    """Every job of the study's default target (`all`), forced, so a finished study lists them all too.
    Built in an empty folder: the study's own folder (and its lock, held by a running Snakemake) is not
    touched, and the DAG has no checkpoints, so it does not depend on what is there."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings

    snakefile, configfiles = Path(snakefile).absolute(), [Path(c).absolute() for c in configfiles]
    with tempfile.TemporaryDirectory(prefix="mtcue-dag-") as empty, \
            SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        # `cores` above any rule's threads: Snakemake caps a job's threads at the cores it is given.
        workflow_api = api.workflow(ResourceSettings(cores=cores), ConfigSettings(configfiles=configfiles),
                                    snakefile=snakefile, workdir=Path(empty))
        workflow_api.dag(DAGSettings(forceall=True))
        workflow = workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        dag = workflow.dag
        names = {job: job_name(job.rule.name, dict(job.wildcards_dict)) for job in dag.jobs}
        return [DagJob(names[job], tuple(sorted(names[d] for d in dag.dependencies[job])), int(job.threads),
                       str(job.benchmark) if job.benchmark else None)
                for job in dag.jobs]


def timed_jobs(dag: list[DagJob], study: Path) -> tuple[list[Job], list[str], list[str]]:
    """The DAG's jobs with their benchmark times; the jobs without a benchmark file in the rule and those
    whose file is missing (both count 0 s)."""
    jobs, unmeasured, missing = [], [], []
    for d in dag:
        path = study / d.benchmark if d.benchmark else None
        if path is None:
            unmeasured.append(d.name)
        elif not path.is_file():
            missing.append(d.name)
        seconds = benchmark_seconds(path) if path is not None and path.is_file() else 0.0
        jobs.append(Job(d.name, seconds, d.deps, d.threads))
    return jobs, sorted(unmeasured), sorted(missing)


def observed_span(dag: list[DagJob], study: Path) -> float | None:
    """Seconds from the first measured job's start to the last one's end: Snakemake writes a benchmark file
    as its job ends, so its mtime is the end and mtime - s the start. The study's wall time when it ran in
    one go; it also spans any pause of a resumed study, and copies without their mtimes are meaningless."""
    spans = []
    for d in dag:
        path = study / d.benchmark if d.benchmark else None
        if path is not None and path.is_file():
            end = os.stat(path).st_mtime
            spans.append((end - benchmark_seconds(path), end))
    return round(max(e for _, e in spans) - min(s for s, _ in spans), 2) if spans else None


def write_critical_path(snakefile: Path, configfiles: list[Path], study: Path, out: Path,
                        cores: tuple[int, ...] = CORES) -> dict:
    from mtcue.io import atomic_write_text

    dag = study_dag(snakefile, configfiles, max(cores))
    jobs, unmeasured, missing = timed_jobs(dag, Path(study))
    result = {**projection(jobs, cores), "jobs": len(jobs), "observed_span_s": observed_span(dag, Path(study)),
              "unmeasured_jobs": unmeasured, "missing_benchmarks": missing}
    if missing:
        log.warning("%d of %d jobs have no benchmark file (counted 0 s): the study is unfinished", len(missing),
                    len(jobs))
    atomic_write_text(out, json.dumps(result, indent=1) + "\n")
    return result
