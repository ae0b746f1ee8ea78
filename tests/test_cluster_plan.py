"""The study on a cluster, planned (issue 44): few sbatch submissions (a model's evaluation and a pair's
preparation are one job each), requests sized from the study's figures (src/mtcue/plan/resources.py), and
a local run that the cluster's job groups leave alone. tests/test_slurm.py runs the tiny study for real."""
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from conftest import REPO, SNAKEMAKE, dry_run
from mtcue import config as cfgmod
from mtcue.experiments import rule_files as experiment_rules
from mtcue.plan import gpu_hours, resources, submissions
from mtcue.plan.models import trained_models

PROFILE = yaml.safe_load((REPO / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())
JOB = re.compile(r"^(?P<indent> *)rule (?P<rule>\S+):\n(?P<body>(?:.+\n)*?)Shell command", re.M)


def local_rules() -> set[str]:
    """Rules that run where Snakemake runs: `localrule: True` in workflow/rules/, and `all` (no command)."""
    names = {"all"}
    for path in [*(REPO / "workflow" / "rules").glob("*.smk"), *map(Path, experiment_rules())]:
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
    """Before issue 44: 1,623 submissions for 1,696 jobs, 257 GPU jobs at the profile's 60 min / 8 GB. Since issue
    55 a trained model's evaluation is one job (1,697 jobs before: 1,257 evaluation steps of 249 models)."""
    plan = cluster_plan("--configfile", "config/paper.yaml")
    assert len(plan["jobs"]) == 1697 - 1257 + 249  # the same study, and the login-node fetch of its pretrained models
    assert plan["submissions"] <= 700, plan["submissions"]
    gpu = [j for j in plan["jobs"] if j["resources"].get("gpu") == "1"]
    assert sum(j["rule"].startswith("evaluate_") for j in gpu) == 249 and len(gpu) > 249 * 2
    unsized = [j["rule"] for j in gpu if "runtime" not in j["resources"] or j["resources"].get("mem_mb") == "8000"]
    assert unsized == []
    train = [j for j in gpu if j["rule"] == "train"]
    assert len(train) == 249 and {j["resources"]["mem_mb"] for j in train} == {"32000"}


def audit(*args: str) -> list[dict]:
    """`mtcue cluster-plan`'s submissions of a dry run through the profile in a fresh folder (group requests as
    a SLURM run computes them)."""
    with tempfile.TemporaryDirectory(prefix="cluster-plan-") as fresh:
        return submissions.plan_submissions([*args, "--directory", fresh], cwd=REPO)


@pytest.fixture(scope="module")
def paper_audit():
    """The paper study with the example site file (config/site.yaml: partitions gpu and cpu, 1,440 minutes)."""
    return audit("--configfile", "config/paper.yaml", "config/site.yaml")


def test_the_tiny_table4_asks_minutes_in_few_submissions():
    """Issue 52: a smoke test asks at most 30 minutes and 4 GB for any job or group (the preparation's five
    steps in a row at 5 minutes; each model's evaluation one job, issue 55: its translation, score, COMETINHO,
    context usage and contrastive score one after another, 5 minutes each, and the most memory one asks)."""
    subs = audit("table4_quality", "--configfile", "config/tiny.yaml")
    assert [s["kind"] for s in subs].count("train") == 2 and len(subs) == 6
    assert max(s["minutes"] for s in subs) <= 30 and max(s["mem_mb"] for s in subs) <= 4000, subs
    evals = [s for s in subs if s["kind"] == "eval_{direction}_{model}"]
    assert [(s["GPUs"], s["minutes"], s["mem_mb"]) for s in evals] == [(1, 25, 2000)] * 2


def test_overrides_on_the_command_line_take_effect():
    """Issue 52: no cap in the profile: `train` asks 4 GPUs and 64,000 MB, and its CPUs per GPU (tiny: 1 each);
    an evaluation job's GPU steps still run one after another on its one GPU."""
    subs = audit("table4_quality", "--configfile", "config/tiny.yaml",
                 "--set-resources", "train:gpu=4", "train:mem_mb=64000")
    train = [s for s in subs if s["kind"] == "train"]
    assert {(s["GPUs"], s["mem_mb"], s["CPUs"]) for s in train} == {(4, 64000, 4)}
    assert {s["GPUs"] for s in subs if s["kind"] == "eval_{direction}_{model}"} == {1}
    assert "gpu" not in PROFILE["resources"] and "mem_mb" not in PROFILE["resources"]


def test_a_paper_training_on_four_gpus_asks_four_cpus_per_gpu():
    with tempfile.TemporaryDirectory(prefix="dry-run-") as fresh:
        run = subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", fresh, "-n", "-p",
                              "results/models/en-de/mtcue/checkpoint_best.pt", "--profile", "slurm", "--cores", "64",
                              "--set-resources", "train:gpu=4", "--configfile", "config/paper.yaml"],
                             cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    # 4 ranks of one main process and 3 data loaders each: --threads 16 --workers 3 (fairseq's per rank)
    assert "--threads 16 --workers 3 --gpus 4" in run.stdout


def test_the_partitions_of_the_config_send_every_job_to_its_own(paper_audit, tmp_path):
    """Issue 52: slurm.gpu_partition for every GPU job and evaluation group, slurm.cpu_partition for every
    CPU-only job and preparation group; no WorkflowError."""
    for s in paper_audit:
        gpu = s["GPUs"] > 0 or s["kind"] == "eval_{direction}_{model}"
        assert s["partition"] == ("gpu" if gpu else "cpu"), s
    assert {s["kind"] for s in paper_audit if s["partition"] == "cpu"} >= {"prepare", "extract_opensubtitles"}
    site = tmp_path / "site.yaml"
    site.write_text("slurm: {gpu_partition: a100, cpu_partition: cpu, account: proj}\n")
    tiny = audit("table4_quality", "--configfile", "config/tiny.yaml", str(site))
    assert {(s["kind"], s["partition"], s["account"]) for s in tiny} == {
        ("prepare", "cpu", "proj"), ("train", "a100", "proj"), ("embed_all-MiniLM-L6-v2.mean", "a100", "proj"),
        ("eval_{direction}_{model}", "a100", "proj")}


def test_the_profile_sets_nothing_a_command_line_option_would_replace():
    """`--default-resources` replaces the profile's whole default-resources list, and `--set-resources` its whole
    set-resources list: the profile has neither (the rules and the config's slurm keys carry the requests)."""
    assert "default-resources" not in PROFILE and "set-resources" not in PROFILE


def test_a_partition_for_one_rule_of_a_group_is_refused_with_what_to_do():
    # the tiny study's en-de models evaluate alike: one evaluation rule (evaluate.smk), in the group that names the job
    with pytest.raises(RuntimeError, match=r"--set-resources evaluate_1_en_de:slurm_partition: rule evaluate_1_en_de "
                                           r"runs in the job group 'eval_\{direction\}_\{model\}'.*slurm.gpu_partition"):
        audit("table4_quality", "--configfile", "config/tiny.yaml", "--set-resources",
              "evaluate_1_en_de:slurm_partition=a100")
    # a rule of no group takes its own
    subs = audit("table4_quality", "--configfile", "config/tiny.yaml", "--set-resources", "train:slurm_partition=a100")
    assert {s["partition"] for s in subs if s["kind"] == "train"} == {"a100"}


def test_no_paper_submission_asks_more_than_the_sites_longest_job(paper_audit, paper):
    """Issue 52: at most slurm.max_minutes (1,440) for any job or group; trainings split into as many resumed jobs
    as their upper bound needs, the train rule's retries their most, less one."""
    assert max(s["minutes"] for s in paper_audit) <= 1440
    assert len(paper_audit) == 533 and sum(s["kind"] == "train" for s in paper_audit) == 249
    short = cfgmod.validate({**paper, "slurm": {**paper["slurm"], "max_minutes": 300}})
    for direction, model in trained_models(short):
        cost, asked = gpu_hours.training_cost(short, model, direction), resources.training(short, model, direction)
        assert asked["runtime"] <= 300
        assert cost["gpu_h_max"] * 60 * resources.TRAIN_MARGIN <= asked["runtime"] * asked["jobs"], (direction, model)


def test_the_docs_audit_table_is_the_commands_output(paper_audit):
    assert submissions.summary_markdown(paper_audit) in (REPO / "docs" / "paper-scale.md").read_text()


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
    """MTCUE: Table 3's 0.81 GPU-h x (9.38 + 5) epochs expected, x 1.25 = 14.6 h: 874 min; at most 100 epochs = 81 h,
    x 1.25 in 874-min jobs: 7. BASE (from scratch, 75 epochs x 0.57 = 43 h, x 1.25) asks the site's 1,440 min, 3
    jobs."""
    mtcue = resources.training(paper, "mtcue", "en-de")
    assert mtcue == {"runtime": 874, "mem_mb": 32000, "threads": 4, "jobs": 7}
    assert resources.training(paper, "base", "en-de") == {"runtime": 1440, "mem_mb": 32000, "threads": 4, "jobs": 3}
    paper_mtcue = gpu_hours.model_spec(paper, "mtcue", "en-de")
    assert resources.PAPER_MTCUE_WEIGHTS == gpu_hours.train_weights(paper_mtcue, paper["spm"]["vocab_size"])


def test_the_train_rule_retries_as_often_as_its_longest_training_needs():
    """The rule's retries (what Snakemake resubmits a training killed at its limit with) are derived: tiny's
    trainings fit one job (0); the paper's most: TAGGING's few-shot variants, 0.74 GPU-h x (6.13 + 5) epochs x 1.25
    = 618 min expected and 74 h at most (100 epochs), x 1.25 in 618-min jobs: 9, less one."""
    for config, retries in (("tiny.yaml", 0), ("paper.yaml", 8)):
        cfg = cfgmod.load(REPO / "config" / config)
        assert max(resources.training(cfg, m, d)["jobs"] for d, m in trained_models(cfg)) - 1 == retries
    assert "retries: TRAIN_RETRIES" in (REPO / "workflow" / "rules" / "train.smk").read_text()


def test_an_evaluation_is_sized_from_its_work(paper):
    """A paper MTCUE translates 10,000 test lines with beam 5: 10,000 x 5 x 4 steps of 0.81 GPU-h / 11.3 M
    sentences x 3,600 s = 0.26 ms each: 0.86 min of work, x 2 + 3 min to start: 5 min (the floor). COMET: 10,000 lines
    at 50 a second = 3.3 min, x 2 + 3 = 10 min, 16 GB for wmt20-comet-da."""
    step_s = 0.81 * 3600 / resources.paper_sentences()
    assert resources.evaluation_work(paper, "translate", "mtcue", "en-de") == pytest.approx(10000 * 20 * step_s / 60)
    assert resources.evaluation(paper, "translate", "mtcue", "en-de") == {"runtime": 5, "mem_mb": 16000}
    assert resources.evaluation(paper, "comet", "mtcue", "en-de") == {"runtime": 10, "mem_mb": 16000}
    # a model twice as dear per line (NOVOTNEY-CUE's Table 3 figure, 1.29) decodes for longer
    assert resources.evaluation_work(paper, "contrastive", "novotney_cue", "en-de") == pytest.approx(
        10000 * 4 * 1.29 * 3600 / resources.paper_sentences() / 60)


def test_a_models_evaluation_job_asks_its_steps_minutes_added_up_and_their_most_memory(paper):
    """Issue 55: one process runs the steps one after another. A paper MTCUE's test split translated (5 min,
    16 GB), scored (10 min, 2 GB: PAPER_STEPS' score) and scored by COMET (10 min, 16 GB): 25 minutes, 16 GB."""
    from mtcue.plan.evaluation import Evaluation

    steps = Evaluation(((None, "test"),), (("comet", "test"), ("score", "test")))
    assert resources.step(paper, "score") == {"runtime": 10, "mem_mb": 2000}
    assert resources.evaluation_job(paper, steps, "mtcue", "en-de") == {"runtime": 25, "mem_mb": 16000}
    # the scores alone ask their own memory; no job asks more than the site's longest
    assert resources.evaluation_job(paper, Evaluation((), (("score", "test"),)), "mtcue", "en-de") == {
        "runtime": 10, "mem_mb": 2000}
    many = Evaluation(tuple((None, f"s{i}") for i in range(400)), ())
    assert resources.evaluation_job(paper, many, "mtcue", "en-de")["runtime"] == paper["slurm"]["max_minutes"]


def test_a_study_without_mtcue_asks_for_its_trainings_too():
    """plan.gpu_hours scales every model from the config's MTCUE; without one, the paper's MTCUE per epoch,
    weight for weight, for max_epoch epochs: a toy BASE asks the floor."""
    cfg = cfgmod.validate({"study": "one", "directions": ["en-de"], "models": {"base": {"type": "base"}}})
    assert resources.training(cfg, "base", "en-de") == {"runtime": 20, "mem_mb": 2000, "threads": 1, "jobs": 1}


@pytest.mark.parametrize("config", ["tiny.yaml", "config.yaml"])
def test_a_toy_study_asks_minutes_and_one_cpu(config):
    cfg = cfgmod.load(REPO / "config" / config)
    for direction, model in trained_models(cfg):
        assert resources.training(cfg, model, direction) == {"runtime": 20, "mem_mb": 2000, "threads": 1, "jobs": 1}
    assert {kind: resources.step(cfg, kind) for kind in resources.PAPER_STEPS} == {
        "embed": {"runtime": 5, "mem_mb": 2000}, "measure": {"runtime": 5, "mem_mb": 2000},
        "prepare": {"runtime": 5, "mem_mb": 1000}, "score": {"runtime": 5, "mem_mb": 1000}}
    assert resources.evaluation(cfg, "translate", "mtcue", "en-de") == {"runtime": 5, "mem_mb": 2000}


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
