"""The real contrastive suites converted to the suite format, from fixtures in the official formats."""
import json

import pytest

from mtcue.corpus import META_FIELDS
from mtcue.data.contrastive_suites import from_evalset, voita2019
from mtcue.data.evalsets import lopes
from mtcue.evaluation.contrastive import evaluate
from mtcue.suites import read_suite


def lopes_files(folder, examples, n_context=5):
    """Lopes et al.'s set in its official layout: the extracted lines (reference, then the contrastive line; five
    context lines each, oldest first) and testset-en-fr.json annotating each example (ContraPro's layout)."""
    files = {"src": [], "trg": [], "csrc": [], "ctrg": []}
    annotation = []
    for src, ref, contrastive, (csrc, ctrg), ref_pronoun, distance in examples:
        files["src"] += [src, src]
        files["trg"] += [ref, contrastive]
        for _ in range(2):
            files["csrc"] += [""] * (n_context - len(csrc)) + csrc
            files["ctrg"] += [""] * (n_context - len(ctrg)) + ctrg
        annotation.append({"src pronoun": "it", "ref pronoun": ref_pronoun, "ante distance": distance,
                           "errors": [{"type": "pronominal coreference", "contrastive": contrastive}]})
    paths = []
    for name, lines in files.items():
        paths.append(folder / name)
        paths[-1].write_text("\n".join(lines) + "\n")
    (folder / "testset-en-fr.json").write_text(json.dumps(annotation, ensure_ascii=False))
    return [*paths, folder / "testset-en-fr.json"]


def test_lopes_official_files_to_suite(tmp_path):
    # The second reference's first word its variant lacks is "mort", not the pronoun: the annotation says "Il".
    paths = lopes_files(tmp_path, [
        ("Where is it?", "Où est-elle ?", "Où est-il ?",
         (["I bought a car.", "The car is new."], ["J'ai acheté une voiture.", "La voiture est neuve."]), "elle", 1),
        ("It is dead.", "Il est mort.", "Elle est morte.", ([], []), "Il", -1)])
    assert lopes(*paths, tmp_path / "lopes.jsonl") == 2
    assert from_evalset("lopes", tmp_path / "lopes.jsonl", tmp_path / "suite.jsonl") == 2
    first, second = read_suite(tmp_path / "suite.jsonl", "en-fr")
    assert first["text"] == {"en": "Where is it?"} and first["previous"] == {"en": ["The car is new.", "I bought a car."]}
    assert first["candidates"] == ["Où est-elle ?", "Où est-il ?"] and first["correct"] == 0
    assert first["rule"] == second["rule"] == "strict"  # ContraPro's evaluate.py, which Lopes et al. reuse
    assert first["group"] == {"category": "it:elle", "pronoun": "elle", "distance": "1"}
    assert second["group"] == {"category": "it:il", "pronoun": "il"}  # no antecedent distance annotated (-1)


def test_lopes_annotation_must_be_the_same_set_with_its_four_pronouns(tmp_path):
    example = ("It is here.", "Il est ici.", "Elle est ici.", ([], []), "il", 0)
    paths = lopes_files(tmp_path, [example, example])
    (tmp_path / "testset-en-fr.json").write_text(json.dumps(json.loads(paths[-1].read_text())[:1]))
    with pytest.raises(ValueError, match=r"testset-en-fr.json: expected a JSON list of 2 examples"):
        lopes(*paths, tmp_path / "lopes.jsonl")
    paths = lopes_files(tmp_path, [example, (*example[:2], "Elles sont ici.", *example[3:])])
    annotation = json.loads(paths[-1].read_text())
    annotation.reverse()  # the annotation in another order than the lines
    paths[-1].write_text(json.dumps(annotation))
    with pytest.raises(ValueError, match=r"entry 0: its contrastive translation is not line 2 of .*trg"):
        lopes(*paths, tmp_path / "lopes.jsonl")
    paths = lopes_files(tmp_path, [(*example[:4], "mort", 0)])
    with pytest.raises(ValueError, match=r"entry 0: 'ref pronoun' 'mort' is none of il, elle, ils, elles"):
        lopes(*paths, tmp_path / "lopes.jsonl")
    assert not (tmp_path / "lopes.jsonl").exists()


def test_the_complete_lopes_set_holds_3500_examples_of_each_pronoun(tmp_path):
    from mtcue.data.evalsets import LOPES_PER_PRONOUN, LOPES_PRONOUNS

    def complete(pronouns):
        return [(f"It is here {i}.", f"{p} est ici {i}.", f"Autre {i}.", ([], []), p, 0) for i, p in enumerate(pronouns)]

    balanced = [p for p in LOPES_PRONOUNS for _ in range(LOPES_PER_PRONOUN)]
    assert lopes(*lopes_files(tmp_path, complete(balanced)), tmp_path / "lopes.jsonl") == 14000
    from_evalset("lopes", tmp_path / "lopes.jsonl", tmp_path / "suite.jsonl")
    groups = [e["group"]["pronoun"] for e in read_suite(tmp_path / "suite.jsonl", "en-fr")]
    assert {p: groups.count(p) for p in LOPES_PRONOUNS} == dict.fromkeys(LOPES_PRONOUNS, 3500)
    skewed = ["il"] * 3501 + ["elle"] * 3499 + ["ils"] * 3500 + ["elles"] * 3500
    with pytest.raises(ValueError, match=r"the complete set holds 3500 examples of each pronoun, this one "
                                         r"\{'il': 3501, 'elle': 3499"):
        lopes(*lopes_files(tmp_path, complete(skewed)), tmp_path / "skewed.jsonl")


META = dict.fromkeys(META_FIELDS)
CONTRAPRO = [
    {"id": "contrapro.000000", "doc_id": "1999_1_2", "text": {"en": "It is red.", "de": "Sie ist rot."},
     "previous": {"en": ["I have a bag."], "de": ["Ich habe eine Tasche."]}, "meta": META, "cues": [],
     "contrastive": ["Er ist rot.", "Es ist rot."],
     "phenomenon": {"src_pronoun": "It", "ref_pronoun": "Sie", "ante_distance": 1}},
    {"id": "contrapro.000001", "doc_id": "1999_1_3", "text": {"en": "I saw it.", "de": "Ich sah ihn."},
     "previous": {"en": [], "de": []}, "meta": META, "cues": [], "contrastive": ["Ich sah sie.", "Ich sah es."],
     "phenomenon": {"src_pronoun": "it", "ref_pronoun": "ihn", "ante_distance": 7}},
]


def write_lines(path, rows):
    path.write_text("".join(r if isinstance(r, str) else json.dumps(r) + "\n" for r in rows))
    return path


def test_contrapro_converted_set_to_suite(tmp_path):
    from_evalset("contrapro", write_lines(tmp_path / "test.jsonl", CONTRAPRO), tmp_path / "suite.jsonl")
    first, second = read_suite(tmp_path / "suite.jsonl", "en-de")
    assert first["candidates"] == ["Sie ist rot.", "Er ist rot.", "Es ist rot."] and first["correct"] == 0
    assert first["rule"] == second["rule"] == "strict"
    assert first["group"] == {"category": "it:sie", "pronoun": "sie", "distance": "1"}
    assert second["group"]["distance"] == ">3" and second["previous"] == {"en": []}


def test_a_set_written_target_first_keeps_english_the_source(tmp_path):
    german_first = [{**c, "text": dict(reversed(c["text"].items())), "previous": dict(reversed(c["previous"].items()))}
                    for c in CONTRAPRO]
    assert list(german_first[0]["text"]) == ["de", "en"]
    from_evalset("contrapro", write_lines(tmp_path / "test.jsonl", german_first), tmp_path / "suite.jsonl")
    first, _ = read_suite(tmp_path / "suite.jsonl", "en-de")
    assert first["text"] == {"en": "It is red."} and first["previous"] == {"en": ["I have a bag."]}
    assert first["candidates"][0] == "Sie ist rot."


@pytest.mark.parametrize("rows, message", [
    ([], r"test.jsonl: no examples"),
    ([CONTRAPRO[0], "{not json\n"], r"test.jsonl:2: not valid JSON"),
    ([{**CONTRAPRO[0], "contrastive": "Er ist rot."}], r"test.jsonl:1: 'contrastive' must list"),
    ([{**CONTRAPRO[0], "contrastive": []}], r"test.jsonl:1: 'contrastive' must list"),
    ([{**CONTRAPRO[0], "text": {"en": "a", "de": "b", "fr": "c"}}], r"test.jsonl:1: 'text' must map exactly two"),
    ([{**CONTRAPRO[0], "text": {"en": "a", "fr": "c"}, "previous": {"en": [], "fr": []}}],
     r"test.jsonl:1: 'text' has languages \['en', 'fr'\], expected \['de', 'en'\]"),
    ([{**CONTRAPRO[0], "meta": {}}], r"test.jsonl:1: 'meta' must have exactly the fields"),
    ([{**CONTRAPRO[0], "phenomenon": {**CONTRAPRO[0]["phenomenon"], "ante_distance": "far"}}],
     r"test.jsonl:1: 'phenomenon.ante_distance' must be a number of sentences .0, 1, ....*, got 'far'"),
    ([{**CONTRAPRO[0], "phenomenon": {**CONTRAPRO[0]["phenomenon"], "ref_pronoun": 3}}],
     r"test.jsonl:1: 'phenomenon.ref_pronoun' must be a string"),
])
def test_bad_converted_sets_are_named(tmp_path, rows, message):
    with pytest.raises(ValueError, match=message):
        from_evalset("contrapro", write_lines(tmp_path / "test.jsonl", rows), tmp_path / "suite.jsonl")
    assert not (tmp_path / "suite.jsonl").exists()


VOITA = [  # consistency_testsets/*.json: src and dst are 4 Moses-tokenised sentences joined by " _eos "
    {"src": "I don 't know . _eos Who ? _eos Your mother . _eos You 've never been caught .",
     "dst": ["Я не знаю . _eos Кто ? _eos Твоя мать . _eos Тебя не ловили .",
             "Я не знаю . _eos Кто ? _eos Твоя мать . _eos Вас не ловили ."], "true_ind": 0, "ctx_dist": 2},
    {"src": "A . _eos B . _eos C . _eos D .", "dst": ["А . _eos Б . _eos В . _eos Г .", "А . _eos Б . _eos В . _eos Д .",
                                                       "А . _eos Б . _eos В . _eos Е ."], "true_ind": 2, "ctx_dist": 3},
]


def test_voita2019_official_json_to_suite(tmp_path):
    (tmp_path / "deixis_test.json").write_text(json.dumps(VOITA, ensure_ascii=False))
    assert voita2019(tmp_path / "deixis_test.json", "voita2019_deixis", tmp_path / "suite.jsonl") == 2
    first, second = read_suite(tmp_path / "suite.jsonl", "en-ru")
    assert first["text"] == {"en": "You 've never been caught ."}  # as published (tokenised)
    assert first["previous"] == {"en": ["Your mother .", "Who ?", "I don 't know ."]}  # most recent first
    assert first["candidates"] == ["Тебя не ловили .", "Вас не ловили ."] and first["correct"] == 0
    assert first["group"] == {"set": "deixis", "distance": 2}
    assert second["candidates"] == ["Г .", "Д .", "Е ."] and second["correct"] == 2
    assert first["rule"] == second["rule"] == "first_among_tied"  # evaluate_consistency.py's argmin
    # Voita's scorer (argmin of losses) and ours agree where there are no ties
    result = evaluate([first, second], [[(-1.0, 3), (-2.0, 3)], [(-3.0, 1), (-2.5, 1), (-2.0, 1)]])
    assert result["accuracy"] == 1.0


def test_voita2019_lines_are_scored_as_published_never_cleaned(tmp_path):
    """The training data's cleaner blanks a line with a music sign and cuts bracketed text and speaker names:
    an official set keeps every line as published, Unicode-normalised (NFC) at most."""
    decomposed = "Cafe\u0301 [laughs] ."  # e + combining acute: NFC makes it one character
    row = {"src": f"♪ Hey ♪ _eos JOHN : Who ? _eos {decomposed} _eos ♪ La la la ♪",
           "dst": ["♪ А ♪ _eos Б . _eos В . _eos ♪ Ля - ля ♪", "♪ А ♪ _eos Б . _eos В . _eos ♪ Ля - ля - ля ♪"],
           "true_ind": 1}
    (tmp_path / "ellipsis_vp.json").write_text(json.dumps([row], ensure_ascii=False))
    assert voita2019(tmp_path / "ellipsis_vp.json", "voita2019_ellipsis_vp", tmp_path / "suite.jsonl") == 1
    example, = read_suite(tmp_path / "suite.jsonl", "en-ru")
    assert example["text"] == {"en": "♪ La la la ♪"}
    assert example["previous"] == {"en": ["Caf\u00e9 [laughs] .", "JOHN : Who ?", "♪ Hey ♪"]}
    assert example["candidates"] == ["♪ Ля - ля ♪", "♪ Ля - ля - ля ♪"] and example["correct"] == 1


def test_voita2019_rejects_candidates_with_other_context(tmp_path):
    bad = [{**VOITA[1], "dst": ["А . _eos Б . _eos В . _eos Г .", "X . _eos Б . _eos В . _eos Д ."]}]
    (tmp_path / "ellipsis_vp.json").write_text(json.dumps(bad, ensure_ascii=False))
    with pytest.raises(ValueError, match=r"ellipsis_vp\.json: entry 0: the candidates differ in their context"):
        voita2019(tmp_path / "ellipsis_vp.json", "voita2019_ellipsis_vp", tmp_path / "suite.jsonl")


@pytest.mark.parametrize("text, message", [
    ("[]", r"deixis_test.json: no examples"),
    ("{}", r"deixis_test.json: expected a JSON list of examples"),
    ('[{"src": "a"},\n oops]', r"deixis_test.json:2: not valid JSON"),
    (json.dumps([VOITA[0], {**VOITA[1], "true_ind": "0"}]), r"deixis_test.json: entry 1: 'true_ind' must be"),
    (json.dumps([{**VOITA[1], "true_ind": True}]), r"deixis_test.json: entry 0: 'true_ind' must be"),
    (json.dumps([{**VOITA[1], "dst": VOITA[1]["dst"][0]}]), r"deixis_test.json: entry 0: 'dst' must list"),
    (json.dumps([{**VOITA[1], "src": None}]), r"deixis_test.json: entry 0: 'src' must be"),
    (json.dumps([{**VOITA[1], "ctx_dist": "far"}]), r"deixis_test.json: entry 0: 'ctx_dist' must be"),
    (json.dumps([{**VOITA[1], "ctx_dist": 2.7}]), r"deixis_test.json: entry 0: 'ctx_dist' must be .*got 2.7"),
    (json.dumps([{**VOITA[1], "ctx_dist": True}]), r"deixis_test.json: entry 0: 'ctx_dist' must be .*got True"),
    (json.dumps([{**VOITA[1], "ctx_dist": "²"}]), r"deixis_test.json: entry 0: 'ctx_dist' must be .*got '²'"),
    (json.dumps([{**VOITA[1], "ctx_dist": -1}]), r"deixis_test.json: entry 0: 'ctx_dist' must be .*got -1"),
    (json.dumps(["A . _eos B ."]), r"deixis_test.json: entry 0: expected an object"),
])
def test_bad_voita2019_sets_are_named(tmp_path, text, message):
    (tmp_path / "deixis_test.json").write_text(text)
    with pytest.raises(ValueError, match=message):
        voita2019(tmp_path / "deixis_test.json", "voita2019_deixis", tmp_path / "suite.jsonl")
    assert not (tmp_path / "suite.jsonl").exists()


class Recording:
    """Translator.load's stand-in: keeps what the scorer is given; prefers each example's first candidate."""

    def __init__(self, direction):
        self.direction, self.given = direction, []

    def score_samples(self, samples, candidates, batch_size):
        self.given.append((samples, candidates))
        return [[(-1.0 - k, 2) for k in range(len(c))] for c in candidates]


def test_contrapro_and_lopes_text_reaches_the_scorer_as_published(tmp_path, monkeypatch):
    """Subtitle text the training data's cleaner would change (music signs, bracketed text, speaker names,
    leading dashes) goes from each set's official files to the model's scorer unchanged: the source, the
    previous lines (most recent first), the metadata, and the candidates, the reference first."""
    from mtcue.data.evalsets import contrapro
    from mtcue.evaluation.contrastive import evaluate
    from mtcue.models.contrastive import score_suite
    from mtcue.models.translator import Translator
    from mtcue.rehearsal.mirror import moses_zip

    def scored(name, converted, direction):
        from_evalset(name, converted, tmp_path / f"{name}.suite.jsonl")
        model = Recording(direction)
        monkeypatch.setattr(Translator, "load", classmethod(lambda cls, model_dir: model))
        _, examples, scores = score_suite("m", tmp_path / f"{name}.suite.jsonl")
        assert evaluate(examples, scores)["accuracy"] == 1.0
        (samples, candidates), = model.given
        return samples, candidates

    document = [("♪ Tanz mit mir ♪", "♪ Dance with me ♪"),
                ("- [lacht] Wo ist die Lampe?", "- [laughs] Where's the lamp?"),
                ("JOHN: Sie ist kaputt.", "JOHN: It's broken.")]
    (tmp_path / "contrapro.json").write_text(json.dumps([
        {"document id": "2003_300_4.de", "segment id": 3, "source": "JOHN: It's broken.", "src pronoun": "It",
         "ref pronoun": "Sie", "ante distance": 1,
         "errors": [{"contrastive": "JOHN: Er ist kaputt."}, {"contrastive": "JOHN: Es ist kaputt."}]}]))
    meta = {**META, "genre": "Comedy"}
    contrapro(tmp_path / "contrapro.json", moses_zip(tmp_path / "de-en.txt.zip", [("2003_300_4", document)]),
              tmp_path / "contrapro.jsonl", {"tt0000300": meta})
    (sample,), candidates = scored("contrapro", tmp_path / "contrapro.jsonl", "en-de")
    assert sample["text"] == {"en": "JOHN: It's broken."} and sample["meta"] == meta
    assert sample["previous"] == {"en": ["- [laughs] Where's the lamp?", "♪ Dance with me ♪"]}
    assert candidates == [["JOHN: Sie ist kaputt.", "JOHN: Er ist kaputt.", "JOHN: Es ist kaputt."]]

    paths = lopes_files(tmp_path, [("[Sighs] Where is it?", "- Où est-elle ?", "- Où est-il ?",
                                    (["♪ I bought a car ♪", "MARY: The car is new."],
                                     ["♪ J'ai acheté une voiture ♪", "MARY : La voiture est neuve."]), "elle", 1)])
    lopes(*paths, tmp_path / "lopes.jsonl")
    (sample,), candidates = scored("lopes", tmp_path / "lopes.jsonl", "en-fr")
    assert sample["text"] == {"en": "[Sighs] Where is it?"}
    assert sample["previous"] == {"en": ["MARY: The car is new.", "♪ I bought a car ♪"]}
    assert candidates == [["- Où est-elle ?", "- Où est-il ?"]]
