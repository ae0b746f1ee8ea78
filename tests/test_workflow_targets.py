"""Targets and reruns, by dry runs: each table and figure is a target by rule name and by path and
runs only what it needs; on a finished study (stubbed: tests/stub_study.py), a changed setting
reruns exactly what depends on it."""
import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
ARCH = {"embed_dim": 32, "heads": 2, "encoder_layers": 1, "encoder_ffn_dim": 64, "decoder_layers": 1,
        "decoder_ffn_dim": 64}
CONFIG = {
    "study": "targets",
    "directions": ["en-de", "de-en"],
    "models": {
        "base": {"type": "base", "arch": ARCH},
        "base_pm": {"type": "base", "arch": {**ARCH, "encoder_layers": 2}},
        "tagging": {"type": "tagging", "init_from": "base_pm", "arch": {**ARCH, "encoder_layers": 2}},
        "mtcue": {"type": "mtcue", "init_from": "base", "arch": {**ARCH, "context_layers": 1, "context_ffn_dim": 64}},
    },
    "evaluation": {"comet": {"model": "/absent/comet"}, "bootstrap": {"samples": 100}},
    "generation": {"beam": 2},
    # Table 5 in en-de (its default directions: en->xx only), one prompt per register.
    "experiments": {"formality": {"prompts": {"formal": ["Formal conversation"], "informal": ["Informal chit-chat"]}}},
}
UPSTREAM = {"generate_corpus", "clean", "spm_train", "spm_encode", "binarise", "tags", "comet_model"}
# A trained model's evaluation is one job (evaluate.smk: a rule per profile and direction, evaluate_*): its
# translations, scores, COMET, context usage and contrastive scores.
PER_MODEL = {"train", "evaluate"}
REPORT_TARGETS = ("table3_models", "table4_quality", "phenomena", "table5_formality", "training_curves",
                  "phenomena_accuracy", "bleu_gain")


def run(workdir: Path, config: dict, *args: str) -> str:
    path = workdir / f"config-{abs(hash(yaml.safe_dump(config)))}.yaml"
    path.write_text(yaml.safe_dump(config))
    done = subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
                           "--configfile", str(path), "-n", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def job_counts(stdout: str) -> dict[str, int]:
    """{rule: jobs} from a dry run's "Job stats" table; empty when nothing is to be done."""
    if "Nothing to be done" in stdout:
        return {}
    table = stdout.split("Job stats:")[1].split("\ntotal")[0]
    counts = {}
    for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE):
        counts[rule_kind(m.group(1))] = counts.get(rule_kind(m.group(1)), 0) + int(m.group(2))
    return counts


def rule_kind(rule: str) -> str:
    """A rule's name, the evaluation rules of every profile as one: "evaluate"."""
    return "evaluate" if rule.startswith("evaluate_") else rule


def pending(workdir: Path, config: dict) -> dict[str, str]:
    """{output file: rule} of the outputs a run of the whole study with `config` would update."""
    stdout = run(workdir, config, "--detailed-summary")
    rows = csv.DictReader(stdout[stdout.index("output_file\t"):].splitlines(), delimiter="\t")
    return {r["output_file"]: rule_kind(r["rule"]) for r in rows if r["plan"] == "update pending"}


def models_of(outputs: dict[str, str]) -> set[tuple[str, str, str]]:
    """(rule, direction, model) of the per-model outputs among `outputs`
    (results/models/en-de/mtcue/checkpoint_best.pt, results/hyps/en-de/mtcue.test.txt, ...)."""
    found = set()
    for path, rule in outputs.items():
        if rule in PER_MODEL:
            m = re.search(r"/([a-z]{2}-[a-z]{2})/(\w+)(?:[./]|$)", path)  # a file, or a folder of translations
            found.add((rule, m.group(1), m.group(2)))
    return found


def upstream(outputs: dict[str, str], also: frozenset = frozenset()) -> set[str]:
    """The rules of data preparation and context stores (one embed_<store> rule per encoder) among `outputs`."""
    return {r for r in outputs.values() if r in UPSTREAM | also or r.startswith("embed_")}


def report_targets(outputs: dict[str, str]) -> set[str]:
    return {rule for path, rule in outputs.items() if path.startswith(("results/tables/", "results/figures/"))}


# ---- targets, on an empty study -------------------------------------------------------------

@pytest.fixture(scope="module")
def empty(tmp_path_factory):
    return tmp_path_factory.mktemp("empty")


@pytest.fixture(scope="module")
def every_output(empty):
    return pending(empty, CONFIG)


def test_every_table_and_figure_of_the_study_is_a_target(every_output):
    assert report_targets(every_output) >= set(REPORT_TARGETS)
    for table in ("table3_models", "table4_quality", "phenomena"):
        assert {f"results/tables/{table}.{ext}" for ext in ("csv", "md", "html")} <= set(every_output)


# What a target must not run besides the other tables and figures. The tables name each number's
# MLflow run, so they wait for the sync, which mirrors every record of the study (COMET too);
# the SVG figures read records only.
NOT_NEEDED = {
    "training_curves": {"evaluate", "mlflow_sync"},
    "phenomena_accuracy": {"mlflow_sync"},  # COMET too now: a model's evaluation is one job
    "bleu_gain": {"mlflow_sync"},
}


@pytest.mark.parametrize("target", REPORT_TARGETS)
def test_a_target_by_name_runs_only_what_it_needs(empty, target):
    jobs = job_counts(run(empty, CONFIG, target))
    others = (set(REPORT_TARGETS) | {"all"}) - {target}
    assert jobs[target] == 1 and not others & set(jobs), jobs
    assert not NOT_NEEDED.get(target, set()) & set(jobs), jobs
    # every model of the target's experiment (quality, formality: the same four) in its directions: every one,
    # Table 5's en->xx only; nothing of the others (one table, one target)
    directions = ["en-de"] if target == "table5_formality" else CONFIG["directions"]
    assert jobs["train"] == 4 * len(directions) and "mlflow_sync" not in jobs


def test_the_contrastive_table_scores_every_en_xx_model_on_its_suite(empty):
    jobs = job_counts(run(empty, CONFIG, "table_contrastive"))
    # en-de only (suites are en->xx), all four models of it, each on the synthetic suite; the table names its
    # MLflow runs by name, with no sync
    assert jobs["table_contrastive"] == jobs["contrastive_synthetic"] == 1 and "mlflow_sync" not in jobs
    assert jobs["evaluate"] == 4


def test_the_context_usage_table_measures_every_model_in_every_direction(empty):
    jobs = job_counts(run(empty, CONFIG, "table_context_usage"))
    assert jobs["table_context_usage"] == 1 and "mlflow_sync" not in jobs
    # BASE, TAGGING and MTCUE in both directions; BASE-PM, without context like BASE, is left out
    assert jobs["evaluate"] == 3 * len(CONFIG["directions"])


def test_a_target_by_path_runs_what_its_rule_name_runs(empty):
    by_path = job_counts(run(empty, CONFIG, "results/tables/table4_quality.md"))
    assert by_path == job_counts(run(empty, CONFIG, "table4_quality"))
    assert by_path["evaluate"] == by_path["train"] == 8


# ---- reruns, on a finished study ---------------------------------------------------------------

@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("finished")
    config = workdir / "stub.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    done = subprocess.run([sys.executable, str(REPO / "tests" / "stub_study.py"), str(REPO / "Snakefile"),
                           str(config), str(workdir)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert pending(workdir, CONFIG) == {}
    return workdir


def changed(**sections) -> dict:
    """CONFIG with `sections` replaced (a model by its name under "models")."""
    config = yaml.safe_load(yaml.safe_dump(CONFIG))
    for key, value in sections.items():
        if key in config["models"]:
            config["models"][key] = value
        else:
            config[key] = value
    return config


def test_a_changed_model_reruns_that_model_and_what_depends_on_it(finished):
    mtcue = CONFIG["models"]["mtcue"]
    out = pending(finished, changed(mtcue={**mtcue, "arch": {**mtcue["arch"], "context_layers": 2}}))
    assert models_of(out) == {(rule, d, "mtcue") for rule in PER_MODEL for d in CONFIG["directions"]}
    assert not upstream(out)
    # The tables and figures read the records of every model, and MLflow mirrors them; the contrastive
    # table reads the en->xx models' scores of their suites.
    assert report_targets(out) == set(REPORT_TARGETS) | {"table_contrastive", "table_context_usage"}
    assert "mlflow_sync" in out.values()


def test_a_changed_parent_reruns_the_models_initialised_from_it(finished):
    base = CONFIG["models"]["base"]
    out = pending(finished, changed(base={**base, "training": {"lr": 0.001}}))
    assert {(rule, m) for rule, _, m in models_of(out)} == {(rule, m) for rule in PER_MODEL for m in ("base", "mtcue")}
    assert not upstream(out)


def test_a_changed_generation_setting_reevaluates_only(finished):
    out = pending(finished, changed(generation={"beam": 3}))
    models = list(CONFIG["models"])
    assert models_of(out) == {("evaluate", d, m) for d in CONFIG["directions"] for m in models}
    assert not upstream(out, also=frozenset({"train"}))
    # What reads only the training records stays (Table 3, the curves); each model's evaluation is one job, so its
    # forced-decoding records (contrastive, context usage) are written again with its translations, and their
    # tables made again; the sync mirrors the new scores.
    assert report_targets(out) == (set(REPORT_TARGETS) - {"training_curves", "table3_models"}
                                   | {"table_contrastive", "table_context_usage"})
    assert "mlflow_sync" in out.values()


def test_a_changed_bootstrap_setting_rebuilds_only_the_tables(finished):
    """Table 4's significance marks, Table 5's, the contrastive differences' and CXMI's intervals resample;
    nothing is translated or scored anew. The study's MLflow run logs the new tables."""
    out = pending(finished, changed(evaluation={**CONFIG["evaluation"], "bootstrap": {"samples": 200}}))
    tables = {"table4_quality", "table5_formality", "table_contrastive", "table_context_usage"}
    assert set(out.values()) == tables | {"mlflow_study"}
    assert set(out) == {f"results/tables/{table.removeprefix('table_')}.{ext}" for table in tables
                        for ext in ("csv", "md", "html")} | {"results/mlflow/targets.html"}


# ---- lint ------------------------------------------------------------------------------------

# Snakemake's lints that docs/results-and-tracking.md ("Lint") explains and the workflow keeps deliberately.
EXPLAINED_LINTS = (
    "Specify a conda environment or container for each rule.",  # the environment is the pinned venv
)


def test_lint_reports_only_what_the_readme_explains():
    done = subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(REPO), "--lint"],
                          capture_output=True, text=True)
    found = re.findall(r"^    \* (.+)$", done.stdout + done.stderr, re.MULTILINE)
    assert found, done.stdout + done.stderr  # the lint ran
    unexplained = sorted({lint for lint in found if not lint.startswith(EXPLAINED_LINTS)})
    assert not unexplained, unexplained


def test_every_rule_has_a_log_and_a_benchmark(tmp_path):
    """Each job's time is measured (results/benchmarks/, docs/benchmarks.md's breakdown) and its errors kept."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, Quietness, ResourceSettings

    # The paper's data path adds the download, extraction, OMDb and evaluation-set rules.
    configs = [REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"]
    for configfile in configs:
        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
            workflow = api.workflow(ResourceSettings(cores=1), ConfigSettings(configfiles=[configfile]),
                                    snakefile=REPO / "Snakefile", workdir=tmp_path)._workflow
            rules = {r.name: r for r in workflow.rules if r.name != "all"}
            assert len(rules) > 20
            assert not [n for n, r in rules.items() if not r.log], configfile
            assert not [n for n, r in rules.items() if not r.benchmark], configfile
