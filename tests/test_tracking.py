import math

import pytest
from mlflow.entities import ViewType
from mlflow.tracking import MlflowClient

from mtcue.reporting.tracking import resolve_uri, sync_records

SIG = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"


def train(model, direction, study, valid_losses=(4.5, 4.1, 4.0)):
    return {
        "kind": "train", "model": model, "direction": direction, "study": study,
        "spec": {"model": model, "init_from": None, "arch": {"embed_dim": 128},
                 "training": {"lr": 0.0005, "betas": [0.9, 0.98]}},
        "params": {"total": 1000, "trainable": 900},
        "epochs": [{"epoch": i + 1, "train_loss": 5.0 - i, "valid_loss": v, "wall_s": 10.0 + i}
                   for i, v in enumerate(valid_losses)],
        "best_epoch": 1 + valid_losses.index(min(valid_losses)), "best_valid_loss": min(valid_losses),
        "config_hash": f"hash-{model}",
        "git_commit": "abc123",
    }


def score(model, direction, study, bleu=30.0):
    return {
        "kind": "score", "model": model, "direction": direction, "split": "test", "study": study,
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


def sync(uri, study, trains, scores):
    return sync_records(uri, study, trains, scores)


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
    assert [m.step for m in client.get_metric_history(run_id, "bleu")] == [0]


def test_params_tags_and_final_metrics(uri, synced_twice):
    run = MlflowClient(uri).get_run(synced_twice[0]["en-de/base"])
    assert run.data.params == {"model": "base", "init_from": "null", "arch.embed_dim": "128",
                               "training.lr": "0.0005", "training.betas": "[0.9, 0.98]",
                               "config_hash": "hash-base"}
    tags = run.data.tags
    assert {k: tags[k] for k in tags if k.startswith("mtcue.")} == {
        "mtcue.pair": "en-de", "mtcue.direction": "en-de", "mtcue.model": "base",
        "mtcue.study": "demo", "mtcue.config_hash": "hash-base", "mtcue.git_commit": "abc123",
        "mtcue.split": "test", "mtcue.bleu_signature": SIG,
    }
    assert run.data.metrics["bleu"] == 30.0
    assert run.data.metrics["acc_formality"] == 0.75
    assert "acc_gender" not in run.data.metrics  # accuracy None is not logged
    assert run.data.metrics["params_total"] == 1000
    assert run.info.status == "FINISHED"
    assert MlflowClient(uri).get_run(synced_twice[0]["de-en/base"]).data.tags["mtcue.pair"] == "en-de"


def test_new_points_are_appended_and_changed_values_replace_the_run(uri):
    study = "changes"
    client = MlflowClient(uri)
    first = sync(uri, study, [train("base", "en-de", study, (4.5, 4.1))], [])
    # An epoch that leaves the best epoch as it was, and a score: new points, same run.
    grown = sync(uri, study, [train("base", "en-de", study, (4.5, 4.1, 4.2))],
                 [score("base", "en-de", study)])
    assert grown == first
    assert [m.step for m in client.get_metric_history(first["en-de/base"], "valid_loss")] == [1, 2, 3]
    assert client.get_run(first["en-de/base"]).data.metrics["bleu"] == 30.0
    # A changed value cannot be overwritten in MLflow: the run is deleted and logged afresh.
    changed = sync(uri, study, [train("base", "en-de", study, (4.5, 4.0, 4.2))],
                   [score("base", "en-de", study, bleu=31.0)])
    assert changed != first
    assert [r.info.run_id for r in runs_of(uri, study)] == [changed["en-de/base"]]
    history = client.get_metric_history(changed["en-de/base"], "valid_loss")
    assert sorted((m.step, m.value) for m in history) == [(1, 4.5), (2, 4.0), (3, 4.2)]
    assert client.get_run(changed["en-de/base"]).data.metrics["bleu"] == 31.0


def test_nan_loss_does_not_recreate_the_run(uri):
    study = "nan"
    rec = train("base", "en-de", study, (4.5, math.nan))
    assert sync(uri, study, [rec], []) == sync(uri, study, [rec], [])


def test_records_of_another_study_or_a_second_split_are_refused(uri):
    with pytest.raises(ValueError, match="study"):
        sync(uri, "demo", [train("base", "en-de", "other")], [])
    valid = {**score("base", "en-de", "demo"), "split": "valid"}
    with pytest.raises(ValueError, match="several score records for en-de/base"):
        sync(uri, "demo", [], [score("base", "en-de", "demo"), valid])


def test_comet_joins_the_score_run_and_a_rerun_adds_no_point(uri):
    study = "comet"
    client = MlflowClient(uri)
    records = [train("base", "en-de", study)], [score("base", "en-de", study)], [comet("base", "en-de", study)]
    first = sync_records(uri, study, *records)
    assert sync_records(uri, study, *records) == first
    assert [r.info.run_id for r in runs_of(uri, study)] == [first["en-de/base"]]
    assert [(m.step, m.value) for m in client.get_metric_history(first["en-de/base"], "comet")] == [(0, 81.5)]
    run = client.get_run(first["en-de/base"])
    assert run.data.params["comet_model"] == "Unbabel/wmt20-comet-da"
    assert run.data.metrics["bleu"] == 30.0
    assert "mtcue.comet_unavailable" not in run.data.tags


def test_unavailable_comet_is_a_tag_and_switching_either_way_replaces_the_run(uri):
    study = "comet-unavailable"
    client = MlflowClient(uri)
    missing = comet("base", "en-de", study, value=None, unavailable="COMET model 'x' is unavailable")
    first = sync_records(uri, study, [], [score("base", "en-de", study)], [missing])
    assert sync_records(uri, study, [], [score("base", "en-de", study)], [missing]) == first
    run = client.get_run(first["en-de/base"])
    assert "comet" not in run.data.metrics
    assert run.data.tags["mtcue.comet_unavailable"] == "COMET model 'x' is unavailable"
    # Neither a tag nor a metric can be taken back: the run is logged afresh.
    scored = sync_records(uri, study, [], [score("base", "en-de", study)], [comet("base", "en-de", study)])
    run = client.get_run(scored["en-de/base"])
    assert scored != first and "mtcue.comet_unavailable" not in run.data.tags
    assert run.data.metrics["comet"] == 81.5
    again = sync_records(uri, study, [], [score("base", "en-de", study)], [missing])
    assert again != scored and "comet" not in client.get_run(again["en-de/base"]).data.metrics
    assert [r.info.run_id for r in runs_of(uri, study)] == [again["en-de/base"]]


def test_comet_of_another_split_than_the_score_is_refused_before_logging(uri):
    study = "split-mismatch"
    valid = {**comet("base", "en-de", study), "split": "valid"}
    with pytest.raises(ValueError, match="COMET record of split 'valid' but score record of split 'test'"):
        sync_records(uri, study, [train("base", "de-en", study)], [score("base", "en-de", study)], [valid])
    assert MlflowClient(uri).get_experiment_by_name(study) is None


def test_environment_overrides_configured_uri(monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert resolve_uri("sqlite:///a.db") == "sqlite:///a.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///b.db")
    assert resolve_uri("sqlite:///a.db") == "sqlite:///b.db"
