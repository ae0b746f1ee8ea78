"""MLflow edge: mirror result records into an MLflow tracking store.

The only module that imports mlflow. One run per (study, direction, model), found by tags,
so a rerun updates that run. A run mirrors its records: points already logged are not logged
again (MLflow appends a second history entry for a repeated (key, step), which the UI draws
as a duplicate point); when the run disagrees with the records (other config hash, a
changed value, a param with another value), it is deleted and logged afresh, since MLflow
can neither overwrite a metric point nor change a param.

Call sync from one process only: concurrent first use of a fresh sqlite store races.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable
from pathlib import Path

from mlflow.entities import Metric, Param, Run, RunTag
from mlflow.tracking import MlflowClient

from mtcue.config import pair_of

TAG = "mtcue."
# log_batch accepts at most 100 params or tags and 1000 metrics per call.
PARAM_BATCH, TAG_BATCH, METRIC_BATCH = 100, 100, 1000


def resolve_uri(configured: str) -> str:
    """MLFLOW_TRACKING_URI in the environment overrides the configured URI."""
    return os.environ.get("MLFLOW_TRACKING_URI") or configured


def _sqlite_path(tracking_uri: str) -> Path | None:
    if not tracking_uri.startswith("sqlite:///"):
        return None
    db = tracking_uri.removeprefix("sqlite:///").split("?")[0]
    return Path(db) if db and db != ":memory:" else None


def ensure_store(tracking_uri: str) -> None:
    """Create the store (and a sqlite file's parent directory) once, before any run is logged."""
    db = _sqlite_path(tracking_uri)
    if db is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
    MlflowClient(tracking_uri).search_experiments(max_results=1)


def _flatten(obj: object, prefix: str = "") -> dict[str, str]:
    if isinstance(obj, dict):
        out: dict[str, str] = {}
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix.removesuffix("."): obj if isinstance(obj, str) else json.dumps(obj)}


def _desired(
    train: dict | None, score: dict | None, comet: dict | None
) -> tuple[dict[str, str], dict[str, dict[int, float]], dict[str, str], set[str]]:
    """(params, metrics as {key: {step: value}}, tags, absent) that the run should hold;
    absent: metric and tag keys the run must not hold."""
    first = train or score or comet
    params = {**_flatten((train or {}).get("spec", {})), "config_hash": first["config_hash"]}
    tags = {
        f"{TAG}pair": pair_of(first["direction"]),
        f"{TAG}config_hash": first["config_hash"],
        f"{TAG}git_commit": first["git_commit"],
    }
    metrics: dict[str, dict[int, float]] = {}
    summary: dict[str, float | None] = {}
    if train:
        for e in train["epochs"]:
            for key in ("train_loss", "valid_loss", "wall_s"):
                metrics.setdefault(key, {})[int(e["epoch"])] = float(e[key])
        summary |= {"best_epoch": train["best_epoch"], "best_valid_loss": train["best_valid_loss"],
                    "params_total": train["params"]["total"],
                    "params_trainable": train["params"]["trainable"]}
    if score:
        summary["bleu"] = score["bleu"]
        summary |= {f"acc_{p}": c["accuracy"] for p, c in score["phenomena"].items()}
        tags |= {f"{TAG}split": score["split"], f"{TAG}bleu_signature": score["bleu_signature"]}
    absent: set[str] = set()
    if comet:
        if score and comet["split"] != score["split"]:
            raise ValueError(f"COMET record of split {comet['split']!r} but score record of split "
                             f"{score['split']!r} for {comet['direction']}/{comet['model']}")
        params["comet_model"] = comet["comet_model"]
        tags[f"{TAG}split"] = comet["split"]
        # A run must not keep a COMET score once the model became unavailable, nor the reason
        # once it has a score: tags and metrics cannot be taken back, so either makes it stale.
        if comet["comet"] is None:
            tags[f"{TAG}comet_unavailable"] = comet["unavailable"]
            absent.add("comet")
        else:
            summary["comet"] = comet["comet"]
            absent.add(f"{TAG}comet_unavailable")
    # Unknown values (no judged sample, no validation) are left out: MLflow has no null.
    metrics |= {key: {0: float(v)} for key, v in summary.items() if v is not None}
    return params, metrics, tags, absent


def _history(client: MlflowClient, run_id: str, keys: Iterable[str]) -> dict[str, list[Metric]]:
    return {key: client.get_metric_history(run_id, key) for key in keys}


def _same(a: float | None, b: float) -> bool:
    # A diverged training logs NaN losses; NaN != NaN must not make every sync stale.
    return a == b or (a is not None and math.isnan(a) and math.isnan(b))


def _is_stale(run: Run, history: dict[str, list[Metric]], params: dict[str, str],
              metrics: dict[str, dict[int, float]], absent: set[str]) -> bool:
    """True when the run holds a param, a metric point, or a key that the records contradict."""
    if any(run.data.params.get(k, v) != v for k, v in params.items()):
        return True
    if any(k in run.data.metrics or k in run.data.tags for k in absent):
        return True
    for key, points in history.items():
        steps = [p.step for p in points]
        if len(set(steps)) != len(steps) or not all(_same(metrics[key].get(p.step), p.value) for p in points):
            return True
    return False


def _find_run(client: MlflowClient, experiment_id: str, identity: dict[str, str]) -> Run | None:
    clause = " and ".join(f"tags.`{k}` = '{v}'" for k, v in identity.items())
    runs = client.search_runs([experiment_id], filter_string=clause, max_results=2)
    if len(runs) > 1:
        raise RuntimeError(f"several MLflow runs match {identity}: {[r.info.run_id for r in runs]}")
    return runs[0] if runs else None


def _experiment_id(client: MlflowClient, study: str, tracking_uri: str) -> str:
    experiment = client.get_experiment_by_name(study)
    if experiment is None:
        # Keep a sqlite store's artifacts beside the database, not in the caller's cwd.
        db = _sqlite_path(tracking_uri)
        location = (db.parent.resolve() / "mlartifacts" / study).as_uri() if db else None
        return client.create_experiment(study, artifact_location=location)
    if experiment.lifecycle_stage == "deleted":
        client.restore_experiment(experiment.experiment_id)
    return experiment.experiment_id


def _log_missing(client: MlflowClient, run: Run, history: dict[str, list[Metric]],
                 params: dict[str, str], metrics: dict[str, dict[int, float]],
                 tags: dict[str, str]) -> None:
    """Log the params and metric points the run lacks, and (over)write all tags."""
    run_id = run.info.run_id
    now = int(time.time() * 1000)
    new_params = [Param(k, v) for k, v in params.items() if k not in run.data.params]
    new_points = [
        Metric(key, value, now, step)
        for key, wanted in metrics.items()
        for step, value in sorted(wanted.items())
        if step not in {p.step for p in history.get(key, ())}
    ]
    all_tags = [RunTag(k, v) for k, v in tags.items()]
    for i in range(0, len(new_params), PARAM_BATCH):
        client.log_batch(run_id, params=new_params[i : i + PARAM_BATCH])
    for i in range(0, len(new_points), METRIC_BATCH):
        client.log_batch(run_id, metrics=new_points[i : i + METRIC_BATCH])
    for i in range(0, len(all_tags), TAG_BATCH):
        client.log_batch(run_id, tags=all_tags[i : i + TAG_BATCH])


def sync_records(
    tracking_uri: str,
    study: str,
    train_records: Iterable[dict],
    score_records: Iterable[dict],
    comet_records: Iterable[dict] = (),
) -> dict[str, str]:
    """Mirror the records of one study into MLflow; returns {"direction/model": run_id}.

    Takes at most one train, one score and one COMET record (the evaluation split) per
    (direction, model). Params: the train record's flattened model spec plus config_hash. Metrics:
    train_loss, valid_loss, wall_s per epoch (step = epoch); at step 0 best_epoch,
    best_valid_loss, params_total, params_trainable, bleu and acc_{phenomenon} (a fraction,
    "acc_all" pooled). A COMET record of the same split adds param comet_model and metric
    comet (x100), or, when its model was unavailable, tag mtcue.comet_unavailable (the reason).
    """
    groups: dict[tuple[str, str], list[dict | None]] = {}
    for slot, records in enumerate((train_records, score_records, comet_records)):
        for r in records:
            if r["study"] != study:
                raise ValueError(f"record of study {r['study']!r} given to sync study {study!r}")
            cell = groups.setdefault((r["direction"], r["model"]), [None, None, None])
            if cell[slot] is not None:
                raise ValueError(f"several {r['kind']} records for {r['direction']}/{r['model']} in study {study}")
            cell[slot] = r
    # All cells are checked (e.g. COMET and score splits agree) before anything is logged.
    desired = {key: _desired(*cell) for key, cell in sorted(groups.items())}
    ensure_store(tracking_uri)
    client = MlflowClient(tracking_uri)
    experiment_id = _experiment_id(client, study, tracking_uri)
    run_ids = {}
    for (direction, model), (params, metrics, tags, absent) in desired.items():
        identity = {f"{TAG}direction": direction, f"{TAG}model": model, f"{TAG}study": study}
        run = _find_run(client, experiment_id, identity)
        history = _history(client, run.info.run_id, metrics) if run else {}
        if run is not None and _is_stale(run, history, params, metrics, absent):
            client.delete_run(run.info.run_id)
            run, history = None, {}
        if run is None:
            run = client.create_run(experiment_id, run_name=f"{direction}/{model}", tags=identity)
        _log_missing(client, run, history, params, metrics, tags)
        client.set_terminated(run.info.run_id)
        run_ids[f"{direction}/{model}"] = run.info.run_id
    return run_ids
