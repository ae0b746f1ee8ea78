"""A rehearsal's run: its folder, the dry run and the run of the study's DAG, and the summary (jobs planned and
executed, every table and figure the workflow reports, what failed)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

from mtcue import layout
from mtcue.config import merge, read_yaml, validate
from mtcue.io import atomic_write_text
from mtcue.outputs import OWNED_MARKER, OutputFolderError, exclusive
from mtcue.plan import EXPERIMENTS
from mtcue.rehearsal.configs import is_study, load_plan, override, slice_study
from mtcue.rehearsal.mirror import build_sources
from mtcue.rehearsal.stand_ins import COMET_STAND_IN, OMDB_KEY, comet_stand_in, serve_omdb

# A figure the rule files put in the report, as they write it (`report(layout.figure(name, suffix), ...,
# category="Figures")`); the tables are the registry's (tables.smk).
REPORT_FIGURE = re.compile(r'report\(\s*layout\.figure\(\s*"(\w+)",\s*"(\w+)"\)[^)]*category="Figures"', re.S)


def report_outputs(repo: str | Path) -> list[str]:
    """Every table and figure the workflow reports, by its path in the layout: each table the registered
    experiments declare (its HTML) and each figure of the rule files, the stages' and the experiments' own
    (`REPORT_FIGURE`)."""
    found = [str(layout.table(table.name, "html"))
             for experiment in EXPERIMENTS.values() for table in experiment.tables]
    rule_files = [*Path(repo, "workflow", "rules").glob("*.smk"),
                  *Path(repo, "src", "mtcue", "experiments").glob("*/rules.smk")]
    for rules in sorted(rule_files):
        found += [str(layout.figure(*m.groups())) for m in REPORT_FIGURE.finditer(rules.read_text(encoding="utf-8"))]
    return sorted(found)


def job_stats(output: str) -> dict[str, int]:
    """Snakemake's "Job stats" table (the first one) as {rule: jobs}, with "total"."""
    if "Job stats:" not in output:
        return {"total": 0}
    stats = {}
    for line in output.split("Job stats:", 1)[1].splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        stats[parts[0]] = int(parts[1])
    return stats


FINISHED = re.compile(r"^Finished job(?:id:)? (\d+)\.?", re.M)
ERROR = re.compile(r"^Error in rule ([\w.-]+):\n(.*?)(?:\n\n|\Z)", re.M | re.S)


def failures(output: str, workdir: Path) -> list[dict]:
    """Each failed job: rule, log file and the last line of its log that reads as an error."""
    found = []
    for rule, block in ERROR.findall(output):
        log = re.search(r"^\s*log: (\S+)", block, re.M)
        entry = {"rule": rule, "log": log.group(1) if log else None, "error": None}
        if log and (workdir / log.group(1)).is_file():
            lines = [l for l in (workdir / log.group(1)).read_text(errors="replace").splitlines() if l.strip()]
            errors = [l for l in lines if re.search(r"error|failed|Traceback|Exception", l, re.I)]
            entry["error"] = (errors or lines or [None])[-1]
        found.append(entry)
    return found


def last_line(text: str) -> str:
    """The last line of Snakemake's output that says something: why it stopped."""
    return ([line for line in text.splitlines() if line.strip()] or ["no output"])[-1]


def run_failures(output: str, returncode: int, workdir: Path, log: str) -> list[dict]:
    """`failures`; when Snakemake exited non-zero with no failed job (a locked directory, an option it
    refused), one entry with its last line, so that a summary never counts 0 failed of a run that failed."""
    found = failures(output, workdir)
    if returncode != 0 and not found:
        found = [{"rule": None, "log": log, "error": last_line(output)}]
    return found


def snakemake_command(repo: Path, workdir: Path, configfiles: list[Path], targets: list[str], cores: str,
                      profile: str | None, dry_run: bool) -> list[str]:
    # targets first: --configfile and --quiet take every word after them
    command = [str(Path(sys.executable).parent / "snakemake"), *targets, "--snakefile", str(repo / "Snakefile"),
               "--directory", str(workdir), "--configfile", *map(str, configfiles)]
    if dry_run:
        return [*command, "-n"]
    command += ["--keep-going"]
    return command + (["--profile", profile] if profile else ["--cores", cores])


def claim_folder(out: Path) -> None:
    """`out` becomes the rehearsal's own folder: new, empty, or made by an earlier rehearsal (its marker).
    A rerun continues in it; a folder holding anything else (a user's files, the demo's results) is
    refused before anything is written there."""
    if out == Path.cwd().resolve() or out in Path.cwd().resolve().parents:
        raise OutputFolderError(f"{out}: is the working directory or one of its parents; give the rehearsal a "
                                "folder of its own (--out)")
    marker = out / OWNED_MARKER
    if out.is_dir() and any(out.iterdir()):
        try:
            step = json.loads(marker.read_text(encoding="utf-8")).get("step")
        except (OSError, ValueError, AttributeError):
            step = None
        if step != "rehearsal":
            raise OutputFolderError(f"{out}: holds files no rehearsal wrote; nothing was changed: give --out a new "
                                    "or empty folder, or the folder of an earlier rehearsal")
        return
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(marker, json.dumps({"step": "rehearsal", "files": []}) + "\n")


def rehearse(repo: str | Path, out: str | Path, study: str | Path, plan_path: str | Path,
             targets: list[str] | None = None, cores: str = "all", profile: str | None = None,
             dry_run: bool = False, slice_file: str | Path | None = None,
             snakemake_args: list[str] | None = None) -> dict:
    """Build the sources, plan (dry run) and run the study's DAG in `out`; write and return the summary.
    `slice_file`: a slice of the study (`slice_study`; the sliced study is written to `out`/study.yaml
    and runs in its place). `snakemake_args`: more options of the run (e.g. the test cluster's
    --slurm-status-command squeue)."""
    repo, out, targets, started = Path(repo).resolve(), Path(out).resolve(), list(targets or []), time.time()
    out.parent.mkdir(parents=True, exist_ok=True)
    # One rehearsal per folder, for the whole run: a second one would truncate the first's log under it and
    # write its summary over the first's. It fails at once, naming the folder, and touches nothing there.
    with exclusive(out):
        claim_folder(out)
        plan = load_plan(plan_path)
        study_cfg = read_yaml(study)
        if not is_study(study_cfg):
            raise ValueError(f"{study}: a study's config lists its directions and maps its models to their entries, as "
                             "config/paper.yaml does; is it the right file?")
        study_file = Path(study).resolve()
        if slice_file:
            study_cfg = slice_study(study_cfg, read_yaml(slice_file) or {}, str(slice_file))
            study_file = out / "study.yaml"
            out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(study_file, f"# {study} sliced by {slice_file} (mtcue rehearsal)\n" +
                              yaml.safe_dump(study_cfg, sort_keys=False, allow_unicode=True))
        over = override(study_cfg, plan)
        over["download"] = {**over.get("download", {}), "mirror": str(out / "sources" / "mirror")}
        config = validate(merge(study_cfg, over), source=f"{study_file} + {plan_path}")
        built = build_sources(config, plan["sources"], out / "sources")
        if config["evaluation"]["comet"]["model"] == COMET_STAND_IN:
            comet = out / "stand-ins" / "comet"
            if not (comet / "hparams.yaml").is_file():  # seeded, so a rebuild would be the same model
                from mtcue.context.embed import resolve_encoder_path

                comet_stand_in(comet, resolve_encoder_path("all-MiniLM-L6-v2"))
            over["evaluation"]["comet"]["model"] = str(comet)
        summary = {"study": str(study), "override": str(plan_path), "directions": study_cfg["directions"],
                   "slice": slice_file and str(slice_file), "targets": targets or ["all"], "profile": profile,
                   "sources": len(built["urls"])}
        with serve_omdb(built["omdb"]) as url:
            over.setdefault("corpus", {}).setdefault("omdb", {})["api_url"] = url
            override_file = out / "override.yaml"
            atomic_write_text(override_file, "# Written by mtcue rehearsal from " + str(plan_path) + "\n" +
                              yaml.safe_dump(over, sort_keys=False, allow_unicode=True))
            configfiles = [study_file, override_file]
            env = {**os.environ, "OMDB_API_KEY": OMDB_KEY}
            plan_run = subprocess.run(snakemake_command(repo, out, configfiles, targets, cores, None, True),
                                      capture_output=True, text=True, env=env, cwd=repo)
            planned = job_stats(plan_run.stdout)
            outputs = set(re.findall(r"^\s+output: (.+)$", plan_run.stdout, re.M))
            planned_outputs = {p.strip() for line in outputs for p in line.split(",")}
            summary["planned"] = planned.get("total", 0)
            summary["planned_by_rule"] = {k: v for k, v in planned.items() if k != "total"}
            if plan_run.returncode != 0:
                summary["failed"] = [{"rule": None, "log": None,
                                      "error": "dry run: " + last_line(plan_run.stderr + plan_run.stdout)}]
            if dry_run or plan_run.returncode != 0:
                summary |= {"executed": 0, "exit": plan_run.returncode, "dry_run": True}
            else:
                log_path = out / "rehearsal.log"
                with open(log_path, "w", encoding="utf-8") as log:
                    command = snakemake_command(repo, out, configfiles, targets, cores, profile, False)
                    run = subprocess.run(command + list(snakemake_args or []), stdout=log, stderr=subprocess.STDOUT,
                                         text=True, env=env, cwd=repo)
                text = log_path.read_text(encoding="utf-8", errors="replace")
                summary |= {"executed": len(FINISHED.findall(text)), "exit": run.returncode, "dry_run": False,
                            "failed": run_failures(text, run.returncode, out, str(log_path)), "log": str(log_path)}
        summary["tables_and_figures"] = {p: "made" if (out / p).is_file() else "not made" if p in planned_outputs
                                         else "not planned" for p in report_outputs(repo)}
        summary["wall_s"] = round(time.time() - started, 1)
        write_summary(summary, out)
        return summary


def write_summary(summary: dict, out: Path) -> None:
    """summary.json and summary.md in `out`."""
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    made = summary["tables_and_figures"]
    lines = ["# Rehearsal of the paper's study", "",
             f"- study: `{summary['study']}` with `{summary['override']}`"
             + (f" and the slice `{summary['slice']}`" if summary["slice"] else "")
             + f"; targets: {', '.join(summary['targets'])}",
             f"- directions: {', '.join(summary['directions'])}"
             + (f"; profile `{summary['profile']}`" if summary["profile"] else ""),
             f"- sources: {summary['sources']} URLs served from the miniature copies",
             f"- jobs planned (dry run): {summary['planned']}; executed: {summary['executed']}"
             + (" (dry run only)" if summary["dry_run"] else "") + f"; exit {summary['exit']}",
             f"- wall time: {summary['wall_s']:.0f} s",
             f"- tables and figures made: {list(made.values()).count('made')} of {len(made)} (the workflow's report)",
             "", "| table or figure | |", "| --- | --- |", *(f"| {p} | {state} |" for p, state in made.items()), ""]
    if summary.get("failed"):
        lines += ["## Failed jobs", "", "| rule | log | error |", "| --- | --- | --- |",
                  *(f"| {f['rule']} | {f['log']} | {str(f['error']).replace('|', '/')} |" for f in summary["failed"]),
                  ""]
    atomic_write_text(out / "summary.md", "\n".join(lines))
