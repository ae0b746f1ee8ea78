"""Training and translation wrappers: fairseq output parsing and checkpoint staleness."""
import json

import pytest

from conftest import REPO
from mtcue.models.train import parse_fairseq_log, prepare_checkpoint_dir
from mtcue.models.translate import parse_generate_output


def test_parse_fairseq_log_per_epoch():
    lines = (REPO / "tests" / "data" / "fairseq_train_output.txt").read_text().splitlines()
    epochs = parse_fairseq_log(lines)
    assert [e["epoch"] for e in epochs] == [1, 2]
    assert epochs[0] == {"epoch": 1, "train_loss": 6.331, "valid_loss": 4.135, "wall_s": 2.0, "updates": 11,
                         "sentences_per_update": 272.7}
    assert epochs[1]["valid_loss"] == 3.166 and epochs[1]["wall_s"] == 1.0 and epochs[1]["updates"] == 11


def test_resumed_log_keeps_last_entry_per_epoch():
    lines = (REPO / "tests" / "data" / "fairseq_train_output.txt").read_text().splitlines()
    valid2 = next(line for line in lines if '"epoch": 2, "valid_loss"' in line)
    epochs = parse_fairseq_log(lines + [valid2.replace('"valid_loss": "3.166"', '"valid_loss": "3.000"')])
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
    with pytest.raises(RuntimeError, match="returned 2 hypotheses for 3 samples"):
        parse_generate_output(out, 3)
