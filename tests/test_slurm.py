"""`snakemake --profile slurm`, typed at the repository root, on a real SLURM (tests/local_slurm.py):
config/tiny.yaml into Table 4 in few, right-sized jobs (issue 44), then a partition given on the command line.

Needs root (Debian's SLURM packages, daemons started by the test); skipped with the reason otherwise.
"""
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import local_slurm
from conftest import REPO

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
# No accounting daemon on the test cluster: job states come from squeue (sacct would fail), and
# the first status check comes after 2 s instead of the plugin's 40.
TEST_CLUSTER = ["--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "2"]
LOCAL_RULES = {"pretrained_models", "comet_model", "mlflow_sync", "table4_quality"}
# config/tiny.yaml's Table 4: 29 jobs, 6 sbatch submissions: the pair's preparation, the embedding store, each
# training, and each trained model's evaluation (translation, context usage, contrastive scores, then COMET
# beside the score: the MLflow sync mirrors every record), as {submission: (GPU, time limit, CPUs)} from
# src/mtcue/plan/resources.py: every request at its floor; the preparation's five steps in a row (generate,
# clean, spm_train, spm_encode, binarise: 5 x 15 min) with its three splits side by side, the evaluation's four
# GPU steps one after another (4 x 15 min) with the score beside COMET.
TABLE4_JOBS = 29  # and the fetch of its pretrained models, a local rule
GROUPS = ("prepare", "eval_en-de_base", "eval_en-de_mtcue")
SUBMISSIONS = {"prepare": (False, "01:15:00", "3"), "embed_all-MiniLM-L6-v2.mean": (True, "00:15:00", "1"),
               "train": (True, "00:20:00", "1"), "eval_en-de_base": (True, "01:00:00", "2"),
               "eval_en-de_mtcue": (True, "01:00:00", "2")}


@pytest.fixture(scope="module")
def cluster():
    reason = local_slurm.unavailable()
    if reason:
        pytest.skip(f"no SLURM for this test: {reason}")
    try:
        local_slurm.install()
    except subprocess.CalledProcessError as err:  # e.g. no package mirror reachable
        pytest.skip(f"SLURM could not be installed ({' '.join(err.cmd)}): {(err.stderr or '')[-500:]}")
    with local_slurm.running():
        yield


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """The repository's files (as a clone has them), so that its root is the working directory."""
    root = tmp_path_factory.mktemp("checkout")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                           capture_output=True).stdout.split(b"\0")
    for name in filter(None, files):
        source, target = REPO / name.decode(), root / name.decode()
        if source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return root


def snakemake(root: Path, *args: str) -> subprocess.CompletedProcess:
    # Jobs inherit this environment (sbatch exports it): the venv's mtcue, this checkout's code.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "PYTHONPATH": str(root / "src")}
    return subprocess.run([SNAKEMAKE, *args, "--profile", "slurm", *TEST_CLUSTER], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1500)


def rule_of(job: dict) -> str:
    """The rule or group a job ran: the plugin writes `rule_<rule>[_wildcards_...]` into the job's comment, or
    for a group job `rule_<group>_<its rules>`."""
    comment = job.get("Comment", "")
    assert comment.startswith("rule_"), job
    name = comment.removeprefix("rule_").split("_wildcards_")[0].strip()
    return next((group for group in GROUPS if name.startswith(f"{group}_")), name)


def minutes(limit: str) -> int:
    """scontrol's TimeLimit ([D-]HH:MM:SS) in minutes."""
    days, _, clock = limit.rpartition("-")
    h, m, _ = map(int, clock.split(":"))
    return int(days or 0) * 1440 + h * 60 + m


@pytest.fixture(scope="module")
def study(cluster, checkout):
    run = snakemake(checkout, "table4_quality", "--configfile", "config/tiny.yaml")
    assert run.returncode == 0, run.stderr[-4000:]
    assert int(re.search(r"^total\s+(\d+)$", run.stdout + run.stderr, re.M)[1]) == TABLE4_JOBS
    return checkout, local_slurm.jobs()


def test_the_tiny_study_reaches_its_table_through_slurm(study):
    root, _ = study
    table = pd.read_csv(root / "results" / "tables" / "table4_quality.csv").set_index("model")
    assert list(table.index) == ["BASE", "MTCUE"]
    for model, name in (("BASE", "base"), ("MTCUE", "mtcue")):
        record = json.loads((root / "results" / "records" / "score" / "en-de" / f"{name}.test.json").read_text())
        assert table.loc[model, "en-de BLEU"] == pytest.approx(record["bleu"])
        assert record["n_segments"] > 0 and math.isfinite(record["bleu"])
        assert table.loc[model, "en-de run"] == f"en-de/{name}"  # the MLflow run the row comes from, by name
    assert table.loc["MTCUE", "en-de paper BLEU"] == pytest.approx(36.02)


def test_slurm_ran_the_study_in_few_right_sized_jobs(study):
    """At most half as many sbatch submissions as jobs, none asking more than 120 minutes, each asking the
    CPUs its steps use; table assembly, MLflow and the COMET check run where Snakemake runs."""
    _, jobs = study
    assert jobs and all(job["JobState"] == "COMPLETED" for job in jobs), [(j["JobId"], j["JobState"]) for j in jobs]
    assert len(jobs) == 6 <= TABLE4_JOBS / 2
    names = sorted(rule_of(job) for job in jobs)
    assert names == sorted([*SUBMISSIONS, "train"]), names
    assert not LOCAL_RULES & set(names)
    for job in jobs:
        # Unedited, the profile names no partition: every job lands in the cluster's default one.
        assert job["Partition"] == local_slurm.PARTITION, (rule_of(job), job["Partition"])
        gpus = job.get("TresPerJob") or job.get("TresPerNode") or ""
        assert ("gpu:1" in gpus, job["TimeLimit"], job["NumCPUs"]) == SUBMISSIONS[rule_of(job)], (rule_of(job), job)
        assert minutes(job["TimeLimit"]) <= 120
    train = [job for job in jobs if rule_of(job) == "train"]
    assert {job["MinMemoryNode"] for job in train} == {"2000M"}  # not the paper's 32 GB


def test_a_partition_on_the_command_line_keeps_every_other_request(study):
    """The profile's documented override: `--default-resources slurm_partition=...` (the profile sets no
    default-resources of its own to lose): the rerun scores land there with their own time limits."""
    root, before = study
    run = snakemake(root, "table4_quality", "--configfile", "config/tiny.yaml", "--forcerun", "score",
                    "--default-resources", f"slurm_partition={local_slurm.OTHER_PARTITION}")
    assert run.returncode == 0, run.stderr[-4000:]
    seen = {job["JobId"] for job in before}
    new = [job for job in local_slurm.jobs() if job["JobId"] not in seen]
    # nothing upstream reran: each model's evaluation job holds its score alone (10 min, no GPU)
    assert sorted(rule_of(job) for job in new) == ["eval_en-de_base", "eval_en-de_mtcue"]
    assert {(job["Partition"], job["TimeLimit"]) for job in new} == {(local_slurm.OTHER_PARTITION, "00:10:00")}


def test_the_rehearsal_of_the_paper_study_runs_through_slurm(cluster, checkout, tmp_path, monkeypatch):
    """`make rehearsal PROFILE=slurm TARGET=results/tables/table1_data.md`: the paper's data path on the
    rehearsal's miniature sources, its cluster jobs through SLURM (downloads and OMDb are local rules)."""
    from mtcue.rehearsal.run import rehearse

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", str(checkout / "src"))
    seen = {job["JobId"] for job in local_slurm.jobs()}
    summary = rehearse(checkout, tmp_path / "rehearsal", checkout / "config" / "paper.yaml",
                       checkout / "config" / "rehearsal.yaml", ["results/tables/table1_data.md"], profile="slurm",
                       snakemake_args=TEST_CLUSTER)
    assert (summary["exit"], summary["failed"]) == (0, [])
    assert summary["executed"] == summary["planned"] == 34
    assert summary["tables_and_figures"]["results/tables/table1_data.html"] == "made"
    ran = sorted(rule_of(job) for job in local_slurm.jobs() if job["JobId"] not in seen)
    # a pair's split, cleaning and Table 1 figures: one job per pair (group prepare)
    assert ran.count("extract_opensubtitles") == 4 and ran.count("prepare") == 4 and len(ran) == 8
    assert not {"download", "omdb"} & set(ran)
