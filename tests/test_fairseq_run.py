"""fairseq-train and fairseq-generate run in-process give what their commands gave."""
import json
import logging
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import torch

from mtcue import config as cfg
from mtcue.models import fairseq_run
from mtcue.models.checkpoints import load_checkpoint
from mtcue.models.train import train
from mtcue.models.translate import parse_generate_output, translate

ARCH = {"embed_dim": 16, "heads": 2, "encoder_layers": 1, "encoder_ffn_dim": 32, "decoder_layers": 1,
        "decoder_ffn_dim": 32}
CONFIG = {
    "study": "t", "directions": ["en-de"], "context": {"columns": ["doc", "genre"], "doc_slots": 2},
    "training": {"lr": 0.003, "warmup_updates": 5, "max_tokens": 200, "update_freq": 1, "max_epoch": 2,
                 "patience": 2, "dropout": 0.1},
    "models": {"base": {"type": "base", "arch": ARCH},
               "mtcue": {"type": "mtcue", "init_from": "base",
                         "arch": {**ARCH, "context_layers": 1, "context_ffn_dim": 32}}},
}
SIZES = {"train": 40, "valid": 6, "test": 9}
GENERATION = {"beam": 2, "batch_size": 4, "max_len_a": 1.2, "max_len_b": 10}


def command(tool, args):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-m", f"fairseq_cli.{tool}", *map(str, args)], env=env,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Binarised random-word data (en-de) and a vector store of random context vectors."""
    tmp = tmp_path_factory.mktemp("data")
    rng = random.Random(0)
    words = [f"w{i}" for i in range(24)]
    for split, n in SIZES.items():
        for lang in ("en", "de"):
            lines = [" ".join(rng.choices(words, k=rng.randint(2, 7))) for _ in range(n)]
            (tmp / f"{split}.{lang}").write_text("\n".join(lines) + "\n")
    command("preprocess", ["--source-lang", "en", "--target-lang", "de", "--trainpref", tmp / "train",
                           "--validpref", tmp / "valid", "--testpref", tmp / "test", "--destdir", tmp / "bin",
                           "--joined-dictionary", "--workers", "1"])
    config = cfg.validate(CONFIG)
    columns = cfg.store_columns(config)
    store = tmp / "store"
    store.mkdir()
    np_rng = np.random.default_rng(0)
    np.save(store / "vectors.npy", np_rng.standard_normal((12, 8)).astype(np.float32))
    for split, n in SIZES.items():
        np.save(store / f"{split}.index.npy", np_rng.integers(-1, 12, size=(n, len(columns))).astype(np.int32))
    (store / "manifest.json").write_text(json.dumps({
        "kind": "vectors", "model": "random", "pooling": "mean", "dim": 8, "dtype": "float32", "n_vectors": 12,
        "columns": columns, "doc_columns": 3, "normalize": False, "splits": SIZES}))
    return {"bin": tmp / "bin", "store": store, "config": config}


def assert_same_weights(a, b):
    a, b = load_checkpoint(a)["model"], load_checkpoint(b)["model"]  # the safe loader reads what fairseq wrote
    assert sorted(a) == sorted(b)
    assert all(torch.equal(a[k], b[k]) for k in a), [k for k in a if not torch.equal(a[k], b[k])]


@pytest.mark.slow
def test_in_process_training_and_generation_match_the_commands(data, tmp_path, monkeypatch):
    """mtcue's in-process training gives the checkpoint fairseq-train gives for the same arguments
    (BASE, then MTCUE initialised from it through the plugin), and its record reads the same
    epochs; in-process generation gives the command's hypotheses."""
    calls = []
    parse, generate = fairseq_run.training_config, fairseq_run.generate
    monkeypatch.setattr(fairseq_run, "training_config", lambda args: calls.append(args) or parse(args))
    monkeypatch.setattr(fairseq_run, "generate", lambda args, *rest: calls.append(args) or generate(args, *rest))
    records, init = {}, None
    for model in ("base", "mtcue"):
        spec = cfg.model_spec(data["config"], model, "en-de")
        ckpt = tmp_path / "in" / model
        store = data["store"] if model == "mtcue" else None
        records[model] = train(spec, "en-de", data["bin"], ckpt, tmp_path / f"{model}.pt", store, init, threads=1)
        args = [a.replace(str(ckpt), str(tmp_path / "cmd" / model)) for a in calls[-1]]
        out = command("train", args)
        assert_same_weights(ckpt / "checkpoint_best.pt", tmp_path / "cmd" / model / "checkpoint_best.pt")
        valid_losses = [float(json.loads(line.split("| valid | ", 1)[1])["valid_loss"])
                        for line in out.splitlines() if "| valid | " in line]
        assert [(e["epoch"], e["valid_loss"]) for e in records[model]["epochs"]] == list(enumerate(valid_losses, 1))
        init = tmp_path / f"{model}.pt"
    assert records["mtcue"]["params"]["total"] > records["base"]["params"]["total"]

    spec = cfg.model_spec(data["config"], "mtcue", "en-de")
    hyps = tmp_path / "hyps.txt"
    assert translate(spec, "en-de", data["bin"], init, "test", SIZES["test"], hyps, GENERATION,
                     data["store"], threads=1) == SIZES["test"]
    out = command("generate", calls[-1])
    assert hyps.read_text().splitlines() == parse_generate_output(out, SIZES["test"])


def test_fairseq_log_lines_reach_the_file_in_fairseqs_format(tmp_path):
    import logging

    with fairseq_run.fairseq_log(tmp_path / "train.log"):
        logging.getLogger("train").info('{"epoch": 1, "train_loss": "2.5"}')
    logging.getLogger("train").info("after the block: not in the file")
    line, = (tmp_path / "train.log").read_text().splitlines()
    assert line.endswith(' | INFO | train | {"epoch": 1, "train_loss": "2.5"}')


@pytest.mark.slow
def test_a_second_training_in_one_process_starts_from_nothing_of_the_first(data, tmp_path):
    """fairseq keeps the best validation loss on its functions: the same training run twice in one
    process must save the same best checkpoint both times (a stale best would keep the second
    run from saving one at all, and early stopping would count the first run's epochs)."""
    spec = cfg.model_spec(data["config"], "base", "en-de")
    records = [train(spec, "en-de", data["bin"], tmp_path / run, tmp_path / f"{run}.pt", threads=1)
               for run in ("first", "second")]
    losses = [[(e["epoch"], e["train_loss"], e["valid_loss"]) for e in r["epochs"]] for r in records]
    assert losses[0] == losses[1] and len(losses[1]) == 2 and records[1]["best_epoch"] is not None
    assert_same_weights(tmp_path / "first.pt", tmp_path / "second.pt")


def test_training_logs_updates_rate_and_epoch_and_translation_its_progress(data, tmp_path, caplog, monkeypatch):
    """fairseq's lines every --log-interval updates say the epoch, how far into it, the updates done and
    their rate; translation reports sentences done of the split through mtcue.progress."""
    spec = cfg.model_spec(data["config"], "base", "en-de")
    train(spec, "en-de", data["bin"], tmp_path / "ckpt", tmp_path / "base.pt", threads=1, log_interval=2)
    inner = [json.loads(line.split("| train_inner | ", 1)[1])
             for line in (tmp_path / "ckpt" / "train.log").read_text().splitlines() if "| train_inner | " in line]
    assert inner and all({"epoch", "update", "num_updates", "ups", "wps"} <= set(stats) for stats in inner)

    monkeypatch.setattr("mtcue.progress.INTERVAL_S", 0)
    with caplog.at_level(logging.INFO, logger="mtcue.progress"):
        translate(spec, "en-de", data["bin"], tmp_path / "base.pt", "test", SIZES["test"], tmp_path / "hyps.txt",
                  GENERATION, threads=1)
    progress = [r.getMessage() for r in caplog.records if r.name == "mtcue.progress"]
    assert progress[0].startswith("translate en-de test: ") and " of 9 sentences (" in progress[0]
    assert progress[-2].startswith("translate en-de test: 9 of 9 sentences (100%), ")
    assert progress[-1].startswith("translate en-de test: done 9 sentences in ")
