"""`snakemake --profile slurm`, typed at the repository root, on a real SLURM (tests/local_slurm.py):
config/tiny.yaml into Table 4 in few, right-sized jobs (issue 44), then a partition given on the command line.

Needs root (Debian's SLURM packages, daemons started by the test); skipped with the reason otherwise.
"""
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
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
LOCAL_RULES = {"pretrained_models", "comet_model", "contrastive_synthetic", "mlflow_sync", "table4_quality"}
# config/tiny.yaml's Table 4: 20 jobs, 6 sbatch submissions: the pair's preparation, the embedding store, each
# training, and each trained model's evaluation (one job, issue 55: its translation, score, COMET, context usage
# and contrastive score one after another in one process), as {submission: (GPU, time limit, CPUs)} from
# src/mtcue/plan/resources.py: every request at its floor; the preparation's five steps in a row (generate,
# clean, spm_train, spm_encode, binarise: 5 x 5 min) with its three splits side by side, the evaluation's five
# steps' minutes added up (5 x 5 min) on one CPU. Issue 52: at most 30 minutes and 4 GB.
TABLE4_JOBS = 20  # and the fetch of its pretrained models, a local rule
GROUPS = ("prepare", "eval_en-de_base", "eval_en-de_mtcue")
SUBMISSIONS = {"prepare": (False, "00:25:00", "3"), "embed_all-MiniLM-L6-v2.mean": (True, "00:05:00", "1"),
               "train": (True, "00:20:00", "1"), "eval_en-de_base": (True, "00:25:00", "1"),
               "eval_en-de_mtcue": (True, "00:25:00", "1")}
# A training of BASE long enough to outlast a one-minute limit: on tiny's corpus, 128-d, 2 + 2 layers, 150 epochs
# without early stopping, about 1.2 s an epoch on this project's 2-core machine (3 min).
LONG_BASE = """
models:
  base:
    arch: {{embed_dim: 128, heads: 4, encoder_layers: 2, encoder_ffn_dim: 512, decoder_layers: 2, decoder_ffn_dim: 512}}
    training: {{max_epoch: 150, patience: 150}}
slurm:
  max_minutes: {max_minutes}
"""
BASE = "results/models/en-de/base/checkpoint_best.pt"


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
    return copy_checkout(tmp_path_factory.mktemp("checkout"))


def copy_checkout(root: Path) -> Path:
    """The repository's files (as a clone has them) in `root`, so that it is the working directory."""
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


def job_env(root: Path) -> dict:
    # Jobs inherit this environment (sbatch exports it): the venv's mtcue, this checkout's code.
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "PYTHONPATH": str(root / "src")}


def snakemake(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SNAKEMAKE, *args, "--profile", "slurm", *TEST_CLUSTER], cwd=root, env=job_env(root),
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
    """At most half as many sbatch submissions as jobs, none asking more than 30 minutes or 4 GB, each asking the
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
        assert minutes(job["TimeLimit"]) <= 30 and int(job["MinMemoryNode"].removesuffix("M")) <= 4000, job
    train = [job for job in jobs if rule_of(job) == "train"]
    assert {job["MinMemoryNode"] for job in train} == {"2000M"}  # not the paper's 32 GB


def test_a_partition_on_the_command_line_keeps_every_other_request(study):
    """The profile's documented override: `--default-resources slurm_partition=...` (the profile sets no
    default-resources of its own to lose): the rerun evaluations land there with their own time limits."""
    root, before = study
    run = snakemake(root, "table4_quality", "--configfile", "config/tiny.yaml", "--forcerun", "evaluate_1_en_de",
                    "--default-resources", f"slurm_partition={local_slurm.OTHER_PARTITION}")
    assert run.returncode == 0, run.stderr[-4000:]
    seen = {job["JobId"] for job in before}
    new = [job for job in local_slurm.jobs() if job["JobId"] not in seen]
    # nothing upstream reran: each model's evaluation job again (tiny's en-de models evaluate alike: one rule)
    assert sorted(rule_of(job) for job in new) == ["eval_en-de_base", "eval_en-de_mtcue"]
    assert {(job["Partition"], job["TimeLimit"]) for job in new} == {(local_slurm.OTHER_PARTITION, "00:25:00")}


def long_base(root: Path, max_minutes: int = 1) -> list[str]:
    """The config arguments of LONG_BASE, the site's longest job `max_minutes`."""
    (root / "long.yaml").write_text(LONG_BASE.format(max_minutes=max_minutes))
    return ["--configfile", "config/tiny.yaml", "long.yaml"]


def trained_weights(path: Path) -> dict:
    import torch

    return torch.load(path, map_location="cpu", weights_only=False)["model"]


def test_a_training_longer_than_the_sites_longest_job_resumes_and_ends_as_one_job_would(cluster, tmp_path):
    """Issue 52: slurm.max_minutes: 1 splits BASE's 150 epochs into several one-minute jobs (the train rule's retries,
    derived), each resuming from checkpoint_last.pt; the best checkpoint is the one an uninterrupted local run makes."""
    import torch

    seen = {job["JobId"] for job in local_slurm.jobs()}
    root = copy_checkout(tmp_path / "slurm")
    run = snakemake(root, BASE, *long_base(root))
    assert run.returncode == 0, run.stderr[-4000:]
    train = [job for job in local_slurm.jobs() if job["JobId"] not in seen and rule_of(job) == "train"]
    states = [job["JobState"] for job in sorted(train, key=lambda j: int(j["JobId"]))]
    log = (root / "results" / "checkpoints" / "en-de" / "base" / "train.log").read_text()
    assert len(states) >= 2 and set(states[:-1]) == {"TIMEOUT"} and states[-1] == "COMPLETED", (states, log[-2000:])
    local = copy_checkout(tmp_path / "local")
    alone = subprocess.run([SNAKEMAKE, BASE, "--cores", "1", *long_base(local)], cwd=local, env=job_env(local),
                           capture_output=True, text=True, timeout=1500)
    assert alone.returncode == 0, alone.stderr[-4000:]
    resumed, uninterrupted = trained_weights(root / BASE), trained_weights(local / BASE)
    assert resumed.keys() == uninterrupted.keys()
    assert all(torch.equal(resumed[k], uninterrupted[k]) for k in resumed)


def test_a_snakemake_restarted_while_a_training_runs_finishes_the_study(cluster, tmp_path):
    """Issue 52: Snakemake killed (a logout) while its training job runs; started again (--unlock, then the same
    command), it submits the training again, whose job resumes where the first one stopped: the run ends. (The
    test cluster's one GPU queues the new job until the old one ends; where it starts beside it, it waits for the
    checkpoint folder's lock: tests/test_workers_and_locks.py.)"""
    root = copy_checkout(tmp_path / "study")
    args = [BASE, *long_base(root, max_minutes=60)]
    seen = {job["JobId"] for job in local_slurm.jobs()}
    first = subprocess.Popen([SNAKEMAKE, *args, "--profile", "slurm", *TEST_CLUSTER], cwd=root, env=job_env(root),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 900
        while not any(job["JobId"] not in seen and rule_of(job) == "train" and job["JobState"] == "RUNNING"
                      for job in local_slurm.jobs()):
            assert first.poll() is None and time.monotonic() < deadline, "the training never ran"
            time.sleep(2)
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the whole Snakemake, as a logout or a crash would; not its jobs
        first.wait()
    assert snakemake(root, *args, "--unlock").returncode == 0
    run = snakemake(root, *args)
    assert run.returncode == 0, run.stderr[-4000:]
    train = [job for job in local_slurm.jobs() if job["JobId"] not in seen and rule_of(job) == "train"]
    assert len(train) == 2 and {job["JobState"] for job in train} == {"COMPLETED"}, train
    log = (root / "results" / "logs" / "train" / "en-de.base.log").read_text()
    assert re.search(r"resuming in \S*results/checkpoints/en-de/base \(same spec", log)  # the folder, resolved


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
