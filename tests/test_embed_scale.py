"""Embedding at scale (issue 28): unique-string counts, the build-time projection, and build_stores' length order."""
import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import make_sample
from mtcue.context import embed
from mtcue.context.bench import count_context_strings, encoder_throughput, paper_pairs, project_build_time
from mtcue.context.embed import build_stores, embedding_order, load_encoder
from test_embed import fake_encoder

DOC = ["doc0", "doc1", "doc2"]


def films(write_corpus):
    """Two films; "A." recurs (as a source line, a previous line, and in the other film); an empty previous
    line is missing, not a string. English: A. B. C. D. = 4 strings; German: one sentence throughout."""
    return write_corpus([
        make_sample(0, doc="f1", en="A."),
        make_sample(1, doc="f1", en="B.", previous_en=["A."]),
        make_sample(2, doc="f1", en="C.", previous_en=["B.", "A."]),
        make_sample(3, doc="f2", en="A."),
        make_sample(4, doc="f2", en="D.", previous_en=["", "A."]),
    ])


def test_unique_strings_per_100k_pairs_on_a_hand_made_corpus(write_corpus):
    path = films(write_corpus)
    counts = count_context_strings(path, "en-de", DOC, ["genre", "year"])
    assert counts["pairs"] == 5 and counts["films"] == 2
    assert counts["unique_strings"] == 4                          # A. B. C. D.
    assert counts["unique_per_100k_pairs"] == pytest.approx(80_000)  # 4 / 5 pairs
    assert counts["metadata_strings_estimated"] == 4              # 2 films x 2 fields
    assert counts["metadata_per_100k_pairs_estimated"] == pytest.approx(80_000)
    german = count_context_strings(path, "de-en", DOC)             # the source side of de-en
    assert german["unique_strings"] == 1 and german["unique_per_100k_pairs"] == pytest.approx(20_000)
    assert german["metadata_strings_estimated"] == 0


def test_projection_arithmetic():
    got = project_build_time({"a": 1e6, "b": 2e6}, strings_per_pair=0.5, strings_per_s=100, threads=(1, 4))
    # two directions per pair: a 1e6 strings, b 2e6; 3e6 strings at 100/s = 30,000 s = 8.33 h; 4 threads 2.08 h
    assert got["strings"] == {"a": pytest.approx(1e6), "b": pytest.approx(2e6)}
    assert got["total_strings"] == pytest.approx(3e6)
    assert got["hours"] == {"1": pytest.approx(30_000 / 3600), "4": pytest.approx(7_500 / 3600)}


def test_paper_pairs_are_table_1s():
    assert paper_pairs() == {"en-de": pytest.approx(5.3e6), "en-fr": pytest.approx(14.7e6),
                             "en-pl": pytest.approx(12.9e6), "en-ru": pytest.approx(12.4e6)}


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


def test_throughput_reports_both_orders():
    texts = ["a" * n for n in (5, 1, 9, 3)]
    got = encoder_throughput(fake_encoder, texts, batch_size=2)
    assert got["strings"] == 4 and got["mean_chars"] == pytest.approx(4.5)
    assert got["strings_per_s_first_seen"] > 0 and got["strings_per_s_by_length"] > 0


def test_command_line(write_corpus, tmp_path):
    out = tmp_path / "scale.json"
    run = subprocess.run([sys.executable, "-m", "mtcue.cli", "bench-embed-scale", "--corpus", str(films(write_corpus)),
                          "--direction", "en-de", "--columns", "doc0,doc1,doc2,genre,year",
                          "--encoder", "all-MiniLM-L6-v2", "--sample", "3", "--project-threads", "1", "4",
                          "--out", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = json.loads(out.read_text())
    assert got["unique_strings"] == 4 and got["metadata_strings_estimated"] == 4 and got["torch_threads"] == 1
    speed = got["encoders"]["all-MiniLM-L6-v2"]
    assert speed["strings"] == 3 and set(speed["projection"]["hours"]) == {"1", "4"}
    # (4 + 4) strings / 5 pairs, two directions per pair, Table 1's 45.3M pairs
    assert speed["projection"]["total_strings"] == pytest.approx(45.3e6 * 8 / 5 * 2)
