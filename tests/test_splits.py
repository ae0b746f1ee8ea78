"""Splits of extracted pairs: held-out films from the public lists' formats, metadata, seeded sampling."""
import json
import re

import pytest

from mtcue.corpus import read_corpus
from mtcue.data.splits import heldout_films, make_splits

META = {"genre": "Drama", "pg_rating": "PG rating: R", "writers": "Written by: A", "year": "Released in 1999",
        "country": "Canada", "plot": "A plot."}
NONE = dict.fromkeys(META)
# film -> number of pairs; films 2..5 are named by the held-out lists below.
FILMS = {1: 30, 2: 20, 3: 25, 4: 15, 5: 10, 6: 12}


def extracted(tmp_path):
    lines, n = [], 0
    for film, count in FILMS.items():
        for k in range(count):
            lines.append({"id": f"en-de.{n:09d}", "doc_id": f"en/1999/{film}/1|de/1999/{film}/2",
                          "imdb_id": f"tt{film:07d}", "text": {"en": f"Line {film}.{k}", "de": f"Zeile {film}.{k}"},
                          "previous": {"en": [], "de": []}, "meta": NONE})
            n += 1
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.fixture
def lists(tmp_path):
    block = tmp_path / "blocklist.de"   # the authors' block list: OPUS document paths
    block.write_text("de/1999/2/6733127.xml\nde/0/3/5161799.xml\n")
    contrapro = tmp_path / "contrapro.json"  # ContraPro: "document id" = year_imdb_file.de
    contrapro.write_text(json.dumps([{"document id": "1999_4_3198548.de", "segment id": 3, "errors": []}] * 2))
    docids = tmp_path / "docids.selected"   # Lopes et al.: document names, one with a stray suffix
    docids.write_text("1933_5_3255550.frx\n")
    return [block, contrapro, docids]


def metadata(tmp_path, found=(1, 2, 3, 5)):
    path = tmp_path / "omdb.jsonl"
    path.write_text("".join(json.dumps({"imdb_id": f"tt{f:07d}", "status": "found" if f in found else "not_found",
                                        "meta": META if f in found else NONE}) + "\n" for f in FILMS))
    return path


def splits(tmp_path, **kwargs):
    return {s: list(read_corpus(tmp_path / "out" / f"{s}.jsonl")) for s in ("train", "valid", "test")}


def films_of(samples):
    return {s["imdb_id"] for s in samples}


def test_heldout_lists_in_their_public_formats(lists):
    assert [heldout_films(p) for p in lists] == [{"tt0000002", "tt0000003"}, {"tt0000004"}, {"tt0000005"}]


def test_nothing_held_out_reaches_train_and_valid_test_come_from_films_with_metadata(tmp_path, lists):
    report = make_splits(extracted(tmp_path), lists, tmp_path / "out", metadata(tmp_path), valid_pairs=6,
                         test_pairs=8, seed=3)
    got = splits(tmp_path)
    assert films_of(got["train"]) == {"tt0000001", "tt0000006"} and len(got["train"]) == 42
    held = {"tt0000002", "tt0000003", "tt0000004", "tt0000005"}
    assert films_of(got["valid"]) | films_of(got["test"]) <= held - {"tt0000004"}  # 4 has no metadata
    assert not films_of(got["valid"]) & films_of(got["test"])
    assert (len(got["valid"]), len(got["test"])) == (6, 8)
    for samples in got.values():   # document order is kept
        assert [s["id"] for s in samples] == sorted(s["id"] for s in samples)
    by_film = {s["imdb_id"]: s["meta"] for samples in got.values() for s in samples}
    assert by_film["tt0000001"] == META and by_film["tt0000006"] == NONE
    assert report["pairs"] == {"train": 42, "valid": 6, "test": 8, "heldout_not_sampled": 112 - 42 - 14}
    assert report["films"] == {"in_corpus": 6, "heldout_listed": 4, "heldout_in_corpus": 4, "with_metadata": 4}
    assert report["sampled_from"] == "held-out films with metadata"


def test_the_seed_decides_the_sample(tmp_path, lists):
    def sample(seed, where):
        make_splits(extracted(tmp_path), lists, tmp_path / where, metadata(tmp_path), 5, 5, seed)
        return (tmp_path / where / "valid.jsonl").read_text(), (tmp_path / where / "test.jsonl").read_text()

    assert sample(1, "a") == sample(1, "b") != sample(2, "c")


def test_without_metadata_every_heldout_film_is_sampled_and_short_sets_say_so(tmp_path, lists):
    report = make_splits(extracted(tmp_path), lists, tmp_path / "out", metadata(tmp_path, found=()), 10_000, 10_000)
    got = splits(tmp_path)
    assert len(got["valid"]) + len(got["test"]) == 20 + 25 + 15 + 10
    assert report["sampled_from"] == "every held-out film (no film has metadata)"
    assert set(report["short"]) == {"valid", "test"}


def test_lists_that_name_no_film_of_the_corpus_are_an_error(tmp_path):
    other = tmp_path / "blocklist.ru"
    other.write_text("en/2016/5075864/6500309.xml\n")
    with pytest.raises(ValueError, match="no pair of a held-out valid film"):
        make_splits(extracted(tmp_path), [other], tmp_path / "out")
    assert not (tmp_path / "out" / "train.jsonl").exists()


def test_a_line_that_names_no_film_is_named(tmp_path):
    bad = tmp_path / "blocklist.pl"
    bad.write_text("en/0/3612842/5882568.xml\nnot a path\n")
    with pytest.raises(ValueError, match=r"blocklist\.pl:2: 'not a path' names no film"):
        heldout_films(bad)


@pytest.mark.parametrize("examples, message", [
    ([{"document id": "1999_4_3198548.de"}, {"segment id": 3}],  # before: the file only, "('document id')"
     r"contrapro\.json: entry 1: 'document id' must be a string, got None \(ContraPro examples have document id\)"),
    ([{"document id": 4}], r"contrapro\.json: entry 0: 'document id' must be a string, got 4"),  # a TypeError before
    ([["1999_4_3198548.de", 3]], r"contrapro\.json: entry 0: expected an object with document id"),
    ([{"document id": "1999_4_3198548.de"}, {"document id": "4.de"}], r"contrapro\.json: entry 1: '4\.de' names no film"),
])
def test_a_contrapro_list_without_its_document_ids_is_named(tmp_path, caplog, examples, message):
    from mtcue.cli import main

    (tmp_path / "contrapro.json").write_text(json.dumps(examples))
    assert main(["split-corpus", "--corpus", str(extracted(tmp_path)), "--heldout", str(tmp_path / "contrapro.json"),
                 "--out-dir", str(tmp_path / "out"), "--report", str(tmp_path / "report.json")]) == 1
    assert re.search(message, caplog.text) and "Traceback" not in caplog.text
    assert not (tmp_path / "out").exists() and not (tmp_path / "report.json").exists()
