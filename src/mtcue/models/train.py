"""Training with fairseq-train (in-process, mtcue.models.fairseq_run): resumable checkpoints, explicit staleness, a training record.

Checkpoints live in a folder Snakemake does not own (`results/checkpoints/...`), so a job
killed by a wall-time limit resumes from `checkpoint_last.pt` when rerun. A checkpoint
folder trained from a different spec is moved aside, never silently resumed.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from mtcue.io import atomic_path, read_json
from mtcue.models import fairseq_args as fa
from mtcue.models import fairseq_run
from mtcue.models.checkpoints import check_checkpoint, load_checkpoint, recover_checkpoint_dir
from mtcue.records import config_hash

log = logging.getLogger(__name__)
SPEC_FILE = "spec.json"


@contextlib.contextmanager
def hold_checkpoint_dir(ckpt_dir: Path) -> Iterator[None]:
    """An exclusive lock on `ckpt_dir` while a training uses it: a second training in the folder would resume the
    first one's epochs, so it waits for the first to end and then resumes where that one stopped (a Snakemake
    restarted while a job of its predecessor trains submits the training again: the new job must not fail and use
    up the rule's retries). The lock is a file beside the folder (a folder of another spec is moved aside) held
    with flock, which the kernel releases when this process ends however it ends (SIGTERM, a wall-time kill)."""
    real = Path(ckpt_dir).resolve()  # the lock beside the real folder: a link to it must not be a second lock
    lock = real.with_name(f"{real.name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning("%s: another training is using this checkpoint folder (it holds %s): waiting for it to end, "
                        "then resuming where it stopped", ckpt_dir, lock)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def prepare_checkpoint_dir(ckpt_dir: Path, spec: dict) -> None:
    """Create `ckpt_dir` for `spec`; move aside one that belongs to another spec."""
    spec_path = ckpt_dir / SPEC_FILE
    if spec_path.exists():
        try:
            old = read_json(spec_path)
        except ValueError as err:  # its checkpoints are of an unknown spec: neither resumed nor moved
            raise RuntimeError(f"{err} (the spec of the checkpoints in {ckpt_dir}: unknown, so they are neither "
                               "resumed nor moved aside; move that folder away yourself to train afresh)") from None
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


_LOADED = re.compile(r"Loaded checkpoint \S+ \(epoch (\d+) @ (\d+) updates\)")
_FRESH = "No existing checkpoint found"
_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \| ")


def _utc(match: re.Match) -> str:
    # fairseq stamps its log lines in local time, without a zone.
    local = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S").astimezone()
    return local.astimezone(timezone.utc).isoformat()


def parse_fairseq_log(lines: list[str]) -> dict:
    """The history of the training that made the latest checkpoint, from fairseq-train's
    `--log-format json` output appended by every launch in a checkpoint folder:
    {"epochs": per-epoch statistics, "started": when it began, "finished": when its last epoch
    ended} (UTC ISO times; None when unknown).

    A launch that resumes from a checkpoint ("Loaded checkpoint ... (epoch N @ U updates)")
    replaces what earlier launches logged for epoch N and later; one that finds no checkpoint
    starts the history afresh. Epoch wall time and updates are differences of fairseq's
    cumulative counters; its wall clock restarts when a launch resumes at an epoch boundary.
    """
    epochs: dict[int, dict] = {}
    base_wall, base_updates = 0.0, 0
    started = None
    for line in lines:
        stamp = _TIME.match(line)
        if stamp and started is None:
            started = _utc(stamp)
        if _FRESH in line:
            if epochs and stamp:
                started = _utc(stamp)
            epochs, base_wall, base_updates = {}, 0.0, 0
            continue
        loaded = _LOADED.search(line)
        if loaded:
            resumed, updates = int(loaded.group(1)), int(loaded.group(2))
            epochs = {e: entry for e, entry in epochs.items() if e < resumed}
            previous = epochs.get(resumed - 1, {})
            if previous.get("_updates_total", updates) < updates:
                # Inside an epoch: fairseq restored its counters, so epoch `resumed` spans both launches.
                base_wall, base_updates = previous["_wall_total"], previous["_updates_total"]
            else:
                base_wall, base_updates = 0.0, updates
            continue
        for stage in ("train", "valid"):
            marker = f"| {stage} | "
            if marker in line:
                stats = json.loads(line.split(marker, 1)[1])
                entry = epochs.setdefault(int(stats["epoch"]), {"epoch": int(stats["epoch"])})
                entry[f"{stage}_loss"] = float(stats[f"{stage}_loss"])
                if stage == "train":
                    wall, updates = float(stats["train_wall"]), int(stats["train_num_updates"])
                    entry.update(sentences_per_update=float(stats["train_bsz"]), wall_s=wall - base_wall,
                                 updates=updates - base_updates, _wall_total=wall, _updates_total=updates,
                                 _finished=_utc(stamp) if stamp else None)
                    base_wall, base_updates = wall, updates
    return {"epochs": [{k: v for k, v in epochs[e].items() if not k.startswith("_")} for e in sorted(epochs)],
            "started": started, "finished": epochs[max(epochs)].get("_finished") if epochs else None}


def run_logged(cmd: list[str], env: dict, log_path: Path) -> list[str]:
    """Run `cmd`, streaming its output to our stderr (the rule's log) and appending it to `log_path`."""
    lines = []
    # Line-buffered: a job killed by a time limit keeps every line fairseq wrote before the kill
    # (a full buffer used to lose the last epochs of the history).
    with log_path.open("a", encoding="utf-8", buffering=1) as keep, subprocess.Popen(
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
    state = load_checkpoint(checkpoint)["model"]
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


def check_lines_fit(data_bin: Path, direction: str, max_tokens: int) -> None:
    """Refuse, before any training, a training or validation line longer than a batch or than the model reads
    (its 1,024 positions): fairseq would stop with a bare assertion ("Sentences lengths should not exceed
    max_tokens", "Size of sample #20 is invalid") after loading everything. A line's length is fairseq's: the
    longer of its two sides in pieces, end-of-sentence included."""
    import numpy as np
    from fairseq.data import data_utils
    from fairseq.models.transformer import DEFAULT_MAX_SOURCE_POSITIONS, DEFAULT_MAX_TARGET_POSITIONS

    for split in ("train", "valid"):
        sides = [data_utils.load_indexed_dataset(str(data_bin / f"{split}.{direction}.{lang}"), None)
                 for lang in direction.split("-")]
        if None in sides:
            raise FileNotFoundError(f"{data_bin}: no binarised {split} split of {direction} (run the binarise step)")
        sizes = np.maximum(sides[0].sizes, sides[1].sizes)
        longest = int(sizes.argmax()) if len(sizes) else 0
        size = int(sizes[longest]) if len(sizes) else 0
        if size > max_tokens:
            raise ValueError(f"{data_bin}: {split} line {longest + 1} is {size} pieces long, more than "
                             f"training.max_tokens={max_tokens} (one batch): raise training.max_tokens, or lower "
                             "clean.max_chars so that cleaning drops such lines")
        positions = min(DEFAULT_MAX_SOURCE_POSITIONS, DEFAULT_MAX_TARGET_POSITIONS)
        if size > positions:
            raise ValueError(f"{data_bin}: {split} line {longest + 1} is {size} pieces long, more than the "
                             f"{positions} positions the model reads: lower clean.max_chars so that cleaning drops "
                             "such lines")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def train(spec: dict, direction: str, data_bin: Path, ckpt_dir: Path, model_out: Path,
          context_dir: Path | None = None, init_checkpoint: Path | None = None,
          threads: int = 1, log_interval: int = 50, gpus: int = 1, save_interval_updates: int = 1000,
          workers: int = 0) -> dict:
    """Train (or resume) one model on `gpus` GPUs (data-parallel if more than one; CPU if CUDA is
    absent) with `threads` CPUs: `workers` data-loader processes (fairseq's --num-workers) and the rest as
    torch threads of the main process; copy its best checkpoint to `model_out`; return the record."""
    import torch

    ckpt_dir = ckpt_dir.resolve()  # the real folder: its checkpoints and (hold_checkpoint_dir) its lock
    with hold_checkpoint_dir(ckpt_dir):
        use_cuda = torch.cuda.is_available()
        if gpus > 1 and torch.cuda.device_count() < gpus:
            raise RuntimeError(f"asked to train on {gpus} GPUs but CUDA sees {torch.cuda.device_count()}")
        if not 0 <= workers < threads:
            raise ValueError(f"--workers {workers}: the data loaders need fewer CPUs than --threads {threads}, "
                             "which also run the main process")
        prepare_checkpoint_dir(ckpt_dir, spec)
        recover_checkpoint_dir(ckpt_dir)
        args = [*fa.task_args(spec, direction, data_bin, context_dir), *fa.arch_args(spec),
                *fa.optimisation_args(spec, use_cuda, gpus), *fa.distributed_args(gpus, free_port()),
                *fa.checkpoint_args(ckpt_dir, save_interval_updates),
                "--log-format", "json", "--log-interval", str(log_interval), "--num-workers", str(workers)]
        if spec.get("init_from"):
            if init_checkpoint is None:
                raise ValueError(f"model '{spec['model']}' initialises from '{spec['init_from']}': pass its checkpoint")
            check_checkpoint(init_checkpoint, f"--init-checkpoint (the trained '{spec['init_from']}' model)")
            if spec["type"] == "base":  # fairseq's own transformer: its weights, a fresh optimiser and schedule
                args += ["--finetune-from-model", str(init_checkpoint)]
            else:
                args += ["--pretrained-base", str(init_checkpoint),
                         "--pretrained-report", str(ckpt_dir / "init_report.json")]
        log.info("fairseq-train %s", " ".join(args))
        start = time.monotonic()
        cfg = fairseq_run.training_config(args)
        check_lines_fit(data_bin, direction, spec["training"]["max_tokens"])
        if fairseq_run.train_command(cfg):
            env = {**os.environ, "OMP_NUM_THREADS": str(threads - workers), "MKL_NUM_THREADS": str(threads - workers)}
            run_logged([sys.executable, "-m", "fairseq_cli.train", *args], env, ckpt_dir / "train.log")
        else:
            fairseq_run.train(cfg, ckpt_dir / "train.log", threads - workers)
        best = ckpt_dir / "checkpoint_best.pt"
        check_checkpoint(best, "the best checkpoint fairseq-train saved")
        fd, tmp = atomic_path(model_out)
        os.close(fd)
        shutil.copyfile(best, tmp)
        os.replace(tmp, model_out)
        history = parse_fairseq_log((ckpt_dir / "train.log").read_text(encoding="utf-8").splitlines())
        epochs = history["epochs"]
        valid = [e for e in epochs if "valid_loss" in e]
        best_epoch = min(valid, key=lambda e: e["valid_loss"]) if valid else None
        return {
            "model": spec["model"], "direction": direction, "spec": spec, "params": count_checkpoint_params(best),
            "epochs": epochs, "started": history["started"], "finished": history["finished"],
            "model_path": str(model_out), "best_epoch": best_epoch and best_epoch["epoch"],
            "best_valid_loss": best_epoch and best_epoch["valid_loss"], "config_hash": config_hash(spec),
            "device": "cuda" if use_cuda else "cpu", "gpus": gpus if use_cuda else 0, "threads": threads,
            "wall_s_this_run": round(time.monotonic() - start, 1),
        }
