"""One table, one target: each experiment's tables and figures train that experiment's models and their parents,
nothing else, in the demo and in the paper's study; on a finished study, adding a model to one experiment reruns
that experiment's table and the study-level outputs only. Checked on Snakemake's own DAG (its API, nothing run)
against the plan (mtcue.plan: the registry's `trains`, the models its records are of, `init_from`)."""
import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings

from conftest import REPO, SNAKEMAKE
from mtcue import config as cfgmod
from mtcue.plan import EXPERIMENTS
from mtcue.plan.models import experiment_trainings, model_entry

pytestmark = pytest.mark.slow  # every test here builds Snakemake DAGs (in-process or by dry runs)

# Study-level outputs: the MLflow mirror of every model, and the evaluations that score every trained model
# (contrastive suites, context usage), whose tables gain a row for any new model.
STUDY_LEVEL = {"mlflow_sync", "mlflow_study", "all", "table_contrastive", "table_context_usage"}


class Dag:
    """The repository's workflow with one config, parsed once; the jobs a target needs in an empty folder."""

    def __init__(self, api: SnakemakeApi, configfile: Path, workdir: Path):
        workflow_api = api.workflow(ResourceSettings(cores=1), ConfigSettings(configfiles=[configfile]),
                                    snakefile=REPO / "Snakefile", workdir=workdir)
        workflow_api.dag(DAGSettings())
        self.workflow = workflow_api._workflow

    def jobs(self, target: str) -> list:
        workflow = self.workflow
        workflow.dag_settings = dataclasses.replace(workflow.dag_settings, targets=frozenset([target]))
        workflow._prepare_dag(forceall=False, ignore_incomplete=True, lock_warn_only=True, nolock=True)
        workflow._build_dag()
        return list(workflow.dag.jobs)


def trainings(jobs) -> set[tuple[str, str]]:
    return {(job.wildcards.direction, job.wildcards.model) for job in jobs if job.rule.name == "train"}


@pytest.fixture(scope="module", params=["config.yaml", "paper.yaml"])
def study(request, tmp_path_factory):
    configfile = REPO / "config" / request.param
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        yield request.param, cfgmod.load(configfile), Dag(api, configfile, tmp_path_factory.mktemp("empty"))


def test_each_experiments_tables_train_its_models_and_their_parents_only(study):
    """Every table and figure of an experiment trains a subset of its models and their parents, its tables and
    figures together exactly those; each fine-tuning after the model it starts from (BASE before MTCUE,
    BASE-PM before TAGGING, a few-shot variant after its parent)."""
    name, cfg, dag = study
    checked = 0
    for experiment in EXPERIMENTS.values():
        made = experiment.targets(cfg)
        expected, planned = set(experiment_trainings(cfg, experiment.name)), set()
        for target in [*made.tables, *made.figures]:
            jobs = dag.jobs(target)
            trained = trainings(jobs)
            assert trained <= expected, (name, target, sorted(trained - expected))
            planned |= trained
            by_cell = {(j.wildcards.direction, j.wildcards.model): j for j in jobs if j.rule.name == "train"}
            for (direction, model), job in by_cell.items():
                parent = model_entry(cfg, model).get("init_from")
                if parent:
                    assert by_cell[(direction, parent)] in dag.workflow.dag.dependencies[job], (target, model)
            checked += 1
        assert planned == expected, (name, experiment.name, sorted(expected ^ planned))
    assert checked >= 12


def test_a_table_costs_what_the_issue_allows(study):
    """Table 4: the five models in eight directions (40 trainings, paper and demo alike); Table 6: its rows,
    each fine-tuning three times in the demo, BASE once (22; the paper's two more rows, once each)."""
    name, _cfg, dag = study
    assert len(trainings(dag.jobs("results/tables/table4_quality.csv"))) == 40
    assert len(trainings(dag.jobs("table4_quality"))) == 40
    assert len(trainings(dag.jobs("results/tables/table6_ablation.csv"))) == {"config.yaml": 22, "paper.yaml": 30}[name]


def test_the_papers_table4_through_the_slurm_profile_plans_its_40_trainings(tmp_path):
    done = subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
                           "--profile", str(REPO / "workflow/profiles/slurm"), "--configfile",
                           str(REPO / "config/paper.yaml"), "-n", "table4_quality"],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", done.stdout.split("Job stats:")[1], re.MULTILINE))
    assert counts["train"] == "40" and "mlflow_sync" not in counts and "table6_ablation" not in counts


def dry_run_rules(workdir: Path, configfile: Path, *targets: str) -> dict[str, int]:
    """{rule: jobs} that `snakemake -n` would run in `workdir`; empty when nothing is to be done."""
    done = subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
                           "--configfile", str(configfile), "-n", *targets], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    if "Nothing to be done" in done.stdout:
        return {}
    table = done.stdout.split("Job stats:")[1].split("\ntotal")[0]
    rules = {}
    for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE):  # the evaluation rules of every profile as one
        rule = "evaluate" if m.group(1).startswith("evaluate_") else m.group(1)
        rules[rule] = rules.get(rule, 0) + int(m.group(2))
    return rules


@pytest.fixture(scope="module")
def finished_demo(tmp_path_factory):
    """The demo made to look finished (tests/stub_study.py: every output, then Snakemake's --touch run)."""
    workdir = tmp_path_factory.mktemp("finished")
    configfile = workdir / "config.yaml"
    shutil.copy(REPO / "config" / "config.yaml", configfile)
    subprocess.run([sys.executable, str(REPO / "tests" / "stub_study.py"), str(REPO / "Snakefile"), str(configfile),
                    str(workdir)], check=True, capture_output=True, cwd=REPO)
    return workdir, configfile


def test_a_finished_demo_plans_nothing_and_its_table4_nothing(finished_demo):
    workdir, configfile = finished_demo
    assert dry_run_rules(workdir, configfile) == {}
    assert dry_run_rules(workdir, configfile, "results/tables/table4_quality.csv") == {}


def test_a_model_added_to_the_ablation_reruns_its_table_and_the_study_level_outputs_only(finished_demo, tmp_path):
    """The paper's "no QK-norm" row (a model the demo defines but does not train) added to Table 6: its three
    seeded fine-tunings and their evaluation, Table 6 and the study-level outputs; no other experiment's table."""
    workdir, configfile = finished_demo
    cfg = yaml.safe_load(configfile.read_text())
    cfg["experiments"]["ablation"]["rows"]["no QK-norm"] = "mtcue_no_qk_norm"
    grown = tmp_path / "grown.yaml"
    grown.write_text(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
    rules = dry_run_rules(workdir, grown)
    assert rules["train"] == 3 and rules["evaluate"] == 3 and rules["table6_ablation"] == 1
    tables = {rule for rule in rules if rule.startswith(("table", "figure")) or rule in ("phenomena", "bleu_gain",
                                                                                        "training_curves")}
    assert tables - STUDY_LEVEL == {"table6_ablation"}, rules


def test_a_new_ui_address_rebuilds_the_studys_mlflow_page_only(finished_demo):
    """The UI's address is resolved where the links are drawn: the study's MLflow page, not the tables."""
    workdir, configfile = finished_demo
    done = subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
                           "--configfile", str(configfile), "-n"], capture_output=True, text=True,
                          env={**os.environ, "MTCUE_MLFLOW_UI": "https://lab.example.org/mlflow"})
    assert done.returncode == 0, done.stderr[-2000:]
    table = done.stdout.split("Job stats:")[1].split("\ntotal")[0]
    assert dict(re.findall(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)) == {"mlflow_study": "1", "all": "1"}


def test_the_report_of_a_partly_built_study_shows_what_is_built_and_names_the_rest(finished_demo, tmp_path, caplog):
    """A study grown one table at a time: `mtcue report` (make report) writes Snakemake's report of the built
    tables and figures and names those not built yet, rather than failing on the first one missing."""
    from mtcue.reporting.study_report import result_status, write_report

    workdir = tmp_path / "study"
    shutil.copytree(finished_demo[0], workdir, symlinks=True)
    for f in (workdir / "results" / "tables").glob("table6_ablation.*"):
        f.unlink()
    cfg = cfgmod.load(REPO / "config" / "config.yaml")
    os.chdir(workdir)
    try:
        built, missing = result_status(cfg)
        assert missing == ["results/tables/table6_ablation"]
        assert "results/tables/table4_quality.html" in built and not any("table6" in f for f in built)
        assert write_report(cfg, "results/report.html", str(REPO / "Snakefile"), str(workdir / "config.yaml")) == \
            missing
    finally:
        os.chdir(REPO)
    report = (workdir / "results" / "report.html").read_text()
    assert "table4_quality.html" in report and "table6_ablation.html" not in report
    assert "Not built yet" in report and "table6_ablation" in report  # the front page names it
    assert "results/tables/table6_ablation" in caplog.text
