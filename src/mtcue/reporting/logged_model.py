"""MLflow edge: a trained model as an MLflow model, and its logging into a model's run.

A model's run holds its trained model as an MLflow model named by its direction and model ("en-de_mtcue",
models/runs.py's `model_name`; pyfunc flavour, `TranslatorModel`: a table of `source` and optional `cue`, or
`context` and `previous` -> translations), so `runs:/<run id>/en-de_mtcue` loads and serves it (models/runs.py
resolves `runs:/<run id>` to it). The model refers to the study's model folder (a checkpoint is
~1 GB at paper scale; a sqlite store's study by a path relative to the store's folder, and its artifacts are
read from there, so a copied or moved study loads its own models) or, with `copy_models`, carries a copy of the
files `Translator.load` reads. The sync (reporting/tracking.py) logs it once: tag mtcue.logged_model names the
model's folder (`model_tag`), and a run whose model is another (another folder, copied or not) is logged
afresh, as MLflow cannot take a logged model back.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

import mlflow.pyfunc
import pandas as pd
from mlflow.entities import LoggedModelOutput, LoggedModelStatus
from mlflow.exceptions import MlflowException
from mlflow.models import Model, ModelSignature
from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE
from mlflow.tracking import MlflowClient
from mlflow.types.schema import AnyType, Array, ColSpec, ParamSchema, ParamSpec, Schema

from mtcue.models.runs import STUDY_COPY, model_folder, sqlite_path
from mtcue.study import langs_of

# What a served model reads: one sentence per row, its cue (Translator.translate's `cue`) or its context
# strings (metadata) and preceding lines (most recent first); what it returns: one translation per row. The lists
# are declared of any type: MLflow's enforcement of Array("string") makes a null in them the string "None" before
# `predict` sees it; `predict` checks their items itself (_cells) and answers anything but strings with a 400.
SIGNATURE = ModelSignature(
    inputs=Schema([ColSpec("string", "source"), ColSpec("string", "cue", required=False),
                   ColSpec(Array(AnyType()), "context", required=False),
                   ColSpec(Array(AnyType()), "previous", required=False)]),
    outputs=Schema([ColSpec("string")]),
    params=ParamSchema([ParamSpec("beam", "long", 5)]))


def artifacts_here(client: MlflowClient, run_id: str, tracking_uri: str) -> None:
    """Refuse to log into a sqlite store moved or copied from where it was made: MLflow logs into the artifact root
    (mlartifacts/) it was made with, the other study's."""
    from mlflow.utils.file_utils import local_file_uri_to_path

    db, uri = sqlite_path(tracking_uri), client.get_run(run_id).info.artifact_uri
    root = Path(local_file_uri_to_path(uri)) if uri.startswith("file:") else None
    if db and root and "mlartifacts" in root.parts and not root.is_relative_to(db.parent.resolve() / "mlartifacts"):
        raise ValueError(f"the MLflow store {tracking_uri} was made elsewhere: MLflow would log into {root}; sync into "
                         "a fresh store (move the store and its mlartifacts/ away), rebuilt from the records")


class TranslatorModel(mlflow.pyfunc.PythonModel):
    """A trained model of the study as an MLflow pyfunc model: `predict` takes a table of `source`
    sentences with an optional `cue`, or `context` strings and `previous` lines (most recent first), per row
    (or MLflow's columnar form of it), and returns their translations (params: `beam`). Its model_config
    names the model's folder in the study (`model_dir`) or, copied, its place in the `study` artifact
    (`copied`); `device` (default CUDA where there is one) and `columns` pass on to `Translator.load`."""

    def load_context(self, context) -> None:
        from mtcue.models.translator import Translator

        config = context.model_config or {}
        folder = model_folder(config, context.artifacts.get(STUDY_COPY), "the MLflow model", mlflow.get_tracking_uri())
        self.translator = Translator.load(folder, device=config.get("device"), columns=config.get("columns"))

    def predict(self, context, model_input: pd.DataFrame, params=None) -> list[str]:
        # What the request did wrong goes back as its message (HTTP 400), not as MLflow's "unexpected error"
        # with a stack trace; a source longer than the model reads is refused, not cut with a server-side warning.
        try:
            model_input = _rows(model_input)
            sources, limit = list(model_input["source"]), self.translator.model.max_source_tokens - 1
            for row, source in enumerate(sources):
                if isinstance(source, str) and len(pieces := self.translator.pieces(source, f"row {row}")) > limit:
                    raise ValueError(f"row {row}: the source is {len(pieces)} pieces long, more than the model reads "
                                     f"({limit}); split it into sentences")
            return self.translator.translate(sources, _cells(model_input, "context"), _cells(model_input, "previous"),
                                             beam=int((params or {}).get("beam", 5)), cue=_cues(model_input))
        except (ValueError, TypeError) as err:
            raise BadRequest(str(err)) from None


class BadRequest(MlflowException):
    """A request the model cannot read: HTTP 400 with the reason alone. MLflow's scoring server puts a dump of
    the whole input table before the message of an MlflowException from `predict` ("Failed to predict data
    '...'"); this one keeps the message it was made with."""

    def __init__(self, message: str):
        super().__init__(message, INVALID_PARAMETER_VALUE)

    @property
    def message(self) -> str:
        return self._message

    @message.setter
    def message(self, value: str) -> None:
        self.__dict__.setdefault("_message", value)


def _rows(table: pd.DataFrame) -> pd.DataFrame:
    """One sentence per row. MLflow's columnar input ({"inputs": {"source": [...], "cue": [...]}}) reaches the
    model as one row holding each column's list: spread it into rows."""
    first = table["source"].iloc[0] if "source" in table and len(table) == 1 else None
    if first is None or isinstance(first, str) or not isinstance(first, Iterable):
        return table
    lengths = {column: len(cell) if isinstance(cell, Iterable) and not isinstance(cell, str) else None
               for column, cell in table.iloc[0].items()}
    if len(set(lengths.values())) > 1:
        raise ValueError("inputs: give each column one value per sentence (" +
                         ", ".join(f"{c}: {'not a list' if n is None else n}" for c, n in lengths.items()) + ")")
    return pd.DataFrame({column: list(cell) for column, cell in table.iloc[0].items()})


def _cells(table: pd.DataFrame, column: str) -> list[list[str]] | None:
    """A served table's column of string lists; a missing cell (the column left out in some rows) holds none."""
    if column not in table:
        return None
    cells = [[] if cell is None or isinstance(cell, float) and math.isnan(cell) else cell for cell in table[column]]
    for row, cell in enumerate(cells):
        if isinstance(cell, str) or not isinstance(cell, Iterable) or not all(isinstance(s, str) for s in cell):
            raise ValueError(f"row {row}: '{column}' is {cell!r}; give a list of strings")
    return [list(cell) for cell in cells]


def _cues(table: pd.DataFrame) -> list[str | None] | None:
    """A served table's `cue` column, a string per row; a missing cell (the column left out in some rows) holds none."""
    if "cue" not in table:
        return None
    cues = [None if cell is None or isinstance(cell, float) and math.isnan(cell) else cell for cell in table["cue"]]
    for row, cue in enumerate(cues):
        if cue is not None and not isinstance(cue, str):
            raise ValueError(f"row {row}: 'cue' is {cue!r}; give a string")
    return cues


def input_example(spec: dict) -> dict:
    """A row a model of `spec` reads: a sentence, with a context string and a previous line where it reads them."""
    from mtcue.models.translator import context_columns

    columns = context_columns(spec)
    example = {"source": ["Are you ready?"]}
    if any(not c.startswith("doc") for c in columns):
        example["context"] = [["Drama, Family, Romance"]]
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
    folder, db = Path(folder).resolve(), sqlite_path(tracking_uri)
    inside = db is not None and folder.is_relative_to(db.parent.resolve())
    return folder.relative_to(db.parent.resolve()).as_posix() if inside else str(folder)


def model_tag(folder: Path, copy: bool, tracking_uri: str) -> str:
    """The value of mtcue.logged_model: which folder the run's model is, and whether it was copied."""
    return f"{'copy' if copy else 'reference'}:{_in_store(folder, tracking_uri)}"


def log_model(client: MlflowClient, experiment_id: str, run_id: str, name: str, folder: Path, spec: dict,
              copy: bool, tracking_uri: str, params: dict[str, str], tags: dict[str, str]) -> str:
    """Log the model in `folder` as the run's MLflow model `name`, as mlflow.pyfunc.log_model does but into a
    given run and without loading the model to check the input example (hundreds of models of ~1 GB at paper
    scale; tests/test_pipeline.py serves one); with the run's `params` and `tags` (its direction and model).
    Returns its model id."""
    folder = Path(folder).resolve()
    artifacts_here(client, run_id, tracking_uri)
    logged = client.create_logged_model(experiment_id, name=name, source_run_id=run_id, params=params, tags=tags)
    with tempfile.TemporaryDirectory(prefix="mtcue-model-") as tmp:
        artifacts, config = None, {"model_dir": _in_store(folder, tracking_uri)}
        if copy:
            artifacts = {STUDY_COPY: str(Path(tmp) / STUDY_COPY)}
            config = {"copied": _copy_of_study(folder, Path(artifacts[STUDY_COPY]))}
        saved = Path(tmp) / name
        mlflow.pyfunc.save_model(
            saved, python_model=str(Path(__file__).with_name("mlflow_model.py")), artifacts=artifacts,
            model_config=config, signature=SIGNATURE, input_example=pd.DataFrame(input_example(spec)),
            pip_requirements=["mtcue"],
            mlflow_model=Model(artifact_path=logged.artifact_location, run_id=run_id, model_id=logged.model_id))
        client.log_model_artifacts(logged.model_id, str(saved))
    client.finalize_logged_model(logged.model_id, LoggedModelStatus.READY)
    client.log_outputs(run_id, [LoggedModelOutput(logged.model_id, step=0)])
    return logged.model_id
