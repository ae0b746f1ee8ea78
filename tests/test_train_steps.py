"""Training and translation wrappers: fairseq output parsing and checkpoint staleness."""
import json
import re
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO
from mtcue.data.prepare import binarised_size
from mtcue.models.train import parse_fairseq_log, prepare_checkpoint_dir
from mtcue.models.translate import parse_generate_output
from mtcue.study import ConfigError


def test_parse_fairseq_log_per_epoch():
    lines = (REPO / "tests" / "data" / "fairseq_train_output.txt").read_text().splitlines()
    epochs = parse_fairseq_log(lines)["epochs"]
    assert [e["epoch"] for e in epochs] == [1, 2]
    assert epochs[0] == {"epoch": 1, "train_loss": 6.331, "valid_loss": 4.135, "wall_s": 2.0, "updates": 11,
                         "sentences_per_update": 272.7}
    assert epochs[1]["valid_loss"] == 3.166 and epochs[1]["wall_s"] == 1.0 and epochs[1]["updates"] == 11


def test_resumed_log_keeps_last_entry_per_epoch():
    lines = (REPO / "tests" / "data" / "fairseq_train_output.txt").read_text().splitlines()
    valid2 = next(line for line in lines if '"epoch": 2, "valid_loss"' in line)
    epochs = parse_fairseq_log(lines + [valid2.replace('"valid_loss": "3.166"', '"valid_loss": "3.000"')])["epochs"]
    assert len(epochs) == 2 and epochs[1]["valid_loss"] == 3.0


def test_checkpoint_dir_of_another_spec_is_moved_aside(tmp_path):
    ckpt = tmp_path / "ck"
    prepare_checkpoint_dir(ckpt, {"lr": 1})
    (ckpt / "checkpoint_last.pt").write_text("old")
    prepare_checkpoint_dir(ckpt, {"lr": 1})                       # same spec: resume in place
    assert (ckpt / "checkpoint_last.pt").exists()
    prepare_checkpoint_dir(ckpt, {"lr": 2})                       # changed spec: never resume
    assert not (ckpt / "checkpoint_last.pt").exists()
    assert json.loads((ckpt / "spec.json").read_text()) == {"lr": 2}
    stale = [p for p in tmp_path.iterdir() if p.name.startswith("ck.stale-")]
    assert len(stale) == 1 and (stale[0] / "checkpoint_last.pt").read_text() == "old"


def test_unknown_files_in_checkpoint_dir_stop_training(tmp_path):
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "checkpoint_last.pt").write_text("?")
    with pytest.raises(RuntimeError, match="no spec.json"):
        prepare_checkpoint_dir(tmp_path / "ck", {"lr": 1})


def test_generate_output_is_put_back_in_corpus_order():
    out = "S-1\tb\nH-1\t-0.1\tB\nD-1\t-0.1\tZweiter Satz.\nD-0\t-0.2\tErster Satz.\nP-0\t-0.1\n"
    assert parse_generate_output(out, 2) == ["Erster Satz.", "Zweiter Satz."]
    with pytest.raises(RuntimeError, match=r"returned 2 hypotheses for 3 samples \(missing ids: \[2\]"):
        parse_generate_output(out, 3)
    with pytest.raises(RuntimeError, match=r"returned 2 hypotheses for 1 samples \(missing ids: \[\], unexpected ids: \[1\]"):
        parse_generate_output(out, 1)


def _binarised_split(data_bin, split, n):
    """A fairseq mmap index of n sentences, written by fairseq's own builder."""
    import numpy as np
    import torch
    from fairseq.data.indexed_dataset import MMapIndexedDatasetBuilder

    data_bin.mkdir(exist_ok=True)
    prefix = data_bin / f"{split}.en-de.en"
    builder = MMapIndexedDatasetBuilder(f"{prefix}.bin", dtype=np.uint16)
    for i in range(n):
        builder.add_item(torch.tensor([4 + i % 3, 2]))
    builder.finalize(f"{prefix}.idx")


def test_binarised_size_reads_fairseqs_index(tmp_path):
    _binarised_split(tmp_path, "test", 7)
    assert binarised_size(tmp_path, "en-de", "test") == (7, tmp_path / "test.en-de.en.idx")
    with pytest.raises(FileNotFoundError, match=r"valid\.en-de\.en\.idx: no binarised valid split"):
        binarised_size(tmp_path, "en-de", "valid")


def test_translating_a_split_with_another_splits_corpus_names_both_files(tmp_path, write_corpus, caplog):
    from conftest import make_sample
    from mtcue.cli import main

    _binarised_split(tmp_path / "bin", "test", 3)
    corpus = write_corpus([make_sample(i) for i in range(2)], "valid.jsonl")
    spec = json.dumps({"model": "base", "type": "base", "seed": 1})
    code = main(["translate", "--spec", spec, "--direction", "en-de", "--data-bin", str(tmp_path / "bin"),
                 "--checkpoint", str(tmp_path / "none.pt"), "--split", "test", "--corpus", str(corpus),
                 "--out", str(tmp_path / "hyps.txt")])
    assert code == 1 and not (tmp_path / "hyps.txt").exists()
    assert (f"the binarised test split ({tmp_path / 'bin' / 'test.en-de.en.idx'}) has 3 sentences but the corpus "
            f"{corpus} has 2") in caplog.text
    # With the matching corpus, a damaged model checkpoint is named before fairseq-generate starts.
    corpus = write_corpus([make_sample(i) for i in range(3)], "test.jsonl")
    (tmp_path / "model.pt").write_bytes(b"PK\x03\x04 cut short")
    code = main(["translate", "--spec", spec, "--direction", "en-de", "--data-bin", str(tmp_path / "bin"),
                 "--checkpoint", str(tmp_path / "model.pt"), "--split", "test", "--corpus", str(corpus),
                 "--out", str(tmp_path / "hyps.txt")])
    assert code == 1 and f"{tmp_path / 'model.pt'}: the model's checkpoint is truncated or corrupted" in caplog.text


@pytest.fixture
def berlin(monkeypatch):
    """Local time is Central European (UTC+1 in November), as on a cluster in Germany."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _line(clock, stage, **stats):
    return f"2026-11-22 {clock} | INFO | {stage} | {json.dumps({k: str(v) for k, v in stats.items()})}"


def _epoch(clock, epoch, loss, wall, updates):
    """fairseq's two summary lines of an epoch: wall time and updates are cumulative counters."""
    return [_line(clock, "valid", epoch=epoch, valid_loss=loss - 0.5),
            _line(clock, "train", epoch=epoch, train_loss=loss, train_bsz=35.0, train_wall=wall,
                  train_num_updates=updates)]


def _loaded(clock, epoch, updates):
    return f"2026-11-22 {clock} | INFO | fairseq.trainer | Loaded checkpoint ck/checkpoint_last.pt (epoch {epoch} @ {updates} updates)"


def _fresh(clock):
    return f"2026-11-22 {clock} | INFO | fairseq.trainer | No existing checkpoint found ck/checkpoint_last.pt"


def test_history_of_a_training_killed_and_resumed_keeps_every_epoch(berlin):
    first = ["2026-11-22 10:00:00 | INFO | fairseq_cli.train | Namespace(...)", _fresh("10:00:02"),
             *_epoch("10:00:05", 1, 8.0, 3, 34), *_epoch("10:00:07", 2, 7.0, 5, 68), *_epoch("10:00:09", 3, 6.0, 7, 102),
             _line("10:00:10", "valid", epoch=4, valid_loss=9.9)]               # killed during epoch 4
    # fairseq resets its wall clock when it resumes at an epoch boundary; updates go on.
    second = [_loaded("11:30:04", 4, 102), *_epoch("11:30:07", 4, 5.5, 3, 136), *_epoch("11:30:09", 5, 5.0, 5, 170)]
    history = parse_fairseq_log(first + second)
    assert [(e["epoch"], e["train_loss"], e["valid_loss"], e["wall_s"], e["updates"]) for e in history["epochs"]] == [
        (1, 8.0, 7.5, 3.0, 34), (2, 7.0, 6.5, 2.0, 34), (3, 6.0, 5.5, 2.0, 34), (4, 5.5, 5.0, 3.0, 34),
        (5, 5.0, 4.5, 2.0, 34)]
    # Local Berlin times, UTC in the record: the first line of the first launch, the last epoch's end.
    assert history["started"] == "2026-11-22T09:00:00+00:00"
    assert history["finished"] == "2026-11-22T10:30:09+00:00"


def test_history_after_falling_back_to_an_earlier_checkpoint_or_starting_afresh(berlin):
    five = [_fresh("10:00:00"), *(line for e in range(1, 6) for line in _epoch(f"10:00:0{e}", e, 9.0 - e, 2 * e, 34 * e))]
    # Resumed from the best checkpoint, of epoch 2: epochs 3-5 are trained again, then stopped early at 4.
    redone = parse_fairseq_log(five + [_loaded("11:00:00", 3, 68), *_epoch("11:00:02", 3, 4.0, 2, 102),
                                       *_epoch("11:00:04", 4, 3.0, 4, 136)])
    assert [(e["epoch"], e["train_loss"], e["wall_s"]) for e in redone["epochs"]] == [
        (1, 8.0, 2.0), (2, 7.0, 2.0), (3, 4.0, 2.0), (4, 3.0, 2.0)]
    assert redone["started"] == "2026-11-22T09:00:00+00:00" and redone["finished"] == "2026-11-22T10:00:04+00:00"
    # No checkpoint left: the history starts again with that launch.
    afresh = parse_fairseq_log(five + [_fresh("12:00:00"), *_epoch("12:00:03", 1, 8.5, 3, 34)])
    assert [(e["epoch"], e["train_loss"], e["wall_s"]) for e in afresh["epochs"]] == [(1, 8.5, 3.0)]
    assert afresh["started"] == "2026-11-22T11:00:00+00:00"


def test_a_resume_inside_an_epoch_continues_the_restored_counters():
    lines = [_fresh("10:00:00"), *_epoch("10:00:02", 1, 8.0, 3, 34), _loaded("10:05:00", 2, 50),
             *_epoch("10:05:02", 2, 7.0, 6, 68)]
    assert [(e["wall_s"], e["updates"]) for e in parse_fairseq_log(lines)["epochs"]] == [(3.0, 34), (3.0, 34)]


def test_the_training_log_keeps_every_line_when_the_job_is_killed(tmp_path):
    # A stand-in for fairseq-train that logs two epochs, then hangs until the job is killed.
    fake = "print('| train | epoch 1', flush=True); print('| train | epoch 2', flush=True); import time; time.sleep(60)"
    job = (f"import sys; from pathlib import Path; from mtcue.models.train import run_logged; "
           f"run_logged([sys.executable, '-c', {fake!r}], {{}}, Path({str(tmp_path / 'train.log')!r}))")
    proc = subprocess.Popen([sys.executable, "-c", job], stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 600  # a busy machine is slow; this only waits
        while time.monotonic() < deadline and "epoch 2" not in _text(tmp_path / "train.log"):
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)   # as a time limit kills the job: no chance to flush
        proc.wait()
    assert _text(tmp_path / "train.log").splitlines() == ["| train | epoch 1", "| train | epoch 2"]


def _text(path):
    return path.read_text() if path.exists() else ""


def _binarised(folder, direction, split, lengths):
    """A binarised split whose line i has lengths[i] = (source, target) pieces."""
    import torch
    from fairseq.data.indexed_dataset import MMapIndexedDatasetBuilder

    for side, lang in enumerate(direction.split("-")):
        prefix = folder / f"{split}.{direction}.{lang}"
        builder = MMapIndexedDatasetBuilder(f"{prefix}.bin")
        for pair in lengths:
            builder.add_item(torch.full((pair[side],), 4, dtype=torch.int32))
        builder.finalize(f"{prefix}.idx")


def test_a_line_longer_than_a_batch_is_refused_before_training(tmp_path):
    from mtcue.models.train import check_lines_fit

    _binarised(tmp_path, "en-de", "train", [(5, 6), (30, 70), (64, 64)])
    _binarised(tmp_path, "en-de", "valid", [(3, 3)])
    check_lines_fit(tmp_path, "en-de", 70)  # fairseq batches a line of exactly max_tokens
    with pytest.raises(ValueError, match=r"train line 2 is 70 pieces long, more than training.max_tokens=64"):
        check_lines_fit(tmp_path, "en-de", 64)
    _binarised(tmp_path, "en-de", "valid", [(3, 3), (3, 99)])
    with pytest.raises(ValueError, match=r"valid line 2 is 99 pieces"):
        check_lines_fit(tmp_path, "en-de", 70)


def test_a_line_longer_than_the_model_reads_is_refused_though_it_fits_a_batch(tmp_path):
    from mtcue.config import validate
    from mtcue.models.train import check_lines_fit

    _binarised(tmp_path, "en-de", "train", [(5, 6), (1101, 900)])
    _binarised(tmp_path, "en-de", "valid", [(3, 3)])
    with pytest.raises(ValueError, match=r"train line 2 is 1101 pieces long, more than the 1024 positions the model "
                                         r"reads: lower clean.max_chars"):
        check_lines_fit(tmp_path, "en-de", 2048)
    _binarised(tmp_path, "en-de", "train", [(5, 6), (1024, 900)])
    check_lines_fit(tmp_path, "en-de", 2048)  # exactly the positions: fairseq takes it
    with pytest.raises(ConfigError, match="clean.max_chars: 1001 is greater than the maximum of 1000"):
        validate({"clean": {"max_chars": 1001}})


def test_a_damaged_spec_of_a_checkpoint_folder_names_it_and_moves_nothing(tmp_path):
    ckpt = tmp_path / "ck"
    ckpt.mkdir()
    (ckpt / "spec.json").write_text('{"lr": ')
    (ckpt / "checkpoint_last.pt").write_bytes(b"weights")
    with pytest.raises(RuntimeError, match=re.escape(f"{ckpt / 'spec.json'}:1: not valid JSON") + ".*" +
                       re.escape(f"(the spec of the checkpoints in {ckpt}: unknown, so they are neither resumed nor "
                                 "moved aside; move that folder away yourself")):
        prepare_checkpoint_dir(ckpt, {"lr": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"] and (ckpt / "checkpoint_last.pt").read_bytes() == \
        b"weights"
