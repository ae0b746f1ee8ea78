"""Few-shot stores: N annotated lines per attribute combination, drawn with a seed, the rest without cues."""
import json
from collections import Counter

import numpy as np
import pytest

from mtcue.cli import main
from mtcue.context.masked import build_masked_store, combinations, select_rows
from mtcue.context.store import ContextStore
from mtcue.context.tags import build_tag_store
from mtcue.data.synth.generator import generate

COLUMNS = ["doc0", "doc1", "genre", "cue1", "cue2", "cue3"]


def test_rows_are_balanced_over_the_combinations_that_occur():
    combos = [("a", "x")] * 10 + [("b", "x")] * 3 + [None] * 5 + [("a", "y")] * 1
    for n in (1, 2, 5):
        keep = select_rows(combos, n, seed=1)
        chosen = Counter(combos[i] for i in np.flatnonzero(keep))
        assert chosen == {("a", "x"): min(n, 10), ("b", "x"): min(n, 3), ("a", "y"): 1}  # never an unannotated line
    assert select_rows(combos, "all", seed=1).tolist() == [c is not None for c in combos]


def test_smaller_settings_are_subsets_and_the_seed_decides():
    combos = [(f"c{i % 4}",) for i in range(400)]
    one, five, thirty = (select_rows(combos, n, seed=7) for n in (1, 5, 30))
    assert one.sum() == 4 and five.sum() == 20 and thirty.sum() == 120
    assert not (one & ~five).any() and not (five & ~thirty).any()
    assert (select_rows(combos, 5, seed=7) == five).all()
    assert (select_rows(combos, 5, seed=8) != five).any()


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    from mtcue.io import write_jsonl

    root = tmp_path_factory.mktemp("corpus")
    paths = {}
    for split, docs in (("train", 30), ("valid", 6), ("test", 6)):
        paths[split] = root / f"{split}.jsonl"
        write_jsonl(paths[split], generate("en-pl", split, docs, 1))
    return paths


@pytest.fixture(scope="module")
def tag_store(corpora, tmp_path_factory):
    out = tmp_path_factory.mktemp("stores") / "tags"
    build_tag_store(corpora, "en-pl", COLUMNS, 2, out)
    return out


def test_a_masked_store_keeps_cues_only_for_the_selected_lines(corpora, tag_store, tmp_path):
    full = ContextStore(tag_store)
    manifest = build_masked_store(tag_store, corpora, 2, seed=1, out_dir=tmp_path / "fs2")
    masked = ContextStore(tmp_path / "fs2")
    assert masked.kind == "tags" and masked.n_tags == full.n_tags
    assert (tmp_path / "fs2" / "tags.json").is_symlink()
    assert json.loads((tmp_path / "fs2" / "tags.json").read_text()) == json.loads((tag_store / "tags.json").read_text())
    cues = [COLUMNS.index(c) for c in ("cue1", "cue2", "cue3")]
    for split in ("train", "valid"):
        before, after = full.index(split), masked.index(split)
        # Everything but the cue columns is untouched.
        np.testing.assert_array_equal(np.delete(after, cues, axis=1), np.delete(before, cues, axis=1))
        kept = (after[:, cues] >= 0).all(axis=1)
        assert not (after[~kept][:, cues] >= 0).any()  # a line shows all its sentences or none
        assert kept.sum() == manifest["masked"]["supervised"][split]
        combos = combinations(map(json.loads, corpora[split].read_text().splitlines()))
        occurring = Counter(combos)
        assert Counter(combos[i] for i in np.flatnonzero(kept)) == {c: min(2, n) for c, n in occurring.items()}
        assert len(occurring) == manifest["masked"]["combinations"][split] > 6
    assert manifest["splits"] == {"train": len(full.index("train")), "valid": len(full.index("valid"))}
    with pytest.raises(ValueError, match="no 'test' split"):
        masked.index("test")  # the EAMT22 test reads the full store


def test_every_model_of_a_setting_sees_the_same_lines(corpora, tag_store, tmp_path):
    """MTCUE's (vectors) and TAGGING's (tags) few-shot stores select the same lines: the selection depends on
    the corpus and the seed only."""
    vectors = tmp_path / "vectors"
    vectors.mkdir()
    index = ContextStore(tag_store)
    manifest = {**index.manifest, "kind": "vectors", "dim": 2, "n_vectors": index.n_tags}
    (vectors / "manifest.json").write_text(json.dumps(manifest))
    np.save(vectors / "vectors.npy", np.zeros((index.n_tags, 2), dtype=np.float32))
    for split in ("train", "valid"):
        np.save(vectors / f"{split}.index.npy", np.asarray(index.index(split)))
    build_masked_store(vectors, corpora, 1, seed=3, out_dir=tmp_path / "v1")
    build_masked_store(tag_store, corpora, 1, seed=3, out_dir=tmp_path / "t1")
    v, t = ContextStore(tmp_path / "v1"), ContextStore(tmp_path / "t1")
    assert v.vectors.shape == (index.n_tags, 2)  # through the link
    np.testing.assert_array_equal(v.index("train")[:, 3:] >= 0, t.index("train")[:, 3:] >= 0)


def test_full_supervision_keeps_every_annotated_line(corpora, tag_store, tmp_path):
    assert main(["mask-store", "--store", str(tag_store), "--corpus", f"train={corpora['train']}",
                 "--corpus", f"valid={corpora['valid']}", "--per-combination", "all", "--seed", "1",
                 "--out", str(tmp_path / "all")]) == 0
    np.testing.assert_array_equal(ContextStore(tmp_path / "all").index("train"), ContextStore(tag_store).index("train"))


def test_wrong_inputs_are_errors(corpora, tag_store, tmp_path):
    with pytest.raises(ValueError, match="positive integer or 'all'"):
        build_masked_store(tag_store, corpora, 0, 1, tmp_path / "x")
    with pytest.raises(ValueError, match=r"missing \['valid'\]"):
        build_masked_store(tag_store, {"train": corpora["train"]}, 1, 1, tmp_path / "x")
    with pytest.raises(ValueError, match="not the corpus of this store"):
        build_masked_store(tag_store, {"train": corpora["valid"], "valid": corpora["valid"]}, 1, 1, tmp_path / "x")
    assert not (tmp_path / "x").exists()
