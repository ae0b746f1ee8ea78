import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import mlflow.pyfunc
import pandas as pd
import pytest
from mlflow.entities import LoggedModelStatus, ViewType
from mlflow.tracking import MlflowClient

from mtcue.cli import main
from mtcue.evaluation.eamt22 import ATTRIBUTES
from mtcue.models.runs import resolve_uri
from mtcue.records import write_record
from mtcue.reporting.kit import display_name
from mtcue.reporting import tracking
from mtcue.reporting.tracking import sync_records
from mtcue.study import fewshot_name
from table_links import paper_links, unlinked_numbers

SIG = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"


def train(model, direction, study, valid_losses=(4.5, 4.1, 4.0), init_from=None):
    return {
        "kind": "train", "model": model, "direction": direction, "study": study,
        "spec": {"model": model, "init_from": init_from, "arch": {"embed_dim": 128},
                 "training": {"lr": 0.0005, "betas": [0.9, 0.98]}},
        "params": {"total": 1000, "trainable": 900},
        "epochs": [{"epoch": i + 1, "train_loss": 5.0 - i, "valid_loss": v, "wall_s": 10.0 + i}
                   for i, v in enumerate(valid_losses)],
        "best_epoch": 1 + valid_losses.index(min(valid_losses)), "best_valid_loss": min(valid_losses),
        "config_hash": f"hash-{model}",
        "git_commit": "abc123",
        "started": "2026-11-22T09:00:00+00:00", "finished": "2026-11-22T09:01:30.500000+00:00",
        "model_path": f"results/models/{direction}/{model}/checkpoint_best.pt",
    }


def score(model, direction, study, bleu=30.0, split="test"):
    return {
        "kind": "score", "model": model, "direction": direction, "split": split, "study": study,
        "bleu": bleu, "bleu_signature": SIG, "n_segments": 4, "hyp_sha256": "0" * 64,
        "phenomena": {"formality": {"correct": 3, "incorrect": 1, "ignored": 0, "accuracy": 0.75},
                      "all": {"correct": 3, "incorrect": 1, "ignored": 0, "accuracy": 0.75},
                      "gender": {"correct": 0, "incorrect": 0, "ignored": 2, "accuracy": None}},
        "config_hash": f"hash-{model}", "git_commit": "abc123",
    }


def comet(model, direction, study, value=81.5, unavailable=None):
    return {
        "kind": "comet", "model": model, "direction": direction, "split": "test", "study": study,
        "comet_model": "Unbabel/wmt20-comet-da", "comet": value, "unavailable": unavailable,
        "segment_scores": None if value is None else [value] * 4, "n_segments": 4,
        "hyp_sha256": "0" * 64, "config_hash": f"hash-{model}", "git_commit": "abc123",
    }


CELLS = [("en-de", "base"), ("en-de", "mtcue"), ("de-en", "base")]


@pytest.fixture(scope="module")
def uri(tmp_path_factory):
    # A nested, not yet existing directory: ensure_store must create it.
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow')}/nested/dir/mlflow.db"


def runs_of(uri, study, view=ViewType.ACTIVE_ONLY):
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(study)
    return client.search_runs([experiment.experiment_id], run_view_type=view)


def sync(uri, study, *kinds, experiments=None):
    """sync_records of the records of every kind given (lists)."""
    return sync_records(uri, study, [r for records in kinds for r in records], experiments)


@pytest.fixture(scope="module")
def synced_twice(uri):
    trains = [train(m, d, "demo") for d, m in CELLS]
    scores = [score(m, d, "demo") for d, m in CELLS]
    first = sync(uri, "demo", trains, scores)
    second = sync(uri, "demo", trains, scores)
    return first, second


def test_rerun_updates_the_same_runs(uri, synced_twice):
    first, second = synced_twice
    assert first == second
    runs = runs_of(uri, "demo")
    keys = sorted((r.data.tags["mtcue.direction"], r.data.tags["mtcue.model"]) for r in runs)
    assert keys == sorted(CELLS)
    assert {r.info.run_name for r in runs} == {"en-de/base", "en-de/mtcue", "de-en/base"}
    assert runs_of(uri, "demo", ViewType.DELETED_ONLY) == []


def test_epoch_history_is_not_duplicated(uri, synced_twice):
    client = MlflowClient(uri)
    run_id = synced_twice[0]["en-de/base"]
    history = client.get_metric_history(run_id, "valid_loss")
    assert sorted((m.step, m.value) for m in history) == [(1, 4.5), (2, 4.1), (3, 4.0)]
    assert [m.step for m in client.get_metric_history(run_id, "test_bleu")] == [0]


def test_params_tags_and_final_metrics(uri, synced_twice):
    run = MlflowClient(uri).get_run(synced_twice[0]["en-de/base"])
    assert run.data.params == {"model": "base", "init_from": "null", "arch.embed_dim": "128",
                               "training.lr": "0.0005", "training.betas": "[0.9, 0.98]",
                               "config_hash": "hash-base"}
    tags = run.data.tags
    assert {k: tags[k] for k in tags if k.startswith("mtcue.")} == {
        "mtcue.pair": "en-de", "mtcue.direction": "en-de", "mtcue.model": "base",
        "mtcue.study": "demo", "mtcue.config_hash": "hash-base", "mtcue.git_commit": "abc123",
        "mtcue.bleu_signature": SIG,
        "mtcue.model_path": "results/models/en-de/base/checkpoint_best.pt",
        "mtcue.spec": json.dumps(train("base", "en-de", "demo")["spec"], sort_keys=True),
    }
    assert run.data.metrics["test_bleu"] == 30.0
    assert run.data.metrics["test_acc_formality"] == 0.75
    assert "test_acc_gender" not in run.data.metrics  # accuracy None is not logged
    assert run.data.metrics["params_total"] == 1000
    assert run.info.status == "FINISHED"
    # The run spans the training (times from the record, 90.5 s), not the sync.
    assert run.info.start_time == 1795338000000 and run.info.end_time == 1795338090500
    assert MlflowClient(uri).get_run(synced_twice[0]["de-en/base"]).data.tags["mtcue.pair"] == "en-de"


def test_new_points_are_appended_and_changed_values_replace_the_run(uri):
    study = "changes"
    client = MlflowClient(uri)
    first = sync(uri, study, [train("base", "en-de", study, (4.5, 4.1))])
    # An epoch that leaves the best epoch as it was, and a score: new points, same run.
    grown = sync(uri, study, [train("base", "en-de", study, (4.5, 4.1, 4.2))],
                 [score("base", "en-de", study)])
    assert grown == first
    assert [m.step for m in client.get_metric_history(first["en-de/base"], "valid_loss")] == [1, 2, 3]
    assert client.get_run(first["en-de/base"]).data.metrics["test_bleu"] == 30.0
    # A changed value cannot be overwritten in MLflow: the run is deleted and logged afresh.
    changed = sync(uri, study, [train("base", "en-de", study, (4.5, 4.0, 4.2))],
                   [score("base", "en-de", study, bleu=31.0)])
    assert changed != first
    assert [r.info.run_id for r in runs_of(uri, study)] == [changed["en-de/base"]]
    history = client.get_metric_history(changed["en-de/base"], "valid_loss")
    assert sorted((m.step, m.value) for m in history) == [(1, 4.5), (2, 4.0), (3, 4.2)]
    assert client.get_run(changed["en-de/base"]).data.metrics["test_bleu"] == 31.0


def test_nan_loss_does_not_recreate_the_run(uri):
    study = "nan"
    rec = train("base", "en-de", study, (4.5, math.nan))
    assert sync(uri, study, [rec]) == sync(uri, study, [rec])


def test_records_of_another_study_a_second_of_one_split_or_of_no_model_are_refused(uri):
    with pytest.raises(ValueError, match="study"):
        sync(uri, "demo", [train("base", "en-de", "other")])
    with pytest.raises(ValueError, match="several score records of split test for en-de/base"):
        sync(uri, "demo", [score("base", "en-de", "demo"), score("base", "en-de", "demo", bleu=1.0)])
    with pytest.raises(ValueError, match="a data record belongs to no model's run"):
        sync(uri, "demo", [{"kind": "data", "study": "demo", "pair": "en-de"}])


def test_each_split_has_its_own_metrics_and_a_metric_no_longer_given_replaces_the_run(uri):
    study = "splits"
    client = MlflowClient(uri)
    records = [train("base", "en-de", study), score("base", "en-de", study),
               score("base", "en-de", study, bleu=28.0, split="valid")]
    first = sync(uri, study, records)
    metrics = client.get_run(first["en-de/base"]).data.metrics
    assert (metrics["test_bleu"], metrics["valid_bleu"], metrics["valid_acc_all"]) == (30.0, 28.0, 0.75)
    # A run holding a metric its records no longer give (a score dropped, or a run of an older sync's
    # naming) is logged afresh: MLflow cannot delete a metric.
    fewer = sync(uri, study, records[:2])
    assert fewer != first and "valid_bleu" not in client.get_run(fewer["en-de/base"]).data.metrics
    assert [r.info.run_id for r in runs_of(uri, study)] == [fewer["en-de/base"]]


def test_comet_joins_the_score_run_and_a_rerun_adds_no_point(uri):
    study = "comet"
    client = MlflowClient(uri)
    records = [train("base", "en-de", study)], [score("base", "en-de", study)], [comet("base", "en-de", study)]
    first = sync(uri, study, *records)
    assert sync(uri, study, *records) == first
    assert [r.info.run_id for r in runs_of(uri, study)] == [first["en-de/base"]]
    assert [(m.step, m.value) for m in client.get_metric_history(first["en-de/base"], "test_comet")] == [(0, 81.5)]
    run = client.get_run(first["en-de/base"])
    assert run.data.params["comet_model"] == "Unbabel/wmt20-comet-da"
    assert run.data.metrics["test_bleu"] == 30.0
    assert "mtcue.comet_unavailable" not in run.data.tags


def test_unavailable_comet_is_a_tag_and_switching_either_way_replaces_the_run(uri):
    study = "comet-unavailable"
    client = MlflowClient(uri)
    missing = comet("base", "en-de", study, value=None, unavailable="COMET model 'x' is unavailable")
    first = sync(uri, study, [score("base", "en-de", study)], [missing])
    assert sync(uri, study, [score("base", "en-de", study)], [missing]) == first
    run = client.get_run(first["en-de/base"])
    assert "test_comet" not in run.data.metrics
    assert run.data.tags["mtcue.comet_unavailable"] == "COMET model 'x' is unavailable"
    # Neither a tag nor a metric can be taken back: the run is logged afresh.
    scored = sync(uri, study, [score("base", "en-de", study)], [comet("base", "en-de", study)])
    run = client.get_run(scored["en-de/base"])
    assert scored != first and "mtcue.comet_unavailable" not in run.data.tags
    assert run.data.metrics["test_comet"] == 81.5
    again = sync(uri, study, [score("base", "en-de", study)], [missing])
    assert again != scored and "test_comet" not in client.get_run(again["en-de/base"]).data.metrics
    assert [r.info.run_id for r in runs_of(uri, study)] == [again["en-de/base"]]


def formality(model, direction, study):
    return {"kind": "formality", "model": model, "direction": direction, "study": study, "formal": 0.9,
            "informal": 0.7, "average": 0.8, "formal_mean": 0.85, "informal_mean": None, "best_prompt": {},
            "prompts": [], "lines": 4, "test_set": "iwslt22", "config_hash": f"hash-{model}", "git_commit": "abc123"}


def eamt22(model, direction, study, supervised=0):
    judged = {"correct": 3, "incorrect": 1, "ignored": 0, "accuracy": 0.75}
    return {"kind": "eamt22", "model": model, "direction": direction, "study": study, "split": "test",
            "detector": "labels", "attributes": dict.fromkeys(ATTRIBUTES, judged),
            "accuracy_mean": 0.75, "bleu": 12.5, "bleu_signature": SIG, "supervised_samples": supervised,
            "n_segments": 4, "hyp_sha256": "0" * 64, "config_hash": f"hash-{model}", "git_commit": "abc123"}


# A study of every experiment: (direction, model, the model it is trained from, experiments). "ablated"
# sorts before its parent and grandparent: the sync logs parents first by lineage, not by name.
LINEAGE = [("en-de", "base", None, ["ablation", "quality"]), ("en-de", "mtcue", "base", ["ablation", "quality"]),
           ("en-de", "ablated", "mtcue", ["ablation"]), ("en-pl", "base", None, ["fewshot", "quality"]),
           ("en-pl", "mtcue", "base", ["fewshot", "quality"]), ("en-pl", "mtcue_fewshot_5", "mtcue", ["fewshot"]),
           ("en-pl", "base_pm", None, [])]


def whole_study(study):
    """Its records: every model trained, Table 4's test scores, Table 6's valid scores, Table 5's formality
    and Figure 4's EAMT22 records; and {"direction/model": experiments}."""
    records = [train(m, d, study, init_from=parent) for d, m, parent, _ in LINEAGE]
    records += [score(m, d, study) for d, m, _, experiments in LINEAGE if "quality" in experiments]
    records += [score(m, "en-de", study, split="valid") for m in ("base", "mtcue", "ablated")]
    records += [formality(m, "en-de", study) for m in ("base", "mtcue")]
    records += [eamt22(m, "en-pl", study, supervised=5 * ("fewshot" in m))
                for m in ("base", "mtcue", "mtcue_fewshot_5")]
    return records, {f"{d}/{m}": experiments for d, m, _, experiments in LINEAGE}


def test_every_trained_model_is_one_run_tagged_with_its_experiments_and_parent(uri):
    study = "lineage"
    records, experiments = whole_study(study)
    ids = sync(uri, study, records, experiments=experiments)
    runs = {r.info.run_name: r for r in runs_of(uri, study)}
    assert sorted(runs) == sorted(ids) == sorted(f"{d}/{m}" for d, m, _, _ in LINEAGE)
    assert {name: r.info.run_id for name, r in runs.items()} == ids
    for direction, model, parent, expected in LINEAGE:
        tags = runs[f"{direction}/{model}"].data.tags
        assert tags.get("mtcue.experiments") == (",".join(expected) or None)
        assert tags.get("mtcue.init_from") == parent
        assert tags.get("mtcue.parent_run_id") == (parent and ids[f"{direction}/{parent}"])
        assert "mlflow.parentRunId" not in tags  # not nested: the UI would hide the fine-tuned models
    experiment = MlflowClient(uri).get_experiment_by_name(study).experiment_id
    assert runs["en-pl/mtcue_fewshot_5"].data.tags["mlflow.note.content"] == \
        f"Trained from [en-pl/mtcue](#/experiments/{experiment}/runs/{ids['en-pl/mtcue']})."
    metrics = runs["en-de/mtcue"].data.metrics
    assert (metrics["test_bleu"], metrics["valid_bleu"], metrics["formality_average"]) == (30.0, 30.0, 0.8)
    assert "formality_informal_mean" not in metrics  # null
    fewshot = runs["en-pl/mtcue_fewshot_5"].data.metrics
    assert (fewshot["eamt22_accuracy_mean"], fewshot["eamt22_acc_speaker_gender"], fewshot["eamt22_bleu"],
            fewshot["eamt22_supervised_samples"]) == (0.75, 0.75, 12.5, 5)
    assert "test_bleu" not in fewshot


def test_a_rerun_changes_nothing_and_a_relogged_parent_is_followed_by_its_children(uri):
    study = "lineage-rerun"
    records, experiments = whole_study(study)
    first = sync(uri, study, records, experiments=experiments)
    before = _snapshot(uri, study)
    assert sync(uri, study, records, experiments=experiments) == first
    assert _snapshot(uri, study) == before
    # BASE retrained in en-pl: its run is logged afresh, the models trained from it point at the new run.
    retrained = [train("base", "en-pl", study, (4.5, 4.3)) if (r["kind"], r["direction"], r["model"]) ==
                 ("train", "en-pl", "base") else r for r in records]
    second = sync(uri, study, retrained, experiments=experiments)
    assert second["en-pl/base"] != first["en-pl/base"]
    assert {k: v for k, v in second.items() if v != second["en-pl/base"]} == \
        {k: v for k, v in first.items() if v != first["en-pl/base"]}
    assert MlflowClient(uri).get_run(second["en-pl/mtcue"]).data.tags["mtcue.parent_run_id"] == second["en-pl/base"]
    assert len(runs_of(uri, study)) == len(LINEAGE)


def _files(folder, records):
    return [str(write_record(folder / f"{i}.json", r)) for i, r in enumerate(records)]


def test_every_number_of_every_table_names_an_existing_run_of_its_model_and_direction(tmp_path, monkeypatch):
    """Each table and Figure 4 through the commands the workflow runs, then the sync: each row of ours names, in
    each of its run columns, an active run of the study of that row's model in that column's direction; the
    HTML's links reach that run through the study's MLflow page."""
    from test_tables import COMETS, GOOD, RECORDS, TRAIN, rec

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    uri, runs = f"sqlite:///{tmp_path}/mlflow.db", str(tmp_path / "runs.json")
    scores = [*RECORDS, rec("mtcue", "en-de", GOOD, 0.9, "valid")]  # Table 4's test, Table 6's valid split
    forms = [formality(m, "en-de", "demo") for m in ("base", "mtcue")]
    points = [{"direction": "en-de", "model": "mtcue", "setting": s, "per_combination": n, "record": m}
              for s, n, m in (("zero_shot", 0, "mtcue"), ("5", 5, fewshot_name("mtcue", "5")))]
    fewshot = [eamt22(p["record"], "en-de", "demo", p["per_combination"]) for p in points]
    records = {kind: _files(tmp_path / kind, rs) for kind, rs in
               (("train", TRAIN), ("score", scores), ("comet", COMETS), ("formality", forms), ("eamt22", fewshot))}
    split = {s: [f for f, r in zip(records["score"], scores) if r["split"] == s] for s in ("test", "valid")}
    rows = {"Full MTCUE": "mtcue", "no context (non-contextual Transformer)": "base"}
    steps = {
        "table3": ["table", "--kind", "models", "--records", *records["train"]],
        "table4": ["table", "--records", *split["test"], "--comet-records", *records["comet"]],
        "phenomena": ["table", "--kind", "phenomena", "--records", *split["test"]],
        "table5": ["table-formality", "--records", *records["formality"], "--models", "base", "mtcue"],
        "table6": ["table-ablation", "--rows", json.dumps(rows), "--records", *split["valid"],
                   "--formality-records", *records["formality"], "--zeroshot-direction", "formality=en-de",
                   "eamt22=en-pl", "--unavailable", "eamt22=not trained there"],
    }
    # Each table is built from its records alone, before any sync (one table, one target): its runs by name.
    tables = tmp_path / "results" / "tables"
    for name, argv in steps.items():
        assert main([*argv, "--csv", str(tables / f"{name}.csv"), "--md", str(tables / f"{name}.md"),
                     "--html", str(tables / f"{name}.html")]) == 0
    assert main(["figure4", "--records", *records["eamt22"], "--points", json.dumps(points),
                 "--csv", str(tables / "figure4.csv"), "--png", str(tmp_path / "figure4.png")]) == 0
    assert main(["track", "--study", "demo", "--uri", uri, "--records", *sum(records.values(), []),
                 "--run-ids", runs]) == 0
    # The study's MLflow page, where each HTML number's link (page#{direction}/{model}) goes on to its run.
    monkeypatch.chdir(tmp_path)
    assert main(["track-study", "--run-ids", runs, "--files", str(tables / "table4.csv"),
                 "--html", "results/mlflow/demo.html"]) == 0
    study_page = (tmp_path / "results/mlflow/demo.html").read_text()
    for name in steps:  # every number of ours links to its run, none of the paper's
        page = (tables / f"{name}.html").read_text()
        assert unlinked_numbers(page) == [] and paper_links(page) == [], name
    ids = json.loads(Path(runs).read_text())["runs"]
    links = re.findall(r'<td><a href="([^"#]+)#([^"]+)">', (tables / "table4.html").read_text())
    assert len(links) >= 10 and {href for href, _ in links} == {"../mlflow/demo.html"}
    for _, run in links:
        if "/" not in run:  # the average over directions: the model's line of runs
            assert f'<li id="{run}">{run}: <a id="' in study_page and f'<a id="en-de/{run}"' in study_page
            continue
        assert (f'<a id="{run}" href="http://127.0.0.1:5000/#/experiments/') in study_page
        assert f'/runs/{ids[run]}?workflowType=machine_learning">{run}</a>' in study_page

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("demo").experiment_id
    named = 0
    for name in [*steps, "figure4"]:
        table = pd.read_csv(tables / f"{name}.csv", dtype=str, keep_default_na=False)
        columns = [c for c in table.columns if c == "run" or c.endswith(" run")]
        assert columns, name
        for _, row in (table[table["source"] == "ours"] if "source" in table else table).iterrows():
            for column in columns:
                # "en-de run", "IWSLT22 formality en-de run"; Table 3: "en-de/mtcue de-en/mtcue";
                # Figure 4: one "run" beside its direction.
                cells = row[column].split()
                group = column.removesuffix("run")  # "" for a column over the whole row
                numbers = [row[c] for c in table.columns if c.startswith(group) and c != column and "paper" not in c]
                if any(numbers):  # a direction without a record of this model has neither numbers nor run
                    assert cells, (name, column, dict(row))
                for run_name in cells:
                    found = client.search_runs([experiment], filter_string=f"attributes.run_name = '{run_name}'")
                    assert len(found) == 1, (name, run_name)
                    tags = found[0].data.tags
                    assert found[0].info.lifecycle_stage == "active" and tags["mtcue.study"] == "demo"
                    direction = row["direction"] if name == "figure4" else \
                        (column.split()[-2] if column != "run" else run_name.split("/")[0])
                    assert tags["mtcue.direction"] == direction, (name, column)
                    model = tags["mtcue.model"]
                    assert display_name(model) == display_name(row["model"]) or \
                        (name == "figure4" and model == fewshot_name(row["model"], row["setting"])), (name, model)
                    named += 1
    assert named >= 20


def test_environment_overrides_configured_uri(monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert resolve_uri("sqlite:///a.db") == "sqlite:///a.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///b.db")
    assert resolve_uri("sqlite:///a.db") == "sqlite:///b.db"


def test_the_experiment_opens_on_its_runs(uri, synced_twice):
    # MLflow 3's UI shows an experiment without a kind as a GenAI one (traces overview).
    assert MlflowClient(uri).get_experiment_by_name("demo").tags["mlflow.experimentKind"] == "custom_model_development"


def test_runs_left_twice_by_an_unlocked_writer_are_replaced_by_one(uri):
    study = "duplicated"
    client = MlflowClient(uri)
    first = sync(uri, study, [train("base", "en-de", study)])
    experiment = client.get_experiment_by_name(study).experiment_id
    identity = {"mtcue.direction": "en-de", "mtcue.model": "base", "mtcue.study": study}
    client.create_run(experiment, tags=identity)
    repaired = sync(uri, study, [train("base", "en-de", study)])
    assert [r.info.run_id for r in runs_of(uri, study)] == [repaired["en-de/base"]] != [first["en-de/base"]]
    assert len(client.get_metric_history(repaired["en-de/base"], "valid_loss")) == 3


def test_a_sync_waits_for_the_lock_and_says_who_holds_it(tmp_path):
    from filelock import FileLock

    from mtcue.reporting.tracking import lock_path, store_lock

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    assert lock_path(uri) == tmp_path / "mlflow.db.lock"
    with FileLock(lock_path(uri)), pytest.raises(RuntimeError, match=r"mlflow\.db\.lock for over 0 s"):
        with store_lock(uri, wait_s=0.2):
            pass


DIRECTIONS = ["en-de", "en-fr", "en-pl", "en-ru", "de-en", "fr-en", "pl-en", "ru-en"]
MODELS = ["base", "base_pm", "tagging", "novotney_cue", "mtcue"]


@pytest.fixture(scope="module")
def record_files(tmp_path_factory):
    """The records of a whole demo study (8 directions x 5 models), as files."""
    from mtcue.records import write_record

    root = tmp_path_factory.mktemp("records")
    paths = {"train": [], "score": []}
    for d in DIRECTIONS:
        for m in MODELS:
            for kind, record in (("train", train(m, d, "demo")), ("score", score(m, d, "demo"))):
                paths[kind].append(write_record(root / kind / d / f"{m}.json", record))
    return paths


@pytest.mark.parametrize("n", [2, 4])
def test_concurrent_syncs_into_a_fresh_store_make_one_run_per_model(tmp_path, record_files, n):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    cmd = [str(Path(sys.executable).parent / "mtcue"), "track", "--study", "demo", "--uri", uri,
           "--records", *map(str, record_files["train"] + record_files["score"])]
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(n)]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * n, "\n".join(o[-2000:] for o in outputs)
    client = MlflowClient(uri)
    runs = runs_of(uri, "demo")
    assert sorted((r.data.tags["mtcue.direction"], r.data.tags["mtcue.model"]) for r in runs) == \
        sorted((d, m) for d in DIRECTIONS for m in MODELS)
    assert runs_of(uri, "demo", ViewType.DELETED_ONLY) == []   # the later syncs found the runs and added nothing
    for run in runs:
        assert sorted(p.step for p in client.get_metric_history(run.info.run_id, "valid_loss")) == [1, 2, 3]
        assert [p.step for p in client.get_metric_history(run.info.run_id, "test_bleu")] == [0]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(process: subprocess.Popen, address: str, log: Path, seconds: float = 120) -> None:
    """Wait until the MLflow server at `address` answers /health; its log's end if it stops or never does."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"{address}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.5)


@pytest.fixture
def mlflow_server(tmp_path):
    """A real `mlflow server` on localhost with a sqlite backend; yields its URI."""
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1", "--backend-store-uri", f"sqlite:///{tmp_path}/server.db",
         "--artifacts-destination", str(tmp_path / "artifacts")],
        cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(server, uri, tmp_path / "server.log")
        yield uri
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def _snapshot(uri, study):
    """Everything a sync writes: runs with their times, params, tags and every metric point."""
    client = MlflowClient(uri)
    out = {}
    for run in runs_of(uri, study, ViewType.ALL):
        history = {k: sorted((m.step, m.value, m.timestamp) for m in client.get_metric_history(run.info.run_id, k))
                   for k in run.data.metrics}
        out[run.info.run_id] = (run.info.lifecycle_stage, run.info.start_time, run.info.end_time, run.data.params,
                                run.data.tags, history)
    return out


def test_sync_into_a_real_mlflow_server_and_a_second_sync_adds_nothing(mlflow_server, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    trains = [train(m, d, "demo") for d, m in CELLS]
    scores = [score(m, d, "demo") for d, m in CELLS]
    comets = [comet(m, d, "demo") for d, m in CELLS]
    first = sync(mlflow_server, "demo", trains, scores, comets)
    before = _snapshot(mlflow_server, "demo")
    assert sorted(before) == sorted(first.values()) and len(before) == len(CELLS)
    run = before[first["en-de/mtcue"]]
    assert run[1:3] == (1795338000000, 1795338090500) and run[3]["arch.embed_dim"] == "128"
    assert run[4]["mtcue.model_path"] == "results/models/en-de/mtcue/checkpoint_best.pt"
    assert run[5]["valid_loss"] == [(1, 4.5, 1795338090500), (2, 4.1, 1795338090500), (3, 4.0, 1795338090500)]
    assert run[5]["test_comet"] == [(0, 81.5, 1795338090500)]
    assert sync(mlflow_server, "demo", trains, scores, comets) == first
    assert _snapshot(mlflow_server, "demo") == before
    # The server path locks per user and URI, in the user's cache folder.
    locks = list((tmp_path / "cache" / "mtcue" / "mlflow-locks").glob("*.lock"))
    assert len(locks) == 1


# ---- artifacts: records, hypotheses, the model; the study's tables and figures ----------------------

CONTEXT = {"kind": "vectors", "columns": ["doc0", "doc1", "genre", "cue1"], "encoder": "some-encoder"}


def study_folder(root: Path, cells=(("en-de", "base"), ("en-de", "mtcue"), ("de-en", "mtcue"))) -> list[str]:
    """A study's records with the files they name (a checkpoint, hypotheses), under `root`; returns the
    record paths relative to it, as the study's sync is given them."""
    paths = []
    for d, m in cells:
        t = train(m, d, "demo")
        if m == "mtcue":
            t["spec"]["context"] = CONTEXT
        (root / t["model_path"]).parent.mkdir(parents=True, exist_ok=True)
        (root / t["model_path"]).write_bytes(b"weights")
        s = {**score(m, d, "demo"), "hyp_path": f"results/hyps/{d}/{m}.test.txt"}
        (root / s["hyp_path"]).parent.mkdir(parents=True, exist_ok=True)
        (root / s["hyp_path"]).write_text(f"Hyp of {d} {m}.\n")
        for kind, record in (("train", t), ("score", s)):
            name = f"{m}.json" if kind == "train" else f"{m}.test.json"
            paths.append(str(write_record(root / "results" / "records" / kind / d / name, record).relative_to(root)))
    return paths


def track(root: Path, records: list[str], *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    return subprocess.run([str(Path(sys.executable).parent / "mtcue"), "track", "--study", "demo", "--uri",
                           "sqlite:///results/mlflow.db", "--records", *records, "--artifacts", "--run-ids",
                           "results/mlflow/demo.runs.json", *extra], cwd=root, env=env, capture_output=True, text=True)


def logged_models(client, run):
    return [m for m in client.search_logged_models([run.info.experiment_id]) if m.source_run_id == run.info.run_id]


def test_a_models_run_holds_its_records_hypotheses_and_model_once(tmp_path, monkeypatch):
    from mlflow.models import Model

    from mtcue.models.runs import run_model_dir

    records = study_folder(tmp_path)
    done = track(tmp_path, records)
    assert done.returncode == 0, done.stderr[-3000:]
    uri = f"sqlite:///{tmp_path}/results/mlflow.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)  # where MLflow's runs:/ and models:/ look
    client = MlflowClient(uri)
    runs = {(r.data.tags["mtcue.direction"], r.data.tags["mtcue.model"]): r for r in runs_of(uri, "demo")}
    assert sorted(runs) == [("de-en", "mtcue"), ("en-de", "base"), ("en-de", "mtcue")]
    for (d, m), run in runs.items():
        files = {a.path for folder in ("records/train", "records/score", f"hyps/{d}")
                 for a in client.list_artifacts(run.info.run_id, folder)}
        assert files == {f"records/train/{m}.json", f"records/score/{m}.test.json", f"hyps/{d}/{m}.test.txt"}
        hyps = client.download_artifacts(run.info.run_id, f"hyps/{d}/{m}.test.txt", str(tmp_path / "dl" / d / m))
        assert Path(hyps).read_text() == f"Hyp of {d} {m}.\n"
        model, = logged_models(client, run)
        # named by its direction and model, which MLflow's own runs:/<run id>/<name> and models:/ find
        assert model.name == f"{d}_{m}" and model.status == LoggedModelStatus.READY
        for found in (f"runs:/{run.info.run_id}/{d}_{m}", f"models:/{model.model_id}"):
            assert Model.load(found).model_id == model.model_id
        # the model's page and the UI's list of models show its run's direction, model, params and metrics
        assert {k: model.tags[f"mtcue.{k}"] for k in ("direction", "model", "study")} == \
            {"direction": d, "model": m, "study": "demo"}
        assert model.params == run.data.params and len(model.params) > 5
        assert {x.key: x.value for x in model.metrics} == run.data.metrics and "test_bleu" in run.data.metrics
        assert [o.model_id for o in run.outputs.model_outputs] == [model.model_id]
        local = Path(model.artifact_location.removeprefix("file://"))
        mlmodel = Model.load(local)
        # the model refers to the study's folder (nothing copied), relative to the store's, and reads what the model
        # reads
        assert mlmodel.flavors["python_function"]["config"] == {"model_dir": f"models/{d}/{m}"}
        assert [c.name for c in mlmodel.signature.inputs.inputs] == ["source", "cue", "context", "previous"]
        assert [c.required for c in mlmodel.signature.inputs.inputs] == [True, False, False, False]
        example = json.loads((local / "input_example.json").read_text())
        assert example["columns"] == (["source"] if m == "base" else ["source", "context", "previous"])
        assert run_model_dir(f"runs:/{run.info.run_id}", uri) == tmp_path / "results" / "models" / d / m
        assert run.data.tags["mtcue.logged_model"] == f"reference:models/{d}/{m}"
    # A second sync logs nothing again; a changed hypothesis file is logged anew, the model stays.
    hyps_file = tmp_path / "results" / "hyps" / "en-de" / "mtcue.test.txt"
    assert track(tmp_path, records).returncode == 0
    hyps_file.write_text("Another hyp.\n")
    assert track(tmp_path, records).returncode == 0
    assert runs_of(uri, "demo", ViewType.DELETED_ONLY) == []
    for run in runs_of(uri, "demo"):
        model, = logged_models(client, run)
        # each metric once in the run's history and on its model, however often synced
        steps = {k: [p.step for p in client.get_metric_history(run.info.run_id, k)] for k in run.data.metrics}
        assert all(len(set(s)) == len(s) for s in steps.values()) and max(map(len, steps.values())) > 1
        assert sorted(x.key for x in model.metrics) == sorted(run.data.metrics)
    run = runs[("en-de", "mtcue")]
    got = client.download_artifacts(run.info.run_id, "hyps/en-de/mtcue.test.txt", str(tmp_path / "dl2"))
    assert Path(got).read_text() == "Another hyp.\n"
    # A record naming a missing file is refused before anything is logged, naming both.
    hyps_file.unlink()
    done = track(tmp_path, records)
    assert done.returncode != 0 and "results/records/score/en-de/mtcue.test.json: names " \
        "results/hyps/en-de/mtcue.test.txt, which is missing" in done.stderr


def test_a_model_synced_under_the_old_name_is_logged_again_by_its_direction_and_model(tmp_path, monkeypatch):
    from mtcue.models.runs import run_model, run_model_dir

    records = [json.loads((tmp_path / r).read_text()) for r in study_folder(tmp_path, cells=(("en-de", "base"),))]
    uri = f"sqlite:///{tmp_path}/results/mlflow.db"
    models = {"en-de/base": tmp_path / "results" / "models" / "en-de" / "base"}
    with monkeypatch.context() as old:  # a store synced when every model was named "model"
        old.setattr(tracking, "model_name", lambda direction, model: "model")
        run_id = sync_records(uri, "demo", records, models=models)["en-de/base"]
    client = MlflowClient(uri)
    assert [m.name for m in logged_models(client, client.get_run(run_id))] == ["model"]
    assert sync_records(uri, "demo", records, models=models) == {"en-de/base": run_id}
    run = client.get_run(run_id)
    assert sorted(m.name for m in logged_models(client, run)) == ["en-de_base", "model"]
    model = run_model(client, run)  # the run's model is the newest
    assert model.name == "en-de_base" and {x.key: x.value for x in model.metrics} == run.data.metrics
    assert run_model_dir(f"runs:/{run_id}", uri) == tmp_path / "results" / "models" / "en-de" / "base"


def test_runs_uri_errors_name_the_run_and_the_store(tmp_path):
    from mtcue.models.runs import run_model_dir

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    ids = sync(uri, "demo", [train("base", "en-de", "demo")])
    with pytest.raises(ValueError, match=f"runs:/nope: no such run in the MLflow store {uri}"):
        run_model_dir("runs:/nope", uri)
    with pytest.raises(ValueError, match="the run holds no model"):
        run_model_dir(f"runs:/{ids['en-de/base']}", uri)
    with pytest.raises(ValueError, match=f"runs:/x: no MLflow store at {tmp_path}/absent.db"):
        run_model_dir("runs:/x", f"sqlite:///{tmp_path}/absent.db")
    assert not (tmp_path / "absent.db").exists()


def test_two_syncs_at_once_log_each_file_and_model_once(tmp_path):
    n = 2
    records = study_folder(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    cmd = [str(Path(sys.executable).parent / "mtcue"), "track", "--study", "demo", "--uri",
           "sqlite:///results/mlflow.db", "--records", *records, "--artifacts"]
    procs = [subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(n)]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * n, "\n".join(o[-2000:] for o in outputs)
    uri = f"sqlite:///{tmp_path}/results/mlflow.db"
    client = MlflowClient(uri)
    runs = runs_of(uri, "demo")
    assert len(runs) == 3 and runs_of(uri, "demo", ViewType.DELETED_ONLY) == []
    experiment = client.get_experiment_by_name("demo").experiment_id
    assert sorted(m.source_run_id for m in client.search_logged_models([experiment])) == \
        sorted(r.info.run_id for r in runs)


def test_the_studys_tables_and_figures_are_one_run_and_the_report_links_the_ui(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    uri = "sqlite:///results/mlflow.db"
    runs = sync(uri, "demo", [train("base", "en-de", "demo")])
    (tmp_path / "results" / "mlflow").mkdir(parents=True)
    ids = tmp_path / "results" / "mlflow" / "demo.runs.json"
    ids.write_text(json.dumps({"tracking_uri": uri, "experiment": "demo", "runs": runs}))
    for name, text in (("tables/t.csv", "a,b\n1,2\n"), ("figures/f.svg", "<svg/>")):
        (tmp_path / "results" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "results" / name).write_text(text)
    args = ["track-study", "--run-ids", str(ids), "--files", "results/tables/t.csv", "results/figures/f.svg",
            "--html", "results/mlflow/demo.html"]
    main(args)
    client = MlflowClient(uri)
    study_run, = [r for r in runs_of(uri, "demo") if r.data.tags.get("mtcue.kind") == "study"]
    assert study_run.info.run_name == "demo" and study_run.info.run_id not in runs.values()
    assert {a.path for folder in ("tables", "figures") for a in client.list_artifacts(study_run.info.run_id, folder)} \
        == {"tables/t.csv", "figures/f.svg"}
    experiment = study_run.info.experiment_id
    html = (tmp_path / "results" / "mlflow" / "demo.html").read_text()
    assert f'href="http://127.0.0.1:5000/#/experiments/{experiment}/runs/{runs["en-de/base"]}?workflowType=machine_learning">en-de/base</a>' in html
    assert f"/#/experiments/{experiment}/runs/{study_run.info.run_id}/artifacts" in html
    assert "mtcue ui --uri sqlite:///results/mlflow.db" in html
    assert f"/#/experiments/{experiment}/runs?workflowType=machine_learning&amp;viewStateShareKey=mtcue-runs" in html
    # Again: the same run, nothing relogged; a changed table is.
    main(args)
    (tmp_path / "results" / "tables" / "t.csv").write_text("a,b\n3,4\n")
    main(args)
    again, = [r for r in runs_of(uri, "demo", ViewType.ALL) if r.data.tags.get("mtcue.kind") == "study"]
    assert again.info.run_id == study_run.info.run_id
    got = client.download_artifacts(again.info.run_id, "tables/t.csv", str(tmp_path / "dl"))
    assert Path(got).read_text() == "a,b\n3,4\n"


def test_a_record_naming_a_file_outside_the_study_uploads_nothing(tmp_path):
    records = study_folder(tmp_path / "study")
    secret = tmp_path / "secret.txt"
    secret.write_text("the key\n")
    secret.chmod(0o600)
    score_record = tmp_path / "study" / "results" / "records" / "score" / "en-de" / "mtcue.test.json"
    hyps = tmp_path / "study" / "results" / "hyps" / "en-de" / "mtcue.test.txt"
    for named in (str(secret), str(hyps)):  # the file itself, then a link to it inside the study
        write_record(score_record, {**json.loads(score_record.read_text()), "hyp_path": named})
        if named == str(hyps):
            hyps.unlink()
            hyps.symlink_to(secret)
        done = track(tmp_path / "study", records)
        assert done.returncode == 1
        assert f"results/records/score/en-de/mtcue.test.json: names {named}, which lies outside " \
            f"{tmp_path / 'study' / 'results' / 'hyps'}; only the study's own hyps/ are uploaded" in done.stderr
        assert not (tmp_path / "study" / "results" / "mlflow.db").exists()


def test_a_record_outside_any_study_uploads_nothing_beside_it(tmp_path):
    """A records/ folder in a home folder makes no study of it: the hypotheses a record there names are uploaded
    only from a study's hyps/."""
    home = tmp_path / "home"
    (home / "records" / "score").mkdir(parents=True)
    secret = home / "notes.txt"
    secret.write_text("the key\n")
    record = home / "records" / "score" / "r.json"
    record.write_text(json.dumps({"kind": "score", "direction": "en-de", "model": "base", "hyp_path": str(secret)}))
    with pytest.raises(ValueError, match=re.escape(f"{record}: not in a study's records/ folder beside its hyps/")):
        tracking.run_artifacts({record: json.loads(record.read_text())})
    (home / "hyps").mkdir()  # a hyps/ beside it: the file must lie in it
    with pytest.raises(ValueError, match=re.escape(f"{record}: names {secret}, which lies outside {home / 'hyps'}")):
        tracking.run_artifacts({record: json.loads(record.read_text())})


def test_runs_uri_finds_its_model_among_more_than_a_page_of_logged_models(tmp_path):
    from mtcue.models.runs import run_model_dir

    records = study_folder(tmp_path, cells=(("en-de", "base"),))
    assert track(tmp_path, records).returncode == 0
    uri = f"sqlite:///{tmp_path}/results/mlflow.db"
    client = MlflowClient(uri)
    run, = runs_of(uri, "demo")
    # MLflow returns the newest first, 100 to a page: the run's model is on the second
    for _ in range(100):
        client.create_logged_model(run.info.experiment_id, name="model", source_run_id="another")
    assert len(client.search_logged_models([run.info.experiment_id])) == 100
    assert run_model_dir(f"runs:/{run.info.run_id}", uri) == tmp_path / "results" / "models" / "en-de" / "base"


def test_a_copied_study_loads_its_own_models_and_a_tampered_model_stays_in_its_folder(tmp_path):
    import shutil

    import yaml

    from mtcue.models.runs import run_model_dir

    records = study_folder(tmp_path / "first", cells=(("en-de", "base"),))
    assert track(tmp_path / "first", records).returncode == 0
    shutil.copytree(tmp_path / "first" / "results", tmp_path / "copy" / "results")
    shutil.rmtree(tmp_path / "first")
    uri = f"sqlite:///{tmp_path}/copy/results/mlflow.db"
    run, = [r.info.run_id for r in runs_of(uri, "demo")]
    assert run_model_dir(f"runs:/{run}", uri) == tmp_path / "copy" / "results" / "models" / "en-de" / "base"
    # a rerun of the sync in the copy finds its run as it is, and logs nothing into the first study's folder
    assert track(tmp_path / "copy", records).returncode == 0
    assert [r.info.run_id for r in runs_of(uri, "demo")] == [run]
    (tmp_path / "copy" / "results" / "hyps" / "en-de" / "base.test.txt").write_text("Another hyp.\n")
    done = track(tmp_path / "copy", records)
    assert done.returncode == 1 and f"the MLflow store sqlite:///results/mlflow.db was made elsewhere: MLflow " \
        f"would log into {tmp_path / 'first' / 'results' / 'mlartifacts'}" in done.stderr
    assert not (tmp_path / "first").exists()
    # an MLmodel edited to name a copy outside the model's own files, or to name no flavour of ours
    mlmodel, = (tmp_path / "copy" / "results" / "mlartifacts").glob("demo/models/*/artifacts/MLmodel")
    model = yaml.safe_load(mlmodel.read_text())
    for artifacts, copied in (("artifacts/study", "../../../../../.."), ("../../../../..", "first")):
        model["flavors"]["python_function"] |= {"config": {"copied": copied}, "artifacts": {"study": {"path": artifacts}}}
        mlmodel.write_text(yaml.safe_dump(model))
        with pytest.raises(ValueError, match=f"its copied model: names .*/{re.escape(copied)}, which lies outside "
                                             f"{mlmodel.parent}; a model is read only from its own files"):
            run_model_dir(f"runs:/{run}", uri)
    # a model_dir edited to lead out of the study of its store, or to a folder that is no study's model
    store = tmp_path / "copy" / "results"
    for model_dir, message in (("../../q", f"its model_dir: names {store}/../../q, which lies outside {store}"),
                               ("models/../../..", f"its model_dir: names {store}/models/../../.., which lies outside"),
                               ("/etc", "its model_dir /etc is not a study's model folder (results/models/")):
        model["flavors"]["python_function"] |= {"config": {"model_dir": model_dir}, "artifacts": {}}
        mlmodel.write_text(yaml.safe_dump(model))
        with pytest.raises(ValueError, match=re.escape(message)):
            run_model_dir(f"runs:/{run}", uri)
    for tampered in ({"config": "models/en-de/base"}, {"artifacts": ["study"]},
                     {"artifacts": {"study": {"path": 7}}}):  # shapes `mtcue track` never writes
        mlmodel.write_text(yaml.safe_dump({**model, "flavors": {"python_function": {
            **model["flavors"]["python_function"], "config": {"model_dir": "models/en-de/base"}, **tampered}}}))
        with pytest.raises(ValueError, match="its python_function config or artifacts are not those `mtcue track` "
                                             "writes; relog the model"):
            run_model_dir(f"runs:/{run}", uri)
    del model["flavors"]["python_function"]
    mlmodel.write_text(yaml.safe_dump(model))
    with pytest.raises(ValueError, match=f"{mlmodel} has no python_function flavour"):
        run_model_dir(f"runs:/{run}", uri)


@pytest.mark.parametrize("content", [b"not a database\n" * 100, b"SQLite format 3\x00" + b"\xff" * 4000])
def test_a_store_that_is_no_database_is_named_not_a_traceback(tmp_path, content):
    from mtcue.models.runs import run_model_dir

    db = tmp_path / "results" / "mlflow.db"
    db.parent.mkdir()
    db.write_bytes(content)
    uri = f"sqlite:///{db}"
    with pytest.raises(RuntimeError, match=f"the MLflow store {uri} cannot be used: .*(not a database|malformed)"):
        run_model_dir("runs:/abc", uri)
    done = track(tmp_path, study_folder(tmp_path, cells=(("en-de", "base"),)))
    assert done.returncode == 1 and "track failed: the MLflow store sqlite:///results/mlflow.db cannot be used" \
        in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow  # waits out sqlite's busy timeout (about 20 s)
def test_a_store_another_program_holds_locked_is_named_not_a_traceback(tmp_path, capfd):
    import sqlite3

    from mtcue.models.runs import run_model_dir

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    sync(uri, "demo", [train("base", "en-de", "demo")])
    holder = sqlite3.connect(tmp_path / "mlflow.db")
    holder.execute("BEGIN EXCLUSIVE")  # MLflow gives up after sqlite's 20 s
    try:
        with pytest.raises(RuntimeError, match=f"the MLflow store {uri} cannot be used: .*database is locked; if "
                                               "another program holds it, let it finish"):
            run_model_dir("runs:/abc", uri)
    finally:
        holder.close()
    assert "Traceback" not in capfd.readouterr().err


def test_a_model_name_with_a_quote_is_found_again_and_one_with_both_quotes_refused(uri):
    for name in ("it's", 'say "hi"'):
        first = sync(uri, "quotes", [train(name, "en-de", "quotes")])
        assert sync(uri, "quotes", [train(name, "en-de", "quotes")]) == first
    assert len(runs_of(uri, "quotes")) == 2
    name = """both ' and \""""
    with pytest.raises(ValueError, match=re.escape(f"""{name!r}: a name with both ' and " cannot be searched for""")):
        sync(uri, "quotes", [train(name, "en-de", "quotes")])


class _Translator:
    """What the served model uses of mtcue.Translator; it reads at most 9 pieces, one per word."""

    class model:
        max_source_tokens = 10

    def pieces(self, text, name):
        return text.split()

    def translate(self, sources, context, previous, beam, cue=None):
        if any(len(lines) > 1 for lines in previous or []):
            raise ValueError("2 previous lines given, but the model reads at most 1")
        if not all(isinstance(s, str) for s in sources):
            raise TypeError("a sentence must be a string")
        return [f"{s} | {c} | {p}" + ("" if q is None else f" | {q}")
                for s, c, p, q in zip(sources, context or [[]] * len(sources), previous or [[]] * len(sources),
                                      cue or [None] * len(sources))]


def test_the_server_reads_rows_and_mlflows_columnar_input_and_answers_a_bad_one_with_its_reason_alone(tmp_path):
    """Through MLflow's own request parsing (the scoring server's `invocations`): a cue per row, the columnar
    `inputs` form, and a 400 whose message is the reason, with no dump of the input table."""
    from mlflow.exceptions import MlflowException
    import mlflow.pyfunc
    from mlflow.pyfunc import scoring_server

    from mtcue.reporting.logged_model import SIGNATURE, TranslatorModel

    class Served(TranslatorModel):
        def load_context(self, context):
            self.translator = _Translator()

    mlflow.pyfunc.save_model(tmp_path / "model", python_model=Served(), signature=SIGNATURE)
    model = mlflow.pyfunc.load_model(str(tmp_path / "model"))

    def ask(body):
        answer = scoring_server.invocations(json.dumps(body), "application/json", model,
                                            model.metadata.get_input_schema())
        return json.loads(answer.response)["predictions"]

    assert ask({"dataframe_records": [{"source": "Hi.", "cue": "Formal"}, {"source": "Yes."}]}) == \
        ["Hi. | [] | [] | Formal", "Yes. | [] | []"]
    assert ask({"inputs": {"source": ["Hi.", "Yes."]}}) == ["Hi. | [] | []", "Yes. | [] | []"]
    assert ask({"inputs": {"source": ["Hi.", "Yes."], "cue": ["Formal", "Informal"]}}) == \
        ["Hi. | [] | [] | Formal", "Yes. | [] | [] | Informal"]
    for body, reason in (
            ({"inputs": {"source": ["Hi.", "Yes."], "cue": ["Formal"]}},
             "inputs: give each column one value per sentence (source: 2, cue: 1)"),
            ({"dataframe_records": [{"source": "Hi.", "previous": ["a", "b"]}]},
             "2 previous lines given, but the model reads at most 1")):
        with pytest.raises(MlflowException) as refused:
            ask(body)
        answer = json.loads(refused.value.serialize_as_json())
        assert answer["message"] == reason and refused.value.get_http_status_code() == 400


def test_the_served_model_returns_what_a_request_did_wrong_as_its_message():
    from mlflow.exceptions import MlflowException

    from mtcue.reporting.logged_model import TranslatorModel

    served = TranslatorModel()
    served.translator = _Translator()
    table = pd.DataFrame({"source": ["Hi.", "Yes."], "context": [["Formal"], None]})
    assert served.predict(None, table) == ["Hi. | ['Formal'] | []", "Yes. | [] | []"]
    for rows, message in (
            ({"source": ["Hi.", "Yes."], "context": [["Formal"], [None]]}, "row 1: 'context' is [None]; give a list"),
            ({"source": ["Hi."], "previous": ["Hello."]}, "row 0: 'previous' is 'Hello.'; give a list of strings"),
            ({"source": ["Hi.", "a " * 10]}, "row 1: the source is 10 pieces long, more than the model reads (9)"),
            ({"source": ["Hi."], "previous": [["a", "b"]]}, "2 previous lines given, but the model reads at most 1")):
        with pytest.raises(MlflowException) as refused:
            served.predict(None, pd.DataFrame(rows))
        assert refused.value.message.startswith(message) and refused.value.get_http_status_code() == 400
        assert "Traceback" not in refused.value.serialize_as_json()


def test_the_served_model_finds_its_study_in_the_store_it_was_loaded_from(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from mtcue.models.translator import Translator
    from mtcue.reporting.logged_model import TranslatorModel

    monkeypatch.setattr(Translator, "load", lambda folder, device, columns: folder)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path}/copy/results/mlflow.db")
    served = TranslatorModel()
    served.load_context(SimpleNamespace(model_config={"model_dir": "models/en-de/base"}, artifacts={}))
    assert served.translator == tmp_path / "copy" / "results" / "models" / "en-de" / "base"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5000")
    with pytest.raises(ValueError, match="its model folder models/en-de/base lies in the study's folder of a sqlite "
                                         "store, not in http://127.0.0.1:5000"):
        served.load_context(SimpleNamespace(model_config={"model_dir": "models/en-de/base"}, artifacts={}))


def test_the_ui_address_is_the_servers_or_the_one_given_and_every_link_opens_the_ml_view():
    assert tracking.ui_base("sqlite:///results/mlflow.db") == "http://127.0.0.1:5000"
    assert tracking.ui_base("https://mlflow.example.org/") == "https://mlflow.example.org"
    page = tracking.links_html("sqlite:///results/mlflow.db", "demo", "3", "s1", {"en-de/mtcue": "r1"},
                               ui="https://lab.example.org/mlflow/")
    # the run's anchor: a table number links to this page at #en-de/mtcue, and the page goes on to the run
    assert ('<a id="en-de/mtcue" href="https://lab.example.org/mlflow/#/experiments/3/runs/r1?'
            'workflowType=machine_learning">') in page
    assert "location.replace(run.href)" in page
    assert "127.0.0.1" not in page


class _Served(mlflow.pyfunc.PythonModel):
    """The served model's predict behind MLflow's own schema enforcement, with the stand-in translator."""

    def load_context(self, context):
        self.translator = _Translator()

    def predict(self, context, model_input, params=None):
        from mtcue.reporting.logged_model import TranslatorModel

        return TranslatorModel.predict(self, context, model_input, params)


def test_a_served_null_in_a_list_reaches_predict_and_is_answered_400_not_translated_as_none(tmp_path):
    from mlflow.exceptions import MlflowException

    from mtcue.reporting.logged_model import SIGNATURE

    mlflow.pyfunc.save_model(tmp_path / "m", python_model=_Served(), signature=SIGNATURE)
    served = mlflow.pyfunc.load_model(str(tmp_path / "m"))  # predict enforces the MLmodel's signature first
    assert served.predict(pd.DataFrame({"source": ["Hi."], "context": [["Formal"]]})) == ["Hi. | ['Formal'] | []"]
    for column in ("context", "previous"):
        with pytest.raises(MlflowException) as refused:
            served.predict(pd.DataFrame({"source": ["Hi.", "Yes."], column: [["Formal"], [None]]}))
        assert refused.value.message.startswith(f"row 1: '{column}' is [None]; give a list of strings")
        assert refused.value.get_http_status_code() == 400


def test_a_tracking_server_that_refuses_or_does_not_answer_fails_the_sync_soon_naming_it(tmp_path, monkeypatch,
                                                                                         caplog):
    records = study_folder(tmp_path, cells=(("en-de", "base"),))
    monkeypatch.chdir(tmp_path)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, not listening: refused
    # MLflow's defaults would wait 120 s per request, 7 retries; the project's bounds, at a smaller timeout
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "1")
    for sock in (closed, silent):
        uri = f"http://127.0.0.1:{sock.getsockname()[1]}"
        started = time.monotonic()
        assert main(["track", "--study", "demo", "--uri", uri, "--records", *records]) == 1
        assert time.monotonic() - started < 12  # 3 attempts of at most 1 s, pauses of 1 and 2 s
        assert f"track failed: the MLflow server {uri} cannot be reached (" in caplog.text
        assert "after 2 retries); start it, or set MLFLOW_TRACKING_URI" in caplog.text
        caplog.clear()
    silent.close()
    closed.close()


def test_a_served_source_with_a_lone_surrogate_is_answered_400_naming_its_row(tmp_path):
    import io
    from types import SimpleNamespace

    import sentencepiece as spm
    from mlflow.exceptions import MlflowException

    from mtcue.models.translator import Translator
    from mtcue.reporting.logged_model import TranslatorModel

    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world"] * 50), model_writer=proto, vocab_size=12,
                                   minloglevel=2)
    translator = Translator.__new__(Translator)  # only what predict reads before translating
    translator._spm = spm.SentencePieceProcessor(model_proto=proto.getvalue())
    translator.model = SimpleNamespace(max_source_tokens=10)
    served = TranslatorModel()
    served.translator = translator
    with pytest.raises(MlflowException) as refused:  # SentencePiece itself raises a RuntimeError: a 500
        served.predict(None, pd.DataFrame({"source": ["hello", "a\ud800b"]}))
    assert refused.value.message.startswith("row 1: '\\ud800' (character 1) is a lone surrogate, not text")
    assert refused.value.get_http_status_code() == 400


@pytest.mark.parametrize("text, problem", [('{"experiment": "demo", "runs": {}}', ": no tracking_uri: not a run-ids file"),
                                           ('["demo"]', ": no tracking_uri, experiment, runs: not a run-ids file"),
                                           ('{"tracking_uri": ', ":1: not valid JSON")])
def test_track_study_names_a_run_ids_file_it_cannot_use(tmp_path, caplog, text, problem):
    ids = tmp_path / "demo.runs.json"
    ids.write_text(text)
    assert main(["track-study", "--run-ids", str(ids), "--files", str(ids), "--html", str(tmp_path / "l.html")]) == 1
    assert f"track-study failed: {ids}{problem}" in caplog.text
    assert not (tmp_path / "l.html").exists()


@pytest.mark.parametrize("given", ["{bad", "[1]"])
def test_track_names_experiments_that_are_no_json_object(tmp_path, caplog, given):
    assert main(["track", "--study", "demo", "--uri", f"sqlite:///{tmp_path}/m.db", "--records", "r.json",
                 "--experiments", given]) == 1
    assert "track failed: --experiments: " in caplog.text and "Traceback" not in caplog.text
    assert not (tmp_path / "m.db").exists()
