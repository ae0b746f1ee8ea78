"""Checkpoint files are checked before use, so a damaged one is named instead of failing deep
inside fairseq ("PytorchStreamReader failed reading zip archive") on every rerun, and an unsafe one
is refused before anything unpickles it with code execution allowed.

torch.save writes a zip archive whose members carry CRC-32 checksums: reading it through once
finds a truncated or corrupted file (about a second per GB). Its pickle is then read by torch's
`weights_only` unpickler, which builds tensors, containers and the few types of `SAFE_GLOBALS` and
refuses any other global: a pickle that would call `os.system` is rejected, never run (docs/safety.md).
"""
from __future__ import annotations

import argparse
import logging
import os
import pickle
import re
import shutil
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path

from mtcue.models.fairseq_args import FAIRSEQ_ARCH

log = logging.getLogger(__name__)
LAST, BEST = "checkpoint_last.pt", "checkpoint_best.pt"


# What a checkpoint of this project holds besides tensors and builtin containers (torch allows those):
# fairseq keeps the model's command-line arguments as an argparse Namespace (its other settings are
# plain dicts, OmegaConf.to_container). Nothing else is unpickled.
SAFE_GLOBALS = [argparse.Namespace]


class CheckpointError(RuntimeError):
    """A checkpoint file cannot be used; the message names it."""


def allow_checkpoint_types() -> None:
    """Let torch's weights_only unpickler (torch.load's default since torch 2.6) read this project's
    checkpoints, also in the loads fairseq makes itself (resuming fairseq-train, loading an ensemble)."""
    import torch

    torch.serialization.add_safe_globals(SAFE_GLOBALS)


def load_checkpoint(path: str | Path, mmap: bool = False) -> dict:
    """The checkpoint at `path`, unpickled with torch's weights_only unpickler (SAFE_GLOBALS allowed).

    Raises CheckpointError naming the file and the type when the pickle names anything else: such a
    file was not written by fairseq for this project, and unpickling it freely could run its code.
    """
    try:
        return _load(path, mmap)
    except pickle.UnpicklingError as err:
        raise CheckpointError(f"{path}: {_refusal(err)}") from None


def _load(path: str | Path, mmap: bool) -> dict:
    import torch

    # Added for good, not with torch's safe_globals context manager: leaving that removes the types
    # again, even for fairseq's loads that the plugin allowed them to.
    allow_checkpoint_types()
    # An explicit weights_only=True is not overridden by TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD.
    return torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)


def _refusal(err: pickle.UnpicklingError) -> str:
    # torch's weights_only unpickler names a refused global "GLOBAL module.name"; other refusals (not a
    # pickle at all) stand in the paragraph before its closing pointer to the documentation.
    found = re.search(r"GLOBAL ([\w.]+)", str(err))
    if not found:
        paragraphs = [p.strip() for p in str(err).split("\n\n") if p.strip()]
        detail = [p for p in paragraphs if not p.startswith("Check the documentation")][-1:] or ["unreadable"]
        return f"not a torch checkpoint ({detail[0][:200]})"
    return (f"unsafe: its pickle names {found.group(1)}, which no checkpoint of this project holds (only "
            "tensors, containers and argparse.Namespace are loaded), and unpickling it could run code; use "
            "checkpoints trained by this pipeline or from a source you trust (docs/safety.md)")


def checkpoint_problem(path: str | Path) -> str | None:
    """What is wrong with a torch checkpoint file, or None when it reads through intact."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
        if head != b"PK\x03\x04":
            return _legacy_problem(path)
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except zipfile.BadZipFile:
        return f"truncated or corrupted ({path.stat().st_size} bytes; the end of the zip archive is missing)"
    except (OSError, EOFError, zipfile.LargeZipFile) as err:
        return f"unreadable ({err})"
    if bad:
        return f"corrupted (checksum error in {bad})"
    return _unpickling_problem(path, mmap=True)  # mmap: the tensors are mapped, not read again


def _legacy_problem(path: Path) -> str | None:
    # Not a zip archive: an empty file, something else, or torch's pre-1.6 format (loaded to tell).
    if path.stat().st_size == 0:
        return "empty (0 bytes)"
    return _unpickling_problem(path, mmap=False)


def _unpickling_problem(path: Path, mmap: bool) -> str | None:
    try:
        _load(path, mmap)
    except pickle.UnpicklingError as err:
        return _refusal(err)
    except Exception as err:  # noqa: BLE001 - any failure to load means the file is unusable
        return f"not a torch checkpoint ({type(err).__name__}: {str(err).splitlines()[0][:200]})"
    return None


def check_checkpoint(path: str | Path, what: str) -> None:
    """Raise CheckpointError naming `path` (described as `what`) when it is missing or damaged."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: {what} does not exist")
    problem = checkpoint_problem(path)
    if problem:
        raise CheckpointError(f"{path}: {what} is {problem}; rebuild it (or restore a copy) and rerun")


def _move_aside(path: Path, problem: str) -> Path:
    aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
    os.replace(path, aside)
    log.warning("%s is %s: moved to %s", path, problem, aside)
    return aside


def recover_checkpoint_dir(ckpt_dir: Path) -> None:
    """Before fairseq resumes in `ckpt_dir`, move damaged checkpoints aside (kept for inspection).

    A damaged checkpoint_last.pt is replaced by a copy of an intact checkpoint_best.pt, so training
    resumes from the best epoch (the epochs after it are trained again); with no intact best it
    starts afresh. A damaged checkpoint_best.pt alone is moved aside: training resumes from the
    last checkpoint, and the next validation that improves on the best loss saves a new best.
    """
    damaged = {name: problem for name in (LAST, BEST)
               if (ckpt_dir / name).exists() and (problem := checkpoint_problem(ckpt_dir / name))}
    for name, problem in damaged.items():
        _move_aside(ckpt_dir / name, problem)
    if LAST not in damaged:
        return
    if (ckpt_dir / BEST).exists():
        shutil.copyfile(ckpt_dir / BEST, ckpt_dir / LAST)
        log.warning("resuming from %s instead", ckpt_dir / BEST)
    else:
        log.warning("no intact checkpoint left in %s: training starts afresh", ckpt_dir)


def check_belongs(checkpoint: Path, direction: str, data_bin: Path, model_type: str | None = None) -> int:
    """Refuse a checkpoint used from another model's folder: its languages must be `direction`'s, its
    architecture `model_type`'s (the training record's: it decides the context the model is fed) and its
    embeddings as large as the dictionaries in `data_bin` (an en-de model in a de-en folder would read
    German pieces with English ids). Returns the longest source, in tokens, the model reads."""
    check_checkpoint(checkpoint, "the model's checkpoint")
    state = load_checkpoint(checkpoint)
    task, model = state["cfg"]["task"], state["cfg"]["model"]
    trained = f"{_field(task, 'source_lang')}-{_field(task, 'target_lang')}"
    if trained != direction:
        raise CheckpointError(f"{checkpoint}: trained for {trained}, but it sits among the {direction} models; use "
                              f"it from the study that trained it (results/models/{trained}/...)")
    arch, expected = _arch(model), FAIRSEQ_ARCH.get(model_type)
    if arch and expected and arch != expected:
        raise CheckpointError(f"{checkpoint}: a {arch} checkpoint, but the model's training record says {model_type} "
                              f"(arch {expected}): checkpoint and record are of different models; put the model's own "
                              "checkpoint back, or retrain it")
    for side, lang in zip(("encoder", "decoder"), direction.split("-")):
        rows = state["model"][f"{side}.embed_tokens.weight"].shape[0]
        dictionary = data_bin / f"dict.{lang}.txt"
        words = 4 + sum(1 for _ in dictionary.open(encoding="utf-8"))  # fairseq's <s> <pad> </s> <unk> come first
        words += style_symbols(task)
        if rows != words:
            raise CheckpointError(f"{checkpoint}: its {side} reads {rows} tokens but {dictionary} has {words}: the "
                                  "checkpoint and the study's binarised data are not from the same run")
    return int(min(_field(model, "max_source_positions"), _field(model, "max_target_positions")))


def style_symbols(task) -> int:
    """The level symbols the style_token task adds to the dictionaries (plugin/style_task.py); 0 otherwise."""
    mode = task.get("style_mode") if isinstance(task, Mapping) else getattr(task, "style_mode", None)
    return 5 if mode == "token" else 0


def _arch(model) -> str | None:
    """The fairseq architecture a checkpoint's model config names (None where it names none)."""
    for key in ("arch", "_name"):
        value = model.get(key) if isinstance(model, Mapping) else getattr(model, key, None)
        if value:
            return value
    return None


def _field(node, key: str):
    # fairseq keeps some parts of a checkpoint's config as an argparse Namespace, others as a mapping
    return node[key] if isinstance(node, Mapping) else getattr(node, key)
