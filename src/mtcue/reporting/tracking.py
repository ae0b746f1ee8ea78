"""MLflow edge: mirror result records into an MLflow tracking store.

With reporting/run_contents.py (what a run holds), reporting/logged_model.py (a trained model as an MLflow
model, and mlflow_model.py, which loads it) and models/runs.py (runs:/ back to a model's folder), the only
modules that import mlflow.

One run per (study, direction, model), found by tags, so a rerun updates that run. A run mirrors its records:
points already logged are not logged again (MLflow appends a second history entry for a repeated (key, step),
which the UI draws as a duplicate point); when the run disagrees with the records (other config hash, a
changed value, a param with another value, a param, metric or mtcue.* tag the records no longer give, another
start time), it is deleted and logged afresh, since MLflow can neither overwrite a metric point nor change or
remove a param.

Concurrent syncs (two Snakemake invocations, a sync by hand while a study runs) take turns on
an inter-process lock around store creation and the whole sync: without it a fresh sqlite
store is corrupted by concurrent schema creation and two syncs both create a study's runs. A
sqlite store's lock file lies beside the database, so it serialises every process that can
open that database. A server (http://...) has no file to share: its lock is per user and
URI in the user's cache folder, which serialises the syncs of that user on hosts sharing the
home folder; writers the lock cannot see (other users, other machines) may still duplicate a
run, and the next sync repairs that (several runs of one key, or a repeated metric point,
are deleted and logged afresh from the records).

Artifacts: a model's run holds its records and hypotheses (`records/{kind}/...`, `hyps/...`) and its trained
model (reporting/logged_model.py). The study's tables and figures are artifacts of one run of its own, named
after the study (`sync_study_files`). Each is logged once: a tag holds a digest of the files logged
(mtcue.artifacts) or the model's folder (mtcue.logged_model), and a later sync logs only what changed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout
from mlflow.entities import Metric, Param, Run, RunTag
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from mtcue.io import confined
from mtcue.models.runs import every, model_name, run_model, sqlite_path, store_errors
from mtcue.reporting.logged_model import TranslatorModel  # noqa: F401  (models logged before the split load it here)
from mtcue.reporting.logged_model import artifacts_here, log_model, model_tag
from mtcue.reporting.run_contents import ARTIFACTS_TAG, KIND_TAG, MODEL_TAG, TAG, Wanted, is_stale, wanted_of

log = logging.getLogger(__name__)
# log_batch accepts at most 100 params or tags and 1000 metrics per call.
PARAM_BATCH, TAG_BATCH, METRIC_BATCH = 100, 100, 1000
# MLflow 3 UIs that go by the experiment's kind open one without it on the GenAI overview, not on
# its runs. The UI of 3.17 goes by its GenAI / Model training switch instead (URL parameter
# workflowType, remembered by the browser): the links to the runs (`runs_url`) set it.
# The runs list as the study reads it: a view the UI loads from an experiment tag when the URL names it
# (viewStateShareKey), each model's BLEU and main results as columns (the UI's own default shows none).
VIEW_KEY = "mtcue-runs"
RUNS_VIEW = {"selectedColumns": [f"metrics.`{m}`" for m in (
    "test_bleu", "test_acc_all", "test_comet", "formality_average", "eamt22_accuracy_mean", "params_total")]
    + ["tags.`mtcue.experiments`"]}
EXPERIMENT_TAGS = {"mlflow.experimentKind": "custom_model_development",
                   f"mlflow.sharedViewState.{VIEW_KEY}": json.dumps(RUNS_VIEW)}
LOCK_WAIT_S = 1800  # a sync of a paper-scale study into a remote server takes minutes


def lock_path(tracking_uri: str) -> Path:
    """The lock file that serialises syncs into the store at `tracking_uri` (module docstring)."""
    db = sqlite_path(tracking_uri)
    if db is not None:
        return db.with_name(db.name + ".lock")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "mtcue" / "mlflow-locks" / f"{hashlib.sha256(tracking_uri.encode()).hexdigest()[:16]}.lock"


@contextmanager
def store_lock(tracking_uri: str, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the store's sync lock, waiting for another sync to finish."""
    path = lock_path(tracking_uri)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        log.info("waiting for another MLflow sync into %s to finish (lock %s)", tracking_uri, path)
        try:
            lock.acquire(timeout=wait_s)
        except Timeout:
            raise RuntimeError(f"another MLflow sync into {tracking_uri} has held {path} for over {wait_s:.0f} s; "
                               "let it finish (a lock is released when its process ends) and rerun") from None
    try:
        yield
    finally:
        lock.release()


def ensure_store(tracking_uri: str) -> None:
    """Create the store (and a sqlite file's parent directory) once, before any run is logged;
    call it holding store_lock (concurrent creation of a sqlite store's tables corrupts it)."""
    db = sqlite_path(tracking_uri)
    if db is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
    MlflowClient(tracking_uri).search_experiments(max_results=1)


def _history(client: MlflowClient, run_id: str, keys: Iterable[str]) -> dict[str, list[Metric]]:
    return {key: client.get_metric_history(run_id, key) for key in keys}


def _literal(value: str) -> str:
    """`value` quoted for an MLflow filter string, which has no escape for a quote inside its quotes."""
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    raise ValueError(f"{value!r}: a name with both ' and \" cannot be searched for in MLflow; rename it")


def _find_run(client: MlflowClient, experiment_id: str, identity: dict[str, str]) -> Run | None:
    """The run of `identity`; several (left by writers the lock could not see) are all deleted."""
    clause = " and ".join(f"tags.`{k}` = {_literal(v)}" for k, v in identity.items())
    runs = every(client.search_runs, [experiment_id], filter_string=clause)
    if len(runs) > 1:
        log.warning("several MLflow runs match %s: deleting %s and logging the records afresh",
                    identity, [r.info.run_id for r in runs])
        for r in runs:
            client.delete_run(r.info.run_id)
        return None
    return runs[0] if runs else None


def _experiment_id(client: MlflowClient, study: str, tracking_uri: str) -> str:
    experiment = client.get_experiment_by_name(study)
    if experiment is None:
        # Keep a sqlite store's artifacts beside the database, not in the caller's cwd.
        db = sqlite_path(tracking_uri)
        location = (db.parent.resolve() / "mlartifacts" / study).as_uri() if db else None
        try:
            return client.create_experiment(study, artifact_location=location, tags=EXPERIMENT_TAGS)
        except MlflowException:  # created meanwhile by a writer the lock does not see
            experiment = client.get_experiment_by_name(study)
            if experiment is None:
                raise
    if experiment.lifecycle_stage == "deleted":
        client.restore_experiment(experiment.experiment_id)
    for key, value in EXPERIMENT_TAGS.items():
        if experiment.tags.get(key) != value:
            client.set_experiment_tag(experiment.experiment_id, key, value)
    return experiment.experiment_id


def _log_missing(client: MlflowClient, run: Run, history: dict[str, list[Metric]], wanted: Wanted) -> None:
    """Log the params, metric points and tag values the run lacks."""
    run_id = run.info.run_id
    stamp = wanted.end_ms or int(time.time() * 1000)
    new_params = [Param(k, v) for k, v in wanted.params.items() if k not in run.data.params]
    new_points = [
        Metric(key, value, stamp, step)
        for key, points in wanted.metrics.items()
        for step, value in sorted(points.items())
        if step not in {p.step for p in history.get(key, ())}
    ]
    new_tags = [RunTag(k, v) for k, v in wanted.tags.items() if run.data.tags.get(k) != v]
    for i in range(0, len(new_params), PARAM_BATCH):
        client.log_batch(run_id, params=new_params[i : i + PARAM_BATCH])
    for i in range(0, len(new_points), METRIC_BATCH):
        client.log_batch(run_id, metrics=new_points[i : i + METRIC_BATCH])
    for i in range(0, len(new_tags), TAG_BATCH):
        client.log_batch(run_id, tags=new_tags[i : i + TAG_BATCH])


def _named_model(client: MlflowClient, run: Run, name: str) -> str | None:
    """The id of the model the run logged if it is named `name` (one synced before models were named by their
    direction and model is named "model", and is logged again)."""
    logged = run_model(client, run)
    return logged.model_id if logged is not None and logged.name == name else None


def _attach_metrics(client: MlflowClient, run_id: str, model_id: str, wanted: Wanted) -> None:
    """Give the run's logged model the run's metrics (each key's last step), so that the model's page and the
    UI's list of models show them: the run's points logged again with the model's id, which MLflow keeps once
    in the run's history (the same key, step, value and time)."""
    attached = {(m.key, m.step) for m in client.get_logged_model(model_id).metrics or ()}
    points = []
    for key, history in _history(client, run_id, wanted.metrics).items():
        last = max(history, key=lambda p: p.step, default=None)
        if last is not None and (key, last.step) not in attached:
            points.append(Metric(key, last.value, last.timestamp, last.step, model_id=model_id))
    for i in range(0, len(points), METRIC_BATCH):
        client.log_batch(run_id, metrics=points[i : i + METRIC_BATCH])


def _digest(files: Mapping[str, Path]) -> str:
    """One digest of {artifact path: file}: names and contents."""
    h = hashlib.sha256()
    for name, path in sorted(files.items()):
        h.update(f"{name}\0{hashlib.sha256(Path(path).read_bytes()).hexdigest()}\0".encode())
    return h.hexdigest()


def _named(file: Path, record: Path, folder: str) -> Path:
    """A file the record names, uploaded only from the study holding the record (the results/ folder above its
    records/{kind}/), and there only from the study's `folder` (hyps/, models/), resolved: a link out of it is
    refused too. So a records/ folder elsewhere (a home folder's) uploads nothing beside it."""
    if not file.is_file():
        raise FileNotFoundError(f"{record}: names {file}, which is missing (run from the study's folder, or rerun "
                                "the step that writes it)")
    folders = Path(record).absolute().parent.parts[:-1]  # above the record's kind folder
    at = len(folders) - 1 - folders[::-1].index("records") if "records" in folders else None
    if at is None or not (Path(*folders[:at]) / folder).is_dir():
        raise ValueError(f"{record}: not in a study's records/ folder beside its {folder}/ (results/records/{{kind}}/"
                         "...); its files are uploaded only from the study that holds it")
    confined(file, Path(*folders[:at]) / folder, record,
             f"only the study's own {folder}/ are uploaded: rerun the step that wrote the record")
    return file


def run_artifacts(records: Mapping[Path, dict]) -> tuple[dict[str, dict[str, Path]], dict[str, Path]]:
    """What each model's run holds beside its numbers, from its records ({record file: record}): files
    {"direction/model": {artifact path: file}} (each record as records/{kind}/{file name}, the hypotheses a
    record scored as hyps/{their path under results/hyps/}) and models {"direction/model": model folder}
    (the train record's model_path)."""
    files: dict[str, dict[str, Path]] = {}
    models: dict[str, Path] = {}
    for path, record in records.items():
        key = f"{record['direction']}/{record['model']}"
        named = files.setdefault(key, {})
        named[f"records/{record['kind']}/{Path(path).name}"] = Path(path)
        if record.get("hyp_path"):
            hyps = _named(Path(record["hyp_path"]), path, "hyps")
            under = hyps.parts[hyps.parts.index("hyps") + 1:] if "hyps" in hyps.parts[:-1] else (hyps.name,)
            named[f"hyps/{'/'.join(under)}"] = hyps
        if record["kind"] == "train" and record.get("model_path"):
            models[key] = _named(Path(record["model_path"]), path, "models").parent
    return files, models


def _log_files(client: MlflowClient, run_id: str, files: Mapping[str, Path], tracking_uri: str) -> None:
    """Log {artifact path: file} into the run (a file already there is replaced)."""
    artifacts_here(client, run_id, tracking_uri)
    for name, path in files.items():
        folder = str(Path(name).parent)
        client.log_artifact(run_id, str(path), None if folder == "." else folder)


def _depth(key: tuple[str, str], desired: Mapping[tuple[str, str], Wanted]) -> int:
    """How many of its ancestors (init_from, in the same direction) are synced too."""
    parent = (key[0], desired[key].tags.get(f"{TAG}init_from"))
    return 1 + _depth(parent, desired) if parent in desired else 0


def sync_records(
    tracking_uri: str,
    study: str,
    records: Iterable[dict],
    experiments: Mapping[str, Sequence[str]] | None = None,
    files: Mapping[str, Mapping[str, Path]] | None = None,
    models: Mapping[str, Path] | None = None,
    copy_models: bool = False,
) -> dict[str, str]:
    """Mirror the records of one study into MLflow, one run per (direction, model); returns
    {"direction/model": run_id}.

    `records`: train, score, COMET, formality and EAMT22 records, at most one per (direction,
    model, kind, split). `experiments`: {"direction/model": the experiments it is part of}
    (plan.models.trained_models), tag mtcue.experiments (comma-separated).
    Params: the train record's flattened model spec plus config_hash (and comet_model).
    Metrics: train_loss, valid_loss, wall_s per epoch (step = epoch); at step 0 best_epoch,
    best_valid_loss, params_total, params_trainable; per scored split S, S_bleu and S_acc_{phenomenon}
    (a fraction, "all" pooled) and S_comet (x100; when its model was unavailable, tag
    mtcue.comet_unavailable says why); formality_{formal,informal,average,formal_mean,informal_mean}
    (IWSLT22, fractions; another split S's: S_formality_...; a style-control model's also
    formality_level{N}_formal, its formal accuracy at style level N); eamt22_bleu, eamt22_accuracy_mean, eamt22_acc_{attribute},
    eamt22_supervised_samples (test split; another split S's: S_eamt22_...). Tags: identity
    (mtcue.study, .direction, .model), mtcue.pair,
    .config_hash, .git_commit, .experiments, .bleu_signature, .spec (the spec as JSON),
    .model_path (the trained checkpoint); a model trained from another (spec init_from) has
    mtcue.init_from and, when that model is synced too, mtcue.parent_run_id and a description
    linking to its run. Plain tags, not MLflow's nested runs (mlflow.parentRunId): nesting would fold
    every fine-tuned model (most runs) under its BASE run, the UI's search matches only the top
    level, and it draws no deeper level than one. The run starts and ends when its training did.
    The experiment is of kind custom_model_development and holds the runs list's view (RUNS_VIEW, `runs_url`).
    `files`: {"direction/model": {artifact path: file}}, logged into the model's run (its records and
    hypotheses; tag mtcue.artifacts, their digest); `models`: {"direction/model": the trained model's
    folder}, logged as the run's MLflow model, referring to the folder or, with `copy_models`, carrying a
    copy (tag mtcue.logged_model; module docstring).
    """
    groups: dict[tuple[str, str], list[dict]] = {}
    slots = set()
    for r in records:
        if r["study"] != study:
            raise ValueError(f"record of study {r['study']!r} given to sync study {study!r}")
        if r["kind"] not in ("train", "score", "comet", "formality", "eamt22", "contrastive", "context_usage"):
            raise ValueError(f"a {r['kind']} record belongs to no model's run")
        slot = (r["direction"], r["model"], r["kind"], r.get("split", r.get("suite")))
        if slot in slots:
            split = f" of split {slot[3]}" if slot[3] else ""
            raise ValueError(f"several {r['kind']} records{split} for {r['direction']}/{r['model']} in study {study}")
        slots.add(slot)
        groups.setdefault(slot[:2], []).append(r)
    # All cells are checked before anything is logged; a parent is logged before the models trained from it.
    desired = {key: wanted_of(cell, (experiments or {}).get("/".join(key), ())) for key, cell in groups.items()}
    with store_lock(tracking_uri), store_errors(tracking_uri):
        ensure_store(tracking_uri)
        client = MlflowClient(tracking_uri)
        experiment_id = _experiment_id(client, study, tracking_uri)
        run_ids = {}
        for direction, model in sorted(desired, key=lambda key: (_depth(key, desired), key)):
            wanted, key = desired[(direction, model)], f"{direction}/{model}"
            identity = {f"{TAG}direction": direction, f"{TAG}model": model, f"{TAG}study": study}
            wanted.tags |= identity
            if key in (files or {}):
                wanted.tags[ARTIFACTS_TAG] = _digest(files[key])
            if key in (models or {}):
                wanted.tags[MODEL_TAG] = model_tag(models[key], copy_models, tracking_uri)
            parent = f"{direction}/{wanted.tags.get(f'{TAG}init_from')}"
            if parent in run_ids:  # the run page's description links to the parent's run
                wanted.tags[f"{TAG}parent_run_id"] = run_ids[parent]
                wanted.tags["mlflow.note.content"] = \
                    f"Trained from [{parent}](#/experiments/{experiment_id}/runs/{run_ids[parent]})."
            run = _find_run(client, experiment_id, identity)
            history = _history(client, run.info.run_id, wanted.metrics) if run else {}
            if run is not None and is_stale(run, history, wanted):
                client.delete_run(run.info.run_id)
                run, history = None, {}
            if run is None:
                run = client.create_run(experiment_id, start_time=wanted.start_ms, tags=identity,
                                        run_name=f"{direction}/{model}")
            # Artifacts before the tags that say they are there (a sync stopped midway logs them again).
            if ARTIFACTS_TAG in wanted.tags and run.data.tags.get(ARTIFACTS_TAG) != wanted.tags[ARTIFACTS_TAG]:
                _log_files(client, run.info.run_id, files[key], tracking_uri)
            if MODEL_TAG in wanted.tags:
                name = model_name(direction, model)
                model_id = _named_model(client, run, name)
                if model_id is None or run.data.tags.get(MODEL_TAG) != wanted.tags[MODEL_TAG]:
                    spec = next(r["spec"] for r in groups[(direction, model)] if r["kind"] == "train")
                    model_id = log_model(client, experiment_id, run.info.run_id, name, models[key], spec, copy_models,
                                         tracking_uri, wanted.params, identity)
            _log_missing(client, run, history, wanted)
            if MODEL_TAG in wanted.tags:
                _attach_metrics(client, run.info.run_id, model_id, wanted)
            if run.info.status != "FINISHED" or (wanted.end_ms and run.info.end_time != wanted.end_ms):
                client.set_terminated(run.info.run_id, end_time=wanted.end_ms)
            run_ids[f"{direction}/{model}"] = run.info.run_id
    log.info("in the MLflow UI of %s, the runs are at %s", tracking_uri, runs_url("", experiment_id))
    return run_ids


def sync_study_files(tracking_uri: str, study: str, files: Mapping[str, Path]) -> tuple[str, str]:
    """Log the study's tables and figures ({artifact path: file}, e.g. tables/table4_quality.csv) into its
    study run: one run named after the study, tagged mtcue.kind=study, found by its tags, that holds no
    model. Only a changed set of files is logged again (mtcue.artifacts). Returns (experiment id, run id)."""
    with store_lock(tracking_uri), store_errors(tracking_uri):
        ensure_store(tracking_uri)
        client = MlflowClient(tracking_uri)
        experiment_id = _experiment_id(client, study, tracking_uri)
        identity = {KIND_TAG: "study", f"{TAG}study": study}
        run = _find_run(client, experiment_id, identity) or \
            client.create_run(experiment_id, tags=identity, run_name=study)
        digest = _digest(files)
        if run.data.tags.get(ARTIFACTS_TAG) != digest:
            _log_files(client, run.info.run_id, files, tracking_uri)
            client.set_tag(run.info.run_id, ARTIFACTS_TAG, digest)
        if run.info.status != "FINISHED":
            client.set_terminated(run.info.run_id)
    return experiment_id, run.info.run_id


def ui_base(tracking_uri: str, ui: str = "") -> str:
    """Where the MLflow UI of a store is: `ui` (a UI served elsewhere, e.g. behind a proxy: `make report
    MLFLOW_UI=...`), else a server's own address, else `mlflow ui`'s default."""
    server = tracking_uri if tracking_uri.startswith(("http://", "https://")) else "http://127.0.0.1:5000"
    return (ui or server).rstrip("/")


def runs_url(base: str, experiment_id: str) -> str:
    """The runs list of an experiment in the MLflow UI at `base`: MLflow's machine-learning view, with the study's
    columns (RUNS_VIEW)."""
    return f"{base}/#/experiments/{experiment_id}/runs?workflowType=machine_learning&viewStateShareKey={VIEW_KEY}"


def study_experiments(tracking_uri: str) -> dict[str, str]:
    """{study: experiment id} of the studies synced into the store (their experiments hold the runs view)."""
    with store_errors(tracking_uri):
        return {e.name: e.experiment_id for e in every(MlflowClient(tracking_uri).search_experiments)
                if f"mlflow.sharedViewState.{VIEW_KEY}" in e.tags}


# A table's number links to the study's page as page.html#{direction}/{model}: the page goes on to that run (a
# number over every direction, #{model}, stays on the model's line of runs).
FOLLOW_RUN = """<script>
const run = document.getElementById(decodeURIComponent(location.hash.slice(1)));
if (run && run.href) location.replace(run.href);
</script>
"""


def links_html(tracking_uri: str, study: str, experiment_id: str, study_run: str, runs: Mapping[str, str],
               ui: str = "") -> str:
    """An HTML page linking the study's experiment, its study run (tables and figures) and each model's run
    (model, hypotheses, records) in the MLflow UI at `ui` (ui_base): the report's MLflow section, and where each
    table number's link (kit.Runs: this page, #{direction}/{model}) is resolved to its run's page in the UI."""
    from html import escape

    base = ui_base(tracking_uri, ui)
    experiment = f"{base}/#/experiments/{experiment_id}"

    def link(href: str, text: str, anchor: str = "") -> str:
        named = f' id="{escape(anchor)}"' if anchor else ""
        return f'<a{named} href="{escape(href)}">{escape(text)}</a>'

    start = "" if tracking_uri.startswith(("http://", "https://")) else (
        f"<p>Start the UI from the study's folder: <code>mtcue ui --uri {escape(tracking_uri)}</code> (in the "
        "repository: <code>make ui</code>)</p>\n")
    by_model: dict[str, list[tuple[str, str]]] = {}
    for key, run_id in sorted(runs.items()):
        by_model.setdefault(key.split("/")[1], []).append((key, run_id))
    # One line per model (a table's number over every direction links here, #{model}), a link per run;
    # MLflow 3's UI opens on its GenAI pages unless the address asks for the classic ones.
    rows = "".join(f'<li id="{escape(model)}">{escape(model)}: '
                   + ", ".join(link(f"{experiment}/runs/{run_id}?workflowType=machine_learning", key, key)
                               for key, run_id in keyed) + "</li>\n" for model, keyed in by_model.items())
    return (f"<h2>MLflow: study {escape(study)}</h2>\n{start}"
            f"<p>{link(runs_url(base, experiment_id), 'All runs of the study')}; "
            f"{link(f'{experiment}/runs/{study_run}/artifacts', 'its tables and figures')}.</p>\n"
            f"<p>Each trained model's run (its logged model, test hypotheses and records):</p>\n<ul>\n{rows}</ul>\n"
            f"{FOLLOW_RUN}")
