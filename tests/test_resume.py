"""A training job killed mid-epoch (kill -9, as a SLURM time limit ends it) resumes from its last
checkpoint and ends exactly where an uninterrupted run with the same seed ends."""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from mtcue import config as cfg
from mtcue.data.prepare import binarise
from mtcue.models.checkpoints import load_checkpoint

MTCUE = str(Path(sys.executable).parent / "mtcue")
SAVE_EVERY = 5  # updates; an epoch has ~40
# Timing meters: the only checkpoint entries that depend on the wall clock.
WALL_CLOCK = {"metrics", "previous_training_time"}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A learnable training set (the target is a word-by-word code of the reversed source) and a
    validation set with unrelated targets: the better the model fits, the worse its validation
    loss after the first epoch, so early stopping (patience 2) ends training at epoch 3."""
    root = tmp_path_factory.mktemp("resume")
    rng = random.Random(0)
    words = [f"w{i}" for i in range(30)]
    code = {w: f"x{(7 * i) % 30}" for i, w in enumerate(words)}
    for split, n in {"train": 480, "valid": 40, "test": 5}.items():
        sources = [rng.choices(words, k=rng.randint(3, 8)) for _ in range(n)]
        if split == "train":
            targets = [[code[w] for w in reversed(s)] for s in sources]
        else:
            targets = [rng.choices(list(code.values()), k=rng.randint(3, 8)) for _ in sources]
        (root / f"{split}.en").write_text("".join(" ".join(s) + "\n" for s in sources))
        (root / f"{split}.de").write_text("".join(" ".join(t) + "\n" for t in targets))
    binarise(root, "en-de", root / "bin")
    study = cfg.validate({
        "study": "resume", "directions": ["en-de"],
        "models": {"base": {"type": "base", "arch": {"embed_dim": 32, "heads": 2, "encoder_layers": 1,
                                                     "encoder_ffn_dim": 64, "decoder_layers": 1,
                                                     "decoder_ffn_dim": 64}}},
        "training": {"lr": 0.003, "warmup_updates": 20, "max_tokens": 80, "update_freq": 1, "max_epoch": 10,
                     "patience": 2, "dropout": 0.1}})
    return root, cfg.model_spec(study, "base", "en-de")


def train_command(data, run: Path) -> list[str]:
    root, spec = data
    return [MTCUE, "train", "--spec", json.dumps(spec), "--direction", "en-de", "--data-bin", str(root / "bin"),
            "--checkpoint-dir", str(run / "checkpoints"), "--out", str(run / "model.pt"),
            "--record", str(run / "record.json"), "--study", "resume", "--save-interval-updates", str(SAVE_EVERY)]


def train(data, run: Path) -> None:
    result = subprocess.run(train_command(data, run), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]


def kill_after(data, run: Path, marker: str, timeout: float = 300) -> None:
    """Start training; kill -9 its whole process group as soon as its log shows `marker`."""
    (run / "checkpoints").mkdir(parents=True)
    log = run / "checkpoints" / "train.log"
    proc = subprocess.Popen(train_command(data, run), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while marker not in (log.read_text() if log.exists() else ""):
            assert proc.poll() is None, f"training ended before {marker!r} appeared in {log}"
            assert time.monotonic() < deadline, f"no {marker!r} in {log} after {timeout} s"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def load(path: Path) -> dict:
    return load_checkpoint(path)


def assert_same(a, b, where="checkpoint"):
    """Every tensor bit-identical, every other value equal, except the wall-clock meters."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b), f"{where} differs"
    elif isinstance(a, dict):
        keys = set(a) - WALL_CLOCK
        assert keys == set(b) - WALL_CLOCK, f"{where}: keys {sorted(keys ^ (set(b) - WALL_CLOCK))} differ"
        for key in keys:
            if key == "optimizer_history":  # fairseq appends an entry each time a run (re)starts: the last is the state
                assert_same(a[key][-1], b[key][-1], f"{where}.{key}[-1]")
            else:
                assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, argparse.Namespace):
        assert_same(vars(a), vars(b), where)
    elif isinstance(a, str):  # paths in the saved config: the two runs differ only in their folder
        assert a.replace("/whole/", "/killed/") == b.replace("/whole/", "/killed/"), f"{where}: {a!r} != {b!r}"
    elif not callable(a):
        assert a == b, f"{where}: {a!r} != {b!r}"


@pytest.mark.slow
def test_killed_training_resumes_to_the_same_checkpoint(data, tmp_path):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    train(data, whole)
    record = json.loads((whole / "record.json").read_text())
    assert [e["epoch"] for e in record["epochs"]] == [1, 2, 3] and record["best_epoch"] == 1, \
        "early stopping (patience 2 after the best epoch 1) should end training with epoch 3"
    last = load(whole / "checkpoints" / "checkpoint_last.pt")
    assert last["extra_state"]["mtcue_early_stop"]["num_runs"] == 2

    # Killed within epoch 3, after a mid-epoch save, one non-improving epoch into its patience:
    # a resumed run that forgot it would train on after epoch 3.
    updates_per_epoch = last["optimizer_history"][-1]["num_updates"] // 3
    first_save = (2 * updates_per_epoch // SAVE_EVERY + 1) * SAVE_EVERY
    kill_after(data, killed, f"(epoch 3 @ {first_save} updates, score None)")
    assert not (killed / "model.pt").exists()
    interrupted = load(killed / "checkpoints" / "checkpoint_last.pt")
    position = interrupted["extra_state"]["train_iterator"]
    assert position["epoch"] == 3 and 0 < position["iterations_in_epoch"] < updates_per_epoch
    assert interrupted["extra_state"]["mtcue_early_stop"]["num_runs"] == 1

    train(data, killed)
    assert "restored early-stopping state" in (killed / "checkpoints" / "train.log").read_text()
    for name in ("checkpoint_last.pt", "checkpoint_best.pt"):
        assert_same(load(whole / "checkpoints" / name), load(killed / "checkpoints" / name), name)
    assert_same(load(whole / "model.pt")["model"], load(killed / "model.pt")["model"], "model.pt")
    assert json.loads((killed / "record.json").read_text())["best_epoch"] == 1

    # A rerun of a run that stopped early trains no further epoch.
    train(data, killed)
    assert_same(last, load(killed / "checkpoints" / "checkpoint_last.pt"), "checkpoint_last.pt after a rerun")
