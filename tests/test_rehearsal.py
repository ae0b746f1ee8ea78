"""The rehearsal of the paper's study: its override, its slice, its miniature sources (read back by the
project's own readers of each official format), the OMDb stand-in, the summary, and a slice run end to end."""
import json
import re
import zipfile

import pytest

from conftest import REPO
from mtcue.config import read_yaml, validate
from mtcue.corpus import read_corpus
from mtcue.data import sources
from mtcue.data.contrastive_suites import voita2019
from mtcue.data.evalsets import contrapro, eamt22, iwslt22, lopes
from mtcue.data.omdb import Client, OmdbError, Settings
from mtcue.data.splits import heldout_films
from mtcue.rehearsal.configs import load_plan, merge, override, slice_study
from mtcue.rehearsal.mirror import build_sources
from mtcue.rehearsal.run import failures, job_stats, rehearse, report_outputs, run_failures
from mtcue.rehearsal.stand_ins import OMDB_KEY, serve_omdb
from mtcue.suites import read_suite

PAPER = REPO / "config" / "paper.yaml"
PLAN = REPO / "config" / "rehearsal.yaml"
SLICE = REPO / "tests" / "data" / "rehearsal_slice.yaml"


def rehearsal_config(study=None):
    study = study or read_yaml(PAPER)
    return validate(merge(study, override(study, load_plan(PLAN))))


def test_the_override_changes_sizes_and_stand_ins_only():
    paper, plan = read_yaml(PAPER), load_plan(PLAN)
    config, validated = rehearsal_config(), validate(paper)
    for name, entry in paper["models"].items():
        mine, theirs = config["models"][name], validated["models"][name]
        # type, parent, context encoder choice and every arch key the plan does not name: the paper's
        assert {k: v for k, v in mine.items() if k not in ("arch", "training", "context_encoder",
                                                           "context_encoder_per_direction")} == \
            {k: v for k, v in theirs.items() if k not in ("arch", "training", "context_encoder",
                                                          "context_encoder_per_direction")}
        for key, value in entry.get("arch", {}).items():
            assert mine["arch"][key] == plan["every_model"]["arch"].get(key, value), (name, key)
    assert config["models"]["base_pm"]["arch"]["encoder_layers"] == 10  # depth is the paper's
    models = override(paper, plan)["models"]  # an arch key only where the model has it
    assert "context_ffn_dim" not in models["base"]["arch"] and models["mtcue"]["arch"]["context_ffn_dim"] == 64
    assert config["models"]["si_output_layer_h256"]["arch"]["side_dim"] == 256
    base = config["models"]["base"]["training"]
    assert (base["lr"], base["max_epoch"]) == (0.0005, 1)
    assert config["experiments"] == validate(paper)["experiments"]
    assert config["context"]["encoder"] == "all-MiniLM-L6-v2"
    assert set(config["context"]["encoder_per_direction"].values()) == {"all-MiniLM-L6-v2"}
    assert config["evaluation"]["comet"] == {**validate(paper)["evaluation"]["comet"], "model": "rehearsal-stand-in"}


def test_a_slice_keeps_its_directions_and_replaces_the_keys_it_names():
    study = slice_study(read_yaml(PAPER), read_yaml(SLICE))
    config = rehearsal_config(study)
    assert config["directions"] == ["en-de", "en-pl"]
    experiments = config["experiments"]
    assert (experiments["ablation"]["directions"], experiments["voita2018"]["directions"],
            experiments["fewshot"]["directions"], experiments["formality"]["directions"]) == \
        (["en-de"], ["en-de"], ["en-pl"], ["en-de"])
    assert list(experiments["ablation"]["rows"].values()) == ["mtcue", "mtcue_no_context_encoder",
                                                                "mtcue_discrete", "mtcue_random_context", "base"]
    assert experiments["fewshot"]["baseline"] == "base"  # a key the slice does not name: the paper's
    assert experiments["voita2018"]["random_test"] == ["voita_context"]
    assert (experiments["style"]["directions"], experiments["style"]["models"],
            experiments["style"]["levels_from"]) == (["en-de"], ["style_token", "style_dim"], "address")
    assert config["evaluation"]["contrastive"]["suites"] == {"en-de": ["contrapro"]}
    assert config["models"] == rehearsal_config()["models"] | {
        "novotney_cue": {**rehearsal_config()["models"]["novotney_cue"], "context_encoder_per_direction": {}}}
    with pytest.raises(ValueError, match="s.yaml: en-xx not among the study's directions"):
        slice_study(read_yaml(PAPER), {"directions": ["en-xx"]}, "s.yaml")
    with pytest.raises(ValueError, match="s.yaml: a slice holds directions and experiments only, not models"):
        slice_study(read_yaml(PAPER), {"models": {}}, "s.yaml")


@pytest.mark.parametrize("slice_text, message", [
    ("- en-de\n", r"s\.yaml: a slice is a mapping of directions and experiments, got \['en-de'\]"),
    ("directions: en-de\n", r"s\.yaml: directions must list the directions kept, e\.g\. \[en-de, en-pl\], got 'en-de'"),
    ("directions: [1]\n", r"s\.yaml: directions must list the directions kept"),
    ("experiments: [quality]\n", r"s\.yaml: experiments must be a mapping .*got \['quality'\]"),
    ("experiments: {quality: [base]}\n", r"s\.yaml: experiments\.quality must be a mapping .*got \['base'\]"),
    ("1: 2\n", r"s\.yaml:1: key 1 is not text"),  # refused as it is read (mtcue.yaml_loader)
])
def test_a_slice_of_the_wrong_types_is_named(tmp_path, caplog, slice_text, message):
    """Each was a traceback (AttributeError, TypeError) or, for directions: en-de, a slice of no direction."""
    from mtcue import cli

    (tmp_path / "s.yaml").write_text(slice_text)
    assert cli.main(["rehearsal", "--out", str(tmp_path / "out"), "--slice", str(tmp_path / "s.yaml"),
                     "--dry-run"]) == 1
    assert re.search(message, caplog.text)


@pytest.mark.parametrize("change, message", [
    ({"sources": [1200]}, r"p\.yaml: sources must be a mapping \(key: value lines\), got \[1200\]"),
    ({"every_model": {"arch": [32]}}, r"p\.yaml: every_model\.arch must be a mapping .*got \[32\]"),
    ({"config": "paper"}, r"p\.yaml: config must be a mapping .*got 'paper'"),
    ({"sources": {**load_plan(PLAN)["sources"], "docs": True}}, r"p\.yaml: sources\.docs must be a positive integer, "
                                                                r"got True"),
])
def test_a_plan_of_the_wrong_types_is_named(tmp_path, caplog, change, message):
    import yaml

    from mtcue import cli

    (tmp_path / "p.yaml").write_text(yaml.safe_dump({**load_plan(PLAN), **change}))
    assert cli.main(["rehearsal", "--out", str(tmp_path / "out"), "--plan", str(tmp_path / "p.yaml"),
                     "--dry-run"]) == 1
    assert re.search(message, caplog.text)


@pytest.mark.parametrize("study", ["- en-de\n", "directions: [en-de]\n", "directions: [en-de]\nmodels: {base: 1}\n"])
def test_a_study_that_is_no_study_is_named(tmp_path, caplog, study):
    """A list, a study without models, a model without its entry: TypeError, KeyError or AttributeError before."""
    from mtcue import cli

    (tmp_path / "study.yaml").write_text(study)
    assert cli.main(["rehearsal", "--out", str(tmp_path / "out"), "--study", str(tmp_path / "study.yaml"),
                     "--dry-run"]) == 1
    assert "study.yaml: a study's config lists its directions and maps its models to their entries" in caplog.text


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    root = tmp_path_factory.mktemp("rehearsal") / "sources"
    config = rehearsal_config()
    built = build_sources(config, load_plan(PLAN)["sources"], root)
    return config, root / "mirror", built


def at(mirror, url):
    return mirror / sources.url_path(url)


def test_every_url_of_the_paper_study_has_a_copy(mirror):
    config, root, built = mirror
    assert len(built["urls"]) == 47  # tests/test_paper_data.py: the paper's DAG downloads 47 files (IWSLT22's en-de training data: 10)
    assert all(at(root, u).is_file() and at(root, u).stat().st_size > 0 for u in built["urls"])


def test_the_opus_copy_and_the_heldout_lists_name_the_same_films(mirror):
    config, root, _ = mirror
    opus = at(root, config["corpus"]["opensubtitles"]["url"])
    with zipfile.ZipFile(opus / "en.zip") as english:  # one English archive for the four pairs, as OPUS ships it
        folders = {name.split("/")[-2] for name in english.namelist() if name.endswith(".xml")}
    # four pairs' films, 1000 apart (opus_synth's folders 100000 + film)
    assert {int(f) // 1000 for f in folders} == {100, 101, 102, 103} and len(folders) > 4 * 25
    for pair in ("en-de", "en-fr", "en-pl", "en-ru"):
        listed = set().union(*(heldout_films(at(root, u)) for u in sources.heldout_sources(config, pair)))
        assert len(listed) == 6 and {f"tt{int(f):07d}" for f in folders} >= listed


def test_the_evaluation_sets_convert_with_the_official_readers(mirror, tmp_path):
    config, root, _ = mirror
    sets = config["evaluation_sets"]
    counts = contrapro(at(root, sets["contrapro"]["json"]), at(root, sets["contrapro"]["documents"]),
                       tmp_path / "pro.jsonl")
    assert counts["examples"] > 10 and counts["source_mismatches"] == 0
    assert heldout_films(at(root, sets["contrapro"]["json"])) <= heldout_films(
        at(root, sources.heldout_sources(config, "en-de")[0]))
    lopes_files = sources.evalset_sources(config, "lopes", "en-fr")
    paths = [at(root, lopes_files[f]) for f in (*sources.LOPES_FILES, "annotation")]
    assert lopes(*paths, tmp_path / "lopes.jsonl") > 10
    for suite, url in sources.evalset_sources(config, "voita2019", "en-ru").items():
        assert voita2019(at(root, url), suite, tmp_path / f"{suite}.jsonl") > 5
        assert {ex["correct"] for ex in read_suite(tmp_path / f"{suite}.jsonl", "en-ru")} == {0, 1}
    for split, url in sources.evalset_sources(config, "eamt22", "en-pl").items():
        assert eamt22(at(root, url), split, tmp_path / f"eamt22.{split}.jsonl") > 10
        assert all(s["target"]["attribute"] for s in read_corpus(tmp_path / f"eamt22.{split}.jsonl", ("en", "pl")))
    for pair in ("en-de", "en-ru"):
        first = next(iter(sources.evalset_sources(config, "iwslt22", pair).values()))
        assert iwslt22(at(root, first).parent, pair, tmp_path / "iwslt22" / pair) > 50


def test_sources_of_the_same_sizes_are_kept(mirror):
    config, root, built = mirror
    stamp = (root.parent / "stamp.json").stat().st_mtime_ns
    again = build_sources(config, load_plan(PLAN)["sources"], root.parent)
    assert again == built and (root.parent / "stamp.json").stat().st_mtime_ns == stamp


def test_the_omdb_stand_in_answers_as_omdb(tmp_path):
    films = {"tt0100001": {"Response": "True", "Genre": "Drama", "Year": "1951", "Rated": "PG", "Writer": "W",
                           "Plot": "P.", "Country": "France"}}
    with serve_omdb(films) as url:
        client = Client(tmp_path / "cache", Settings(api_url=url, min_interval_s=0), OMDB_KEY)
        assert client.fetch("tt0100001")["Genre"] == "Drama"
        assert client.fetch("tt0100002") == {"Response": "False", "Error": "Incorrect IMDb ID."}
        with pytest.raises(OmdbError, match="Invalid API key"):
            Client(tmp_path / "other", Settings(api_url=url, min_interval_s=0), "another-key").fetch("tt0100001")


def test_the_summary_reads_snakemakes_output(tmp_path):
    stats = ("Job stats:\njob        count\n-------  -------\ndownload      37\ntrain        245\ntotal       1528\n\n"
             "Select jobs to execute...\n")
    assert job_stats(stats) == {"download": 37, "train": 245, "total": 1528}
    (tmp_path / "results" / "logs").mkdir(parents=True)
    (tmp_path / "results" / "logs" / "x.log").write_text("INFO fine\nERROR mtcue: style-levels failed: no labels\n"
                                                        "bye\n")
    output = ("Error in rule style_levels:\n    jobid: 3\n"
              "    log: results/logs/x.log (check log file(s) for error details)\n"
              "\nError in rule train:\n    jobid: 9\n\n")
    assert failures(output, tmp_path) == [
        {"rule": "style_levels", "log": "results/logs/x.log", "error": "ERROR mtcue: style-levels failed: no labels"},
        {"rule": "train", "log": None, "error": None}]


def test_a_run_that_failed_never_counts_0_failed(tmp_path):
    """Snakemake exits 1 without a failed job when it cannot start (a locked directory): the summary said 0
    failed of a rehearsal that exited 1."""
    output = ("Building DAG of jobs...\nError: Directory cannot be locked. Please make sure that no other Snakemake "
              "process is trying to create the same files in the following directory:\n/x/out\n\n")
    assert run_failures(output, 1, tmp_path, "/x/out/rehearsal.log") == [
        {"rule": None, "log": "/x/out/rehearsal.log", "error": "/x/out"}]
    assert run_failures("Building DAG of jobs...\nError: Directory cannot be locked.\n", 1, tmp_path, "l") == [
        {"rule": None, "log": "l", "error": "Error: Directory cannot be locked."}]
    assert run_failures("Finished job 1.\n", 0, tmp_path, "l") == []
    failed = "Error in rule train:\n    jobid: 9\n\n"
    assert run_failures(failed, 1, tmp_path, "l") == [{"rule": "train", "log": None, "error": None}]


def test_the_report_lists_every_table_and_figure():
    listed = report_outputs(REPO)
    assert len(listed) == 18  # with the shortening paper's Figure 3 (shortening_groupings)
    assert {"results/tables/table4_quality.html", "results/tables/table6_ablation.html",
            "results/figures/figure4_eamt22_fewshot.png", "results/figures/style_levels.svg",
            "results/tables/side_information.html", "results/figures/memory_growth.svg"} <= set(listed)


def test_a_dry_run_plans_the_whole_paper_study(tmp_path):
    summary = rehearse(REPO, tmp_path / "out", PAPER, PLAN, dry_run=True)
    # the paper's 1,528 jobs, less the two DistilBERT and the two MiniLM-v2 stores that the one stand-in
    # encoder's two stores (mean, CLS) replace; 1,694 with issues 35 and 36 (validation translations of the
    # side-information grid, IWSLT22 validation, CONCAT at 2-3 sentences, Figure 3, no phenomena table); 1,695
    # with issue 44's fetch of the pretrained models (pretrained_models); 687 since a trained model's evaluation is
    # one job (issue 55: 1,257 evaluation jobs became 249)
    assert summary["exit"] == 0 and summary["planned"] == 687
    assert summary["planned_by_rule"]["train"] == 249 and summary["planned_by_rule"]["download"] == 47
    assert sum(n for rule, n in summary["planned_by_rule"].items() if rule.startswith("evaluate_")) == 249
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["planned"] == 687
    assert "jobs planned (dry run): 687" in (tmp_path / "out" / "summary.md").read_text()
    unlabelled = {"results/tables/phenomena.html", "results/figures/phenomena_accuracy.svg"}  # OpenSubtitles
    assert summary["tables_and_figures"] == {**dict.fromkeys(report_outputs(REPO), "not made"),
                                             **dict.fromkeys(unlabelled, "not planned")}


def test_a_slice_of_the_paper_study_runs_to_the_end(tmp_path):
    summary = rehearse(REPO, tmp_path / "out", PAPER, PLAN, cores="2", slice_file=SLICE)
    assert summary["failed"] == [] and summary["exit"] == 0
    # 246 with the local fetch of the pretrained models; 141 since a trained model's evaluation is one job (issue 55):
    # 25 evaluation jobs for 26 trainings, as en-pl BASE-PM is only TAGGING's parent there (no table reads its records)
    assert summary["executed"] == summary["planned"] == 141 and summary["planned_by_rule"]["train"] == 26
    assert sum(n for rule, n in summary["planned_by_rule"].items() if rule.startswith("evaluate_")) == 25
    # every rule of the whole study runs, but the evaluation sets of the directions the slice leaves out
    whole = rehearse(REPO, tmp_path / "whole", PAPER, PLAN, dry_run=True)
    kinds = lambda planned: {re.sub(r"^evaluate_\w+$", "evaluate", rule) for rule in planned}  # a rule per profile
    assert kinds(whole["planned_by_rule"]) - kinds(summary["planned_by_rule"]) == {"eval_lopes", "eval_voita2019"}
    made = summary["tables_and_figures"]
    # every table and figure of the workflow's report (style control's at paper scale too: labels from address
    # forms), but the phenomena table and figure, which the paper study does not plan: OpenSubtitles labels none
    assert made == {**dict.fromkeys(report_outputs(REPO), "made"), "results/tables/phenomena.html": "not planned",
                    "results/figures/phenomena_accuracy.svg": "not planned"}


def test_the_rehearsal_never_writes_into_a_folder_it_did_not_make(tmp_path, caplog):
    from mtcue import cli

    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "notes.md").write_text("my notes\n")
    assert cli.main(["rehearsal", "--out", str(mine), "--dry-run"]) == 1
    assert "holds files no rehearsal wrote" in caplog.text
    assert sorted(p.name for p in mine.iterdir()) == ["notes.md"]


def test_a_second_rehearsal_into_a_running_ones_folder_fails_at_once_and_touches_nothing(tmp_path, caplog):
    """Two rehearsals into one folder: the second truncated the first's rehearsal.log (NUL bytes) and wrote its
    summary over the first's. The first holds the folder's lock for its whole run."""
    import subprocess
    import sys
    import time

    from mtcue import cli

    out = tmp_path / "out"
    out.mkdir()
    (out / ".mtcue-output.json").write_text('{"step": "rehearsal", "files": []}\n')  # an earlier rehearsal's
    (out / "rehearsal.log").write_text("Finished job 1.\n")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    holder = ("import sys, time, pathlib\nfrom mtcue.outputs import exclusive\n"
              "with exclusive(pathlib.Path(sys.argv[1])):\n    print('running', flush=True)\n    time.sleep(60)")
    first = subprocess.Popen([sys.executable, "-c", holder, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline() == "running\n"
        started = time.monotonic()
        assert cli.main(["rehearsal", "--out", str(out), "--dry-run"]) == 1
        assert time.monotonic() - started < 10
    finally:
        first.kill()
        first.wait()
    assert f"{out}: another process is writing this folder now" in caplog.text
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
