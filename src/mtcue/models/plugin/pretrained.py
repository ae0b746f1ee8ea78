"""Initialise MTCue from a trained BASE checkpoint by exact state-dict key match, with a report
(also a few-shot variant from its trained parent of the same architecture: then every tensor loads).

The authors' code loaded BASE non-strictly and silently dropped the whole decoder; here every
tensor outside the context modules must load, or building the model fails.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import torch

from mtcue.models.checkpoints import load_checkpoint

logger = logging.getLogger(__name__)


class PretrainedLoadError(RuntimeError):
    pass


class FromCheckpoint:
    """A task mixin: while fairseq builds a model to load a checkpoint into, `building_from_checkpoint` is
    true, and the models skip --pretrained-base: the checkpoint's weights replace the parent's anyway, so
    loading neither reads the parent (a path in the study that trained it) nor rewrites its report."""
    building_from_checkpoint = False

    def build_model(self, cfg, from_checkpoint=False):
        self.building_from_checkpoint = from_checkpoint
        try:
            return super().build_model(cfg, from_checkpoint)
        finally:
            self.building_from_checkpoint = False


def is_context_key(key: str, prefixes: tuple[str, ...] = ("context_",)) -> bool:
    """Keys of MTCue's new modules: encoder.context_encoder.*, decoder.layers.N.encoder_attn.context_attn.*
    (other models name their new modules' prefixes: the style models' style_*)"""
    return any(part.startswith(prefixes) for part in key.split("."))


def load_pretrained_base(model: torch.nn.Module, path: str | Path, report_path: str | Path | None = None,
                         new_prefixes: tuple[str, ...] = ("context_",), adapt=None) -> dict:
    """Copy every tensor of the BASE checkpoint at `path` into `model` (keys must match exactly).

    Report: `loaded` keys, `new` keys (in `model`, not in BASE: should be context modules only),
    `missing_base_keys` (new keys outside the context modules), `unused_base_keys`, `shape_mismatch`,
    and parameter counts. Raises PretrainedLoadError, with the report, unless the last three are
    empty (unused BASE tensors mean a different architecture). Returns the report; also writes it
    as JSON to `report_path` if given. `new_prefixes`: the name prefixes of the model's new modules;
    `adapt`: {key: tensor} -> the same, BASE's state made to fit the model (style_token: its new embedding rows).
    """
    base = load_checkpoint(path)["model"]
    if adapt is not None:
        base = adapt(base)
    own = model.state_dict()
    loaded, new, mismatched = [], [], []
    for key, tensor in own.items():
        if key not in base:
            new.append(key)
        elif base[key].shape != tensor.shape:
            mismatched.append({"key": key, "base": list(base[key].shape), "mtcue": list(tensor.shape)})
        else:
            loaded.append(key)
    report = {
        "pretrained_base": str(path),
        "loaded": loaded,
        "new": new,
        "unused_base_keys": sorted(set(base) - set(own)),
        "shape_mismatch": mismatched,
        "missing_base_keys": [k for k in new if not is_context_key(k, new_prefixes)],
    }
    params = dict(model.named_parameters())  # tied embeddings once
    for name, keys in (("loaded_params", set(loaded)), ("new_params", set(new))):
        report[name] = sum(p.numel() for k, p in params.items() if k in keys)
    if report_path:
        Path(report_path).parent.mkdir(parents=True, exist_ok=True)
        Path(report_path).write_text(json.dumps(report, indent=1) + "\n")
    problems = {k: report[k] for k in ("missing_base_keys", "shape_mismatch", "unused_base_keys") if report[k]}
    if problems:
        raise PretrainedLoadError(f"cannot initialise from BASE checkpoint {path}: {json.dumps(problems, indent=1)}")

    with torch.no_grad():
        for key in loaded:
            own[key].copy_(base[key])  # state_dict() tensors share storage with the parameters
    logger.info("initialised from %s: %d tensors (%d parameters) loaded; %d tensors (%d parameters) newly "
                "initialised, all in context modules: %s", path, len(loaded), report["loaded_params"], len(new),
                report["new_params"], sorted({_module_of(k) for k in new}))
    return report


def _module_of(key: str) -> str:
    """decoder.layers.3.encoder_attn.context_attn.k_proj.weight -> decoder.layers.*.encoder_attn.context_attn"""
    parts = key.split(".")
    cut = next((i for i, p in enumerate(parts) if p.startswith(("context_", "style_"))), len(parts) - 1) + 1
    return ".".join("*" if p.isdigit() else p for p in parts[:cut])
