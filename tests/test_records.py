import json
import os
import subprocess

import pytest

from mtcue import records
from mtcue.records import (
    RecordError,
    config_hash,
    git_commit,
    load_records,
    read_record,
    write_record,
)


def score_record(**overrides):
    return {
        "kind": "score", "model": "mtcue", "direction": "en-de", "split": "test", "study": "demo",
        "bleu": 31.5, "bleu_signature": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0",
        "phenomena": {"all": {"correct": 3, "incorrect": 1, "ignored": 0, "accuracy": 0.75}},
        "n_segments": 4, "hyp_sha256": "ab" * 32, "config_hash": "0123456789ab",
        "git_commit": "unknown", "segment_stats": [[3, 4, 2, 1, 0, 0, 3, 2, 1, 0]],
        **overrides,
    }


def train_record(**overrides):
    return {
        "kind": "train", "model": "base", "direction": "en-de", "study": "demo",
        "params": {"total": 66_000_000, "trainable": 66_000_000},
        "epochs": [
            {"epoch": 1, "train_loss": 5.0, "valid_loss": 4.5, "wall_s": 10.0},
            {"epoch": 2, "train_loss": 4.0, "valid_loss": 4.1, "wall_s": 9.5},
        ],
        "best_epoch": 2, "best_valid_loss": 4.1, "config_hash": "0123456789ab", "git_commit": "unknown",
        **overrides,
    }


def test_config_hash_ignores_key_order_and_tracks_values():
    a = {"models": {"base": {"lr": 5e-4, "layers": 6}}, "seed": 1}
    b = {"seed": 1, "models": {"base": {"layers": 6, "lr": 5e-4}}}
    assert config_hash(a) == config_hash(b)
    assert len(config_hash(a)) == 12 and int(config_hash(a), 16) >= 0
    assert config_hash(a) != config_hash({**a, "seed": 2})
    assert config_hash(a) != config_hash({"models": {"base": {"lr": 5e-4, "layers": 7}}, "seed": 1})


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def test_git_commit_outside_git_is_unknown(tmp_path):
    assert git_commit(tmp_path) == "unknown"


def test_git_commit_marks_dirty_tracked_files_only(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("1")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-qm", "init")
    head = git_commit(tmp_path)
    assert len(head) == 40 and not head.endswith("-dirty")
    (tmp_path / "untracked.txt").write_text("x")
    assert git_commit(tmp_path) == head
    (tmp_path / "a.txt").write_text("2")
    assert git_commit(tmp_path) == f"{head}-dirty"


def test_record_round_trip_adds_schema_and_created(tmp_path):
    path = tmp_path / "records" / "demo" / "score" / "en-de" / "mtcue.test.json"
    write_record(path, score_record())
    back = read_record(path, "score")
    assert back == {**score_record(), "schema_version": records.SCHEMA_VERSION, "created": back["created"]}
    assert back["created"].endswith("+00:00")
    assert os.listdir(path.parent) == ["mtcue.test.json"]  # no temp file left behind
    # One top-level key per line: per-segment statistics do not become one line per number.
    assert len(path.read_text().splitlines()) == len(back) + 2


def test_write_record_keeps_given_created_time(tmp_path):
    write_record(tmp_path / "r.json", score_record(created="2023-07-01T00:00:00+00:00"))
    assert read_record(tmp_path / "r.json")["created"] == "2023-07-01T00:00:00+00:00"


def test_read_record_names_file_and_missing_key(tmp_path):
    path = tmp_path / "bad.json"
    rec = score_record()
    del rec["bleu_signature"]
    path.write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"bad\.json.*'bleu_signature'"):
        read_record(path)


def test_read_record_checks_nested_train_keys(tmp_path):
    rec = train_record()
    del rec["epochs"][1]["wall_s"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=r"t\.json.*'epochs\[1\]\.wall_s'"):
        read_record(path)


def test_read_record_rejects_other_kind_and_bad_json(tmp_path):
    write_record(tmp_path / "t.json", train_record())
    with pytest.raises(RecordError, match="expected a score record"):
        read_record(tmp_path / "t.json", "score")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(RecordError, match="broken.json"):
        read_record(tmp_path / "broken.json")
    (tmp_path / "latin1.json").write_bytes(b'{"kind": "train",\n "model": "b\xe4se"}')
    with pytest.raises(RecordError, match=r"latin1\.json:2: not UTF-8"):
        read_record(tmp_path / "latin1.json")


def test_record_kind_is_required(tmp_path):
    rec = score_record()
    del rec["kind"]
    with pytest.raises(RecordError, match=r"r\.json: record kind None is not one of \['attention', 'comet', 'context_usage', 'contrastive', 'data', 'eamt22', 'formality', 'groupings', 'score', 'train'\]"):
        write_record(tmp_path / "r.json", rec)


def test_a_kind_that_is_no_name_is_named(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps(score_record(kind=["score"])))
    with pytest.raises(RecordError, match=r"r\.json: record kind \['score'\] is not one of"):  # TypeError before
        read_record(tmp_path / "r.json")


def test_write_record_refuses_invalid_record(tmp_path):
    rec = train_record()
    del rec["best_epoch"]
    with pytest.raises(RecordError, match="'best_epoch'"):
        write_record(tmp_path / "t.json", rec)
    assert not (tmp_path / "t.json").exists()


def test_load_records_from_directory_and_paths(tmp_path):
    write_record(tmp_path / "score" / "en-de" / "mtcue.test.json", score_record())
    write_record(tmp_path / "score" / "en-de" / "base.test.json", score_record(model="base"))
    write_record(tmp_path / "train" / "en-de" / "base.json", train_record())
    scores = load_records(tmp_path, "score")
    assert [r["model"] for r in scores] == ["base", "mtcue"]
    assert [r["kind"] for r in load_records(tmp_path, "train")] == ["train"]
    assert len(load_records([tmp_path / "train" / "en-de" / "base.json"], "train")) == 1
    with pytest.raises(RecordError, match="expected a score record"):
        load_records([tmp_path / "train" / "en-de" / "base.json"], "score")


def test_a_record_replaces_an_earlier_record(tmp_path):
    # a user's file or a folder at a step's --out: tests/test_outputs.py
    path = tmp_path / "r.json"
    write_record(path, score_record())
    write_record(path, score_record(model="base"))  # a rerun replaces its own record
    assert read_record(path)["model"] == "base"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # no temporary file left



@pytest.mark.parametrize("record, message", [
    (train_record(params=5), r"t\.json: train record key 'params' must be an object, got 5"),
    (train_record(epochs=[1]), r"t\.json: train record key 'epochs\[0\]' must be an object .*got 1"),
    (train_record(epochs=1), r"t\.json: train record key 'epochs' must be a list, got 1"),
    (train_record(params={"total": "66M", "trainable": 1}), r"key 'params\.total' must be a whole number, got '66M'"),
    (train_record(epochs=[{"epoch": 1, "train_loss": "low", "valid_loss": 4.5, "wall_s": 10.0}]),
     r"key 'epochs\[0\]\.train_loss' must be a number or null, got 'low'"),
    (train_record(best_epoch=True), r"key 'best_epoch' must be a whole number or null, got True"),
    (train_record(model=None), r"key 'model' must be a string, got None"),
    (score_record(bleu="high"), r"t\.json: score record key 'bleu' must be a number, got 'high'"),
    (score_record(phenomena=[]), r"key 'phenomena' must be an object, got \[\]"),
])
def test_read_record_names_a_key_of_the_wrong_type(tmp_path, record, message):
    """Tables and tracking failed on these with a traceback far from the record (TypeError, AttributeError)."""
    (tmp_path / "t.json").write_text(json.dumps(record))
    with pytest.raises(RecordError, match=message):
        read_record(tmp_path / "t.json")


def test_a_record_of_the_wrong_type_is_an_error_of_the_step_not_a_traceback(tmp_path, caplog):
    from mtcue.cli import main

    (tmp_path / "t.json").write_text(json.dumps(train_record(params=5)))
    assert main(["table", "--kind", "models", "--records", str(tmp_path / "t.json"), "--csv", str(tmp_path / "m.csv"),
                 "--md", str(tmp_path / "m.md"), "--html", str(tmp_path / "m.html")]) == 1
    assert "t.json: train record key 'params' must be an object, got 5" in caplog.text
    assert not (tmp_path / "m.csv").exists()


def test_a_cut_or_too_deeply_nested_record_is_named(tmp_path):
    (tmp_path / "cut.json").write_text(json.dumps(score_record(), indent=1)[:200])
    with pytest.raises(RecordError, match=r"cut\.json:\d+: not valid JSON .*is the file complete"):
        read_record(tmp_path / "cut.json")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(RecordError, match=r"deep\.json:1: JSON nested too deeply to read"):
        read_record(tmp_path / "deep.json")
