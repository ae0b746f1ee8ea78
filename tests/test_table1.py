"""Table 1: counts from a corpus file, the table from data records, the paper's figures beside."""
import pandas as pd
import pytest

from conftest import make_sample
from mtcue.data.stats import corpus_stats
from mtcue.reporting.table1 import data_table, write_data_table

META = {"genre": "Drama", "year": "Released in 1999"}


def record(pair, stats, source="synthetic", metadata=None):
    return {"kind": "data", "split": "train", "source": source, "study": "t", "config_hash": "x",
            "git_commit": "y", **stats, **({"metadata": metadata} if metadata else {})}


@pytest.fixture
def stats(write_corpus):
    samples = [
        make_sample(0, meta=META),
        make_sample(1, meta=META, previous_en=["a"], previous_de=["a"]),
        make_sample(2, previous_en=["b", "a"], previous_de=["b", "a"]),
        make_sample(3, previous_en=["c", "b", "a", "z", "y"], previous_de=["c", "b", "a", "z", "y"]),
        make_sample(4),
    ]
    return corpus_stats(write_corpus(samples), "en-de")


def test_corpus_stats_count_by_hand(stats):
    assert stats == {"pair": "en-de", "samples": 5, "previous": {"1": 3, "2": 2, "3": 1, "4": 1, "5": 1},
                     "meta": {"genre": 2, "pg_rating": 0, "writers": 0, "year": 2, "country": 0, "plot": 0},
                     "any_context": 4}


def test_table_has_our_shares_and_the_papers(stats, tmp_path):
    table = data_table([record("en-de", stats)])
    assert table.loc["source_target_pairs", ("en-de", "this run")] == 5
    assert table.loc["n-1", ("en-de", "this run")] == pytest.approx(60.0)
    assert table.loc["genre", ("en-de", "this run")] == pytest.approx(40.0)
    assert table.loc["any_context", ("en-de", "this run")] == pytest.approx(80.0)
    assert table.loc["source_target_pairs", ("en-de", "paper")] == pytest.approx(5.3e6)
    assert table.loc["n-5", ("en-de", "paper")] == pytest.approx(18.7)
    assert table.loc["country", ("en-de", "paper")] == pytest.approx(37.7)
    assert pd.isna(table.loc["any_context", ("en-de", "paper")])
    write_data_table([record("en-de", stats)], tmp_path / "t.csv", tmp_path / "t.md")
    md = (tmp_path / "t.md").read_text()
    assert "| source_target_pairs | 5 | 5.3M |" in md and "| n-1 | 60.0% | 60.1% |" in md
    assert "synthetic dialogue corpus" in md
    csv = pd.read_csv(tmp_path / "t.csv", index_col=0)
    assert csv.loc["plot", "en-de paper"] == pytest.approx(43.4)


def test_the_table_says_when_no_omdb_key_was_set(stats, tmp_path):
    omdb = {"api_key": False, "films": 40, "found": 0, "not_found": 0, "no_key": 40, "requests": 0}
    write_data_table([record("en-de", stats, "opensubtitles", omdb)], tmp_path / "t.csv", tmp_path / "t.md")
    assert "OMDb was not queried (no OMDB_API_KEY was set), so every metadata share is 0%" in (tmp_path / "t.md").read_text()
