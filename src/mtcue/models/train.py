"""Training with fairseq-train: resumable checkpoints, explicit staleness, a training record.

Checkpoints live in a folder Snakemake does not own (`results/checkpoints/...`), so a job
killed by a wall-time limit resumes from `checkpoint_last.pt` when rerun. A checkpoint
folder trained from a different spec is moved aside, never silently resumed.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from mtcue.io import atomic_path
from mtcue.models import fairseq_args as fa
from mtcue.records import config_hash

log = logging.getLogger(__name__)
SPEC_FILE = "spec.json"


def prepare_checkpoint_dir(ckpt_dir: Path, spec: dict) -> None:
    """Create `ckpt_dir` for `spec`; move aside one that belongs to another spec."""
    spec_path = ckpt_dir / SPEC_FILE
    if spec_path.exists():
        old = json.loads(spec_path.read_text())
        if old == spec:
            log.info("resuming in %s (same spec %s)", ckpt_dir, config_hash(spec))
            return
        stale = ckpt_dir.with_name(f"{ckpt_dir.name}.stale-{config_hash(old)}-{int(time.time())}")
        log.warning("spec changed (%s -> %s): moving old checkpoints to %s",
                    config_hash(old), config_hash(spec), stale)
        os.replace(ckpt_dir, stale)
    elif ckpt_dir.exists() and any(ckpt_dir.iterdir()):
        raise RuntimeError(f"{ckpt_dir} holds files but no {SPEC_FILE}: move it away or delete it first")
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    spec_path.write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")


def parse_fairseq_log(lines: list[str]) -> list[dict]:
    """Per-epoch statistics from fairseq-train's `--log-format json` output.

    Epoch wall time and updates are differences of fairseq's cumulative counters; a resumed
    run appends to the same log, and the last entry of an epoch wins.
    """
    epochs: dict[int, dict] = {}
    for line in lines:
        for stage in ("train", "valid"):
            marker = f"| {stage} | "
            if marker in line:
                stats = json.loads(line.split(marker, 1)[1])
                entry = epochs.setdefault(int(stats["epoch"]), {"epoch": int(stats["epoch"])})
                entry[f"{stage}_loss"] = float(stats[f"{stage}_loss"])
                if stage == "train":
                    entry.update(wall_total_s=float(stats["train_wall"]), updates_total=int(stats["train_num_updates"]),
                                 sentences_per_update=float(stats["train_bsz"]))
    out, wall, updates = [], 0.0, 0
    for epoch in sorted(epochs):
        entry = epochs[epoch]
        if "wall_total_s" in entry:
            entry["wall_s"], wall = entry["wall_total_s"] - wall, entry.pop("wall_total_s")
            entry["updates"], updates = entry["updates_total"] - updates, entry.pop("updates_total")
        out.append(entry)
    return out


def run_logged(cmd: list[str], env: dict, log_path: Path) -> list[str]:
    """Run `cmd`, streaming its output to our stderr (the rule's log) and appending it to `log_path`."""
    lines = []
    with log_path.open("a", encoding="utf-8") as keep, subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
        for line in proc.stdout:
            sys.stderr.write(line)
            keep.write(line)
            lines.append(line)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    return lines


def count_checkpoint_params(checkpoint: Path) -> dict:
    """Parameters of a saved model, counting tied (shared) tensors once and skipping buffers."""
    import torch

    state = torch.load(checkpoint, map_location="cpu", weights_only=False)["model"]
    seen, total = set(), 0
    for name, tensor in state.items():
        if name.endswith((".version", "._float_tensor")) or not tensor.is_floating_point():
            continue  # fairseq's bookkeeping buffers
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
        if key not in seen:
            seen.add(key)
            total += tensor.numel()
    # Every parameter is trained (context vectors are precomputed, outside the model).
    return {"total": total, "trainable": total}


def train(spec: dict, direction: str, data_bin: Path, ckpt_dir: Path, model_out: Path,
          context_dir: Path | None = None, init_checkpoint: Path | None = None,
          threads: int = 1, log_interval: int = 50) -> dict:
    """Train (or resume) one model; copy its best checkpoint to `model_out`; return the record."""
    import torch

    use_cuda = torch.cuda.is_available()
    prepare_checkpoint_dir(ckpt_dir, spec)
    cmd = [sys.executable, "-m", "fairseq_cli.train",
           *fa.task_args(spec, direction, data_bin, context_dir), *fa.arch_args(spec),
           *fa.optimisation_args(spec, use_cuda),
           "--save-dir", str(ckpt_dir), "--no-epoch-checkpoints", "--best-checkpoint-metric", "loss",
           "--log-format", "json", "--log-interval", str(log_interval), "--num-workers", "0"]
    if spec.get("init_from"):
        if init_checkpoint is None:
            raise ValueError(f"model '{spec['model']}' initialises from '{spec['init_from']}': pass its checkpoint")
        cmd += ["--pretrained-base", str(init_checkpoint), "--pretrained-report", str(ckpt_dir / "init_report.json")]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    log.info("running %s", " ".join(cmd))
    start = time.monotonic()
    run_logged(cmd, env, ckpt_dir / "train.log")
    best = ckpt_dir / "checkpoint_best.pt"
    if not best.exists():
        raise RuntimeError(f"fairseq-train finished without {best}; see the log above")
    fd, tmp = atomic_path(model_out)
    os.close(fd)
    shutil.copyfile(best, tmp)
    os.replace(tmp, model_out)
    epochs = parse_fairseq_log((ckpt_dir / "train.log").read_text(encoding="utf-8").splitlines())
    valid = [e for e in epochs if "valid_loss" in e]
    best_epoch = min(valid, key=lambda e: e["valid_loss"]) if valid else None
    return {
        "model": spec["model"], "direction": direction, "spec": spec, "params": count_checkpoint_params(best),
        "epochs": epochs, "best_epoch": best_epoch and best_epoch["epoch"],
        "best_valid_loss": best_epoch and best_epoch["valid_loss"], "config_hash": config_hash(spec),
        "device": "cuda" if use_cuda else "cpu", "threads": threads,
        "wall_s_this_run": round(time.monotonic() - start, 1),
    }
