"""The HTML report and the MLflow mirror hold the whole study: checked on the jobs of the demo's and the
paper's DAG (Snakemake's API; nothing is run, the working directory is empty)."""
import json
from pathlib import Path

import pytest
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings

from conftest import REPO

RESULTS = ("results/tables/", "results/figures/")


@pytest.fixture(scope="module", params=["config.yaml", "paper.yaml"])
def workflow(request, tmp_path_factory):
    """The workflow of `snakemake all` with the config, its DAG built."""
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(ResourceSettings(cores=1),
                                    ConfigSettings(configfiles=[REPO / "config" / request.param]),
                                    snakefile=REPO / "Snakefile", workdir=tmp_path_factory.mktemp("dag"))
        workflow_api.dag(DAGSettings(forceall=True))
        workflow = workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        return workflow


@pytest.fixture(scope="module")
def jobs(workflow):
    """Every job of `snakemake all` with the config."""
    return list(workflow.dag.jobs)


def test_the_front_page_names_the_models_the_study_trains(workflow):
    """The report's front page, rendered as Snakemake renders it (Jinja, the workflow's config), names each
    configured model that a train job trains, itself or as a run derived from it, and no other."""
    import re
    from types import SimpleNamespace

    from jinja2 import Environment

    page = Environment().from_string((REPO / "workflow" / "report" / "workflow.rst").read_text()).render(
        snakemake=SimpleNamespace(config=workflow.config))
    listed, derived = re.search(r"; models\n(.*?)(?: and\n(\d+) runs derived from them.*?)?;\ncorpus", page,
                                re.S).groups()
    listed = listed.split(", ")
    trained = {job.wildcards.model for job in workflow.dag.jobs if job.rule.name == "train"}
    configured = set(workflow.config["models"])
    assert sorted(listed) == sorted(m for m in configured if m in trained or any(t.startswith(f"{m}_") and t not in
                                                                                 configured for t in trained))
    assert int(derived or 0) == len(trained - configured)
    if "mtcue_no_qk_norm" in configured and "mtcue_no_qk_norm" not in trained:  # the demo's: defined for the tests
        assert "mtcue_no_qk_norm" not in listed and "mtcue_shuffled_context" not in listed


def test_every_table_and_figure_is_in_the_report_with_a_caption(jobs):
    """A table or figure (a name under results/tables/ or results/figures/: its CSV, Markdown, HTML,
    SVG or PNG) is shown by one of its files marked report(), whose caption file exists."""
    outputs = [f for job in jobs for f in job.output if f.startswith(RESULTS)]
    captions = {Path(f).stem: f.flags["report"].caption for f in outputs if "report" in f.flags}
    names = {Path(f).stem for f in outputs}
    assert len(names) >= 9  # Tables 1, 3-6, phenomena, three figures, Figure 4
    assert not names - set(captions), f"not in the report: {sorted(names - set(captions))}"
    uncaptioned = [n for n, caption in captions.items()
                   if caption is None or not Path(caption.get_path_or_uri(secret_free=True)).is_file()]
    assert not uncaptioned, f"no caption file: {uncaptioned}"
    # the report lists each by its title, not its file name
    titles = {Path(f).stem: (f.flags["report"].labels or {}).get("name") for f in outputs if "report" in f.flags}
    assert all(titles.values()) and len(set(titles.values())) == len(titles), titles
    assert titles["table4_quality"] == "Table 4: translation quality"


def test_the_mlflow_sync_mirrors_every_trained_model_tagged_with_its_experiments(jobs):
    (sync,) = [job for job in jobs if job.rule.name == "mlflow_sync"]
    trained = {f for job in jobs if job.rule.name == "train" for f in job.output if f.startswith("results/records/")}
    assert len(trained) >= 55 and trained <= set(sync.input)
    experiments = json.loads(sync.params.experiments)
    assert {f"results/records/train/{key}.json" for key in experiments} == trained
    assert all(experiments.values())  # each model of these configs gives some experiment's results


def test_no_table_or_figure_waits_for_the_mlflow_sync(jobs):
    """One table, one target: each table and figure reads records, never what the MLflow sync writes (which needs
    every trained model of the study); only the study's MLflow page, built last, reads the sync's run ids (and
    `all`, which asks for both)."""
    csvs = {job.rule.name for job in jobs if any(f.startswith(RESULTS) and f.endswith(".csv") for f in job.output)}
    assert len(csvs) >= 7
    readers = {job.rule.name for job in jobs if any(f.startswith("results/mlflow/") for f in job.input)}
    assert readers == {"mlflow_study", "all"}


def test_every_table_and_figure_is_an_artifact_of_the_studys_mlflow_run_linked_from_the_report(jobs):
    """Rule mlflow_study logs every table and figure of the study into its MLflow run, after they are built,
    and its page of links to the MLflow UI is in the report; the sync logs each model's files and model."""
    (study,) = [job for job in jobs if job.rule.name == "mlflow_study"]
    outputs = {f for job in jobs for f in job.output if f.startswith(RESULTS)}
    assert outputs and outputs <= set(study.input)
    page, = study.output
    assert page.flags["report"].category == "MLflow"
    assert Path(page.flags["report"].caption.get_path_or_uri(secret_free=True)).is_file()
    (sync,) = [job for job in jobs if job.rule.name == "mlflow_sync"]
    assert " --artifacts " in sync.format_wildcards(sync.rule.shellcmd)


@pytest.mark.parametrize("interrupted", [True, False])
def test_make_report_replaces_the_report_only_when_snakemake_finished_it(tmp_path, monkeypatch, interrupted):
    """Snakemake writes its report as it goes: an interrupted `make report` must leave the previous report, not
    half of a new one, and no scratch behind."""
    import subprocess

    from mtcue.reporting import study_report

    out = tmp_path / "results" / "report.html"
    out.parent.mkdir()
    out.write_text("the previous report")

    def snakemake(command, **_):
        partial = Path(command[command.index("--report") + 1])
        assert partial.parent != out.parent and partial.name == "report.html"
        partial.write_text("<html>half" if interrupted else "<html>the new report</html>")
        if interrupted:
            raise subprocess.CalledProcessError(130, command)

    monkeypatch.setattr(study_report, "result_status", lambda cfg: (["results/tables/table4_quality.csv"], []))
    monkeypatch.setattr(study_report.subprocess, "run", snakemake)
    monkeypatch.chdir(tmp_path)
    if interrupted:
        with pytest.raises(subprocess.CalledProcessError):
            study_report.write_report({"study": "demo"}, str(out), "Snakefile")
    else:
        assert study_report.write_report({"study": "demo"}, str(out), "Snakefile") == []
    assert out.read_text() == ("the previous report" if interrupted else "<html>the new report</html>")
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.html"]
