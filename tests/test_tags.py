"""TAGGING's tag store: one vocabulary from the training split, the same tag for a string in every split."""
import json

import numpy as np
import pytest

from conftest import make_sample
from mtcue.context.store import ContextStore
from mtcue.context.tags import UNKNOWN, build_tag_store, build_vocab

COLUMNS = ["doc0", "doc1", "genre", "cue1"]


def sample(i, doc, en, previous=(), genre=None, cues=()):
    return make_sample(i, doc=doc, en=en, de=f"de {en}", previous_en=previous,
                       previous_de=[f"de {p}" for p in previous], meta={"genre": genre}, cues=cues)


TRAIN = [
    sample(0, "d1", "Hello.", genre="Genre: Comedy", cues=["Formal"]),
    sample(1, "d1", "Sit down.", ["Hello."], genre="Genre: Comedy", cues=["Formal"]),
    sample(2, "d2", "Hello.", genre="Genre: Comedy", cues=["Informal"]),
    sample(3, "d3", "Run.", ["Hello."], genre="Genre: Drama", cues=["Informal"]),
    sample(4, "d3", "Stop.", ["Run."], genre="Genre: Drama", cues=["Formal"]),
]
TEST = [
    sample(0, "t1", "Hello.", ["Sit down."], genre="Genre: Drama", cues=["Formal"]),
    sample(1, "t1", "Never seen.", ["Hello."], genre="Genre: Western"),
]


@pytest.fixture
def store(tmp_path, write_corpus):
    corpora = {"train": write_corpus(TRAIN, "train.jsonl"), "valid": write_corpus(TRAIN[:2], "valid.jsonl"),
               "test": write_corpus(TEST, "test.jsonl")}
    manifest = build_tag_store(corpora, "en-de", COLUMNS, min_docs=2, out_dir=tmp_path / "tags")
    return tmp_path / "tags", manifest


def test_vocabulary_counts_documents_not_occurrences():
    # "Sit down." occurs once, "Stop."/"Run." in one document only; "Genre: Drama" fills 2 samples of d3.
    vocab = build_vocab(TRAIN, "en", COLUMNS, min_docs=2)
    assert vocab == [UNKNOWN, "Hello.", "Formal", "Genre: Comedy", "Informal"]  # by documents, then name
    assert build_vocab(list(reversed(TRAIN)), "en", COLUMNS, min_docs=2) == vocab  # order-independent
    assert "Genre: Drama" in build_vocab(TRAIN, "en", COLUMNS, min_docs=1)


def test_the_same_string_gets_the_same_tag_in_every_split(store):
    directory, manifest = store
    vocab = json.loads((directory / manifest["vocab"]).read_text())
    tag = {value: i for i, value in enumerate(vocab)}
    loaded = ContextStore(directory)
    assert loaded.kind == "tags" and loaded.n_tags == manifest["n_tags"] == len(vocab) == 5
    train, valid, test = (loaded.index(s) for s in ("train", "valid", "test"))
    # columns: doc0 (the sentence), doc1 (previous line), genre, cue1
    assert train[0].tolist() == [tag["Hello."], -1, tag["Genre: Comedy"], tag["Formal"]]
    np.testing.assert_array_equal(valid, train[:2])
    # "Hello." is tag 2 in training and in the test split; unseen values are 0; absent ones -1
    assert test.tolist() == [[tag["Hello."], 0, 0, tag["Formal"]], [0, tag["Hello."], 0, -1]]
    assert manifest["unknown_share"]["test"] == pytest.approx(4 / 7, abs=1e-4)


def test_rebuilding_gives_the_same_store(store, tmp_path):
    directory, _ = store
    corpora = {"train": tmp_path / "train.jsonl", "test": tmp_path / "test.jsonl"}
    build_tag_store(corpora, "en-de", COLUMNS, min_docs=2, out_dir=tmp_path / "again")
    for name in ("tags.json", "train.index.npy", "test.index.npy"):
        assert (tmp_path / "again" / name).read_bytes() == (directory / name).read_bytes()


def test_a_store_without_training_split_is_refused(tmp_path):
    with pytest.raises(ValueError, match="training split"):
        build_tag_store({"test": tmp_path / "x.jsonl"}, "en-de", COLUMNS, 2, tmp_path / "tags")
    assert not (tmp_path / "tags").exists()
