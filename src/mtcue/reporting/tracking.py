"""MLflow edge: mirror result records into an MLflow tracking store.

The only module that imports mlflow. One run per (study, direction, model), found by tags,
so a rerun updates that run. A run mirrors its records: points already logged are not logged
again (MLflow appends a second history entry for a repeated (key, step), which the UI draws
as a duplicate point); when the run disagrees with the records (other config hash, a
changed value, a param with another value, a param, metric or mtcue.* tag the records no
longer give, another start time), it is deleted and logged afresh, since MLflow can neither
overwrite a metric point nor change or remove a param.

Concurrent syncs (two Snakemake invocations, a sync by hand while a study runs) take turns on
an inter-process lock around store creation and the whole sync: without it a fresh sqlite
store is corrupted by concurrent schema creation and two syncs both create a study's runs. A
sqlite store's lock file lies beside the database, so it serialises every process that can
open that database. A server (http://...) has no file to share: its lock is per user and
URI in the user's cache folder, which serialises the syncs of that user on hosts sharing the
home folder; writers the lock cannot see (other users, other machines) may still duplicate a
run, and the next sync repairs that (several runs of one key, or a repeated metric point,
are deleted and logged afresh from the records).

Artifacts: a model's run holds its records and hypotheses (`records/{kind}/...`, `hyps/...`) and
its trained model as an MLflow model named "model" (pyfunc flavour, `TranslatorModel`: a table of
`source` and optional `context` and `previous` -> translations), so `runs:/<run id>/model` loads and
serves it. The model refers to the study's model folder (a checkpoint is ~1 GB at paper scale; a sqlite
store's study by a path relative to the store's folder, and its artifacts are read from there, so a copied or
moved study loads its own models) or, with `copy_models`, carries a copy of the files `Translator.load` reads. The study's tables and
figures are artifacts of one run of its own, named after the study (`sync_study_files`). Each
is logged once: a tag holds a digest of the files logged (mtcue.artifacts) or the model's folder
(mtcue.logged_model), and a later sync logs only what changed; a run whose model is another
(another folder, copied or not) is logged afresh, as MLflow cannot take a logged model back.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import mlflow.pyfunc
import pandas as pd
from filelock import FileLock, Timeout
from mlflow.entities import LoggedModelOutput, LoggedModelStatus, Metric, Param, Run, RunTag
from mlflow.exceptions import MlflowException
from mlflow.models import Model, ModelSignature
from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE
from mlflow.tracking import MlflowClient
from mlflow.types.schema import Array, ColSpec, ParamSchema, ParamSpec, Schema

from mtcue.config import schema
from mtcue.study import langs_of, pair_of

log = logging.getLogger(__name__)
TAG = "mtcue."
# log_batch accepts at most 100 params or tags and 1000 metrics per call.
PARAM_BATCH, TAG_BATCH, METRIC_BATCH = 100, 100, 1000
# MLflow 3 UIs that go by the experiment's kind open one without it on the GenAI overview, not on
# its runs. The UI of 3.17 goes by its GenAI / Model training switch instead (URL parameter
# workflowType, remembered by the browser): the sync logs the link that opens on the runs.
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}
LOCK_WAIT_S = 1800  # a sync of a paper-scale study into a remote server takes minutes
MODEL_NAME = "model"  # runs:/<run id>/model
STUDY_COPY = "study"  # the pyfunc artifact holding a copied model's files, laid out as a study's results/
ARTIFACTS_TAG, MODEL_TAG, KIND_TAG = f"{TAG}artifacts", f"{TAG}logged_model", f"{TAG}kind"
# What a served model reads: one sentence per row, its context strings (metadata, cues) and preceding
# lines (most recent first); what it returns: one translation per row.
SIGNATURE = ModelSignature(
    inputs=Schema([ColSpec("string", "source"), ColSpec(Array("string"), "context", required=False),
                   ColSpec(Array("string"), "previous", required=False)]),
    outputs=Schema([ColSpec("string")]),
    params=ParamSchema([ParamSpec("beam", "long", 5)]))


def resolve_uri(configured: str | None = None) -> str:
    """MLFLOW_TRACKING_URI in the environment overrides the configured URI (default: the config schema's)."""
    return os.environ.get("MLFLOW_TRACKING_URI") or configured or \
        schema()["properties"]["mlflow"]["properties"]["tracking_uri"]["default"]


def _sqlite_path(tracking_uri: str) -> Path | None:
    if not tracking_uri.startswith("sqlite:///"):
        return None
    db = tracking_uri.removeprefix("sqlite:///").split("?")[0]
    return Path(db) if db and db != ":memory:" else None


def lock_path(tracking_uri: str) -> Path:
    """The lock file that serialises syncs into the store at `tracking_uri` (module docstring)."""
    db = _sqlite_path(tracking_uri)
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


@contextmanager
def store_errors(tracking_uri: str) -> Iterator[None]:
    """A store that cannot be used (not a database, damaged, locked) as a message naming it, not SQLAlchemy's
    traceback (nor the one MLflow logs for a locked store)."""
    from sqlalchemy.exc import SQLAlchemyError

    db_log = logging.getLogger("mlflow.store.db.utils")
    level, db_log.level = db_log.level, logging.CRITICAL
    try:
        yield
    except (SQLAlchemyError, MlflowException) as err:
        cause = err if isinstance(err, SQLAlchemyError) else err.__cause__ or err.__context__
        if not isinstance(cause, SQLAlchemyError):
            raise
        raise RuntimeError(f"the MLflow store {tracking_uri} cannot be used: {str(cause).splitlines()[0]}; if another "
                           "program holds it, let it finish; else restore it, or move it away and rerun the study's "
                           "mlflow_sync, which rebuilds it from the records") from None
    finally:
        db_log.level = level


def ensure_store(tracking_uri: str) -> None:
    """Create the store (and a sqlite file's parent directory) once, before any run is logged;
    call it holding store_lock (concurrent creation of a sqlite store's tables corrupts it)."""
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


@dataclass
class _Wanted:
    """What a run should hold: params, metrics as {key: {step: value}}, tags (a run holding a param,
    metric or mtcue.* tag not among them is stale), and its start and end (epoch ms; None: unknown,
    MLflow's default)."""

    params: dict[str, str]
    metrics: dict[str, dict[int, float]]
    tags: dict[str, str]
    start_ms: int | None = None
    end_ms: int | None = None


def _ms(iso: str | None) -> int | None:
    return None if iso is None else int(datetime.fromisoformat(iso).timestamp() * 1000)


# The fields of a formality record logged as metrics (fractions), each as formality_{field}.
FORMALITY_FIELDS = ("formal", "informal", "average", "formal_mean", "informal_mean")


def _evaluation(record: dict, params: dict[str, str], tags: dict[str, str]) -> dict[str, float | None]:
    """The step-0 metrics of an evaluation record; adds its params and tags."""
    kind, split = record["kind"], record.get("split")
    if kind == "score":
        tags[f"{TAG}bleu_signature"] = record["bleu_signature"]
        return {f"{split}_bleu": record["bleu"],
                **{f"{split}_acc_{p}": c["accuracy"] for p, c in record["phenomena"].items()}}
    if kind == "comet":
        params["comet_model"] = record["comet_model"]
        if record["comet"] is None:
            tags[f"{TAG}comet_unavailable"] = record["unavailable"]
        return {f"{split}_comet": record["comet"]}
    # The test split's (Table 5, Figure 4) keep their names; another split's (Table 6: valid) are prefixed with it.
    name = kind if split in (None, "test") else f"{split}_{kind}"
    if kind == "formality":  # a style-control model's also per style level (the sweep)
        return {**{f"{name}_{f}": record[f] for f in FORMALITY_FIELDS},
                **{f"{name}_level{e['level']}_formal": e["formal_accuracy"] for e in record.get("levels", [])},
                **{f"{name}_level{e['level']}_meaning_chrf": e["meaning_chrf"] for e in record.get("levels", [])}}
    if kind == "contrastive":
        suite = record["suite"]
        return {f"contrastive_{suite}": record["accuracy"],
                **{f"contrastive_{suite}_{value}": s["accuracy"]
                   for value, s in record["groups"].get("phenomenon", {}).items()}}
    if kind == "context_usage":  # CXMI (nats per token), overall and per phenomenon
        return {f"{split}_cxmi": record["cxmi"],
                **{f"{split}_cxmi_{p}": s["cxmi"] for p, s in record["phenomena"].items()}}
    return {f"{name}_bleu": record["bleu"], f"{name}_accuracy_mean": record["accuracy_mean"],
            f"{name}_supervised_samples": record["supervised_samples"],
            **{f"{name}_acc_{a}": c["accuracy"] for a, c in record["attributes"].items()}}


def _desired(records: list[dict], experiments: Sequence[str]) -> _Wanted:
    train = next((r for r in records if r["kind"] == "train"), None)
    first = train or records[0]
    params = {**_flatten((train or {}).get("spec", {})), "config_hash": first["config_hash"]}
    tags = {
        f"{TAG}pair": pair_of(first["direction"]),
        f"{TAG}config_hash": first["config_hash"],
        f"{TAG}git_commit": first["git_commit"],
        **({f"{TAG}experiments": ",".join(experiments)} if experiments else {}),
    }
    wanted = _Wanted(params, {}, tags)
    metrics, summary = wanted.metrics, {}
    if train:
        for e in train["epochs"]:
            for key in ("train_loss", "valid_loss", "wall_s"):
                metrics.setdefault(key, {})[int(e["epoch"])] = float(e[key])
        summary |= {"best_epoch": train["best_epoch"], "best_valid_loss": train["best_valid_loss"],
                    "params_total": train["params"]["total"],
                    "params_trainable": train["params"]["trainable"]}
        # The run spans the training, not the sync (records written before these fields lack them).
        wanted.start_ms, wanted.end_ms = _ms(train.get("started")), _ms(train.get("finished"))
        tags[f"{TAG}spec"] = json.dumps(train["spec"], sort_keys=True)
        if "model_path" in train:
            tags[f"{TAG}model_path"] = train["model_path"]
        if train["spec"].get("init_from"):
            tags[f"{TAG}init_from"] = train["spec"]["init_from"]
    for r in records:
        if r is not train:
            summary |= _evaluation(r, params, tags)
    # Unknown values (no judged sample, no validation, COMET unavailable) are left out: MLflow has no null.
    metrics |= {key: {0: float(v)} for key, v in summary.items() if v is not None}
    return wanted


def _history(client: MlflowClient, run_id: str, keys: Iterable[str]) -> dict[str, list[Metric]]:
    return {key: client.get_metric_history(run_id, key) for key in keys}


def _same(a: float | None, b: float) -> bool:
    # A diverged training logs NaN losses; NaN != NaN must not make every sync stale.
    return a == b or (a is not None and math.isnan(a) and math.isnan(b))


def _is_stale(run: Run, history: dict[str, list[Metric]], wanted: _Wanted) -> bool:
    """True when the run holds a param, a metric point, a key or a start time that the records
    contradict: MLflow can take back neither a param nor a metric nor, here, a tag of ours."""
    if any(run.data.params.get(k, v) != v for k, v in wanted.params.items()):
        return True
    ours = {k for k in run.data.tags if k.startswith(TAG)}
    if set(run.data.params) - set(wanted.params) or set(run.data.metrics) - set(wanted.metrics) \
            or ours - set(wanted.tags):
        return True
    if wanted.start_ms is not None and run.info.start_time != wanted.start_ms:
        return True
    if run.data.tags.get(MODEL_TAG, wanted.tags.get(MODEL_TAG)) != wanted.tags.get(MODEL_TAG):
        return True  # another model was logged: a run's logged model cannot be replaced
    for key, points in history.items():
        steps = [p.step for p in points]
        if len(set(steps)) != len(steps) or not all(_same(wanted.metrics[key].get(p.step), p.value) for p in points):
            return True
    return False


def _every(search, *args, **kwargs) -> list:
    """Every result of an MLflow search (search_runs, search_logged_models): a call returns one page."""
    found, token = [], None
    while True:
        page = search(*args, page_token=token, **kwargs)
        found += page
        if not (token := page.token):
            return found


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
    runs = _every(client.search_runs, [experiment_id], filter_string=clause)
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
        db = _sqlite_path(tracking_uri)
        location = (db.parent.resolve() / "mlartifacts" / study).as_uri() if db else None
        try:
            return client.create_experiment(study, artifact_location=location, tags=EXPERIMENT_KIND)
        except MlflowException:  # created meanwhile by a writer the lock does not see
            experiment = client.get_experiment_by_name(study)
            if experiment is None:
                raise
    if experiment.lifecycle_stage == "deleted":
        client.restore_experiment(experiment.experiment_id)
    for key, value in EXPERIMENT_KIND.items():
        if experiment.tags.get(key) != value:
            client.set_experiment_tag(experiment.experiment_id, key, value)
    return experiment.experiment_id


def _log_missing(client: MlflowClient, run: Run, history: dict[str, list[Metric]], wanted: _Wanted) -> None:
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


def _digest(files: Mapping[str, Path]) -> str:
    """One digest of {artifact path: file}: names and contents."""
    h = hashlib.sha256()
    for name, path in sorted(files.items()):
        h.update(f"{name}\0{hashlib.sha256(Path(path).read_bytes()).hexdigest()}\0".encode())
    return h.hexdigest()


def _named(file: Path, record: Path) -> Path:
    """A file the record names, uploaded only from the study holding the record (the results/ folder above its
    records/), resolved: a link out of the study is refused too."""
    if not file.is_file():
        raise FileNotFoundError(f"{record}: names {file}, which is missing (run from the study's folder, or rerun "
                                "the step that writes it)")
    folders = Path(record).absolute().parent.parts
    if "records" not in folders:
        raise ValueError(f"{record}: not in a study's records/ folder (results/records/{{kind}}/...); its files are "
                         "uploaded only from the study that holds it")
    study = Path(*folders[:len(folders) - 1 - folders[::-1].index("records")]).resolve()
    if not file.resolve().is_relative_to(study):
        raise ValueError(f"{record}: names {file}, which lies outside the study's folder {study}; only the study's "
                         "own files are uploaded: rerun the step that wrote the record")
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
            hyps = _named(Path(record["hyp_path"]), path)
            under = hyps.parts[hyps.parts.index("hyps") + 1:] if "hyps" in hyps.parts[:-1] else (hyps.name,)
            named[f"hyps/{'/'.join(under)}"] = hyps
        if record["kind"] == "train" and record.get("model_path"):
            models[key] = _named(Path(record["model_path"]), path).parent
    return files, models


def _artifacts_here(client: MlflowClient, run_id: str, tracking_uri: str) -> None:
    """Refuse to log into a sqlite store moved or copied from where it was made: MLflow logs into the artifact root
    (mlartifacts/) it was made with, the other study's."""
    from mlflow.utils.file_utils import local_file_uri_to_path

    db, uri = _sqlite_path(tracking_uri), client.get_run(run_id).info.artifact_uri
    root = Path(local_file_uri_to_path(uri)) if uri.startswith("file:") else None
    if db and root and "mlartifacts" in root.parts and not root.is_relative_to(db.parent.resolve() / "mlartifacts"):
        raise ValueError(f"the MLflow store {tracking_uri} was made elsewhere: MLflow would log into {root}; sync into "
                         "a fresh store (move the store and its mlartifacts/ away), rebuilt from the records")


def _log_files(client: MlflowClient, run_id: str, files: Mapping[str, Path], tracking_uri: str) -> None:
    """Log {artifact path: file} into the run (a file already there is replaced)."""
    _artifacts_here(client, run_id, tracking_uri)
    for name, path in files.items():
        folder = str(Path(name).parent)
        client.log_artifact(run_id, str(path), None if folder == "." else folder)


class TranslatorModel(mlflow.pyfunc.PythonModel):
    """A trained model of the study as an MLflow pyfunc model: `predict` takes a table of `source`
    sentences with optional `context` strings and `previous` lines (most recent first) per row, and
    returns their translations (params: `beam`). Its model_config names the model's folder in the study
    (`model_dir`) or, copied, its place in the `study` artifact (`copied`); `device` (default CUDA where
    there is one) and `columns` pass on to `Translator.load`."""

    def load_context(self, context) -> None:
        from mtcue.models.translator import Translator

        config = context.model_config or {}
        folder = _model_folder(config, context.artifacts.get(STUDY_COPY), "the MLflow model", mlflow.get_tracking_uri())
        self.translator = Translator.load(folder, device=config.get("device"), columns=config.get("columns"))

    def predict(self, context, model_input: pd.DataFrame, params=None) -> list[str]:
        # What the request did wrong goes back as its message (HTTP 400), not as MLflow's "unexpected error"
        # with a stack trace; a source longer than the model reads is refused, not cut with a server-side warning.
        try:
            sources, limit = list(model_input["source"]), self.translator.model.max_source_tokens - 1
            for row, source in enumerate(sources):
                if isinstance(source, str) and len(pieces := self.translator.pieces(source)) > limit:
                    raise ValueError(f"row {row}: the source is {len(pieces)} pieces long, more than the model reads "
                                     f"({limit}); split it into sentences")
            return self.translator.translate(sources, _cells(model_input, "context"), _cells(model_input, "previous"),
                                             beam=int((params or {}).get("beam", 5)))
        except (ValueError, TypeError) as err:
            raise MlflowException(str(err), INVALID_PARAMETER_VALUE) from None


def _cells(table: pd.DataFrame, column: str) -> list[list[str]] | None:
    """A served table's column of string lists; a missing cell (the column left out in some rows) holds none."""
    if column not in table:
        return None
    cells = [[] if cell is None or isinstance(cell, float) and math.isnan(cell) else cell for cell in table[column]]
    for row, cell in enumerate(cells):
        if isinstance(cell, str) or not isinstance(cell, Iterable) or not all(isinstance(s, str) for s in cell):
            raise ValueError(f"row {row}: '{column}' is {cell!r}; give a list of strings")
    return [list(cell) for cell in cells]


def input_example(spec: dict) -> dict:
    """A row a model of `spec` reads: a sentence, with a context string and a previous line where it reads them."""
    from mtcue.models.translator import context_columns

    columns = context_columns(spec)
    example = {"source": ["Are you ready?"]}
    if any(not c.startswith("doc") for c in columns):
        example["context"] = [["Formal conversation"]]
    if any(c.startswith("doc") and c != "doc0" for c in columns):
        example["previous"] = [["Good evening, Mrs Smith."]]
    return example


def _copy_of_study(folder: Path, into: Path) -> str:
    """The files Translator.load reads for the model in `folder`, laid out under `into` as in the study's
    results/ (hard links where the filesystem allows, else copies); returns the model folder's place there.
    The sentence encoder of a model reading sentence vectors is not among them: it is named by the
    model's spec and loaded as the study loads it."""
    from mtcue.context.tags import VOCAB_FILE
    from mtcue.models.translator import TrainedModel

    model = TrainedModel.find(folder)
    results = model.results
    files = [model.checkpoint, model.record, model.spm_model,
             *(model.data_bin / f"dict.{lang}.txt" for lang in langs_of(model.direction))]
    if model.tag_store is not None:
        files += [model.tag_store / "manifest.json", model.tag_store / VOCAB_FILE]
    for path in files:
        target = into / path.relative_to(results)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)
    return model.checkpoint.parent.relative_to(results).as_posix()


def _in_store(folder: Path, tracking_uri: str) -> str:
    """`folder` as a logged model names it: relative to a sqlite store's folder when inside it (a study's
    results/ copied or moved keeps its models), else absolute."""
    folder, db = Path(folder).resolve(), _sqlite_path(tracking_uri)
    inside = db is not None and folder.is_relative_to(db.parent.resolve())
    return folder.relative_to(db.parent.resolve()).as_posix() if inside else str(folder)


def model_tag(folder: Path, copy: bool, tracking_uri: str) -> str:
    """The value of mtcue.logged_model: which folder the run's model is, and whether it was copied."""
    return f"{'copy' if copy else 'reference'}:{_in_store(folder, tracking_uri)}"


def _model_folder(config: Mapping, copy: str | Path | None, where: str, tracking_uri: str,
                  within: Path | None = None) -> Path:
    """The model folder a logged model's `config` names: its place in the copy it carries (`copy`), never outside
    `within` (default the copy); or the study's folder, a relative one in the folder of the store it was loaded from."""
    if "copied" in config and copy is not None:
        folder = (Path(copy) / str(config["copied"])).resolve()
        if not folder.is_relative_to(Path(within or copy).resolve()):
            raise ValueError(f"{where}: its copied model {config['copied']!r} lies outside the model's own files; "
                             "relog the model (`mtcue track --artifacts`)")
        return folder
    if "model_dir" not in config:
        raise ValueError(f"{where}: its MLmodel names no model folder (model_dir or copied); relog the model "
                         "(`mtcue track --artifacts`)")
    folder, db = Path(config["model_dir"]), _sqlite_path(tracking_uri)
    if folder.is_absolute():
        return folder
    if db is None:
        raise ValueError(f"{where}: its model folder {folder} lies in the study's folder of a sqlite store, not in "
                         f"{tracking_uri}; set MLFLOW_TRACKING_URI to the study's store (sqlite:///results/mlflow.db)")
    return db.parent.resolve() / folder


def _log_model(client: MlflowClient, experiment_id: str, run_id: str, folder: Path, spec: dict, copy: bool,
               tracking_uri: str) -> None:
    """Log the model in `folder` as the run's MLflow model (MODEL_NAME), as mlflow.pyfunc.log_model does but
    into a given run and without loading the model to check the input example (hundreds of models of ~1 GB
    at paper scale; tests/test_pipeline.py serves one)."""
    folder = Path(folder).resolve()
    _artifacts_here(client, run_id, tracking_uri)
    logged = client.create_logged_model(experiment_id, name=MODEL_NAME, source_run_id=run_id)
    with tempfile.TemporaryDirectory(prefix="mtcue-model-") as tmp:
        artifacts, config = None, {"model_dir": _in_store(folder, tracking_uri)}
        if copy:
            artifacts = {STUDY_COPY: str(Path(tmp) / STUDY_COPY)}
            config = {"copied": _copy_of_study(folder, Path(artifacts[STUDY_COPY]))}
        saved = Path(tmp) / MODEL_NAME
        mlflow.pyfunc.save_model(
            saved, python_model=str(Path(__file__).with_name("mlflow_model.py")), artifacts=artifacts,
            model_config=config, signature=SIGNATURE, input_example=pd.DataFrame(input_example(spec)),
            pip_requirements=["mtcue"],
            mlflow_model=Model(artifact_path=logged.artifact_location, run_id=run_id, model_id=logged.model_id))
        client.log_model_artifacts(logged.model_id, str(saved))
    client.finalize_logged_model(logged.model_id, LoggedModelStatus.READY)
    client.log_outputs(run_id, [LoggedModelOutput(logged.model_id, step=0)])


def run_model_dir(uri: str, tracking_uri: str | None = None) -> Path:
    """The model folder of the MLflow run `uri` ("runs:/<run id>", or "runs:/<run id>/model"): its logged
    model's reference into the study, or the copy it carries (downloaded when the store is remote).
    `tracking_uri`: default MLFLOW_TRACKING_URI, else the configured default (sqlite:///results/mlflow.db,
    relative to the study's folder)."""
    from mlflow.artifacts import download_artifacts
    from mlflow.utils.file_utils import local_file_uri_to_path

    run_id = uri.removeprefix("runs:/").strip("/").split("/")[0]
    tracking_uri = resolve_uri(tracking_uri)
    db = _sqlite_path(tracking_uri)
    if db is not None and not db.is_file():  # MLflow would create an empty store there
        raise ValueError(f"{uri}: no MLflow store at {db.resolve()} ({tracking_uri}); run from the study's folder or "
                         "set MLFLOW_TRACKING_URI to its store")
    with store_errors(tracking_uri):
        client = MlflowClient(tracking_uri)
        try:
            run = client.get_run(run_id)
        except MlflowException as err:
            if err.error_code != "RESOURCE_DOES_NOT_EXIST":  # a store that cannot be read: store_errors
                raise
            raise ValueError(f"{uri}: no such run in the MLflow store {tracking_uri} (set MLFLOW_TRACKING_URI to the "
                             "study's store, or run from the study's folder)") from None
        # The logged model itself, found as runs:/ finds it, but in this store (runs:/ searches the global one).
        experiment = client.get_experiment(run.info.experiment_id)
        logged = [m for m in _every(client.search_logged_models, [experiment.experiment_id],
                                    filter_string=f"name = '{MODEL_NAME}'") if m.source_run_id == run_id]
    if not logged:
        raise ValueError(f"{uri}: the run holds no model; the study's mlflow_sync (`mtcue track --artifacts`) logs "
                         "each trained model's")
    location = logged[-1].artifact_location
    root = experiment.artifact_location
    if location.startswith("file:") and root.startswith("file:"):
        # A local store's model is read where it lies (a download would copy it, with a progress bar): in the
        # store's folder, where the sync put the experiment's artifacts (mlartifacts/{study}), even after a move.
        local, root = Path(local_file_uri_to_path(location)), Path(local_file_uri_to_path(root))
        if db is not None and root.parts[-2:] == ("mlartifacts", experiment.name) and local.is_relative_to(root):
            local = db.parent.resolve() / "mlartifacts" / experiment.name / local.relative_to(root)
    else:
        local = Path(download_artifacts(artifact_uri=location, tracking_uri=tracking_uri))
    flavor = Model.load(local).flavors.get("python_function")
    if flavor is None:
        raise ValueError(f"{uri}: {local / 'MLmodel'} has no python_function flavour: not a model `mtcue track` "
                         "logged; relog it (`mtcue track --artifacts`)")
    copy = flavor.get("artifacts", {}).get(STUDY_COPY, {}).get("path")
    return _model_folder(flavor.get("config") or {}, None if copy is None else local / copy, f"{uri} ({local})",
                         tracking_uri, local)


def _depth(key: tuple[str, str], desired: Mapping[tuple[str, str], _Wanted]) -> int:
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
    The experiment is of kind custom_model_development, so the UI opens it on its runs.
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
    desired = {key: _desired(cell, (experiments or {}).get("/".join(key), ())) for key, cell in groups.items()}
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
            if run is not None and _is_stale(run, history, wanted):
                client.delete_run(run.info.run_id)
                run, history = None, {}
            if run is None:
                run = client.create_run(experiment_id, start_time=wanted.start_ms, tags=identity,
                                        run_name=f"{direction}/{model}")
            # Artifacts before the tags that say they are there (a sync stopped midway logs them again).
            if ARTIFACTS_TAG in wanted.tags and run.data.tags.get(ARTIFACTS_TAG) != wanted.tags[ARTIFACTS_TAG]:
                _log_files(client, run.info.run_id, files[key], tracking_uri)
            if MODEL_TAG in wanted.tags and run.data.tags.get(MODEL_TAG) != wanted.tags[MODEL_TAG]:
                spec = next(r["spec"] for r in groups[(direction, model)] if r["kind"] == "train")
                _log_model(client, experiment_id, run.info.run_id, models[key], spec, copy_models, tracking_uri)
            _log_missing(client, run, history, wanted)
            if run.info.status != "FINISHED" or (wanted.end_ms and run.info.end_time != wanted.end_ms):
                client.set_terminated(run.info.run_id, end_time=wanted.end_ms)
            run_ids[f"{direction}/{model}"] = run.info.run_id
    # MLflow 3.17's UI picks its GenAI pages unless told otherwise (the experiment kind no longer decides).
    log.info("in the MLflow UI of %s, the runs are at /#/experiments/%s?workflowType=machine_learning",
             tracking_uri, experiment_id)
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


def ui_base(tracking_uri: str) -> str:
    """Where the MLflow UI of a store is: $MTCUE_MLFLOW_UI (a UI served elsewhere, e.g. behind a proxy), else a
    server's own address, else `mlflow ui`'s default."""
    server = tracking_uri if tracking_uri.startswith(("http://", "https://")) else "http://127.0.0.1:5000"
    return (os.environ.get("MTCUE_MLFLOW_UI") or server).rstrip("/")


def links_html(tracking_uri: str, study: str, experiment_id: str, study_run: str, runs: Mapping[str, str]) -> str:
    """An HTML page linking the study's experiment, its study run (tables and figures) and each model's run
    (model, hypotheses, records) in the MLflow UI (the report's MLflow section)."""
    from html import escape

    base = ui_base(tracking_uri)
    experiment = f"{base}/#/experiments/{experiment_id}"

    def link(href: str, text: str) -> str:
        return f'<a href="{escape(href)}">{escape(text)}</a>'

    start = "" if tracking_uri.startswith(("http://", "https://")) else (
        f"<p>Start the UI from the study's folder: <code>mlflow ui --backend-store-uri {escape(tracking_uri)}</code>"
        "</p>\n")
    rows = "".join(f"<li>{link(f'{experiment}/runs/{run_id}?workflowType=machine_learning', key)}</li>\n"
                   for key, run_id in sorted(runs.items()))
    return (f"<h2>MLflow: study {escape(study)}</h2>\n{start}"
            f"<p>{link(f'{experiment}?workflowType=machine_learning', 'All runs of the study')}; "
            f"{link(f'{experiment}/runs/{study_run}/artifacts', 'its tables and figures')}.</p>\n"
            f"<p>Each trained model's run (its logged model, test hypotheses and records):</p>\n<ul>\n{rows}</ul>\n")
