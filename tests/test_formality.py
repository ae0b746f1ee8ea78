"""IWSLT22 zero-shot formality (Table 5): the official labelling rule on hand-made cases, best-prompt
scoring, prompted stores, and the table from records."""
import json

import numpy as np
import pandas as pd
import pytest

from conftest import make_sample
from mtcue.cli import main
from mtcue.context.prompted import build_prompted_stores, prompt_column
from mtcue.context.store import ContextStore
from mtcue.evaluation.formality import FormalityTestSet, official_label, score_formality
from mtcue.io import write_lines
from mtcue.records import read_record, write_record
from mtcue.reporting.formality import formality_table, write_formality_table

FORMAL_REF = "Können [F]Sie[/F] mir helfen? [F]Ihr[/F] Auto steht dort."
INFORMAL_REF = "Kannst [F]du[/F] mir helfen? [F]Dein[/F] Auto steht dort."


@pytest.mark.parametrize("hyp, expected", [
    ("Können Sie mir helfen?", "FORMAL"),
    ("Kannst du mir helfen?", "INFORMAL"),
    ("Hilfe!", "NEUTRAL"),
    ("Sie und du", "OTHER"),
    ("Können Sie, bitte", "NEUTRAL"),      # "Sie," is not the token "Sie": attached punctuation blocks it
    ("Können sie mir helfen?", "NEUTRAL"),  # case counts
])
def test_official_rule_labels_hand_made_hypotheses(hyp, expected):
    from mtcue.evaluation.formality import annotated_phrases

    assert official_label(hyp, annotated_phrases(FORMAL_REF), annotated_phrases(INFORMAL_REF)) == expected


def test_the_gold_formal_reference_scores_1_against_itself(tmp_path):
    formal, informal = tmp_path / "ref.formal.annotated.de", tmp_path / "ref.informal.annotated.de"
    write_lines(formal, [FORMAL_REF, "[F]Sind Sie[/F] sicher?"])
    write_lines(informal, [INFORMAL_REF, "[F]Bist du[/F] sicher?"])
    hyps = tmp_path / "hyps.txt"
    write_lines(hyps, [FORMAL_REF.replace("[F]", "").replace("[/F]", ""), "Sind Sie sicher?"])
    scores = score_formality({"none": hyps}, [], FormalityTestSet.from_references(formal, informal))
    assert (scores["formal"], scores["informal"], scores["average"]) == (1.0, 0.0, 0.5)


def corpus(tmp_path, golds):
    """en-de lines whose German shows Sie (formal) or du (informal); None: no formality label."""
    samples = []
    for i, gold in enumerate(golds):
        labels = {} if gold is None else {"de": {"formality": {"gold": gold, "markers": {"formal": ["Sie"],
                                                                                          "informal": ["du"]}}}}
        samples.append({**make_sample(i, en="Can you help?", de="Kannst du helfen?"), "labels": labels})
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    return path


PROMPTS = [{"id": "f0", "attribute": "formal", "text": "Formal conversation"},
           {"id": "f1", "attribute": "formal", "text": "Biography, Drama,"},
           {"id": "i0", "attribute": "informal", "text": "Informal chit-chat"}]


def test_each_register_keeps_its_best_prompt(tmp_path):
    test_set = FormalityTestSet.from_corpus(corpus(tmp_path, ["formal", "informal", "formal", None, "formal"]), "en-de")
    outputs = {  # the unlabelled 4th line is not judged, whatever it says
        "f0": ["Können Sie helfen?", "Kannst du helfen?", "Hilfe?", "Sie du", "Sie und du"],  # 1 F, 1 I: 1/2
        "f1": ["Können Sie helfen?", "Können Sie helfen?", "Können Sie?", "du", "Hilfe"],      # 3 F: 3/3
        "i0": ["Kannst du?", "Kannst du?", "Können Sie?", "Sie", "Kannst du?"],                # 3 I, 1 F: 3/4
    }
    paths = {}
    for prompt, lines in outputs.items():
        paths[prompt] = tmp_path / f"{prompt}.txt"
        write_lines(paths[prompt], lines)
    scores = score_formality(paths, PROMPTS, test_set)
    assert [p["accuracy"] for p in scores["prompts"]] == [0.5, 1.0, 0.75]
    assert scores["prompts"][0]["counts"] == {"FORMAL": 1, "INFORMAL": 1, "NEUTRAL": 1, "OTHER": 1}
    assert (scores["formal"], scores["informal"], scores["average"]) == (1.0, 0.75, 0.875)
    assert scores["best_prompt"] == {"formal": "f1", "informal": "i0"} and scores["lines"] == 4
    with pytest.raises(ValueError, match=r"hypotheses for prompts \['f0'\]"):
        score_formality({"f0": paths["f0"]}, PROMPTS, test_set)


def test_cli_writes_a_formality_record_and_refuses_a_set_without_labels(tmp_path):
    path = corpus(tmp_path, ["formal", "informal"])
    hyps = tmp_path / "base.txt"
    write_lines(hyps, ["Können Sie helfen?", "Können Sie helfen?"])
    out = tmp_path / "record.json"
    args = ["score-formality", "--hyps", f"none={hyps}", "--direction", "en-de", "--model", "base",
            "--study", "t", "--config-hash", "h", "--out", str(out)]
    assert main([*args, "--corpus", str(path)]) == 0
    record = read_record(out, "formality")
    assert (record["formal"], record["informal"]) == (1.0, 0.0)  # a model without context: two shares of one output
    unlabelled = tmp_path / "unlabelled"
    unlabelled.mkdir()
    assert main([*args, "--corpus", str(corpus(unlabelled, [None, None]))]) == 1


def vector_store(tmp_path):
    """A 2-d store: doc0, doc1, genre, cue1; test rows point at vectors 3, 1 and (no doc0) -1."""
    folder = tmp_path / "store"
    folder.mkdir()
    vectors = np.arange(10, dtype=np.float32).reshape(5, 2)
    np.save(folder / "vectors.npy", vectors)
    np.save(folder / "test.index.npy", np.array([[3, 0, 2, 4], [1, 3, -1, -1], [-1, 1, 2, 4]], dtype=np.int32))
    manifest = {"kind": "vectors", "model": "fake", "pooling": "mean", "dim": 2, "dtype": "float32", "n_vectors": 5,
                "columns": ["doc0", "doc1", "genre", "cue1"], "doc_columns": 2, "normalize": False, "splits": {"test": 3}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder, vectors


def test_a_prompted_store_holds_the_sentence_and_the_prompt_only(tmp_path):
    folder, vectors = vector_store(tmp_path)
    encoder = lambda texts: np.array([[100.0 + len(t), -1.0] for t in texts], dtype=np.float32)  # noqa: E731
    build_prompted_stores(folder, {"f0": "Formal conversation", "i0": "Informal chit-chat"}, "genre",
                          tmp_path / "prompts", encoder)
    for prompt, text in (("f0", "Formal conversation"), ("i0", "Informal chit-chat")):
        store = ContextStore(tmp_path / "prompts" / prompt)
        index = store.index("test")
        assert index[:, 1].tolist() == [-1, -1, -1] and index[:, 3].tolist() == [-1, -1, -1]
        # doc0: the same vectors as in the parent (3 and 1), renumbered; the third line has none
        np.testing.assert_array_equal(store.vectors[index[:2, 0]], vectors[[3, 1]])
        assert index[2, 0] == -1
        np.testing.assert_array_equal(store.vectors[index[:, 2]], [[100.0 + len(text), -1.0]] * 3)
        assert store.manifest["prompt"]["text"] == text and len(store.vectors) == 3


def test_tagging_reads_a_prompt_it_never_saw_as_the_unknown_tag(tmp_path):
    folder = tmp_path / "tags"
    folder.mkdir()
    (folder / "tags.json").write_text(json.dumps(["<unk>", "Drama", "Formal conversation"]))
    np.save(folder / "test.index.npy", np.array([[5, -1, 1]], dtype=np.int32))
    (folder / "manifest.json").write_text(json.dumps({"kind": "tags", "n_tags": 6, "vocab": "tags.json",
                                                      "columns": ["doc0", "doc1", "genre"], "doc_columns": 2,
                                                      "splits": {"test": 1}}))
    build_prompted_stores(folder, {"f0": "Formal conversation", "i0": "Informal chit-chat"}, "genre", tmp_path / "p")
    assert ContextStore(tmp_path / "p" / "f0").index("test").tolist() == [[5, -1, 2]]
    assert ContextStore(tmp_path / "p" / "i0").index("test").tolist() == [[5, -1, 0]]


def test_the_prompt_goes_where_the_model_reads_it():
    assert prompt_column(["doc0", "doc1", "genre", "plot"]) == "genre"
    assert prompt_column(["doc0", "doc1", "doc2"]) == "doc1"
    with pytest.raises(ValueError, match="no column for a prompt"):
        prompt_column(["doc0"])


def test_table5_from_records_beside_the_papers_rows(tmp_path):
    def record(model, direction, formal, informal, prompts=PROMPTS):
        return {"kind": "formality", "model": model, "direction": direction, "formal": formal, "informal": informal,
                "average": (formal + informal) / 2, "best_prompt": {"formal": "f1", "informal": "i0"},
                "prompts": [{**p, "counts": {}} for p in prompts], "lines": 40, "test_set": "test.jsonl",
                "config_hash": "h", "git_commit": "c", "study": "demo"}
    records = [record("base", "en-de", 0.75, 0.25, []), record("mtcue", "en-de", 1.0, 0.9),
               record("mtcue", "en-ru", 0.5, 0.5)]
    df = formality_table(records, ["base", "mtcue"])
    assert df.loc["MTCUE", ("en-de", "average")] == pytest.approx(95.0)
    assert pd.isna(df.loc["BASE", ("en-ru", "formal")])
    write_formality_table(records, ["base", "mtcue"], tmp_path / "t5.csv", tmp_path / "t5.md")
    md = (tmp_path / "t5.md").read_text()
    assert "| MTCUE | 100.0 | 90.0 | 95.0 |" in md
    assert "| MTCUE (zero-shot) | 100.0 | 99.4 | 99.7 |" in md  # the paper's en-ru row
    assert "Best prompt (formal / informal): MTCUE: f1 / i0." in md
    assert (tmp_path / "t5.html").exists()
    write_record(tmp_path / "r.json", records[0])  # the record kind's required fields
