"""Embedding at scale (issue 28): build_stores' length order."""
import json

import numpy as np

from conftest import make_sample
from mtcue.context import embed
from mtcue.context.embed import build_stores, embedding_order, load_encoder
from test_embed import fake_encoder

DOC = ["doc0", "doc1", "doc2"]


def test_embedding_order_is_longest_first_ties_as_given():
    assert embedding_order(["bb", "a", "ccc", "dd"], [0, 1, 2, 3]) == [2, 0, 3, 1]
    assert embedding_order(["bb", "a", "ccc", "dd"], [3, 1, 0]) == [3, 0, 1]


def recording(encoder):
    calls = []

    def encode(texts):
        calls.append(list(texts))
        return encoder(texts)
    encode.dim, encode.calls = encoder.dim, calls
    return encode


def varied(write_corpus):
    lines = ["Hi.", "Where were you last night, when the lights went out?", "No.", "I was at home, reading.",
             "Really?", "Yes, really, the whole evening long.", "Fine."]
    return {"train": write_corpus([make_sample(i, doc="f", en=line, previous_en=lines[:i][::-1][:2],
                                               meta={"genre": "Drama"}) for i, line in enumerate(lines)])}


def test_store_embeds_longest_first_and_keeps_first_seen_rows(write_corpus, tmp_path, monkeypatch):
    """The encoder sees the strings longest first; the store is byte for byte the one built in first-seen order."""
    paths, columns = varied(write_corpus), DOC + ["genre"]
    sorted_run = recording(fake_encoder)
    build_stores({"en-de": paths}, {"en-de": tmp_path / "sorted"}, columns, "fake", encoder=sorted_run, batch_size=2)
    seen = [t for call in sorted_run.calls for t in call]
    assert [len(t) for t in seen] == sorted((len(t) for t in seen), reverse=True)
    monkeypatch.setattr(embed, "embedding_order", lambda texts, rows: list(rows))
    plain_run = recording(fake_encoder)
    build_stores({"en-de": paths}, {"en-de": tmp_path / "plain"}, columns, "fake", encoder=plain_run, batch_size=2)
    assert [t for call in plain_run.calls for t in call] != seen            # the order did change
    assert sorted(t for call in plain_run.calls for t in call) == sorted(seen)
    for name in ("manifest.json", "train.index.npy", "vectors.npy"):
        assert (tmp_path / "sorted" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()


def test_length_order_with_the_bundled_encoder_gives_the_first_seen_store(write_corpus, tmp_path, monkeypatch):
    """Real batches change with the order (padding): the vectors agree to float noise, the rows exactly."""
    paths, columns, encode = varied(write_corpus), DOC + ["genre"], load_encoder("all-MiniLM-L6-v2", device="cpu")
    build_stores({"en-de": paths}, {"en-de": tmp_path / "sorted"}, columns, "all-MiniLM-L6-v2", encoder=encode,
                 batch_size=2)
    monkeypatch.setattr(embed, "embedding_order", lambda texts, rows: list(rows))
    build_stores({"en-de": paths}, {"en-de": tmp_path / "plain"}, columns, "all-MiniLM-L6-v2", encoder=encode,
                 batch_size=2)
    for name in ("manifest.json", "train.index.npy"):
        assert (tmp_path / "sorted" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    sorted_vectors, plain = np.load(tmp_path / "sorted" / "vectors.npy"), np.load(tmp_path / "plain" / "vectors.npy")
    np.testing.assert_allclose(sorted_vectors, plain, rtol=0, atol=1e-5)
    # and each row is its string's vector embedded alone
    strings = json.loads((tmp_path / "sorted" / "manifest.json").read_text())["n_vectors"]
    assert sorted_vectors.shape[0] == strings == 8  # 7 lines + "Drama"
    np.testing.assert_allclose(sorted_vectors[0], encode(["Hi."])[0], rtol=0, atol=1e-5)