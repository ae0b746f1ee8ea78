"""workflow/scripts/phenomena_ceiling.py: which channel a classifier reads, and how the previous lines name a
character's gender (vocatives said to them, `self` lines they spoke), by hand-made dialogues; the linear probe on
the previous lines' vectors, by hand-made features."""
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))
import phenomena_ceiling as ceiling  # noqa: E402

from conftest import make_sample  # noqa: E402


def sample(previous, plot=None):
    return make_sample(0, en="Did you see it?", previous_en=previous, meta={"plot": plot})


def test_each_channel_reads_its_own_column_only():
    s = sample(["Good evening, Mr Novak."], plot="A retired judge")
    assert ceiling.features(s, ("source",)) == ["s:did", "s:you", "s:see", "s:it"]
    assert ceiling.features(s, ("previous",)) == ["p1:good", "p1:evening", "p1:mr", "p1:novak"]
    assert ceiling.features(s, ("metadata",)) == ["m:a", "m:retired", "m:judge"]


def test_a_self_line_names_the_one_who_said_it_a_vocative_the_one_it_was_said_to():
    """Turns alternate: one line back the addressee spoke (to the speaker), two back the speaker (to the
    addressee). "I'm a grown woman." one back: the addressee is a woman; "Thanks, Mrs Smith." one back: the
    speaker is."""
    assert ceiling.named_gender("I'm a grown woman.", 1, "addressee_gender") == "feminine"
    assert ceiling.named_gender("I'm a grown woman.", 1, "speaker_gender") is None
    assert ceiling.named_gender("I'm a grown woman.", 2, "speaker_gender") == "feminine"
    assert ceiling.named_gender("Thanks, Mrs Smith.", 1, "speaker_gender") == "feminine"
    assert ceiling.named_gender("Thanks, Mrs Smith.", 1, "addressee_gender") is None
    assert ceiling.named_gender("Hey, buddy.", 2, "addressee_gender") == "masculine"
    # the nearest line that names the character decides
    test = [(sample(["It's late.", "I'm a lucky man.", "Thanks, Mrs Smith."]), "masculine"),
            (sample(["It's late."]), "feminine")]
    assert ceiling.named_rule(test, "speaker_gender") == (0.5, 1.0)


def test_a_models_accuracy_on_the_named_lines_counts_those_lines_only():
    """Two lines labelled for speaker gender, only the first named by its previous line; a hypothesis with the
    gold marker on the first and the other marker on the second is right on every named line (1.0), whatever the
    second says; with the markers swapped, wrong on every one (0.0)."""
    def labelled_sample(i, previous):
        s = make_sample(i, en="I was tired.", previous_en=previous)
        s["labels"] = {"pl": {"speaker_gender": {"gold": "feminine",
                                                 "markers": {"feminine": ["byłam"], "masculine": ["byłem"]}}}}
        return s
    samples = [labelled_sample(0, ["Thanks, Mrs Smith."]), labelled_sample(1, ["It's late."])]
    test = [(s, "feminine") for s in samples]
    ids = {s["id"] for s, _ in ceiling.named_lines(test, "speaker_gender")}
    assert ids == {samples[0]["id"]}
    right = ["Wtedy byłam zmęczona.", "Wtedy byłem zmęczony."]
    wrong = right[::-1]
    assert ceiling.accuracy_on(right, samples, "pl", "speaker_gender", ids) == 1.0
    assert ceiling.accuracy_on(wrong, samples, "pl", "speaker_gender", ids) == 0.0


def test_the_probe_reads_the_previous_slots_vectors_in_order_with_zeros_for_a_missing_line():
    """Store columns doc0, doc1, doc2, genre: the probe's features are doc1's vector then doc2's (doc0, the sentence
    itself, and the metadata are left out); index -1 (no such line) reads as zeros."""
    vectors = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    index = np.array([[0, 1, 2, 0], [2, -1, -1, 1]])
    store = SimpleNamespace(vectors=vectors, dim=2, doc_columns=3, index=lambda split: index)
    assert ceiling.previous_vectors(store, "test", [1, 0]).tolist() == [[0, 0, 0, 0], [3, 4, 5, 6]]


def test_the_probe_predicts_the_value_a_feature_carries_and_is_at_chance_on_noise():
    """Gender written in feature 0 (+1 feminine, -1 masculine; feature 1 noise): the probe reads it on unseen lines.
    With feature 0 shuffled against the labels, it cannot: about half right."""
    rng = np.random.default_rng(0)
    gold = ["feminine", "masculine"] * 100
    signal = np.array([1.0 if g == "feminine" else -1.0 for g in gold])
    x = np.c_[signal + rng.normal(0, 0.3, 200), rng.normal(0, 1, 200)]
    predicted = ceiling.probe_predictions(x[:100], gold[:100], x[100:])
    assert sum(p == g for p, g in zip(predicted, gold[100:])) == 100
    shuffled = np.c_[rng.permutation(signal), rng.normal(0, 1, 200)]
    predicted = ceiling.probe_predictions(shuffled[:100], gold[:100], shuffled[100:])
    assert 35 <= sum(p == g for p, g in zip(predicted, gold[100:])) <= 65
