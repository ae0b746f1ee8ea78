"""`snakemake --profile slurm`, typed at the repository root, on a real SLURM (tests/local_slurm.py):
config/tiny.yaml into Table 4, then a per-rule partition override from the command line.

Needs root (Debian's SLURM packages, daemons started by the test); skipped with the reason otherwise.
"""
import json
import math
import os
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
GPU_RULES = {"train", "translate", "comet", "embed_all-MiniLM-L6-v2.mean", "score_contrastive", "context_usage"}
LOCAL_RULES = {"comet_model", "mlflow_sync", "table4_quality"}


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
    """The rule a job ran: the plugin writes `rule_<name>[_wildcards_...]` into the job's comment."""
    comment = job.get("Comment", "")
    assert comment.startswith("rule_"), job
    return comment.removeprefix("rule_").split("_wildcards_")[0].strip()


@pytest.fixture(scope="module")
def study(cluster, checkout):
    run = snakemake(checkout, "table4_quality", "--configfile", "config/tiny.yaml")
    assert run.returncode == 0, run.stderr[-4000:]
    return checkout, local_slurm.jobs()


def test_the_tiny_study_reaches_its_table_through_slurm(study):
    root, _ = study
    table = pd.read_csv(root / "results" / "tables" / "table4_quality.csv").set_index("model")
    assert list(table.index) == ["BASE", "MTCUE"]
    for model, name in (("BASE", "base"), ("MTCUE", "mtcue")):
        record = json.loads((root / "results" / "records" / "score" / "en-de" / f"{name}.test.json").read_text())
        assert table.loc[model, "en-de BLEU"] == pytest.approx(record["bleu"])
        assert record["n_segments"] > 0 and math.isfinite(record["bleu"])
        assert len(table.loc[model, "en-de run_id"]) == 32  # the MLflow run the row comes from
    assert table.loc["MTCUE", "en-de paper BLEU"] == pytest.approx(36.02)


def test_slurm_ran_every_job_but_the_local_ones_with_the_profiles_resources(study):
    _, jobs = study
    assert jobs and all(job["JobState"] == "COMPLETED" for job in jobs), [(j["JobId"], j["JobState"]) for j in jobs]
    by_rule = {}
    for job in jobs:
        by_rule.setdefault(rule_of(job), []).append(job)
    assert {rule: len(js) for rule, js in by_rule.items() if rule in {"train", "translate", "comet"}} == \
        {"train": 2, "translate": 2, "comet": 2}
    assert not LOCAL_RULES & set(by_rule), "table assembly, MLflow and the COMET check run where Snakemake runs"
    for rule, rule_jobs in by_rule.items():
        for job in rule_jobs:
            # Unedited, the profile names no partition: every job lands in the cluster's default one.
            assert job["Partition"] == local_slurm.PARTITION, (rule, job["Partition"])
            gpus = job.get("TresPerJob") or job.get("TresPerNode") or ""
            assert ("gpu:1" in gpus) == (rule in GPU_RULES), (rule, gpus)
    train = by_rule["train"][0]  # the profile's set-resources for train reached sbatch
    assert (train["TimeLimit"], train["MinMemoryNode"], train["NumCPUs"]) == ("2-00:00:00", "32000M", "4")


def test_a_rules_partition_is_overridden_from_the_command_line(study):
    root, before = study
    run = snakemake(root, "table4_quality", "--configfile", "config/tiny.yaml", "--forcerun", "score",
                    "--set-resources", f"score:slurm_partition={local_slurm.OTHER_PARTITION}")
    assert run.returncode == 0, run.stderr[-4000:]
    seen = {job["JobId"] for job in before}
    new = [job for job in local_slurm.jobs() if job["JobId"] not in seen]
    assert sorted(rule_of(job) for job in new) == ["score", "score"]  # nothing upstream reran
    assert {job["Partition"] for job in new} == {local_slurm.OTHER_PARTITION}


def test_the_rehearsal_of_the_paper_study_runs_through_slurm(cluster, checkout, tmp_path, monkeypatch):
    """`make rehearsal PROFILE=slurm TARGET=results/tables/table1_data.md`: the paper's data path on the
    rehearsal's miniature sources, its cluster jobs through SLURM (downloads and OMDb are local rules)."""
    from mtcue.rehearsal import rehearse

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
    assert ran.count("extract_opensubtitles") == 4 and ran.count("split_corpus") == 4
    assert not {"download", "omdb"} & set(ran)
