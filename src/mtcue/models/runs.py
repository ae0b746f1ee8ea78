"""A model logged in MLflow back to its folder: "runs:/<run id>" as `Translator.load` takes it, and the store
access that resolution shares with the sync (reporting/tracking.py): the tracking URI, a sqlite store's file,
a store's errors as a message, MLflow's paged searches.

Below both the Translator (models/translator.py) and the MLflow edge of the reporting stage, which packages
and logs the models this resolves (reporting/logged_model.py); it imports neither. A logged model names the
study's model folder (`model_dir`, relative to a sqlite store's folder when inside it) or, copied, its place
in the files it carries (`copied`, in its STUDY_COPY artifact).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from mlflow.entities import LoggedModel
from mlflow.exceptions import MlflowException
from mlflow.models import Model
from mlflow.tracking import MlflowClient

from mtcue.config import schema
from mtcue.io import confined

# A tracking server that refuses or does not answer fails a step within about half a minute, not after
# MLflow's defaults (7 retries with a backoff doubling from 2 s, 120 s per request: minutes); settings of
# the user's own (the same environment variables) are kept.
for _name, _value in {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
                      "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}.items():
    os.environ.setdefault(_name, _value)

STUDY_COPY = "study"  # the pyfunc artifact holding a copied model's files, laid out as a study's results/


def model_name(direction: str, model: str) -> str:
    """A logged model's name: its direction and model ("en-de_mtcue"; MLflow allows no "/" or "." in one), so the
    UI's list of models tells them apart and `runs:/<run id>/en-de_mtcue` loads one."""
    return f"{direction}_{model}"


def run_model(client: MlflowClient, run) -> LoggedModel | None:
    """The model a run logged; its newest, should it hold several (one logged again under another name or from
    another folder, or by a writer the lock could not see): MLflow lists a run's outputs in no order."""
    outputs = run.outputs.model_outputs if run.outputs else []
    models = [client.get_logged_model(o.model_id) for o in outputs]
    return max(models, key=lambda m: m.creation_timestamp, default=None)


def resolve_uri(configured: str | None = None) -> str:
    """MLFLOW_TRACKING_URI in the environment overrides the configured URI (default: the config schema's)."""
    return os.environ.get("MLFLOW_TRACKING_URI") or configured or \
        schema()["properties"]["mlflow"]["properties"]["tracking_uri"]["default"]


def sqlite_path(tracking_uri: str) -> Path | None:
    """The database file of a sqlite store's URI; None for another store (a server) or an in-memory one."""
    if not tracking_uri.startswith("sqlite:///"):
        return None
    db = tracking_uri.removeprefix("sqlite:///").split("?")[0]
    return Path(db) if db and db != ":memory:" else None


@contextmanager
def store_errors(tracking_uri: str) -> Iterator[None]:
    """A store that cannot be used (not a database, damaged, locked; a server that cannot be reached) as a message
    naming it, not SQLAlchemy's or requests' traceback (nor the one MLflow logs for a locked store)."""
    from requests.exceptions import RequestException
    from sqlalchemy.exc import SQLAlchemyError

    db_log = logging.getLogger("mlflow.store.db.utils")
    level, db_log.level = db_log.level, logging.CRITICAL
    try:
        yield
    except (SQLAlchemyError, MlflowException) as err:
        cause = err if isinstance(err, SQLAlchemyError) else err.__cause__ or err.__context__
        if isinstance(cause, RequestException):
            raise RuntimeError(f"the MLflow server {tracking_uri} cannot be reached ({type(cause).__name__}, after "
                               f"{os.environ['MLFLOW_HTTP_REQUEST_MAX_RETRIES']} retries); start it, or set "
                               "MLFLOW_TRACKING_URI (mlflow.tracking_uri) to a store that answers") from None
        if not isinstance(cause, SQLAlchemyError):
            raise
        raise RuntimeError(f"the MLflow store {tracking_uri} cannot be used: {str(cause).splitlines()[0]}; if another "
                           "program holds it, let it finish; else restore it, or move it away and rerun the study's "
                           "mlflow_sync, which rebuilds it from the records") from None
    finally:
        db_log.level = level


def every(search, *args, **kwargs) -> list:
    """Every result of an MLflow search (search_runs, search_logged_models): a call returns one page."""
    found, token = [], None
    while True:
        page = search(*args, page_token=token, **kwargs)
        found += page
        if not (token := page.token):
            return found


def model_folder(config: Mapping, copy: str | Path | None, where: str, tracking_uri: str,
                 within: Path | None = None) -> Path:
    """The model folder a logged model's `config` names: its place in the copy it carries (`copy`), never outside
    `within` (default the copy); or the study's folder, a relative one in the folder of the store it was loaded from."""
    relog = "relog the model (`mtcue track --artifacts`)"
    if "copied" in config and copy is not None:
        return confined(Path(copy) / str(config["copied"]), within or copy, f"{where}: its copied model",
                        f"a model is read only from its own files: {relog}")
    if not isinstance(config.get("model_dir"), str):
        raise ValueError(f"{where}: its MLmodel names no model folder (model_dir or copied); {relog}")
    folder, db = Path(config["model_dir"]), sqlite_path(tracking_uri)
    if folder.is_absolute():  # a study's model folder outside the store's folder (or a server's store)
        if folder.parent.parent.name != "models":
            raise ValueError(f"{where}: its model_dir {folder} is not a study's model folder (results/models/"
                             f"{{direction}}/{{model}}); {relog}")
        return folder
    if db is None:
        raise ValueError(f"{where}: its model folder {folder} lies in the study's folder of a sqlite store, not in "
                         f"{tracking_uri}; set MLFLOW_TRACKING_URI to the study's store (sqlite:///results/mlflow.db)")
    return confined(db.parent / folder, db.parent, f"{where}: its model_dir",
                    f"a relative model folder lies in the study of its store: {relog}")


def run_model_dir(uri: str, tracking_uri: str | None = None) -> Path:
    """The model folder of the MLflow run `uri` ("runs:/<run id>", or "runs:/<run id>/<model name>"): its logged
    model's reference into the study, or the copy it carries (downloaded when the store is remote).
    `tracking_uri`: default MLFLOW_TRACKING_URI, else the configured default (sqlite:///results/mlflow.db,
    relative to the study's folder)."""
    from mlflow.artifacts import download_artifacts
    from mlflow.utils.file_utils import local_file_uri_to_path

    run_id = uri.removeprefix("runs:/").strip("/").split("/")[0]
    tracking_uri = resolve_uri(tracking_uri)
    db = sqlite_path(tracking_uri)
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
        # The run's own model, whatever its name (a store synced before models were named by direction and model
        # holds one named "model"), in this store (MLflow's runs:/ searches the global one).
        experiment = client.get_experiment(run.info.experiment_id)
        logged = run_model(client, run)
    if logged is None:
        raise ValueError(f"{uri}: the run holds no model; the study's mlflow_sync (`mtcue track --artifacts`) logs "
                         "each trained model's")
    location = logged.artifact_location
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
    if not isinstance(flavor, dict):
        raise ValueError(f"{uri}: {local / 'MLmodel'} has no python_function flavour: not a model `mtcue track` "
                         "logged; relog it (`mtcue track --artifacts`)")
    artifacts, config = flavor.get("artifacts") or {}, flavor.get("config") or {}
    study = artifacts.get(STUDY_COPY) if isinstance(artifacts, dict) else None
    copy = study.get("path") if isinstance(study, dict) else None
    if not (isinstance(artifacts, dict) and isinstance(config, dict) and isinstance(copy, (str, type(None)))):
        raise ValueError(f"{uri}: {local / 'MLmodel'}: its python_function config or artifacts are not those `mtcue "
                         "track` writes; relog the model (`mtcue track --artifacts`)")
    return model_folder(config, None if copy is None else local / copy, f"{uri} ({local})", tracking_uri, local)
