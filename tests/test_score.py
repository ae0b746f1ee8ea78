import hashlib
import json
import re

import pytest
import sacrebleu

from conftest import make_sample
from mtcue.evaluation.score import (
    bleu,
    indistinguishable_from_best,
    mean_from_stats,
    mean_stats,
    paired_bootstrap,
    phenomenon_accuracy,
    score_files,
)

REFS = [
    "Did you see the letter?",
    "Good evening, sir.",
    "The cat sat on the mat with a hat.",
    "I don't know what you mean.",
]
HYPS = [
    "Did you see that letter?",
    "Good evening sir.",
    "The cat sat on a mat with the hat.",
    "I do not know what you mean.",
]
BAD = ["No.", "Hello there friend.", "A dog ran.", "Yes yes yes."]

FORMALITY = {"gold": "formal", "markers": {"formal": ["Sie", "Ihnen"], "informal": ["du", "dich"]}}


# The second case has no matching 4-gram, so sacrebleu's default exp smoothing matters.
@pytest.mark.parametrize(
    "hyps, refs", [(HYPS, REFS), (["the cat sat down here"], ["the cat sat up here now"])]
)
def test_bleu_equals_sacrebleu_corpus_bleu_with_13a_signature(hyps, refs):
    result = bleu(hyps, refs)
    expected = sacrebleu.corpus_bleu(hyps, [refs])
    assert result["bleu"] > 0
    assert result["bleu"] == pytest.approx(expected.score, abs=1e-9)
    assert result["bleu_stats"] == [expected.sys_len, expected.ref_len, *expected.counts, *expected.totals]
    assert "tok:13a" in result["bleu_signature"]
    assert "nrefs:1" in result["bleu_signature"]
    assert len(result["segment_stats"]) == len(hyps)


def test_bleu_rejects_length_mismatch_naming_both_lengths():
    with pytest.raises(ValueError, match="4 hypotheses but 3 references"):
        bleu(HYPS, REFS[:3])


def test_phenomenon_accuracy_counts_hand_made_case():
    gender = {"gold": "feminine", "markers": {"feminine": ["müde"], "masculine": ["müder"]}}
    informal = {**FORMALITY, "gold": "informal"}
    hyps = [
        "Haben Sie den Brief gesehen?",  # formal: correct
        "Hast du den Brief gesehen?",  # formal: incorrect
        "Ich weiß.",  # formal: ignored, no marker
        "Sie sagt, du lügst.",  # formal: ignored, both values
        "Kannst du, bitte?",  # informal gold, "du," stripped: correct
        "„Sie“ kommen?",  # formal, typographic quotes stripped: correct
        "sie kommt",  # formal, case-sensitive: ignored
        "Hallo.",  # no labels
        "Hallo.",  # empty labels
        "Ich bin müder.",  # gender: incorrect; formality ignored
    ]
    labels = [
        {"formality": FORMALITY},
        {"formality": FORMALITY},
        {"formality": FORMALITY},
        {"formality": FORMALITY},
        {"formality": informal},
        {"formality": FORMALITY},
        {"formality": FORMALITY},
        None,
        {},
        {"formality": FORMALITY, "speaker_gender": gender},
    ]
    result = phenomenon_accuracy(hyps, labels)
    assert result["formality"] == {"correct": 3, "incorrect": 1, "ignored": 4, "accuracy": 0.75}
    assert result["speaker_gender"] == {"correct": 0, "incorrect": 1, "ignored": 0, "accuracy": 0.0}
    assert result["all"] == {"correct": 3, "incorrect": 2, "ignored": 4, "accuracy": 0.6}


def test_phenomenon_accuracy_is_none_without_judged_samples():
    result = phenomenon_accuracy(["Ich weiß."], [{"formality": FORMALITY}])
    assert result["formality"]["accuracy"] is None
    assert result["all"] == {"correct": 0, "incorrect": 0, "ignored": 1, "accuracy": None}


def test_paired_bootstrap_identical_systems_are_not_different():
    stats = bleu(HYPS, REFS)["segment_stats"]
    result = paired_bootstrap(stats, stats, n=200, seed=1)
    assert result["p_value"] == 1.0
    assert result["score_a"] == result["score_b"] == pytest.approx(bleu(HYPS, REFS)["bleu"])


def test_paired_bootstrap_reference_beats_bad_system():
    perfect = bleu(REFS, REFS)["segment_stats"]
    bad = bleu(BAD, REFS)["segment_stats"]
    assert paired_bootstrap(perfect, bad, n=200, seed=1)["p_value"] < 0.05
    assert paired_bootstrap(bad, perfect, n=200, seed=1)["p_value"] == 1.0


def test_paired_bootstrap_is_reproducible_with_seed():
    good = bleu(HYPS, REFS)["segment_stats"]
    bad = bleu(BAD, REFS)["segment_stats"]
    assert paired_bootstrap(good, bad, n=100, seed=7) == paired_bootstrap(good, bad, n=100, seed=7)


def test_mean_stats_sum_to_total_and_count():
    assert mean_stats([10.0, 20.0, 60.0]).tolist() == [[10.0, 1.0], [20.0, 1.0], [60.0, 1.0]]
    assert mean_from_stats(mean_stats([10.0, 20.0, 60.0]).sum(0)) == 30.0


def test_paired_bootstrap_of_segment_means_matches_the_exact_probability():
    # Differences A - B per segment: +1, +1, -3. A resample of 3 segments has mean difference
    # (3 - 4k)/3 with k the number of draws of the third segment, so A is strictly better iff
    # k = 0: P(not better) = 1 - (2/3)^3 = 19/27.
    a, b = mean_stats([1.0, 1.0, 0.0]), mean_stats([0.0, 0.0, 3.0])
    result = paired_bootstrap(a, b, mean_from_stats, n=20000, seed=3)
    assert result["p_value"] == pytest.approx(19 / 27, abs=0.01)
    assert (result["score_a"], result["score_b"]) == (pytest.approx(2 / 3), pytest.approx(1.0))
    # Lower is better (e.g. an error rate): A is strictly better iff k >= 1.
    lower = paired_bootstrap(a, b, mean_from_stats, n=20000, seed=3, higher_is_better=False)
    assert lower["p_value"] == pytest.approx(8 / 27, abs=0.01)


def test_paired_bootstrap_of_segment_means_extremes():
    b = mean_stats([50.0, 60.0, 70.0, 40.0])
    assert paired_bootstrap(b, b, mean_from_stats, n=500)["p_value"] == 1.0
    assert paired_bootstrap(mean_stats([51.0, 61.0, 71.0, 41.0]), b, mean_from_stats, n=500)["p_value"] == 0.0


def test_paired_bootstrap_rejects_different_segment_counts():
    with pytest.raises(ValueError, match="equally many"):
        paired_bootstrap(mean_stats([1.0, 2.0]), mean_stats([1.0]), mean_from_stats)


def test_indistinguishable_from_best_marks_a_three_system_column():
    # 3 segments. "best" beats "loser" by 10 on every segment: p = 0. Against "near" the
    # differences are +1, +1, -1: best is strictly better unless at least 2 of the 3 draws hit
    # the third segment (mean difference (3 - 2k)/3 > 0 iff k <= 1):
    # P(not better) = P(k >= 2) = 3 * (1/3)^2 * (2/3) + (1/3)^3 = 7/27 > 0.05, so tied.
    systems = {
        "near": mean_stats([60.0, 60.0, 61.0]),
        "best": mean_stats([61.0, 61.0, 60.0]),
        "loser": mean_stats([51.0, 51.0, 50.0]),
    }
    result = indistinguishable_from_best(systems, mean_from_stats, alpha=0.05, n=20000, seed=5)
    assert result.best == "best"
    assert result.tied == {"near"}
    assert result.p_values["near"] == pytest.approx(7 / 27, abs=0.01)
    assert result.p_values["loser"] == 0.0
    # A single system is the best of its column with nothing tied.
    alone = indistinguishable_from_best({"only": mean_stats([1.0])}, mean_from_stats)
    assert (alone.best, alone.tied, alone.p_values) == ("only", frozenset(), {})


def test_indistinguishable_from_best_on_bleu_segment_stats():
    systems = {"bad": bleu(BAD, REFS)["segment_stats"], "good": bleu(HYPS, REFS)["segment_stats"],
               "same": bleu(HYPS, REFS)["segment_stats"]}
    result = indistinguishable_from_best(systems, n=200, seed=1)
    assert result.best == "good"  # the first of two equal scores
    assert result.tied == {"same"} and result.p_values["same"] == 1.0
    assert result.p_values["bad"] < 0.05


def _write_corpus(path, hyps_de, labels_de):
    rows = []
    for i, (en, de, lab) in enumerate(zip(REFS, hyps_de, labels_de)):
        row = make_sample(i, en=en, de=de)
        if lab is not None:
            row["labels"] = {"de": lab}
        rows.append(json.dumps(row, ensure_ascii=False))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_score_files_en_de(tmp_path):
    refs_de = ["Haben Sie den Brief gesehen?", "Guten Abend.", "Die Katze.", "Ich weiß nicht."]
    corpus = tmp_path / "test.jsonl"
    _write_corpus(corpus, refs_de, [{"formality": FORMALITY}, None, None, None])
    # U+2028 inside a line must not split it (str.splitlines would).
    hyps = ["Hast du den Brief gesehen?", "Guten\u2028Abend.", "Die Katze.", ""]
    hyp_file = tmp_path / "hyp.de"
    hyp_file.write_text("\n".join(hyps) + "\n", encoding="utf-8")

    result = score_files(hyp_file, corpus, "en-de")

    assert result["n_segments"] == 4
    assert result["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs_de]).score)
    assert result["phenomena"]["formality"]["incorrect"] == 1
    assert result["hyp_sha256"] == hashlib.sha256(hyp_file.read_bytes()).hexdigest()
    assert result["hyp_path"] == str(hyp_file)


def test_score_files_reverse_direction_reads_english_side(tmp_path):
    corpus = tmp_path / "test.jsonl"
    _write_corpus(corpus, ["a", "b", "c", "d"], [None] * 4)
    hyp_file = tmp_path / "hyp.en"
    hyp_file.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    result = score_files(hyp_file, corpus, "de-en")
    assert result["bleu"] == pytest.approx(100.0)
    assert result["phenomena"]["all"]["accuracy"] is None


def test_score_files_line_count_mismatch_names_both_files(tmp_path):
    corpus = tmp_path / "test.jsonl"
    _write_corpus(corpus, ["a", "b", "c", "d"], [None] * 4)
    hyp_file = tmp_path / "hyp.de"
    hyp_file.write_text("a\nb\nc\n", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        score_files(hyp_file, corpus, "en-de")
    assert str(hyp_file) in str(err.value) and "3 hypotheses" in str(err.value)
    assert str(corpus) in str(err.value) and "4 samples" in str(err.value)


def test_hypotheses_with_a_byte_order_mark_or_not_utf8(tmp_path):
    corpus = tmp_path / "test.jsonl"
    refs = ["Hast du den Brief heute gesehen?", "Wir gehen morgen zusammen ins Kino."]
    _write_corpus(corpus, refs, [None] * 2)
    hyp_file = tmp_path / "hyp.de"
    hyp_file.write_bytes(("\ufeff" + "\r\n".join(refs) + "\r\n").encode())   # as Windows Notepad saves it
    assert score_files(hyp_file, corpus, "en-de")["bleu"] == pytest.approx(100.0)
    hyp_file.write_bytes("\n".join(refs).encode("utf-16"))   # with its own byte order mark, FF FE
    with pytest.raises(ValueError, match=r"hyp\.de:1: not UTF-8 \(byte 0xff at byte 1 of the line\)"):
        score_files(hyp_file, corpus, "en-de")


def _score(tmp_path, direction):
    from mtcue.cli import main

    return main(["score", "--hyps", str(tmp_path / "hyp.de"), "--corpus", str(tmp_path / "test.jsonl"), "--direction",
                 direction, "--model", "base", "--split", "test", "--study", "t", "--config-hash", "h", "--out",
                 str(tmp_path / "r.json")])


@pytest.mark.parametrize("direction, message", [
    ("en-fr", r"test\.jsonl:1: a sample in de and en, but the direction is en-fr: give the corpus of en-fr, or the "
              r"corpus's own direction \(--direction\)"),  # KeyError: 'fr' before
    ("ende", "--direction 'ende' is not a language pair such as en-de"),
])
def test_score_with_another_direction_than_the_corpus_is_an_error(tmp_path, caplog, direction, message):
    _write_corpus(tmp_path / "test.jsonl", ["a", "b", "c", "d"], [None] * 4)
    (tmp_path / "hyp.de").write_text("a\nb\nc\nd\n", encoding="utf-8")
    assert _score(tmp_path, direction) == 1
    assert re.search(message, caplog.text) and not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("label, message", [
    ({"formality": {"gold": "formal"}}, r"'labels\.de\.formality\.markers' must map each value to a list of marker"),
    ({"formality": {"gold": "formal", "markers": {"formal": "Sie"}}}, r"'labels\.de\.formality\.markers' must map"),
    ({"formality": "formal"}, r"'labels\.de\.formality' must be an object with 'gold'"),
    ("formal", r"'labels\.de' must map phenomena to \{gold, markers\}"),
])
def test_a_corpus_label_without_gold_or_markers_is_named(tmp_path, caplog, label, message):
    _write_corpus(tmp_path / "test.jsonl", ["a", "b", "c", "d"], [None, label, None, None])
    (tmp_path / "hyp.de").write_text("a\nb\nc\nd\n", encoding="utf-8")
    assert _score(tmp_path, "en-de") == 1
    assert re.search(r"test\.jsonl:2: " + message, caplog.text) and not (tmp_path / "r.json").exists()


def test_a_corpus_line_nested_too_deeply_is_named(tmp_path, caplog):
    _write_corpus(tmp_path / "test.jsonl", ["a"], [None])
    with open(tmp_path / "test.jsonl", "a") as corpus:
        corpus.write("[" * 100_000 + "]" * 100_000 + "\n")
    (tmp_path / "hyp.de").write_text("a\nb\n", encoding="utf-8")
    assert _score(tmp_path, "en-de") == 1
    assert re.search(r"test\.jsonl:2: JSON nested too deeply to read", caplog.text)  # RecursionError, no file before
