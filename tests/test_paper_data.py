"""The paper's data path through the real DAG (corpus.source: opensubtitles) on small files in the
exact public formats: an OPUS copy, the held-out lists, a fake OMDb, IWSLT22 and ContraPro."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import REPO, dry_run, evaluation_commands
from local_http import serve
from mtcue.corpus import read_corpus
from mtcue.data.opus_synth import generate_mirror
from test_evalsets import IWSLT, moses_zip, write_iwslt
from test_omdb import KEY, FakeOmdb

RAW = "https://raw.githubusercontent.com"
BLOCKLIST = f"{RAW}/st-vincent1/opensubtitles_parser/master/blocklist/blocklist.de"
CONTRAPRO = f"{RAW}/ZurichNLP/ContraPro/master/contrapro.json"
MOSES = "https://object.pouta.csc.fi/OPUS-OpenSubtitles/v2018/moses/de-en.txt.zip"
IWSLT_URL = f"{RAW}/amazon-science/contrastive-controlled-mt/main/IWSLT2022/data/test"


def film(f):  # what opus_synth.generate_mirror names film f
    return {"imdb": f"tt{100000 + f:07d}", "de": f"de/{1950 + f}/{100000 + f}/{2 * f + 1}.xml"}


def in_mirror(mirror: Path, url: str) -> Path:
    path = mirror / url.split("://", 1)[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper")
    generate_mirror(root / "opus", "en-de", 3000, seed=5, links_per_film=150)
    mirror = root / "downloads"
    in_mirror(mirror, BLOCKLIST).write_text("".join(film(f)["de"] + "\n" for f in (1, 2, 3, 4)))
    in_mirror(mirror, CONTRAPRO).write_text(json.dumps([{"document id": "1955_100005_11.de", "segment id": 2,
                                                         "source": "Two.", "errors": [{"contrastive": "Zwo."}]}]))
    moses_zip(in_mirror(mirror, MOSES), [("1955_100005_11", [("Eins.", "One."), ("Zwei.", "Two.")])])
    write_iwslt(in_mirror(mirror, f"{IWSLT_URL}/en-de/x").parent)
    config = {
        "study": "paperdata", "directions": ["en-de", "de-en"], "models": {"base": {"type": "base"}},
        "corpus": {"source": "opensubtitles", "mirror": str(root / "opus"),
                   "splits": {"valid_pairs": 40, "test_pairs": 30, "heldout": {"en-de": [BLOCKLIST, CONTRAPRO]}},
                   "omdb": {"min_interval_s": 0}},
        "download": {"mirror": str(mirror)},
        "evaluation_sets": {"iwslt22": {"pairs": ["en-de"]}},
    }
    work = root / "work"
    work.mkdir()
    answers = {film(f)["imdb"]: {"Response": "True", "Genre": "Drama", "Year": str(1950 + f), "Rated": "N/A",
                                 "Writer": "A. Writer", "Plot": "A plot.", "Country": "France"} for f in range(0, 20, 2)}
    answers[film(5)["imdb"]] = {"Response": "True", "Genre": "Comedy", "Year": "1955", "Rated": "PG",
                                "Writer": "N/A", "Plot": "N/A", "Country": "N/A"}
    with serve(FakeOmdb, limit=1000, films=answers) as omdb:
        config["corpus"]["omdb"]["api_url"] = omdb.url + "/"
        (work / "paper.yaml").write_text(yaml.safe_dump(config))
        targets = ["results/tables/table1_data.md", "results/eval/iwslt22/en-de", "results/eval/contrapro/en-de/test.jsonl"]
        run = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--snakefile", str(REPO / "Snakefile"),
                              "--directory", str(work), "--configfile", str(work / "paper.yaml"), "--cores", "2", *targets],
                             capture_output=True, text=True, env={**os.environ, "OMDB_API_KEY": KEY})
        assert run.returncode == 0, run.stderr[-4000:]
    return work, run, omdb


def test_held_out_films_never_reach_train(study):
    work, _, _ = study
    corpus = {s: list(read_corpus(work / "results" / "corpus" / "en-de" / f"{s}.jsonl")) for s in ("train", "valid", "test")}
    held = {film(f)["imdb"] for f in (1, 2, 3, 4, 5)}
    assert not {s["imdb_id"] for s in corpus["train"]} & held
    assert (len(corpus["valid"]), len(corpus["test"])) == (40, 30)
    # sampled from held-out films with metadata only: 2 and 4 (even films) and 5
    assert {s["imdb_id"] for s in corpus["valid"] + corpus["test"]} <= {film(f)["imdb"] for f in (2, 4, 5)}
    by_film = {s["imdb_id"]: s["meta"] for s in corpus["train"]}
    assert by_film[film(0)["imdb"]] == {"genre": "Drama", "pg_rating": None, "writers": "Written by: A. Writer",
                                       "year": "Released in 1950", "country": "France", "plot": "A plot."}
    assert set(by_film[film(7)["imdb"]].values()) == {None}


def test_table1_counts_the_training_data(study):
    work, _, _ = study
    table = pd.read_csv(work / "results" / "tables" / "table1_data.csv", index_col=0)
    train = list(read_corpus(work / "results" / "clean" / "en-de" / "train.jsonl"))
    assert table.loc["source_target_pairs", "en-de this run"] == len(train)
    with_genre = sum(bool(s["meta"]["genre"]) for s in train)
    assert table.loc["genre", "en-de this run"] == pytest.approx(100 * with_genre / len(train))
    films = (work / "results" / "extracted" / "en-de" / "films.txt").read_text().split()
    assert len(films) > 20  # films 0, 2, ..., 18 and 5 have answers
    assert f"OMDb found 11 of {len(films)} films" in (work / "results" / "tables" / "table1_data.md").read_text()


def test_evaluation_sets_and_the_data_path_in_the_dag(study):
    work, run, _ = study
    iwslt = work / "results" / "eval" / "iwslt22" / "en-de"
    assert (iwslt / "formality-control.test.en-de.formal.annotated.de").read_text().splitlines() == \
        IWSLT["formal.annotated.de"]
    (pro,) = read_corpus(work / "results" / "eval" / "contrapro" / "en-de" / "test.jsonl")
    assert pro["text"] == {"en": "Two.", "de": "Zwei."} and pro["previous"]["en"] == ["One."]
    assert pro["meta"]["genre"] == "Comedy"  # the film's OMDb metadata
    for rule in ("download", "extract_opensubtitles", "omdb", "split_corpus", "eval_iwslt22", "eval_contrapro",
                 "corpus_stats", "table1_data"):
        assert f"rule {rule}:" in run.stdout + run.stderr


def test_the_omdb_key_is_nowhere_in_the_study(study):
    work, run, omdb = study
    assert {q["apikey"] for q in omdb.requests} == {KEY}
    assert KEY not in run.stdout + run.stderr
    leaks = [p for p in work.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaks == []


def test_the_paper_config_lists_the_whole_data_path():
    run = dry_run("--configfile", "config/paper.yaml")
    assert run.returncode == 0, run.stderr[-3000:]
    jobs = dict(line.split()[:2] for line in run.stdout.split("Job stats:")[1].splitlines()[3:] if len(line.split()) == 2)
    # 5 language archives + 4 alignments, 4 block lists + ContraPro's and Lopes et al.'s lists, IWSLT22 (5 files
    # x 2 pairs, and en-de's training data, the validation set: 5 files x 2 domains), EAMT22 (2), ContraPro's
    # documents, Lopes et al.'s 4 files and annotation, Voita et al. 2019's 4 sets
    assert jobs["download"] == "47" and jobs["eval_iwslt22_valid"] == "1"
    assert (jobs["extract_opensubtitles"], jobs["omdb"], jobs["split_corpus"]) == ("4", "1", "4")
    assert (jobs["eval_iwslt22"], jobs["eval_eamt22"], jobs["eval_contrapro"], jobs["eval_lopes"]) == ("2", "2", "1", "1")
    assert jobs["clean"] == "12" and jobs["table1_data"] == "1" and "generate_corpus" not in jobs
    assert "object.pouta.csc.fi/OPUS-OpenSubtitles/v2018/xml/en-ru.xml.gz" in run.stdout
    # Table 5 on the official IWSLT22 sources, each model once for all its prompts: five models x en-de, en-ru;
    # en-de's prompts also on its validation set (where each model's best prompt is chosen, Table 6's zero-shot
    # column): the four models with prompts and Table 6's eight other ablation models
    steps = evaluation_commands(run.stdout)  # each trained model's evaluation is one job of these steps
    prompted = re.findall(r"^mtcue translate-prompts .* --out results/hyps/(formality\w*)/", steps, re.M)
    assert (prompted.count("formality"), prompted.count("formality_valid")) == (10, 12)
    assert "--source results/eval/iwslt22_valid/en-de/formality-control.test.en-de.en" in steps
    assert ("mtcue translate-prompts --model-dir results/models/en-ru/mtcue "
            "--source results/eval/iwslt22/en-ru/formality-control.test.en-ru.en") in steps
    # Figure 4: en-pl's lines annotated by EAMT22's rules; every model (BASE too) on the official test set:
    # MTCUE and TAGGING in eight settings and BASE (17); Table 6's ten row models on the official dev.json
    # (its zero-shot column reads the validation sets)
    assert jobs["annotate_eamt22"] == "3" and jobs["fewshot_store"] == "14"
    assert len(re.findall(r"^mtcue translate-corpus .*--out results/hyps/eamt22/", steps, re.M)) == 27
    assert ("mtcue translate-corpus --model-dir results/models/en-pl/mtcue --corpus results/eval/eamt22/en-pl/test.jsonl "
            "--columns doc0,cue1,cue2,cue3") in steps
    assert "translate-corpus --model-dir results/models/en-pl/base --corpus results/eval/eamt22/en-pl/test.jsonl --gen" in steps
    assert "--corpus results/eval/eamt22/en-pl/test.jsonl --direction en-pl --model tagging_fewshot_30" in steps


def test_extraction_workers_are_the_rules_threads():
    """corpus.opensubtitles.workers (4 in the paper configuration) reaches the step as its threads,
    which Snakemake lowers to the cores it is given."""
    for cores, workers in (("8", "4"), ("2", "2")):
        run = dry_run("--configfile", "config/paper.yaml", "--cores", cores)
        assert run.returncode == 0, run.stderr[-3000:]
        steps = [line for line in run.stdout.splitlines() if "mtcue extract-opensubtitles" in line]
        assert len(steps) == 4 and all(f" --workers {workers} 2> " in line for line in steps), steps[:1]


def test_sources_name_the_files_a_mirror_holds(tmp_path):
    from mtcue.config import validate
    from mtcue.data import sources

    cfg = validate({"study": "s", "directions": ["en-de", "fr-en"], "models": {"base": {"type": "base"}},
                    "corpus": {"source": "opensubtitles", "mirror": str(tmp_path)}})
    (tmp_path / "xml" / "de").mkdir(parents=True)          # unpacked German, zipped English
    (tmp_path / "xml" / "en.zip").write_bytes(b"")
    (tmp_path / "xml" / "de-en.xml").write_bytes(b"")     # unpacked alignment
    assert sources.opus_inputs(cfg, "en-de") == [f"{tmp_path}/xml/de-en.xml", f"{tmp_path}/xml/de",
                                                 f"{tmp_path}/xml/en.zip"]
    assert sources.opus_inputs(cfg, "en-fr")[0] == f"{tmp_path}/xml/en-fr.xml.gz"  # absent: the name to fetch
    assert sources.opus_urls(cfg, ["en-de"]) == []                                  # a mirror: nothing to download
    assert sources.local(CONTRAPRO) == "results/download/raw.githubusercontent.com/ZurichNLP/ContraPro/master/contrapro.json"
    assert sources.local("/data/my-list.txt") == "/data/my-list.txt"
    downloaded = validate({**cfg, "corpus": {"source": "opensubtitles"}, "download": {"mirror": "/m"}})
    assert sources.opus_dir(downloaded) == "results/download/object.pouta.csc.fi/OPUS-OpenSubtitles/v2018"
    assert sources.mirrored(downloaded, CONTRAPRO) == "/m/raw.githubusercontent.com/ZurichNLP/ContraPro/master/contrapro.json"
    assert sources.evalset_targets(downloaded, ["en-de", "en-fr"]) == [
        "results/eval/iwslt22/en-de", "results/eval/iwslt22_valid/en-de", "results/eval/contrapro/en-de/test.jsonl",
        "results/eval/lopes/en-fr/test.jsonl"]
