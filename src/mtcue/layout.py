"""The study's results layout: where each step writes what a later one reads, under a results folder
(`results/` of the study's working directory by default; the study around a trained model's folder, as
`model_at` finds it). The rules' input functions, the plan's targets, the Translator (`TrainedModel.find`) and
the MLflow copy of a model read their paths from here (docs/formats.md). Every argument may be a Snakemake
wildcard placeholder instead of a value (`hyps("{direction}", "{model}", "{split}")`), which gives the pattern a
rule's output is written as. Imports nothing of the project."""
from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path("results")

# The folder of each kind of store (docs/formats.md, section 2): a vector store per sentence encoder under
# embed/, the token store, TAGGING's tag store, the side-information labels, the style levels, and a few-shot
# variant's masked copy of its parent's store.
STORE_FOLDERS = {"vectors": "embed", "tokens": "tokens", "tags": "tags", "labels": "labels", "style": "style",
                 "fewshot": "fewshot"}
# The stores a trained model reads again when it translates, beside its checkpoint: a tag store's vocabulary
# (TAGGING's tags; the side-information labels are a tag store of their own columns).
TAG_STORE_KINDS = ("tags", "labels")


def clean_corpus(pair: str, split: str, root: Path = RESULTS) -> Path:
    return root / "clean" / pair / f"{split}.jsonl"


def spm_model(direction: str, root: Path = RESULTS) -> Path:
    return root / "spm" / f"{direction}.model"


def bin_dir(direction: str, root: Path = RESULTS) -> Path:
    """The direction's binarised data (its dictionaries too)."""
    return root / "bin" / direction


def model_dir(direction: str, model: str, root: Path = RESULTS) -> Path:
    return root / "models" / direction / model


def checkpoint(direction: str, model: str, root: Path = RESULTS) -> Path:
    return model_dir(direction, model, root) / "checkpoint_best.pt"


def evalset(name: str, pair: str, root: Path = RESULTS) -> Path:
    """An evaluation set's folder for a pair (`iwslt22`, `iwslt22_valid`: IWSLT22's official layout)."""
    return root / "eval" / name / pair


def suite(direction: str, name: str, root: Path = RESULTS) -> Path:
    """A contrastive suite of a direction (or of its pair, as the rule that writes it names it)."""
    return root / "eval" / "contrastive" / direction / f"{name}.jsonl"


def resume_dir(direction: str, model: str, root: Path = RESULTS) -> Path:
    """A training's resumable checkpoints, outside its rule's outputs, so that a killed job resumes
    (models/train.py)."""
    return root / "checkpoints" / direction / model


def hyps(direction: str, model: str, split: str, setting: str | None = None, root: Path = RESULTS) -> Path:
    """A trained model's translation of a split of its direction's test corpus, one line per sentence; `setting`:
    one made otherwise, under its own folder (a test-time context such as `random_context`, `eamt22`'s context)."""
    return root / "hyps" / (setting or "") / direction / f"{model}.{split}.txt"


def hyps_dir(setting: str, direction: str, model: str, root: Path = RESULTS) -> Path:
    """A trained model's translations of an evaluation set, one file per prompt or style level (`formality`,
    `formality_valid`, `style`)."""
    return root / "hyps" / setting / direction / model


def record(kind: str, direction: str, model: str, of: str | None = None, root: Path = RESULTS) -> Path:
    """A trained model's record of a kind (`score`, `comet`, `contrastive`, ...; docs/formats.md), of a split or
    suite where the kind has several (`of`)."""
    return root / "records" / kind / direction / (f"{model}.{of}.json" if of else f"{model}.json")


def study_record(kind: str, name: str, root: Path = RESULTS) -> Path:
    """A record of no trained model: a pair's data (`data`, Table 1), a direction's style levels against its
    references (`style_agreement`)."""
    return root / "records" / kind / f"{name}.json"


def train_record(direction: str, model: str, root: Path = RESULTS) -> Path:
    return record("train", direction, model, root=root)


# The files of a table: its data, its Markdown and the Markdown's HTML rendering (the report's).
TABLE_FORMATS = ("csv", "md", "html")


def table(name: str, suffix: str, root: Path = RESULTS) -> Path:
    return root / "tables" / f"{name}.{suffix}"


def table_files(name: str, root: Path = RESULTS) -> list[Path]:
    """A table's three files (`TABLE_FORMATS`), which its rule writes together."""
    return [table(name, suffix, root) for suffix in TABLE_FORMATS]


def figure(name: str, suffix: str, root: Path = RESULTS) -> Path:
    """A figure's file (`svg`, `png`) or its data (`csv`)."""
    return root / "figures" / f"{name}.{suffix}"


def log(step: str, job: str | None = None, root: Path = RESULTS) -> Path:
    """A job's log: in its step's folder, named by the job (its wildcards joined by dots); a step of one job
    (`job` None): the step's own file."""
    return root / "logs" / (f"{step}/{job}.log" if job else f"{step}.log")


def benchmark(step: str, job: str | None = None, root: Path = RESULTS) -> Path:
    """A job's Snakemake benchmark (time, memory), named as its log."""
    return root / "benchmarks" / (f"{step}/{job}.tsv" if job else f"{step}.tsv")


# records/{kind}/{direction}/{model}[.{split or suite}].json: a record of one trained model's run
MODEL_RECORD = re.compile(r"(?:^|/)records/[^/]+/([a-z]{2}-[a-z]{2})/([^./]+)(?:\.[^/]*)?\.json$")


def record_run(path: str | Path) -> tuple[str, str] | None:
    """(direction, model) of a trained model's record path; None for a record of no model (a pair's data)."""
    found = MODEL_RECORD.search(Path(path).as_posix())
    return (found.group(1), found.group(2)) if found else None


def model_at(folder: str | Path) -> tuple[Path, str, str]:
    """(results folder, direction, model) of a model folder laid out as `model_dir` lays it out."""
    folder = Path(folder)
    if len(folder.parents) < 3:
        raise ValueError(f"{folder}: not a trained model's folder (results/models/{{direction}}/{{model}}/)")
    return folder.parents[2], folder.parent.name, folder.name


def store_dir(kind: str, direction: str, name: str | None = None, root: Path = RESULTS) -> Path:
    """The store of a kind (`STORE_FOLDERS`) in a direction; `name`: a vector store's (study.store_name) or a
    few-shot variant's model name."""
    if kind not in STORE_FOLDERS:
        raise ValueError(f"unknown store kind {kind!r}: one of {', '.join(STORE_FOLDERS)}")
    folder = root / STORE_FOLDERS[kind] / direction
    return folder / name if name else folder


def model_files(direction: str, model: str, kind: str | None, root: Path = RESULTS) -> dict[str, Path]:
    """What translating with a trained model reads (`kind`: the kind of store it reads): its checkpoint and
    training record, the direction's SentencePiece model and binarised data, and a tag store (`tags`) of a
    model that reads one."""
    files = {"checkpoint": checkpoint(direction, model, root), "record": train_record(direction, model, root),
             "spm": spm_model(direction, root), "data": bin_dir(direction, root)}
    return {**files, **({"tags": store_dir(kind, direction, root=root)} if kind in TAG_STORE_KINDS else {})}


def mlflow_runs(study: str, root: Path = RESULTS) -> Path:
    """What the MLflow sync of a study writes: the run id of each (direction, model) (docs/formats.md)."""
    return root / "mlflow" / f"{study}.runs.json"


def mlflow_page(study: str, root: Path = RESULTS) -> Path:
    """The study's MLflow page (`mtcue track-study`): its runs in the UI, each table number's link target."""
    return root / "mlflow" / f"{study}.html"
