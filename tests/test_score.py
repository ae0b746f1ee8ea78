import hashlib
import json

import pytest
import sacrebleu

from mtcue.score import bleu, paired_bootstrap, phenomenon_accuracy, score_files
from conftest import make_sample

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
    assert result["bleu_a"] == result["bleu_b"] == pytest.approx(bleu(HYPS, REFS)["bleu"])


def test_paired_bootstrap_reference_beats_bad_system():
    perfect = bleu(REFS, REFS)["segment_stats"]
    bad = bleu(BAD, REFS)["segment_stats"]
    assert paired_bootstrap(perfect, bad, n=200, seed=1)["p_value"] < 0.05
    assert paired_bootstrap(bad, perfect, n=200, seed=1)["p_value"] == 1.0


def test_paired_bootstrap_is_reproducible_with_seed():
    good = bleu(HYPS, REFS)["segment_stats"]
    bad = bleu(BAD, REFS)["segment_stats"]
    assert paired_bootstrap(good, bad, n=100, seed=7) == paired_bootstrap(good, bad, n=100, seed=7)


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
