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


# ---- a TAGGING model reads a tag it never trained on as the unknown tag -------------------------

def tagging_for(store_dir, columns, **arch):
    """A tiny TAGGING model built for training on `columns` of a tag store (as fairseq-train builds it)."""
    import torch

    from mtcue.models.params import DataFreeTask, build_model

    store = ContextStore(store_dir)
    task = DataFreeTask(40, n_tags=store.n_tags, context_kind="tags")
    task.store, task.column_ids = store, [store.columns.index(c) for c in columns]
    task.building_from_checkpoint = False
    torch.manual_seed(0)
    arch = {"encoder_embed_dim": 16, "encoder_ffn_embed_dim": 32, "decoder_ffn_embed_dim": 32,
            "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_layers": 1, "decoder_layers": 1,
            "context_dropout": 0.0, **arch}
    return build_model("tagging", arch, task).eval()


def tag_states(model, tags):
    import torch

    context = torch.tensor([tags])
    states, _ = model.encoder.encode_context(context, torch.zeros_like(context, dtype=torch.bool))
    return states[:, 0]


def test_a_tag_outside_the_models_training_columns_reads_as_unknown(store):
    """The main TAGGING trains on document and metadata columns: the attribute sentences ("Formal") have tags
    in the store's vocabulary but untrained embeddings, so the model reads them as its unknown tag, as the
    paper's TAGGING reads any unseen value. A model trained on the cue columns knows them."""
    import torch

    directory, manifest = store
    vocab = json.loads((directory / manifest["vocab"]).read_text())
    tag = {value: i for i, value in enumerate(vocab)}
    main = tagging_for(directory, ["doc0", "doc1", "genre"])
    assert main.encoder.context_known_tags.tolist() == [True, True, False, True, False]  # <unk>, Hello., Genre: Comedy
    formal, unknown, hello = tag_states(main, [tag["Formal"], 0, tag["Hello."]])
    torch.testing.assert_close(formal, unknown)
    assert not torch.allclose(hello, unknown)
    cued = tagging_for(directory, ["doc0", "cue1"])
    assert cued.encoder.context_known_tags[tag["Formal"]] and cued.encoder.context_known_tags[tag["Informal"]]
    formal, unknown = tag_states(cued, [tag["Formal"], 0])
    assert not torch.allclose(formal, unknown)


def test_a_fine_tuned_tagging_keeps_its_parents_tags_and_old_checkpoints_trust_all(store, tmp_path):
    import torch

    directory, manifest = store
    parent = tagging_for(directory, ["doc0", "genre"])
    torch.save({"args": None, "cfg": None, "model": parent.state_dict(), "last_optimizer_state": None,
                "optimizer_history": [{"criterion_name": "CrossEntropyCriterion", "optimizer_name": "Adam",
                                       "lr_scheduler_state": {}, "num_updates": 0}],
                "extra_state": {"train_iterator": {"epoch": 1}}}, tmp_path / "parent.pt")
    child = tagging_for(directory, ["cue1"], pretrained_base=str(tmp_path / "parent.pt"))
    expected = parent.encoder.context_known_tags | torch.tensor([True, False, True, False, True])  # + Formal, Informal
    assert torch.equal(child.encoder.context_known_tags, expected)
    torch.testing.assert_close(child.encoder.context_tags.weight, parent.encoder.context_tags.weight)
    # A checkpoint written before the model kept its trained tags loads with every tag trusted.
    old = {k: v for k, v in parent.state_dict().items() if k != "encoder.context_known_tags"}
    parent.upgrade_state_dict(old)
    parent.load_state_dict(old)
    assert parent.encoder.context_known_tags.all()


@pytest.mark.parametrize("text, problem", [('["<unk>", "Drama"', "1: not valid JSON"),
                                           ('{"Drama": 1}', "not the tag store's list of tags")])
def test_a_damaged_tag_vocabulary_is_named_when_a_model_reads_it(tmp_path, text, problem):
    import re
    from types import SimpleNamespace

    from mtcue.models.translator import Translator

    (tmp_path / "tags.json").write_text(text)
    translator = Translator.__new__(Translator)  # only what reading the vocabulary needs
    translator.model, translator._tag_vocab = SimpleNamespace(tag_store=tmp_path), None
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / 'tags.json'}:") + ".*" + re.escape(problem)):
        translator._tags()


@pytest.mark.parametrize("content, problem", [(b'["tokens"]', "not a store's manifest (a JSON object)"),
                                              (b'{"kind": "tokens"', "1: not valid JSON"),
                                              (b'{"kind": "\xff"}', "1: not UTF-8")])
def test_a_damaged_store_manifest_is_named_whatever_the_store(tmp_path, content, problem):
    import re

    from mtcue.context.store import ContextStoreError
    from mtcue.context.token_store import TokenStore, open_store

    (tmp_path / "manifest.json").write_bytes(content)
    for read in (open_store, ContextStore, TokenStore):
        with pytest.raises(ContextStoreError, match=re.escape(f"{tmp_path / 'manifest.json'}") + ".*" +
                           re.escape(problem)):
            read(tmp_path)
