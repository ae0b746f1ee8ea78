"""Context usage (CXMI, Fernandes et al. 2021): hand-computed cross-entropies, the pass without context,
the table and the MLflow metrics. A real model without context (BASE): tests/test_voita2018.py's tiny
training."""
import pandas as pd
import pytest

from mtcue.evaluation.context_usage import cxmi, interval, measure, without_context


def sample(i, previous, labels=None):
    return {"id": f"s{i}", "doc_id": "d", "text": {"en": f"line {i}", "de": f"Zeile {i}"},
            "previous": {"en": previous, "de": []}, "meta": {"genre": "Drama", "plot": None}, "cues": ["Formal"],
            "labels": {"de": labels or {}}}


def test_hand_case():
    # Sentence 1: -2.0 over 2 tokens with context (-1.0 per token), -3.0 without (-1.5): CXMI 0.5.
    # Sentence 2: the same with and without (-1.0 per token over 3): CXMI 0. Mean: 0.25.
    result = cxmi([(-2.0, 2), (-3.0, 3)], [(-3.0, 2), (-3.0, 3)], [["pronoun"], []])
    assert result["cxmi"] == pytest.approx(0.25)
    assert result["cross_entropy"] == pytest.approx({"context": 1.0, "no_context": 1.25})
    assert result["sentence_cxmi"] == pytest.approx([0.5, 0.0])
    assert result["phenomena"]["pronoun"]["cxmi"] == pytest.approx(0.5) and result["phenomena"]["pronoun"]["n"] == 1
    # Bootstrap resamples of {0.5, 0}: their means lie in [0, 0.5], both ends drawn among 200.
    assert interval(result, n=200) == pytest.approx((0.0, 0.5))
    assert interval(result, "pronoun", n=200) == pytest.approx((0.5, 0.5))
    assert "token_cxmi" not in result  # no per-token scores given


def test_p_cxmi_per_token_by_hand():
    # Two tokens: -0.5, -1.5 with context, -1.0, -2.0 without: P-CXMI +0.5 each; the second sentence's first
    # token gains 1.0 and its end of sentence loses 1.0: P-CXMI +1, -1, CXMI 0.
    result = cxmi([(-2.0, 2, [-0.5, -1.5]), (-2.0, 2, [-0.5, -1.5])],
                  [(-3.0, 2, [-1.0, -2.0]), (-2.0, 2, [-1.5, -0.5])])
    assert result["token_cxmi"] == [[0.5, 0.5], [1.0, -1.0]]
    assert result["sentence_cxmi"] == [0.5, 0.0] and result["cxmi"] == 0.25


def test_context_removed_and_scores_paired():
    samples = [sample(0, []), sample(1, ["line 0"], {"pronoun": {"gold": "er"}})]
    assert without_context(samples[1]) == {**samples[1], "previous": {"en": [], "de": []},
                                           "meta": {"genre": None, "plot": None}, "cues": []}
    assert samples[1]["previous"]["en"] == ["line 0"]  # the sample itself is not changed

    def score(batch):  # log-prob -1 per token, -0.5 with a previous line; two tokens each
        return [(-1.0 if s["previous"]["en"] else -2.0, 2) for s in batch]

    result = measure(score, samples, "de")
    assert result["sentence_cxmi"] == [0.0, 0.5] and result["cxmi"] == 0.25
    assert result["phenomena"]["pronoun"]["cxmi"] == 0.5


def test_each_context_source_the_model_reads_counts_and_none_survives_the_pass_without():
    """A scorer that reads the previous lines, the metadata and the cues, each adding its own amount to the
    per-token log-probability: a sentence's CXMI is the sum of what its context holds, so a source left in
    the pass without context, or the passes swapped, changes the numbers. (A real model without context
    giving exactly 0: tests/test_voita2018.py.)"""
    samples = [sample(i, ["line 0"] * (i % 3)) for i in range(5)]
    samples[4] = {**samples[4], "meta": {"genre": None, "plot": None}, "cues": []}

    def score(batch):  # per token: -2, +0.5 with a previous line, +0.25 with metadata, +0.125 with a cue
        return [((-2.0 + 0.5 * bool(s["previous"]["en"]) + 0.25 * any(s["meta"].values()) + 0.125 * bool(s["cues"]))
                 * 4, 4) for s in batch]

    result = measure(score, samples, "de")
    assert result["sentence_cxmi"] == [0.375, 0.875, 0.875, 0.375, 0.5]
    assert result["cxmi"] == pytest.approx(3.0 / 5)
    assert result["cross_entropy"] == {"context": 2.0 - 3.0 / 5, "no_context": 2.0}


def test_unequal_references_and_missing_reference_refused():
    with pytest.raises(ValueError, match="3 tokens with context and 2 without"):
        cxmi([(-1.0, 3)], [(-1.0, 2)])
    with pytest.raises(ValueError, match="sentence 2: a score is not finite"):
        cxmi([(-1.0, 3), (float("nan"), 2)], [(-1.0, 3), (-1.0, 2)])
    bad = sample(0, [])
    del bad["text"]["de"]
    with pytest.raises(ValueError, match="sample s0: no 'de' reference"):
        measure(lambda batch: [], [bad], "de")


def _record(model, result, direction="en-de"):
    return {"kind": "context_usage", "model": model, "direction": direction, "split": "test", "study": "t",
            "without_context": "what it reads", **result}


def test_table_says_which_models_read_their_context(tmp_path):
    from mtcue.experiments.context_usage.table import write_context_usage_table
    from mtcue.reporting.kit import Runs
    from table_links import unlinked_numbers

    reads = cxmi([(-1.0, 1)] * 3, [(-2.0, 1)] * 3, [["pronoun"]] * 3)  # CXMI 1 in every resample
    base = cxmi([(-1.0, 1)] * 3, [(-1.0, 1)] * 3)
    hurt = cxmi([(-2.0, 1)] * 3, [(-1.0, 1)] * 3)  # the context moves it away from the reference
    records = [_record("mtcue", reads), _record("base", base), _record("concat", hurt)]
    tables = tmp_path / "results" / "tables"
    write_context_usage_table(records, tables / "u.csv", tables / "u.md", Runs.of_records(records, tables / "u.html"))
    page = (tables / "u.html").read_text()
    assert unlinked_numbers(page) == [] and 'href="../mlflow/t.html#en-de/concat">-1.0000' in page
    tmp_path = tables
    csv = pd.read_csv(tmp_path / "u.csv").set_index(["model", "group"])
    assert csv.loc[("mtcue", "all"), "cxmi"] == 1.0 and csv.loc[("mtcue", "all"), "reads_context"] == "yes"
    assert csv.loc[("mtcue", "phenomenon=pronoun"), "n"] == 3
    assert csv.loc[("base", "all"), "cxmi"] == 0.0 and csv.loc[("base", "all"), "reads_context"] == "no"
    assert csv.loc[("mtcue", "all"), "cross_entropy_no_context"] == 2.0
    assert csv.loc[("concat", "all"), "cxmi"] == -1.0
    assert csv.loc[("concat", "all"), "reads_context"] == "yes, to its loss"
    md = (tmp_path / "u.md").read_text()
    assert "| MTCUE | +1.0000 [+1.0000, +1.0000] | yes | +1.0000 [+1.0000, +1.0000] |" in md
    assert "| BASE | +0.0000 [+0.0000, +0.0000] | no | n/a |" in md and (tmp_path / "u.html").is_file()
    # the pass without context is out of our models' training distribution, not of Fernandes et al.'s
    assert "contextual-mt's --sample-context-size" in md and "CXMI's pass without context" in md


def test_mlflow_metrics_of_a_context_usage_record():
    from mtcue.reporting.run_contents import _evaluation

    record = _record("mtcue", cxmi([(-1.0, 1), (-1.0, 1)], [(-2.0, 1), (-1.0, 1)], [["pronoun"], []]))
    assert _evaluation(record, {}, {}) == {"test_cxmi": 0.5, "test_cxmi_pronoun": 1.0}


def test_the_record_keeps_what_the_table_resamples(tmp_path):
    from mtcue.records import RecordError, read_record, write_record

    record = {**_record("mtcue", cxmi([(-1.0, 1), (-3.0, 2)], [(-2.0, 1), (-3.0, 2)], [["pronoun"], []])),
              "config_hash": "abc", "git_commit": "unknown"}
    write_record(tmp_path / "u.json", record)
    back = read_record(tmp_path / "u.json")
    assert back["sentence_cxmi"] == [1.0, 0.0] and back["sentence_phenomena"] == [["pronoun"], []]
    del record["sentence_cxmi"]
    with pytest.raises(RecordError, match="sentence_cxmi"):
        write_record(tmp_path / "v.json", record)
