"""Every file a step writes by name (`--out`, `--csv`, `--md`, `--html`, `--svg`, `--stats`, ...)
goes through one guard (outputs.step_outputs): a step replaces only its own earlier output; anything else is
refused before any work, with nothing changed (docs/safety.md)."""
import argparse
import json

import pytest

from conftest import make_sample
from mtcue import cli, outputs

# Options that name a file a step may write, besides the required ones (all of them are given here).
OPTIONAL_OUTPUTS = {"stats", "films", "summary", "run_ids", "out"}
# The steps that write files by name, and what they write (hand-listed: a step missing here, or writing
# something else, fails the test below).
WRITES = {
    "generate": ["out"], "contrastive-suite": ["out"], "clean": ["output", "stats"],
    "annotate-eamt22": ["output", "stats"], "extract-opensubtitles": ["out", "films", "stats"],
    "opus-synth": ["out/xml/en.zip", "out/xml/ru.zip", "out/xml/en-ru.xml.gz"], "omdb": ["out", "summary"],
    "download": ["out"], "split-corpus": ["out_dir/train.jsonl", "out_dir/valid.jsonl", "out_dir/test.jsonl", "report"],
    "evalset": ["out"], "corpus-stats": ["out"], "spm-train": ["model_file", "model_file.vocab"],
    "spm-encode": ["out_prefix.en", "out_prefix.ru"], "bench-embed-scale": ["out"], "train": ["out", "record"],
    "translate": ["out"], "translate-corpus": ["out"], "memory-growth": ["csv", "svg"], "bench-train-cost": ["out"],
    "score-contrastive": ["out"], "score": ["out"], "attention-agreement": ["out"], "groupings": ["out"], "score-eamt22": ["out"],
    "score-formality": ["out"], "comet": ["out"], "comet-model": ["out"], "context-usage": ["out"],
    **{name: ["csv", "md", "md.html"] for name in ("table", "table-ablation", "table-formality", "table-voita2018",
                                                   "table-shortening", "table-side-information", "table-contrastive",
                                                   "table-context-usage")},
    "figure": ["out"], "figure-style-levels": ["csv", "svg"], "figure-groupings": ["csv", "svg"], "figure4": ["csv", "png"], "track": ["run_ids"],
    "track-study": ["html"], "report": ["out"], "fetch-pretrained": ["folder/manifest.json"],
    "critical-path": ["out"], "style-agreement": ["out"],
}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _argv(name: str, parser: argparse.ArgumentParser, tmp_path) -> list[str]:
    """`name` with every required option and every output option given: paths tmp_path/{dest}, which do
    not exist (a step that read its inputs first would fail on them, not on its outputs)."""
    argv = [name]
    required_groups = [g for g in parser._mutually_exclusive_groups if g.required]
    for action in parser._actions:
        if not action.option_strings and action.nargs in (None, "+"):  # a required positional: a file
            argv.append(str(tmp_path / action.dest))
        if not action.option_strings or action.dest == "help":
            continue
        chosen = any(g._group_actions[0] is action for g in required_groups)
        if not (action.required or chosen or action.dest in {*OPTIONAL_OUTPUTS, "pair"}) or action.nargs == 0:
            continue
        if action.choices:
            value = list(action.choices)[-1]
        elif action.dest in ("direction", "pair"):
            value = "en-ru"
        elif action.dest == "html" and "--md" in parser._option_string_actions:  # a table's, beside its Markdown
            value = str(tmp_path / "md.html")
        elif action.type is not None and action.type not in (str,):
            value = "1"
        else:
            value = str(tmp_path / action.dest)
        argv += [action.option_strings[0], value]
    return argv


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_step_refuses_a_users_file_at_any_of_its_outputs_before_any_work(name, tmp_path, caplog):
    parser = _subparsers()[name]
    argv = _argv(name, parser, tmp_path)
    args = cli._parser().parse_args(argv)
    outputs = [p for p in args.outputs(args) if p is not None]
    expected = [str(tmp_path / w) for w in WRITES[name]]
    assert sorted(map(str, outputs)) == sorted(expected)
    for i, user_file in enumerate(outputs):  # a user's file at one output at a time
        for p in outputs:
            p = type(tmp_path)(p)
            if p.exists():
                p.unlink()
        user_file = type(tmp_path)(user_file)
        user_file.parent.mkdir(parents=True, exist_ok=True)
        user_file.write_text("mine\n")
        before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
        caplog.clear()
        assert cli.main(argv) == 1
        assert f"{name} failed: {user_file}: exists and no mtcue step wrote it; nothing was changed" in caplog.text
        assert user_file.read_text() == "mine\n"
        assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_every_other_step_writes_folders_or_standard_output(tmp_path):
    folder_or_stdout = {"embed", "tags", "token-store", "style-levels", "mask-store", "bench-store", "iwslt22-synth",
                        "binarise", "translate-text", "translate-prompts", "translate-levels", "bench-translate",
                        "count-params", "gpu-hours", "cluster-plan", "readme-results", "rehearsal", "check-config",
                        "ui", "evaluate"}  # folders: outputs.atomic_directory's guard; ui writes nothing (it serves the
    # store); evaluate writes through its tasks, each guarded as its own step
    parsers = _subparsers()
    assert set(parsers) == set(WRITES) | folder_or_stdout
    for name in folder_or_stdout:
        args = cli._parser().parse_args(_argv(name, parsers[name], tmp_path))
        assert list(args.outputs(args)) == [], name


def test_table_never_overwrites_a_file_and_the_html_it_derives(tmp_path, caplog):
    # `mtcue table --kind data --csv notes.csv --md thesis.md` overwrote both and thesis.html, a path it never named
    notes, thesis, html = tmp_path / "notes.csv", tmp_path / "thesis.md", tmp_path / "thesis.html"
    html.write_text("<p>my thesis</p>\n")
    record = tmp_path / "data.json"
    argv = ["table", "--kind", "data", "--records", str(record), "--csv", str(notes), "--md", str(thesis),
            "--html", str(html)]
    assert cli.main(argv) == 1
    assert f"{html}: exists and no mtcue step wrote it" in caplog.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thesis.html"] and html.read_text() == "<p>my thesis</p>\n"


def test_a_table_names_its_html_beside_its_markdown(tmp_path, caplog):
    argv = ["table", "--kind", "data", "--records", str(tmp_path / "data.json"), "--csv", str(tmp_path / "t.csv"),
            "--md", str(tmp_path / "t.md"), "--html", str(tmp_path / "elsewhere.html")]
    assert cli.main(argv) == 1
    assert f"a table writes its HTML rendering beside its Markdown, {tmp_path / 't.html'}" in caplog.text
    assert list(tmp_path.iterdir()) == []


def test_a_step_replaces_its_own_outputs_and_no_other_steps(tmp_path, write_corpus, caplog):
    corpus = write_corpus([make_sample(0)], "test.jsonl")
    record = tmp_path / "data.json"
    stats = ["corpus-stats", "--corpus", str(corpus), "--pair", "en-de", "--source", "synthetic", "--config-hash", "x",
             "--study", "t", "--out", str(record)]
    assert cli.main(stats) == 0
    first = json.loads(record.read_text())
    assert cli.main(stats) == 0  # a rerun replaces its own record
    assert json.loads(outputs.output_record(record).read_text())["step"] == "corpus-stats"
    assert first["samples"] == 1 and json.loads(record.read_text())["samples"] == 1
    # another step may not replace it: the figure would overwrite the record
    caplog.clear()
    assert cli.main(["figure", "--kind", "bleu_gain", "--records", str(record), "--out", str(record)]) == 1
    assert f"{record}: is the output of step 'corpus-stats', not of 'figure'" in caplog.text
    assert json.loads(record.read_text())["samples"] == 1
    # the table of it, twice: its own CSV, Markdown and HTML are replaced
    table = ["table", "--kind", "data", "--records", str(record), "--csv", str(tmp_path / "t.csv"),
             "--md", str(tmp_path / "t.md"), "--html", str(tmp_path / "t.html")]
    assert cli.main(table) == 0 and cli.main(table) == 0
    assert {p.name for p in tmp_path.iterdir() if not p.name.startswith(".")} >= {"t.csv", "t.md", "t.html"}


def test_translate_prompts_never_replaces_the_folder_iwslt22_synth_wrote(tmp_path, caplog):
    # `mtcue iwslt22-synth --out fs` then `mtcue translate-prompts --out fs` deleted the five IWSLT22 files
    run = ["--pair", "en-de", "--docs", "20", "--seed", "1"]
    assert cli.main(["generate", "--split", "test", *run, "--out", str(tmp_path / "raw.jsonl")]) == 0
    assert cli.main(["clean", "--input", str(tmp_path / "raw.jsonl"), "--output", str(tmp_path / "test.jsonl")]) == 0
    fs = tmp_path / "fs"
    assert cli.main(["iwslt22-synth", "--corpus", str(tmp_path / "test.jsonl"), *run, "--out", str(fs)]) == 0
    before = {p.name: p.read_bytes() for p in fs.iterdir()}
    assert len(before) == 6 and json.loads(before[outputs.OWNED_MARKER])["step"] == "iwslt22-synth"
    source = tmp_path / "src.txt"
    source.write_text("Are you ready?\n")
    caplog.clear()
    assert cli.main(["translate-prompts", "--model-dir", str(tmp_path / "no-model"), "--source", str(source),
                     "--prompts", "{}", "--out", str(fs)]) == 1
    assert f"translate-prompts failed: {fs}: is the output of step 'iwslt22-synth', not of 'translate-prompts'; " \
           "nothing was changed" in caplog.text
    assert {p.name: p.read_bytes() for p in fs.iterdir()} == before
    assert cli.main(["iwslt22-synth", "--corpus", str(tmp_path / "test.jsonl"), *run, "--out", str(fs)]) == 0
    assert {p.name: p.read_bytes() for p in fs.iterdir()} == before  # its own step replaces it, the same again
