"""The study on a cluster, planned (issue 44): few sbatch submissions (a model's evaluation and a pair's
preparation are one job each), requests sized from the study's figures (src/mtcue/plan/resources.py), and
a local run that the cluster's job groups leave alone. tests/test_slurm.py runs the tiny study for real."""
import re
import subprocess
import tempfile

import pytest
import yaml

from conftest import REPO, SNAKEMAKE, dry_run
from mtcue import config as cfgmod
from mtcue.plan import gpu_hours, resources
from mtcue.plan.models import trained_models

PROFILE = yaml.safe_load((REPO / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())
JOB = re.compile(r"^(?P<indent> *)rule (?P<rule>\S+):\n(?P<body>(?:.+\n)*?)Shell command", re.M)


def local_rules() -> set[str]:
    """Rules that run where Snakemake runs: `localrule: True` in workflow/rules/, and `all` (no command)."""
    names = {"all"}
    for path in (REPO / "workflow" / "rules").glob("*.smk"):
        blocks = re.split(r"^\s*(?:rule (\w+):|use rule \w+ as (\w+) with:)", path.read_text(), flags=re.M)
        for plain, used, body in zip(blocks[1::3], blocks[2::3], blocks[3::3]):
            if "localrule: True" in body:
                names.add(plain or used)
    return names


def cluster_plan(*args: str) -> dict:
    """A dry run through the SLURM profile: its jobs ({rule, grouped, resources}), its group jobs, and the
    sbatch submissions it plans (each group job, each job of no group whose rule is not local)."""
    run = dry_run("--profile", "slurm", *args)
    assert run.returncode == 0, run.stderr[-3000:]
    jobs = []
    for m in JOB.finditer(run.stdout):
        found = re.search(r"^\s*resources: (.*)$", m["body"], re.M)
        res = dict(kv.split("=", 1) for kv in found[1].split(", ")) if found else {}
        jobs.append({"rule": m["rule"], "grouped": bool(m["indent"]), "resources": res})
    groups = len(re.findall(r"Group job \S+ \(jobs in", run.stdout))
    local = local_rules()
    alone = [j for j in jobs if not j["grouped"] and j["rule"] not in local]
    return {"jobs": jobs, "groups": groups, "submissions": groups + len(alone)}


@pytest.fixture(scope="module")
def paper():
    return cfgmod.load(REPO / "config" / "paper.yaml")


def test_the_paper_study_plans_few_right_sized_sbatch_submissions():
    """Before issue 44: 1,623 submissions for 1,696 jobs, 257 GPU jobs at the profile's 60 min / 8 GB."""
    plan = cluster_plan("--configfile", "config/paper.yaml")
    assert len(plan["jobs"]) == 1697  # the same study, and the login-node fetch of its pretrained models
    assert plan["submissions"] <= 700, plan["submissions"]
    gpu = [j for j in plan["jobs"] if j["resources"].get("gpu") == "1"]
    assert len(gpu) > 1000
    unsized = [j["rule"] for j in gpu if "runtime" not in j["resources"] or j["resources"].get("mem_mb") == "8000"]
    assert unsized == []
    train = [j for j in gpu if j["rule"] == "train"]
    assert len(train) == 249 and {j["resources"]["mem_mb"] for j in train} == {"32000"}
    assert all(int(j["resources"]["runtime"]) <= resources.MAX_MINUTES for j in gpu)


def test_the_tiny_table4_asks_minutes_in_few_submissions():
    plan = cluster_plan("table4_quality", "--configfile", "config/tiny.yaml")
    assert plan["submissions"] <= len(plan["jobs"]) / 2, (plan["submissions"], len(plan["jobs"]))
    assert max(int(j["resources"]["runtime"]) for j in plan["jobs"] if "runtime" in j["resources"]) <= 20


def test_the_profile_sets_nothing_a_command_line_partition_would_replace():
    """`--default-resources slurm_partition=...` replaces the profile's whole default-resources list, and
    `--set-resources` its whole set-resources list: the profile has neither, the rules carry the requests."""
    assert "default-resources" not in PROFILE and "set-resources" not in PROFILE
    plan = cluster_plan("table4_quality", "--configfile", "config/tiny.yaml",
                        "--default-resources", "slurm_partition=gpu", "slurm_account=project")
    train = [j["resources"] for j in plan["jobs"] if j["rule"] == "train"]
    assert train and {(r["slurm_partition"], r["slurm_account"], r["runtime"], r["gpu"]) for r in train} == \
        {("gpu", "project", "20", "1")}


def test_a_local_run_ignores_the_cluster_groups():
    """Snakemake drops `group:` when it runs the jobs itself: the demo keeps its parallelism."""
    with tempfile.TemporaryDirectory(prefix="local-run-") as fresh:
        run = subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", fresh, "--cores", "1",
                              "results/clean/en-de/test.jsonl", "--configfile", str(REPO / "config" / "tiny.yaml")],
                             cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Group job" not in run.stdout + run.stderr
    assert "2 of 2 steps (100%) done" in run.stderr


def test_a_paper_training_asks_its_hours_and_its_cpus(paper):
    """MTCUE: Table 3's 0.81 GPU-h x (9.38 + 5) epochs expected, x 1.25 = 14.6 h; at most 100 epochs = 81 h, a
    third of which (27 h) is more: 1,620 min. BASE (from scratch, 75 epochs x 0.57) asks the 48 h cap."""
    mtcue = resources.training(paper, "mtcue", "en-de")
    assert mtcue == {"runtime": 1620, "mem_mb": 32000, "threads": 4}
    assert resources.training(paper, "base", "en-de")["runtime"] == 2880
    paper_mtcue = gpu_hours.model_spec(paper, "mtcue", "en-de")
    assert resources.PAPER_MTCUE_WEIGHTS == gpu_hours.train_weights(paper_mtcue, paper["spm"]["vocab_size"])


def test_every_paper_training_fits_its_jobs_with_the_profiles_retries(paper):
    """A job killed at its limit resumes when resubmitted: each training's upper bound fits in its runtime x
    (retries + 1), the dearest expected fine-tuning in one job."""
    assert resources.ATTEMPTS == PROFILE["retries"] + 1
    for direction, model in trained_models(paper):
        cost, asked = gpu_hours.training_cost(paper, model, direction), resources.training(paper, model, direction)
        assert cost["gpu_h_max"] * 60 <= asked["runtime"] * resources.ATTEMPTS, (direction, model)
        if not cost["from_scratch"]:
            assert cost["gpu_h"] * 60 <= asked["runtime"], (direction, model)


def test_a_study_without_mtcue_asks_for_its_trainings_too():
    """plan.gpu_hours scales every model from the config's MTCUE; without one, the paper's MTCUE per epoch,
    weight for weight, for max_epoch epochs: a toy BASE asks the floor."""
    cfg = cfgmod.validate({"study": "one", "directions": ["en-de"], "models": {"base": {"type": "base"}}})
    assert resources.training(cfg, "base", "en-de") == {"runtime": 20, "mem_mb": 2000, "threads": 1}


@pytest.mark.parametrize("config", ["tiny.yaml", "config.yaml"])
def test_a_toy_study_asks_minutes_and_one_cpu(config):
    cfg = cfgmod.load(REPO / "config" / config)
    for direction, model in trained_models(cfg):
        assert resources.training(cfg, model, direction) == {"runtime": 20, "mem_mb": 2000, "threads": 1}
    assert {kind: resources.step(cfg, kind) for kind in resources.PAPER_STEPS} == {
        "decode": {"runtime": 15, "mem_mb": 2000}, "comet": {"runtime": 15, "mem_mb": 16000},
        "embed": {"runtime": 15, "mem_mb": 2000}, "prepare": {"runtime": 15, "mem_mb": 2000},
        "score": {"runtime": 10, "mem_mb": 2000}}


class _Stop(Exception):
    pass


def test_a_training_gives_its_cpus_to_the_data_loaders_and_the_main_process(tmp_path, monkeypatch):
    """The rule's threads (what the cluster grants) minus the main process are fairseq's --num-workers."""
    from mtcue.models import train as train_mod

    cfg = cfgmod.load(REPO / "config" / "tiny.yaml")
    spec = gpu_hours.model_spec(cfg, "base", "en-de")
    seen = []

    def fairseq_config(args):  # what fairseq would be given; the training itself is not needed
        seen.append(args)
        raise _Stop

    monkeypatch.setattr(train_mod.fairseq_run, "training_config", fairseq_config)
    with pytest.raises(_Stop):
        train_mod.train(spec, "en-de", tmp_path / "bin", tmp_path / "ck", tmp_path / "out.pt", threads=4, workers=3)
    assert seen[0][seen[0].index("--num-workers") + 1] == "3"
    with pytest.raises(ValueError, match="--workers 4: the data loaders need fewer CPUs than --threads 4"):
        train_mod.train(spec, "en-de", tmp_path / "bin", tmp_path / "ck", tmp_path / "out.pt", threads=4, workers=4)
