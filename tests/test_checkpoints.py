"""Damaged checkpoints are named and set aside, never a fairseq traceback (issue 13.3)."""
import json
import pickle
import zipfile

import pytest
import torch

from conftest import REPO
from mtcue import config as cfg
from mtcue.cli import main
from mtcue.models.checkpoints import BEST, LAST, CheckpointError, check_checkpoint, checkpoint_problem, recover_checkpoint_dir
from mtcue.plan.models import model_spec
from mtcue.records import RecordError


def save(path, value=1.0):
    torch.save({"model": {"w": torch.full((64, 64), value)}, "extra_state": {"epoch": value}}, path)
    return path


def test_intact_checkpoints_pass(tmp_path):
    assert checkpoint_problem(save(tmp_path / "a.pt")) is None
    legacy = tmp_path / "legacy.pt"
    torch.save({"model": {}}, legacy, _use_new_zipfile_serialization=False)   # torch < 1.6 format
    assert checkpoint_problem(legacy) is None


def test_damaged_checkpoints_are_found(tmp_path):
    path = save(tmp_path / "a.pt")
    data = path.read_bytes()
    (tmp_path / "truncated.pt").write_bytes(data[: len(data) // 2])
    assert "truncated or corrupted" in checkpoint_problem(tmp_path / "truncated.pt")
    # One flipped bit inside the tensor data: the archive still opens, its checksum does not match.
    with zipfile.ZipFile(path) as archive:
        member = next(i for i in archive.infolist() if i.filename.endswith("/data/0"))
    offset = member.header_offset + 30 + len(member.filename.encode()) + len(member.extra) + 100
    flipped = bytearray(data)
    flipped[offset] ^= 0x01
    (tmp_path / "flipped.pt").write_bytes(bytes(flipped))
    assert checkpoint_problem(tmp_path / "flipped.pt") == f"corrupted (checksum error in {member.filename})"
    (tmp_path / "empty.pt").write_bytes(b"")
    assert checkpoint_problem(tmp_path / "empty.pt") == "empty (0 bytes)"
    (tmp_path / "text.pt").write_text("not a checkpoint")
    assert checkpoint_problem(tmp_path / "text.pt").startswith("not a torch checkpoint")
    with pytest.raises(CheckpointError, match=r"truncated\.pt: the init model is truncated or corrupted"):
        check_checkpoint(tmp_path / "truncated.pt", "the init model")
    with pytest.raises(CheckpointError, match=r"none\.pt: the init model does not exist"):
        check_checkpoint(tmp_path / "none.pt", "the init model")


def truncate(path):
    path.write_bytes(path.read_bytes()[:1000])


def test_a_damaged_last_checkpoint_falls_back_to_the_best(tmp_path, caplog):
    save(tmp_path / BEST, 2.0)
    truncate(save(tmp_path / LAST, 5.0))
    recover_checkpoint_dir(tmp_path)
    assert torch.load(tmp_path / LAST)["extra_state"]["epoch"] == 2.0          # a copy of the best
    aside = [p.name for p in tmp_path.glob(f"{LAST}.damaged-*")]
    assert len(aside) == 1 and f"{tmp_path / LAST} is truncated or corrupted" in caplog.text
    assert f"resuming from {tmp_path / BEST} instead" in caplog.text


def test_with_no_intact_checkpoint_training_starts_afresh(tmp_path, caplog):
    truncate(save(tmp_path / BEST))
    truncate(save(tmp_path / LAST))
    recover_checkpoint_dir(tmp_path)
    assert not (tmp_path / LAST).exists() and not (tmp_path / BEST).exists()
    assert len(list(tmp_path.glob("*.damaged-*"))) == 2 and "training starts afresh" in caplog.text


def test_a_damaged_best_checkpoint_alone_is_moved_aside(tmp_path):
    truncate(save(tmp_path / BEST))
    save(tmp_path / LAST, 5.0)
    recover_checkpoint_dir(tmp_path)
    assert not (tmp_path / BEST).exists() and torch.load(tmp_path / LAST)["extra_state"]["epoch"] == 5.0


def test_a_damaged_init_checkpoint_stops_training_before_fairseq_starts(tmp_path, caplog):
    spec = model_spec(cfg.load(REPO / "config" / "config.yaml"), "mtcue", "en-de")
    init = tmp_path / "base" / "checkpoint_best.pt"
    init.parent.mkdir()
    truncate(save(init))
    ckpt = tmp_path / "ck"
    code = main(["train", "--spec", json.dumps(spec), "--direction", "en-de", "--data-bin", str(tmp_path / "bin"),
                 "--context-dir", str(tmp_path / "store"), "--init-checkpoint", str(init),
                 "--checkpoint-dir", str(ckpt), "--out", str(tmp_path / "out.pt"), "--record", str(tmp_path / "r.json"),
                 "--study", "t"])
    assert code == 1
    assert f"{init}: --init-checkpoint (the trained 'base' model) is truncated or corrupted" in caplog.text
    assert not (ckpt / "train.log").exists() and not (tmp_path / "r.json").exists()


def test_a_checkpoint_must_belong_to_the_folder_it_is_used_from(tmp_path):
    """Direction and vocabulary of a checkpoint against the study it sits in (hand-made: 8 dictionary lines
    + fairseq's 4 special symbols = 12 embedding rows)."""
    from argparse import Namespace

    from mtcue.models.checkpoints import check_belongs

    path = tmp_path / "checkpoint_best.pt"
    torch.save({"cfg": {"task": {"source_lang": "en", "target_lang": "de"},
                        "model": Namespace(max_source_positions=256, max_target_positions=1024)},
                "model": {"encoder.embed_tokens.weight": torch.zeros(12, 2),
                          "decoder.embed_tokens.weight": torch.zeros(12, 2)}}, path)
    for lang in ("en", "de"):
        (tmp_path / f"dict.{lang}.txt").write_text("".join(f"w{i} 1\n" for i in range(8)))
    assert check_belongs(path, "en-de", tmp_path) == 256
    with pytest.raises(CheckpointError, match="trained for en-de, but it sits among the de-en models"):
        check_belongs(path, "de-en", tmp_path)
    (tmp_path / "dict.de.txt").write_text("".join(f"w{i} 1\n" for i in range(9)))
    with pytest.raises(CheckpointError, match=r"its decoder reads 12 tokens but .*dict.de.txt has 13"):
        check_belongs(path, "en-de", tmp_path)


# ---- issue 33.1: a checkpoint never runs code on load ----------------------------------------------

class _RunsCode:
    """Unpickling this calls os.system: what a hostile checkpoint_best.pt would hold."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return os.system, (f"touch {self.marker}",)


def hostile_checkpoint(path, marker):
    torch.save({"cfg": {"task": {"source_lang": "en", "target_lang": "de"}},
                "model": {"encoder.embed_tokens.weight": torch.zeros(12, 2)}, "extra_state": _RunsCode(marker)}, path)
    return path


def test_a_checkpoint_whose_pickle_runs_code_is_refused_unrun(tmp_path):
    marker = tmp_path / "ran"
    path = hostile_checkpoint(tmp_path / "checkpoint_best.pt", marker)
    # Without the allow-list the same file runs its code: the test's payload is real.
    torch.load(hostile_checkpoint(tmp_path / "control.pt", tmp_path / "control-ran"), weights_only=False)
    assert (tmp_path / "control-ran").exists()

    problem = checkpoint_problem(path)
    assert problem.startswith("unsafe: its pickle names posix.system, which no checkpoint of this project holds")
    with pytest.raises(CheckpointError, match=r"checkpoint_best\.pt: the model's checkpoint is unsafe: its pickle names"):
        check_checkpoint(path, "the model's checkpoint")
    legacy = tmp_path / "legacy.pt"
    torch.save({"x": _RunsCode(marker)}, legacy, _use_new_zipfile_serialization=False)
    assert checkpoint_problem(legacy).startswith("unsafe: its pickle names posix.system")
    assert not marker.exists()


def test_fairseqs_own_loads_refuse_code_after_the_plugin_is_imported(tmp_path, monkeypatch):
    """fairseq calls torch.load without weights_only (resuming, load_model_ensemble): the plugin must not
    switch torch's safe default off, and must let it read the Namespace fairseq stores."""
    from argparse import Namespace

    from fairseq import checkpoint_utils

    import mtcue.models.plugin  # noqa: F401
    from mtcue.models.checkpoints import load_checkpoint

    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    marker = tmp_path / "ran"
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.system"):
        checkpoint_utils.load_checkpoint_to_cpu(str(hostile_checkpoint(tmp_path / "c.pt", marker)))
    assert not marker.exists()
    torch.save({"args": None, "cfg": {"model": Namespace(arch="transformer")}, "model": {},
                "optimizer_history": [{"criterion_name": "c", "optimizer_name": "adam", "num_updates": 3,
                                       "lr_scheduler_state": {"best": 2.0}}],
                "extra_state": {"train_iterator": {"epoch": 1}}}, tmp_path / "ok.pt")
    load_checkpoint(tmp_path / "ok.pt")  # the project's own safe load must leave fairseq's able to read it
    assert checkpoint_utils.load_checkpoint_to_cpu(str(tmp_path / "ok.pt"))["cfg"]["model"].arch == "transformer"



def train_record(spec: dict) -> dict:
    """A training record as `mtcue train` writes it (the keys records.py requires), naming `spec`."""
    return {"kind": "train", "model": "mtcue", "direction": "en-de", "study": "demo", "spec": spec,
            "params": {"total": 1, "trainable": 1}, "epochs": [], "best_epoch": 1, "best_valid_loss": 1.0,
            "config_hash": "c", "git_commit": "g"}

def test_translate_text_refuses_a_shared_model_folder_whose_checkpoint_runs_code(tmp_path):
    """A model folder as a colleague would share it (checkpoint, training record, SentencePiece model,
    binarised data), its checkpoint made hostile: `mtcue translate-text` names the file and runs nothing."""
    import subprocess
    import sys
    from pathlib import Path

    results = tmp_path / "results"
    folder = results / "models" / "en-de" / "mtcue"
    folder.mkdir(parents=True)
    marker = tmp_path / "ran"
    hostile_checkpoint(folder / "checkpoint_best.pt", marker)
    (results / "records" / "train" / "en-de").mkdir(parents=True)
    (results / "records" / "train" / "en-de" / "mtcue.json").write_text(json.dumps(train_record({"type": "base"})))
    (results / "spm").mkdir()
    (results / "spm" / "en-de.model").write_bytes(b"")
    (results / "bin" / "en-de").mkdir(parents=True)
    run = subprocess.run([str(Path(sys.executable).parent / "mtcue"), "translate-text", "--model-dir", str(folder)],
                         input="Hello.\n", capture_output=True, text=True, cwd=tmp_path,
                         env={**__import__("os").environ, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"})
    assert run.returncode == 1
    assert f"{folder / 'checkpoint_best.pt'}: the model's checkpoint is unsafe: its pickle names posix.system" in run.stderr
    assert not marker.exists()


def test_the_studys_checkpoints_load_with_the_allow_list(tmp_path):
    """What fairseq-train writes (the Namespace of a legacy model's arguments) passes the safe loader."""
    from argparse import Namespace

    from mtcue.models.checkpoints import load_checkpoint

    torch.save({"args": None, "cfg": {"model": Namespace(arch="mtcue", dropout=0.3, layers=[1, 2])},
                "model": {"w": torch.ones(2)}, "extra_state": {"best": 2.5, "train_iterator": {"epoch": 3}}},
               tmp_path / "c.pt")
    state = load_checkpoint(tmp_path / "c.pt")
    assert state["cfg"]["model"].layers == [1, 2] and state["extra_state"]["best"] == 2.5
    assert checkpoint_problem(tmp_path / "c.pt") is None


def test_a_checkpoint_of_another_model_type_than_its_record_is_refused(tmp_path):
    """The training record names the model (and so the context the translator feeds it); a checkpoint of another
    architecture in its folder stops loading with a message, not a traceback deep in fairseq."""
    from argparse import Namespace

    from mtcue.models.translator import TrainedModel

    results = tmp_path / "results"
    folder = results / "models" / "en-de" / "mtcue"
    folder.mkdir(parents=True)
    torch.save({"cfg": {"task": {"source_lang": "en", "target_lang": "de"},
                        "model": Namespace(arch="transformer", max_source_positions=256, max_target_positions=256)},
                "model": {"encoder.embed_tokens.weight": torch.zeros(12, 2),
                          "decoder.embed_tokens.weight": torch.zeros(12, 2)}}, folder / "checkpoint_best.pt")
    (results / "bin" / "en-de").mkdir(parents=True)
    for lang in ("en", "de"):
        (results / "bin" / "en-de" / f"dict.{lang}.txt").write_text("".join(f"w{i} 1\n" for i in range(8)))
    (results / "spm").mkdir()
    (results / "spm" / "en-de.model").write_bytes(b"")
    (results / "records" / "train" / "en-de").mkdir(parents=True)
    record = results / "records" / "train" / "en-de" / "mtcue.json"
    train = train_record({"type": "mtcue", "seed": 1})
    record.write_text(json.dumps(train))
    with pytest.raises(CheckpointError, match=r"checkpoint_best.pt: a transformer checkpoint, but the model.s training "
                                              r"record says mtcue \(arch mtcue\)"):
        TrainedModel.find(folder)
    record.write_text(json.dumps(train_record({"type": "base", "seed": 1})))
    assert TrainedModel.find(folder).max_source_tokens == 256
    # a record without the model's spec, or not a training record at all: named, not a KeyError
    record.write_text(json.dumps({k: v for k, v in train.items() if k != "spec"}))
    with pytest.raises(RecordError, match=r"mtcue.json: the training record names no model spec"):
        TrainedModel.find(folder)
    record.write_text(json.dumps({"spec": {"type": "base"}}))
    with pytest.raises(RecordError, match=r"mtcue.json: record kind None is not one of"):
        TrainedModel.find(folder)
