import hashlib
import io
import json
import logging
import re

import numpy as np
import pytest

from conftest import make_sample
from mtcue.context.embed import (
    build_stores,
    context_strings,
    load_encoder,
    store_size_report,
)

COLUMNS = ["doc0", "doc1", "doc2", "genre", "year", "cue1"]


def fake_encoder(texts):
    """A deterministic stand-in: the vector is a function of the string alone."""
    return np.stack([np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], dtype=np.uint8).astype(np.float32)
                     for t in texts])


fake_encoder.dim = 16


def corpus(write_corpus):
    meta = {"genre": "Comedy", "year": "Released in 2009"}
    train = [make_sample(0, en="Hello.", meta=meta),
             make_sample(1, en="Hi there.", previous_en=["Hello."], meta=meta, cues=["Formal"]),
             make_sample(2, en="Bye.", previous_en=["Hi there.", "Hello."], meta={"genre": "Drama"})]
    test = [make_sample(3, en="Hello.", meta=meta)]      # a string already seen in train
    return {"train": write_corpus(train, "train.jsonl"), "test": write_corpus(test, "test.jsonl")}


def test_context_strings_follow_the_column_order():
    s = make_sample(0, en="Now.", previous_en=["Before.", "Long before."], meta={"genre": "Comedy"}, cues=["Formal"])
    assert context_strings(s, "en", COLUMNS) == ["Now.", "Before.", "Long before.", "Comedy", None, "Formal"]


def test_into_english_the_document_context_is_in_the_source_language_and_metadata_stays_english():
    s = make_sample(0, en="Now.", de="Jetzt.", previous_en=["Before."], previous_de=["Vorher."],
                    meta={"genre": "Genre: Comedy"}, cues=["Formal"])
    assert context_strings(s, "de", COLUMNS) == ["Jetzt.", "Vorher.", None, "Genre: Comedy", None, "Formal"]


def test_store_maps_every_sample_to_its_own_vector_without_duplicates(write_corpus, tmp_path, caplog, monkeypatch):
    paths = corpus(write_corpus)
    monkeypatch.setattr("mtcue.progress.INTERVAL_S", 0)
    with caplog.at_level(logging.INFO, logger="mtcue.progress"):
        manifest = build_stores({"en-de": paths}, {"en-de": tmp_path / "store"}, COLUMNS, "fake",
                                encoder=fake_encoder, batch_size=4)["en-de"]
    progress = [r.getMessage().split(",")[0] for r in caplog.records if r.name == "mtcue.progress"]
    assert progress == ["embed en-de: 4 of 7 strings (57%)", "embed en-de: 7 of 7 strings (100%)",
                        "embed en-de: done 7 strings in 0 s"]
    store = tmp_path / "store"
    vectors = np.load(store / "vectors.npy", mmap_mode="r")
    strings = ["Hello.", "Comedy", "Released in 2009", "Hi there.", "Formal", "Bye.", "Drama"]
    assert manifest["n_vectors"] == len(strings) == vectors.shape[0]       # each unique string once
    assert manifest["columns"] == COLUMNS and manifest["doc_columns"] == 3 and manifest["dim"] == 16
    assert manifest["splits"] == {"train": 3, "test": 1}
    assert len({bytes(np.asarray(v)) for v in vectors}) == len(strings)     # no duplicate rows
    for split, path in paths.items():
        index = np.load(store / f"{split}.index.npy")
        assert index.dtype == np.int32
        for row, line in zip(index, path.read_text().splitlines()):
            for col, text in zip(row, context_strings(json.loads(line), "en", COLUMNS)):
                if text is None:
                    assert col == -1
                else:
                    np.testing.assert_array_equal(vectors[col], fake_encoder([text])[0])
    assert not list(tmp_path.glob(".store.*"))                              # no temporary left over


def test_failed_embedding_leaves_no_store(write_corpus, tmp_path):
    def broken(texts):
        raise RuntimeError("encoder crashed")
    broken.dim = 16
    with pytest.raises(RuntimeError):
        build_stores({"en-de": corpus(write_corpus)}, {"en-de": tmp_path / "store"}, COLUMNS, "x", encoder=broken)
    assert not (tmp_path / "store").exists() and not list(tmp_path.glob(".store.*"))


def counting(encoder):
    """`encoder`, counting how often each string is embedded."""
    calls = {}

    def encode(texts):
        for t in texts:
            calls[t] = calls.get(t, 0) + 1
        return encoder(texts)
    encode.dim, encode.calls = encoder.dim, calls
    return encode


def two_directions(write_corpus):
    """en-de and de-en of one pair: the metadata and cues are shared, the documents are not."""
    meta = {"genre": "Comedy", "year": "Released in 2009"}
    train = [make_sample(0, en="Hello.", de="Hallo.", meta=meta, cues=["Formal"]),
             make_sample(1, en="Hi.", de="Hi.", previous_en=["Hello."], previous_de=["Hallo."], meta=meta)]
    test = [make_sample(2, en="Bye.", de="Tschüss.", previous_en=["Hi."], previous_de=["Hi."], meta=meta)]
    return {"train": write_corpus(train, "train.jsonl"), "test": write_corpus(test, "test.jsonl")}


def test_directions_sharing_strings_embed_each_once_into_stores_as_built_alone(write_corpus, tmp_path):
    paths = two_directions(write_corpus)
    both = counting(fake_encoder)
    build_stores({"en-de": paths, "de-en": paths}, {"en-de": tmp_path / "both-en", "de-en": tmp_path / "both-de"},
                 COLUMNS, "fake", encoder=both)
    # en-de: Hello. Comedy Released.. Formal Hi. Bye. (6); de-en adds Hallo. Tschüss. ("Hi." is shared)
    assert sorted(both.calls) == sorted(["Hello.", "Comedy", "Released in 2009", "Formal", "Hi.", "Bye.",
                                         "Hallo.", "Tschüss."])
    assert set(both.calls.values()) == {1}
    for direction, out in (("en-de", "both-en"), ("de-en", "both-de")):
        alone = counting(fake_encoder)
        build_stores({direction: paths}, {direction: tmp_path / f"alone-{direction}"}, COLUMNS, "fake",
                     encoder=alone)
        for name in ("manifest.json", "train.index.npy", "test.index.npy", "vectors.npy"):
            assert (tmp_path / out / name).read_bytes() == (tmp_path / f"alone-{direction}" / name).read_bytes()
    assert len(alone.calls) == 6  # de-en alone: Hallo. Hi. Tschüss. Comedy Released.. Formal


def test_shared_embedding_with_the_bundled_encoder_gives_the_vectors_embedded_alone(write_corpus, tmp_path):
    """Batches differ (a later direction embeds only its new strings): the vectors agree to float noise."""
    paths, encode = two_directions(write_corpus), load_encoder("all-MiniLM-L6-v2", device="cpu")
    build_stores({"en-de": paths, "de-en": paths}, {"en-de": tmp_path / "en", "de-en": tmp_path / "de"},
                 COLUMNS, "all-MiniLM-L6-v2", encoder=encode)
    build_stores({"de-en": paths}, {"de-en": tmp_path / "alone"}, COLUMNS, "all-MiniLM-L6-v2", encoder=encode)
    np.testing.assert_array_equal(np.load(tmp_path / "de" / "train.index.npy"),
                                  np.load(tmp_path / "alone" / "train.index.npy"))
    np.testing.assert_allclose(np.load(tmp_path / "de" / "vectors.npy"), np.load(tmp_path / "alone" / "vectors.npy"),
                               rtol=0, atol=1e-5)


def vector_of(store, split, sample, column):
    row = np.load(store / f"{split}.index.npy")[sample, COLUMNS.index(column)]
    return np.load(store / "vectors.npy")[row]


def test_random_vector_store_gives_each_string_its_own_fixed_vector(write_corpus, tmp_path):
    """The "no MINILM-V2" ablation (`random-384`): a store like a sentence encoder's, but each unique
    string's vector is random, seeded by the string alone: equal strings get equal vectors in every
    split, store and run; different strings independent ones, unit norm on average as MiniLM's."""
    paths = corpus(write_corpus)
    manifest = build_stores({"en-de": paths}, {"en-de": tmp_path / "all"}, COLUMNS, "random-384")["en-de"]
    assert (manifest["model"], manifest["dim"], manifest["n_vectors"]) == ("random-384", 384, 7)
    store = tmp_path / "all"
    vectors = np.load(store / "vectors.npy")
    # "Hello." is doc0 of train sample 0, doc1 of sample 1, doc2 of sample 2 and doc0 of the test sample
    hello = vector_of(store, "train", 0, "doc0")
    for split, sample, column in (("train", 1, "doc1"), ("train", 2, "doc2"), ("test", 0, "doc0")):
        np.testing.assert_array_equal(vector_of(store, split, sample, column), hello)
    # seven different strings: seven vectors, pairwise far apart (independent 384-d draws: cosine ~ 0 +- 0.05)
    cosine = (vectors @ vectors.T) / np.outer(np.linalg.norm(vectors, axis=1), np.linalg.norm(vectors, axis=1))
    assert np.abs(cosine[~np.eye(7, dtype=bool)]).max() < 0.25
    assert np.linalg.norm(vectors, axis=1).mean() == pytest.approx(1.0, abs=0.1)
    # independent of the order, the split and the run: the test split alone, in another store
    build_stores({"en-de": {"test": paths["test"]}}, {"en-de": tmp_path / "test-only"}, COLUMNS, "random-384")
    np.testing.assert_array_equal(vector_of(tmp_path / "test-only", "test", 0, "doc0"), hello)
    np.testing.assert_array_equal(vector_of(tmp_path / "test-only", "test", 0, "genre"),
                                  vector_of(store, "train", 1, "genre"))            # "Comedy"
    np.testing.assert_array_equal(load_encoder("random-384")(["Hello.", "Comedy"])[0], hello)


def test_size_report_against_dense_matrix(write_corpus, tmp_path):
    build_stores({"en-de": corpus(write_corpus)}, {"en-de": tmp_path / "s"}, COLUMNS, "fake", encoder=fake_encoder)
    report = store_size_report(tmp_path / "s")
    assert report["dense_bytes"] == 4 * len(COLUMNS) * 16 * 4
    assert 0 < report["store_bytes"]


def test_bundled_minilm_embeds_offline():
    encode = load_encoder("all-MiniLM-L6-v2", device="cpu")
    vectors = encode(["Formal conversation", "Informal chit-chat", "Formal conversation"])
    assert encode.dim == 384 and vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors[0], vectors[2], rtol=1e-5)
    assert not np.allclose(vectors[0], vectors[1])


def test_cls_pooling_takes_the_first_token_state():
    """NOVOTNEY-CUE's pooling (the paper: DistilBERT's CLS vector), checked on the bundled encoder."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from mtcue.context.embed import resolve_encoder_path

    texts = ["Formal conversation", "I am talking to a woman"]
    cls = load_encoder("all-MiniLM-L6-v2", pooling="cls", device="cpu")(texts)
    mean = load_encoder("all-MiniLM-L6-v2", device="cpu")(texts)
    path = resolve_encoder_path("all-MiniLM-L6-v2")
    tokens = AutoTokenizer.from_pretrained(path)(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        first = AutoModel.from_pretrained(path)(**tokens).last_hidden_state[:, 0].numpy()
    np.testing.assert_allclose(cls, first, rtol=1e-4, atol=1e-5)
    assert cls.shape == mean.shape == (2, 384) and not np.allclose(cls, mean, atol=1e-3)


def test_absent_encoder_says_so():
    with pytest.raises(RuntimeError, match="could not be loaded.*internet"):
        load_encoder("/nonexistent/encoder-path")


# ---- loading an encoder runs no code a model names ------------------------------------------------------------

def evil_encoder(folder, marker):
    """A sentence-transformers folder whose modules.json names its own class: importing it writes `marker`."""
    folder.mkdir()
    (folder / "modeling_evil.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
                                             "class Evil:\n    pass\n")
    (folder / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "", "type": "modeling_evil.Evil"}]))
    return folder


def trained_model(results, encoder):
    """A model folder as the train step leaves it (a checkpoint of the direction's dictionaries, its record,
    SentencePiece model and binarised data), reading sentence vectors of `encoder`: enough for Translator.load
    to reach the encoder."""
    import torch

    from mtcue.records import write_record

    folder = results / "models" / "en-de" / "mtcue"
    folder.mkdir(parents=True)
    rows = torch.zeros(5, 2)  # fairseq's four symbols and the dictionary's one word
    torch.save({"cfg": {"task": {"source_lang": "en", "target_lang": "de"},
                        "model": {"max_source_positions": 64, "max_target_positions": 64}},
                "model": {"encoder.embed_tokens.weight": rows, "decoder.embed_tokens.weight": rows}},
               folder / "checkpoint_best.pt")
    (results / "bin" / "en-de").mkdir(parents=True)
    for lang in ("en", "de"):
        (results / "bin" / "en-de" / f"dict.{lang}.txt").write_text("word 1\n")
    (results / "spm").mkdir()
    (results / "spm" / "en-de.model").write_bytes(b"spm")
    spec = {"type": "mtcue", "seed": 1, "context": {"kind": "vectors", "columns": ["doc0", "cue1"],
                                                    "encoder": str(encoder)}}
    write_record(results / "records" / "train" / "en-de" / "mtcue.json", {
        "kind": "train", "model": "mtcue", "direction": "en-de", "study": "demo", "spec": spec,
        "params": {"total": 1, "trainable": 1}, "epochs": [], "best_epoch": 1, "best_valid_loss": 1.0,
        "config_hash": "h", "git_commit": "c", "model_path": str(folder / "checkpoint_best.pt")})
    return folder


def test_an_encoder_naming_its_own_code_is_refused_in_every_load_and_the_bundled_one_loads(tmp_path, monkeypatch,
                                                                                           caplog):
    from mtcue import Translator
    from mtcue.cli import main
    from mtcue.reporting.tracking import sync_records

    marker = tmp_path / "RAN"
    evil = evil_encoder(tmp_path / "evil", marker)
    refused = f"context encoder {evil}: its modules.json names the module class 'modeling_evil.Evil', not one of"
    with pytest.raises(ValueError, match=refused):
        load_encoder(str(evil))
    folder = trained_model(tmp_path / "results", evil)
    with pytest.raises(ValueError, match=refused):
        Translator.load(folder)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"Hello.\n")))
    assert main(["translate-text", "--model-dir", str(folder)]) == 1
    assert refused in caplog.text
    uri = f"sqlite:///{tmp_path}/results/mlflow.db"
    run_id = sync_records(uri, "demo", [json.loads((tmp_path / "results/records/train/en-de/mtcue.json").read_text())],
                          models={"en-de/mtcue": folder})["en-de/mtcue"]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    with pytest.raises(ValueError, match=refused):
        Translator.load(f"runs:/{run_id}")
    assert not marker.exists()
    # the control: sentence-transformers itself runs the folder's code
    from sentence_transformers import SentenceTransformer

    with pytest.raises(Exception):
        SentenceTransformer(str(evil))
    assert marker.read_text() == "ran"
    # the bundled encoder is built of sentence-transformers' own modules (Transformer, Pooling, Normalize)
    assert load_encoder("all-MiniLM-L6-v2")(["Hello."]).shape == (1, 384)


def encoder_with_dense(folder, activation="torch.nn.modules.activation.ReLU"):
    """The bundled encoder with a Dense module (384 -> 8) after its modules, naming `activation`."""
    import shutil

    import torch
    from sentence_transformers.sentence_transformer.modules import Dense

    from mtcue.pretrained import local_source

    shutil.copytree(local_source("all-MiniLM-L6-v2"), folder)
    modules = json.loads((folder / "modules.json").read_text())
    (folder / "modules.json").write_text(json.dumps(
        [*modules, {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"}]))
    (folder / "3_Dense").mkdir()
    Dense(384, 8, activation_function=torch.nn.ReLU()).save(str(folder / "3_Dense"))
    config = json.loads((folder / "3_Dense" / "config.json").read_text())
    (folder / "3_Dense" / "config.json").write_text(json.dumps({**config, "activation_function": activation}))
    return folder


def test_a_dense_module_naming_a_function_to_call_runs_nothing_and_names_its_file_and_key(tmp_path, monkeypatch):
    import torch.utils
    from sentence_transformers import SentenceTransformer

    marker = tmp_path / "RAN"
    monkeypatch.setattr(torch.utils, "mtcue_probe", lambda: marker.write_text("ran"), raising=False)
    good = encoder_with_dense(tmp_path / "good")
    vectors = load_encoder(str(good))(["Hello.", "Good evening."])
    assert vectors.shape == (2, 8) and vectors.min() == 0  # ReLU, looked up by name
    evil = encoder_with_dense(tmp_path / "evil", "torch.utils.mtcue_probe")
    with pytest.raises(ValueError, match=re.escape(
            f"context encoder module config {evil / '3_Dense' / 'config.json'}: activation_function "
            "'torch.utils.mtcue_probe' is not one of torch.nn's Identity, Tanh, ReLU")):
        load_encoder(str(evil))
    assert not marker.exists()
    SentenceTransformer(str(evil))  # the control: sentence-transformers imports and calls it while loading
    assert marker.read_text() == "ran"


@pytest.mark.parametrize("module, key, value", [("1_Pooling", "pooling_mode_evil", True),
                                                ("", "model_args", {"attn": {"nested": "x"}}),
                                                ("3_Dense", "in_features", {"__class__": "os.system"})])
def test_a_module_config_key_or_value_off_the_allow_list_is_refused_naming_file_and_key(tmp_path, module, key,
                                                                                        value):
    folder = encoder_with_dense(tmp_path / "enc")
    config = folder / module / ("sentence_bert_config.json" if module == "" else "config.json")
    config.write_text(json.dumps({**json.loads(config.read_text()), key: value}))
    with pytest.raises(ValueError, match=re.escape(f"context encoder module config {config}: ") + f".*'{key}'"):
        load_encoder(str(folder))


def test_a_pickle_in_a_dense_modules_weights_runs_nothing_and_names_the_folder(tmp_path):
    import os
    import pickle

    marker = tmp_path / "RAN"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {marker}",)

    folder = encoder_with_dense(tmp_path / "enc")
    (folder / "3_Dense" / "model.safetensors").unlink()
    (folder / "3_Dense" / "pytorch_model.bin").write_bytes(pickle.dumps(Payload()))
    with pytest.raises(ValueError, match=re.escape(f"context encoder weights {folder / '3_Dense'}: a pickle that "
                                                   "names more than tensors")):
        load_encoder(str(folder))
    assert not marker.exists()
