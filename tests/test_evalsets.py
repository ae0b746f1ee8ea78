"""Evaluation sets in their official formats, converted to what evaluation reads."""
import json
import re

import pytest

from mtcue.context.embed import context_strings
from mtcue.context.token_store import neighbour_texts, slot_names
from mtcue.corpus import read_corpus
from mtcue.data.contrastive_suites import from_evalset
from mtcue.data.evalsets import (
    _eamt22_attributes,
    attribute_sentences,
    contrapro,
    eamt22,
    iwslt22,
    iwslt22_files,
    iwslt22_valid_files,
    lopes,
)
from mtcue.outputs import OWNED_MARKER
from mtcue.rehearsal.mirror import moses_zip
from mtcue.suites import read_suite

IWSLT = {  # the first lines of the official EN-DE test files
    "en": ["Do you play Splat on Wii or Wii Sports on Nintendo?",
           "Speaking of cable tv. What do you think of comedy central?"],
    "formal.de": ["Spielen Sie Splat auf der Wii oder Wii Sports auf Nintendo?",
                  "Apropos Kabelfernsehen. Was halten Sie von Comedy Central?"],
    "informal.de": ["Spielst du Splat auf der Wii oder Wii Sports auf Nintendo?",
                    "Apropos Kabelfernsehen. Was hältst du von Comedy Central?"],
    "formal.annotated.de": ["[F]Spielen Sie[/F] Splat auf der Wii oder Wii Sports auf Nintendo?",
                            "Apropos Kabelfernsehen. Was [F]halten Sie[/F] von Comedy Central?"],
    "informal.annotated.de": ["[F]Spielst du[/F] Splat auf der Wii oder Wii Sports auf Nintendo?",
                              "Apropos Kabelfernsehen. Was [F]hältst du[/F] von Comedy Central?"],
}


def write_iwslt(folder, lines=IWSLT):
    folder.mkdir(parents=True, exist_ok=True)
    for suffix, content in lines.items():
        (folder / f"formality-control.test.en-de.{suffix}").write_text("\n".join(content) + "\n")
    return folder


def test_iwslt22_keeps_the_official_files(tmp_path):
    n = iwslt22(write_iwslt(tmp_path / "src"), "en-de", tmp_path / "eval" / "iwslt22" / "en-de")
    out = tmp_path / "eval" / "iwslt22" / "en-de"
    assert n == 2 and sorted(p.name for p in out.iterdir()) == sorted([*iwslt22_files("en-de"), OWNED_MARKER])
    for name in iwslt22_files("en-de"):
        assert (out / name).read_bytes() == (tmp_path / "src" / name).read_bytes()


def test_iwslt22_rejects_an_annotation_that_is_not_its_reference(tmp_path):
    bad = {**IWSLT, "formal.annotated.de": [IWSLT["formal.annotated.de"][0], "Apropos. Was [F]halten Sie von?"]}
    with pytest.raises(ValueError, match=r"formal\.annotated\.de:2: not formality-control\.test\.en-de\.formal\.de"):
        iwslt22(write_iwslt(tmp_path / "src", bad), "en-de", tmp_path / "out")
    short = {**IWSLT, "en": IWSLT["en"][:1]}
    with pytest.raises(ValueError, match="differ in length"):
        iwslt22(write_iwslt(tmp_path / "short", short), "en-de", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_iwslt22_validation_set_is_the_training_data_of_both_domains(tmp_path):
    """IWSLT22's en-de training data (telephony, topical-chat; data/train) becomes the validation set in the test
    set's layout, telephony first; a domain's file missing stops the step with its name, nothing written."""
    src = tmp_path / "train"
    src.mkdir()
    for i, domain in enumerate(("telephony", "topical-chat")):
        for suffix, content in IWSLT.items():
            (src / f"formality-control.train.{domain}.en-de.{suffix}").write_text(content[i] + "\n")
    assert iwslt22_valid_files("en-de")[5] == "formality-control.train.topical-chat.en-de.en"
    n = iwslt22(src, "en-de", tmp_path / "valid", split="valid")
    assert n == 2
    for name, suffix in zip(iwslt22_files("en-de"), IWSLT):
        assert (tmp_path / "valid" / name).read_text() == "\n".join(IWSLT[suffix]) + "\n"
    (src / "formality-control.train.topical-chat.en-de.informal.annotated.de").unlink()
    with pytest.raises(FileNotFoundError, match=r"missing formality-control\.train\.topical-chat\.en-de\."
                                                r"informal\.annotated\.de"):
        iwslt22(src, "en-de", tmp_path / "valid2", split="valid")
    assert not (tmp_path / "valid2").exists()


def test_paper_config_wires_iwslt22_validation_where_it_exists():
    """en-de: IWSLT22's training data is downloaded and converted, and Table 6's zero-shot column reads the
    validation records; en-ru (IWSLT22's zero-shot pair, no training data) chooses its prompt on test."""
    from conftest import REPO

    from mtcue import config as cfg
    from mtcue.data import sources
    from mtcue.experiments.ablation.plan import ABLATION
    from mtcue.experiments.formality.plan import chosen_on_valid

    paper = cfg.validate(cfg.read_yaml(REPO / "config" / "paper.yaml"), source="paper.yaml")
    assert chosen_on_valid(paper, "en-de") and not chosen_on_valid(paper, "en-ru")
    assert "results/eval/iwslt22_valid/en-de" in sources.evalset_targets(paper, ["en-de", "en-ru"])
    assert "results/eval/iwslt22_valid/en-ru" not in sources.evalset_targets(paper, ["en-de", "en-ru"])
    urls = sources.all_urls(paper, ["en-de", "en-ru"])
    assert ("https://raw.githubusercontent.com/amazon-science/contrastive-controlled-mt/main/IWSLT2022/data/train/"
            "en-de/formality-control.train.telephony.en-de.formal.annotated.de") in urls
    records = ABLATION.zeroshot_records(paper, "formality")
    assert records and all(r.startswith("results/records/formality/en-de/") and r.endswith(".valid.json")
                           for r in records)


EAMT = [  # entries of the official data/test.json
    {"english": "I just didn't want you to think you had to marry me.",
     "polish": "Bo nie chciałam, żebyś myślał, że cię zmuszam do ślubu.",
     "context_csv": "<sp:feminine>,<il:masculine>,<singular>,<informal>", "marking": "<singular>",
     "context_text": "I am a woman. I am having an informal chat with a man.",
     "context_text_excluding_formality": "I am a woman. I am talking to a man.",
     "formality_text": "Informal chit-chat"},
    {"english": "No wonder you two look so...", "polish": "Ale z innej strony, wyglądają państwo jak...",
     "context_csv": ",<il:mixed>,<plural>,<formal>", "marking": "<il:mixed>",
     "context_text": "I am having a formal conversation with a group of people.",
     "context_text_excluding_formality": "I am talking to a group of people.", "formality_text": "Formal conversation"},
]


def test_eamt22_rows_become_corpus_lines_with_attributes(tmp_path):
    (tmp_path / "test.json").write_text(json.dumps(EAMT, ensure_ascii=False, indent=4))
    assert eamt22(tmp_path / "test.json", "test", tmp_path / "test.jsonl") == 2
    first, second = read_corpus(tmp_path / "test.jsonl", ("en", "pl"))
    assert first["text"] == {"en": EAMT[0]["english"], "pl": EAMT[0]["polish"]}
    # the paper's wording of context_csv, not the row's context_text
    assert first["cues"] == ["I am a woman", "I'm talking to a man", "Informal"]
    assert second["cues"] == ["I'm talking to a group of people", "Formal"]
    assert first["attributes"] == {"speaker_gender": "feminine", "addressee_gender": "masculine",
                                   "addressee_number": "singular", "formality": "informal"}
    assert first["target"] == {"attribute": "addressee_number", "value": "singular"}
    assert second["attributes"]["speaker_gender"] is None
    assert second["target"] == {"attribute": "addressee_gender", "value": "mixed"}
    assert first["previous"] == {"en": [], "pl": []} and first["id"] == "eamt22.test.000000"


# context_csv -> the paper's attribute sentences (section 3.2), for every addressee combination of the
# official test and dev sets.
PAPER_WORDINGS = [
    # the paper's own example: "I am a man", "I'm talking to a group of people", "Formal"
    ("<sp:masculine>,<il:mixed>,<plural>,<formal>", ["I am a man", "I'm talking to a group of people", "Formal"]),
    (",,,<formal>", ["Formal"]),
    ("<sp:feminine>,,,", ["I am a woman"]),
    (",,<plural>,<informal>", ["I'm talking to a group of people", "Informal"]),
    (",<il:feminine>,<singular>,<formal>", ["I'm talking to a woman", "Formal"]),
    (",<il:masculine>,<singular>,<informal>", ["I'm talking to a man", "Informal"]),
    # not in the paper's wording: ours, in its pattern
    (",,<singular>,<informal>", ["I'm talking to a person", "Informal"]),
    (",<il:feminine>,<plural>,<formal>", ["I'm talking to a group of women", "Formal"]),
    ("<sp:masculine>,<il:masculine>,<plural>,<formal>", ["I am a man", "I'm talking to a group of men", "Formal"]),
]


@pytest.mark.parametrize("csv, sentences", PAPER_WORDINGS)
def test_eamt22_attribute_sentences_are_the_papers_wording(csv, sentences):
    assert attribute_sentences(_eamt22_attributes(csv, "test.json")) == sentences


def test_every_attribute_sentence_asks_for_what_it_names():
    from mtcue.evaluation.eamt22 import requested

    for csv, sentences in PAPER_WORDINGS:
        attributes = _eamt22_attributes(csv, "test.json")
        asked = {a: v for a, v in attributes.items() if v}
        if attributes["addressee_number"] == "plural" and not attributes["addressee_gender"]:
            asked["addressee_gender"] = "mixed"  # "a group of people" is EAMT22's mixed group
        assert requested(sentences) == asked, csv


def test_eamt22_rejects_an_unknown_attribute_value(tmp_path):
    (tmp_path / "test.json").write_text(json.dumps([{**EAMT[0], "context_csv": "<sp:other>,,,"}]))
    with pytest.raises(ValueError, match=r"test\.json: entry 0: '<sp:other>' is not a value of speaker_gender"):
        eamt22(tmp_path / "test.json", "test", tmp_path / "test.jsonl")


def test_lopes_contexts_become_most_recent_first(tmp_path):
    files = {
        "src": ["It was so unfair.", "It was so unfair.", "Where is it?", "Where is it?"],
        "trg": ["C'était si injuste.", "C'était si injustes.", "Où est-elle ?", "Où est-il ?"],
        # five context lines per current line, oldest first; the second example is its document's fourth line,
        # an empty one between it and its antecedent
        "csrc": ["A.", "B.", "C.", "D.", "E."] * 2 + ["", "", "The car.", "", "Hm."] * 2,
        "ctrg": ["A.", "B.", "C.", "D.", "E."] * 2 + ["", "", "La voiture.", "", "Hm."] * 2,
    }
    paths = []
    for name, lines in files.items():
        paths.append(tmp_path / name)
        paths[-1].write_text("\n".join(lines) + "\n")
    annotation = [{"src pronoun": "it", "ref pronoun": p, "ante distance": 1, "errors": [{"contrastive": c}]}
                  for p, c in (("il", "C'était si injustes."), ("elle", "Où est-il ?"))]
    (tmp_path / "testset-en-fr.json").write_text(json.dumps(annotation))
    assert lopes(*paths, tmp_path / "testset-en-fr.json", tmp_path / "lopes.jsonl") == 2
    first, second = read_corpus(tmp_path / "lopes.jsonl", ("en", "fr"))
    assert first["text"] == {"en": "It was so unfair.", "fr": "C'était si injuste."}
    assert first["contrastive"] == ["C'était si injustes."]
    assert first["previous"] == {"en": ["E.", "D.", "C.", "B.", "A."], "fr": ["E.", "D.", "C.", "B.", "A."]}
    assert second["previous"] == {"en": ["Hm.", "", "The car."], "fr": ["Hm.", "", "La voiture."]}


def test_contrapro_reads_its_documents_from_the_moses_files(tmp_path):
    doc_a = [(f"Satz {k}.", f"Sentence {k}.") for k in range(1, 9)]
    doc_b = [("Wo ist sie?", "Where is it?"), ("", ""), ("Sie ist hier.", "It is here.")]
    zip_path = moses_zip(tmp_path / "de-en.txt.zip", [("1999_160127_3198548", doc_a[:4]), ("2001_42_7", doc_b),
                                                        ("1999_160127_3198548", doc_a[4:])])  # interleaved
    examples = [{"document id": "1999_160127_3198548.de", "segment id": 7, "source": "Sentence 7.",
                 "ref pronoun": "sie", "src pronoun": "it", "ante distance": 2,
                 "errors": [{"contrastive": "Satz er.", "replacement": "er"}, {"contrastive": "Satz es."}]},
                {"document id": "2001_42_7.de", "segment id": 3, "source": "It is here.", "ref pronoun": "sie",
                 "errors": [{"contrastive": "Er ist hier."}]}]
    (tmp_path / "contrapro.json").write_text(json.dumps(examples))
    meta = {"genre": "Drama", "pg_rating": None, "writers": None, "year": "Released in 1999", "country": None,
            "plot": None}
    report = contrapro(tmp_path / "contrapro.json", zip_path, tmp_path / "contrapro.jsonl", {"tt0160127": meta})
    assert report == {"examples": 2, "source_mismatches": 0}
    first, second = read_corpus(tmp_path / "contrapro.jsonl", ("en", "de"))
    assert first["text"] == {"en": "Sentence 7.", "de": "Satz 7."}
    assert first["previous"]["en"] == ["Sentence 6.", "Sentence 5.", "Sentence 4.", "Sentence 3.", "Sentence 2."]
    assert first["contrastive"] == ["Satz er.", "Satz es."] and first["meta"] == meta
    assert first["phenomenon"] == {"src_pronoun": "it", "ref_pronoun": "sie", "ante_distance": 2}
    assert first["imdb_id"] == "tt0160127" and first["doc_id"] == "1999_160127_3198548"
    assert second["previous"] == {"en": ["", "Where is it?"], "de": ["", "Wo ist sie?"]}  # an empty line is kept


def test_contrapro_context_is_what_its_official_script_gives(tmp_path):
    # Empty lines (both sides, then the English side only: a 0-1 alignment) lie between the antecedent and the
    # sentence. ContraPro's conversion_scripts/json2text_and_context.pl with --context 5 prints, for segment 4,
    # lines 4-5..4-1 oldest first: an empty line for each of -1 and 0 (before the document), then lines 1-3 as
    # they are. The scorer must read the same sentences, most recent first, an empty line being no sentence.
    document = [("Ich habe einen Hund gekauft.", "I bought a dog."), ("", ""), ("Was?", ""),
                ("Wo ist er?", "Where is it?")]
    zip_path = moses_zip(tmp_path / "de-en.txt.zip", [("2003_42_7", document)])
    (tmp_path / "contrapro.json").write_text(json.dumps([
        {"document id": "2003_42_7.de", "segment id": 4, "source": "Where is it?", "src pronoun": "it",
         "ref pronoun": "er", "ante distance": 3, "errors": [{"contrastive": "Wo ist sie?"}]}]))
    official = {"en": ["", "", "I bought a dog.", "", ""], "de": ["", "", "Ich habe einen Hund gekauft.", "", "Was?"]}
    contrapro(tmp_path / "contrapro.json", zip_path, tmp_path / "contrapro.jsonl")
    [sample] = read_corpus(tmp_path / "contrapro.jsonl", ("en", "de"))
    assert sample["previous"] == {"en": ["", "", "I bought a dog."], "de": ["Was?", "", "Ich habe einen Hund gekauft."]}
    from_evalset("contrapro", tmp_path / "contrapro.jsonl", tmp_path / "suite.jsonl")
    [example] = read_suite(tmp_path / "suite.jsonl")
    expected = [line or None for line in reversed(official["en"])]
    # sentence vectors and tags (doc1..doc5), then the token store's slots (an empty line: no tokens, no line)
    assert context_strings(example, "en", [f"doc{j}" for j in range(6)]) == ["Where is it?", *expected]
    [row] = neighbour_texts([example], "en", slot_names(5, False))
    assert [line or None for line in row] == expected


def test_contrapro_with_documents_that_do_not_match_is_an_error(tmp_path):
    zip_path = moses_zip(tmp_path / "de-en.txt.zip", [("1999_1_2", [("Eins.", "One."), ("Zwei.", "Two.")])])
    (tmp_path / "contrapro.json").write_text(json.dumps(
        [{"document id": "1999_1_2.de", "segment id": 2, "source": "Something else.", "errors": []}]))
    with pytest.raises(ValueError, match="1 of 1 ContraPro sources differ"):
        contrapro(tmp_path / "contrapro.json", zip_path, tmp_path / "out.jsonl")
    (tmp_path / "contrapro.json").write_text(json.dumps(
        [{"document id": "1999_1_2.de", "segment id": 5, "source": "x", "errors": []}]))
    with pytest.raises(ValueError, match="name documents or lines it lacks"):
        contrapro(tmp_path / "contrapro.json", zip_path, tmp_path / "out.jsonl")


def _evalset(tmp_path, name, *inputs):
    from mtcue.cli import main

    return main(["evalset", "--name", name, "--pair", "en-pl" if name == "eamt22" else "en-de",
                 "--inputs", *map(str, inputs), "--out", str(tmp_path / "out.jsonl")])


@pytest.mark.parametrize("text, message", [
    (json.dumps([EAMT[0], {k: v for k, v in EAMT[1].items() if k != "marking"}]),
     r"test\.json: entry 1: 'marking' must be a string, got None \(EAMT22 rows have english, polish, context_csv, "
     r"marking\)"),  # KeyError: 'marking' before
    (json.dumps([{**EAMT[0], "polish": None}]), r"test\.json: entry 0: 'polish' must be a string, got None"),
    (json.dumps([["I", "ja"]]), r"test\.json: entry 0: expected an object with english, polish, context_csv, marking"),
    (json.dumps({"rows": EAMT}), r"test\.json: expected a JSON list of EAMT22 rows"),
    (json.dumps(EAMT, indent=4)[:300], r"test\.json:\d+: not valid JSON \(.*\); is the file complete\?"),  # cut
    ("[" * 100_000 + "]" * 100_000, r"test\.json:1: JSON nested too deeply to read"),  # RecursionError before
])
def test_a_broken_eamt22_file_is_named(tmp_path, caplog, text, message):
    (tmp_path / "test.json").write_text(text)
    assert _evalset(tmp_path, "eamt22", tmp_path / "test.json") == 1
    assert re.search(message, caplog.text) and not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("example, message", [
    ({"segment id": 2, "errors": [{"contrastive": "Zwo."}]}, r"entry 0: 'document id' must be a string, got None"),
    ({"document id": "1999_1_2.de", "errors": [{"contrastive": "Zwo."}]},
     r"entry 0: 'segment id' must be a line number \(1, 2, ...\), got None"),
    ({"document id": "1999_1_2.de", "segment id": 2}, r"entry 0: 'errors' must list objects with 'contrastive'"),
    ({"document id": "1999_1_2.de", "segment id": 2, "errors": [{"replacement": "er"}]},
     r"entry 0: 'errors' must list objects with 'contrastive'"),
])
def test_a_contrapro_example_without_its_fields_is_named(tmp_path, caplog, example, message):
    zip_path = moses_zip(tmp_path / "de-en.txt.zip", [("1999_1_2", [("Eins.", "One."), ("Zwei.", "Two.")])])
    (tmp_path / "contrapro.json").write_text(json.dumps([example]))
    assert _evalset(tmp_path, "contrapro", tmp_path / "contrapro.json", zip_path) == 1
    assert re.search(r"contrapro\.json: " + message, caplog.text) and not (tmp_path / "out.jsonl").exists()
