"""The `mtcue` command line: steps fail fast with a message naming the file, never a traceback."""
import json

import pytest

from conftest import REPO, make_sample
from mtcue.cli import main


def test_score_with_mismatched_files_names_both_and_writes_nothing(tmp_path, write_corpus, caplog):
    corpus = write_corpus([make_sample(0), make_sample(1)], "test.jsonl")
    hyps = tmp_path / "hyps.txt"
    hyps.write_text("Hast du den Brief gesehen?\n")
    out = tmp_path / "record.json"
    code = main(["score", "--hyps", str(hyps), "--corpus", str(corpus), "--direction", "en-de", "--model", "base",
                 "--split", "test", "--study", "t", "--config-hash", "x", "--out", str(out)])
    assert code == 1 and not out.exists()
    assert "score failed" in caplog.text and "hyps.txt" in caplog.text and "test.jsonl" in caplog.text


def test_score_writes_a_record(tmp_path, write_corpus):
    corpus = write_corpus([make_sample(0)], "test.jsonl")
    hyps = tmp_path / "hyps.txt"
    hyps.write_text("Hast du den Brief gesehen?\n")
    out = tmp_path / "record.json"
    assert main(["score", "--hyps", str(hyps), "--corpus", str(corpus), "--direction", "en-de", "--model", "base",
                 "--split", "test", "--study", "t", "--config-hash", "abc", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert round(record["bleu"], 6) == 100.0 and record["kind"] == "score" and record["config_hash"] == "abc"


def test_wrong_config_is_a_clear_error(tmp_path, caplog):
    bad = tmp_path / "c.yaml"
    bad.write_text((REPO / "config" / "config.yaml").read_text() + "\nlearning_rate: 3\n")
    assert main(["count-params", "--config", str(bad)]) == 1
    assert "c.yaml: invalid configuration" in caplog.text and "learning_rate" in caplog.text


def test_translating_an_empty_file_or_without_a_model_is_a_clear_error(tmp_path, caplog):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["translate-corpus", "--model-dir", str(tmp_path), "--corpus", str(empty), "--out", str(tmp_path / "h")]) == 1
    assert "empty.jsonl: no lines to translate" in caplog.text
    (tmp_path / "src.txt").write_text("Hello.\n")
    assert main(["translate-prompts", "--model-dir", str(tmp_path), "--source", str(tmp_path / "src.txt"),
                 "--prompts", "{}", "--out", str(tmp_path / "p")]) == 1
    assert "no checkpoint_best.pt: not a trained model's folder" in caplog.text and not (tmp_path / "p").exists()


def test_generate_is_deterministic_from_the_command_line(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (a, b):
        assert main(["generate", "--pair", "en-pl", "--split", "valid", "--docs", "3", "--seed", "7",
                     "--out", str(out)]) == 0
    assert a.read_bytes() == b.read_bytes() and a.read_text().count("\n") > 3


def test_a_bad_level_names_the_option(tmp_path, capsys):
    source = tmp_path / "src.txt"
    source.write_text("Hello.\n")
    for levels in ("a", "1,x", "0,6", ""):
        with pytest.raises(SystemExit) as stop:
            main(["translate-levels", "--model-dir", str(tmp_path), "--source", str(source), "--levels", levels,
                  "--out", str(tmp_path / "out")])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert f"argument --levels: {levels!r}: comma-separated style levels 1..5, e.g. 1,2,3,4,5" in err, err
        assert "invalid literal" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.txt"]


@pytest.mark.parametrize("step", ["translate-prompts", "translate-levels", "translate-corpus"])
def test_a_misspelt_generation_key_is_reported_before_the_model_loads(step, tmp_path, monkeypatch, caplog):
    from mtcue.models import translate_text

    def load(*args, **kwargs):
        raise AssertionError("the model was loaded before the settings were checked")

    monkeypatch.setattr(translate_text.Translator, "load", load)
    source = tmp_path / "src.txt"
    source.write_text("Hello.\n")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps(make_sample(0)) + "\n")
    given = {"translate-prompts": ["--source", str(source), "--prompts", "{}"],
             "translate-levels": ["--source", str(source), "--levels", "1,5"],
             "translate-corpus": ["--corpus", str(corpus)]}[step]
    out = tmp_path / "out"
    assert main([step, "--model-dir", str(tmp_path), *given, "--generation", '{"beem": 4}', "--out", str(out)]) == 1
    assert f"{step} failed: --generation: Additional properties are not allowed ('beem' was unexpected)" in caplog.text
    assert not out.exists()


def test_every_threads_option_refuses_fewer_than_one(capsys):
    """`--threads 0` went on to torch.set_num_threads or fairseq (a traceback, or torch's default silently):
    every step's threads option is refused below 1 where it is read."""
    from mtcue.cli import _parser

    steps = _parser()._subparsers._group_actions[0].choices
    taken = sorted((name, option) for name, step in steps.items() for action in step._actions
                   for option in action.option_strings if option.endswith("threads"))
    assert [name for name, _ in taken] == sorted(
        ["bench-embed-scale", "bench-embed-scale", "bench-train-cost", "context-usage", "memory-growth",
         "score-contrastive", "train", "translate", "translate-corpus", "translate-levels", "translate-prompts",
         "translate-text"])
    for name, option in taken:
        with pytest.raises(SystemExit) as stopped:
            main([name, option, "0"])
        assert stopped.value.code == 2
        assert f"argument {option}: '0' is not a whole number of at least 1" in capsys.readouterr().err, name
