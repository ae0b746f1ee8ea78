"""Training and translation wrappers: fairseq output parsing and checkpoint staleness."""
import json

import pytest

from conftest import REPO
from mtcue.data.prepare import binarised_size
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
