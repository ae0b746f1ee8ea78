import json
import logging
import random

import pytest

from conftest import make_sample
from mtcue.corpus import CorpusError, read_corpus
from mtcue.data.clean import clean_corpus, clean_line


@pytest.mark.parametrize("raw, lang, expected", [
    ("- Where are you going?", "en", "Where are you going?"),
    ("JOHN: Sit down.", "en", "Sit down."),
    ("[door slams] Who's there?", "en", "Who's there?"),
    ("lt's fine, l'm here.", "en", "It's fine, I'm here."),
    ("♪ la la la ♪", "en", ""),
    ("...", "en", ""),
    ("Er sagte (leise) nichts.", "de", "Er sagte nichts."),
    ('"Unmatched quote', "en", "Unmatched quote"),
    ("Stop it (please", "en", "Stop it please"),
    ("Hast  du   Zeit ?", "de", "Hast du Zeit?"),
])
def test_clean_line(raw, lang, expected):
    assert clean_line(raw, lang) == expected


def test_clean_corpus_drops_and_counts(write_corpus, tmp_path, caplog):
    samples = [make_sample(0), make_sample(1, en="♪ music ♪"), make_sample(2, previous_en=["- Hello.", "♪"])]
    out = tmp_path / "clean.jsonl"
    with caplog.at_level(logging.INFO, logger="mtcue.progress"):
        stats = clean_corpus(write_corpus(samples), out, max_chars=400)
    assert f"clean {tmp_path / 'c.jsonl'}: done 3 samples in 0 s" in caplog.text
    assert stats == {"input": 3, "dropped_empty": 1, "kept": 2}
    kept = list(read_corpus(out))
    assert [s["id"] for s in kept] == ["en-de.test.000000", "en-de.test.000002"]
    assert kept[1]["previous"]["en"] == ["Hello."]


def test_malformed_corpus_names_file_and_line(write_corpus, tmp_path):
    good = make_sample(0)
    bad = {k: v for k, v in make_sample(1).items() if k != "meta"}
    path = write_corpus([good, bad])
    with pytest.raises(CorpusError, match=r"c\.jsonl:2: missing field 'meta'"):
        clean_corpus(path, tmp_path / "out.jsonl", 400)
    assert not (tmp_path / "out.jsonl").exists()          # nothing half-written left behind
    path.write_text(json.dumps(good) + "\n{not json\n")
    with pytest.raises(CorpusError, match=r"c\.jsonl:2: not valid JSON"):
        list(read_corpus(path))


def test_corpus_that_is_not_utf8_names_file_line_and_byte(write_corpus, tmp_path):
    path = write_corpus([make_sample(0), make_sample(1), make_sample(2)])
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace("Brief".encode(), b"Br\xfcef")   # Latin-1 "ü" in a UTF-8 file
    path.write_bytes(b"\n".join(lines))
    column = lines[1].index(b"\xfc") + 1
    with pytest.raises(CorpusError, match=rf"c\.jsonl:2: not UTF-8 \(byte 0xfc at byte {column} of the line\)"):
        clean_corpus(path, tmp_path / "out.jsonl", 400)
    assert not (tmp_path / "out.jsonl").exists()


def test_corpus_with_a_byte_order_mark_and_crlf_is_read(write_corpus):
    path = write_corpus([make_sample(0), make_sample(1)])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    assert [s["id"] for s in read_corpus(path)] == ["en-de.test.000000", "en-de.test.000001"]


def test_context_stops_at_a_previous_line_that_cleans_to_nothing(write_corpus, tmp_path):
    # Slot j must stay "j lines back": a music line two back ends the context there, so the line
    # three back does not slide into slot 2 (the extraction resets its context the same way).
    sample = make_sample(0, previous_en=["- Hello.", "♪ la la ♪", "Older line."],
                         previous_de=["Hallo.", "♪ la la ♪", "Ältere Zeile."])
    other = make_sample(1, previous_en=["[door slams]", "Hi."], previous_de=["Grüß dich.", "Hallo."])
    out = tmp_path / "clean.jsonl"
    clean_corpus(write_corpus([sample, other]), out, max_chars=400)
    first, second = read_corpus(out)
    assert first["previous"] == {"en": ["Hello."], "de": ["Hallo."]}
    # The sides are cut independently: here only the English line two back is bracket-only.
    assert second["previous"] == {"en": [], "de": ["Grüß dich.", "Hallo."]}


@pytest.mark.parametrize("lang", ["en", "de", "fr", "pl", "ru"])
def test_punctuation_normaliser_matches_sacremoses(lang):
    from sacremoses import MosesPunctNormalizer

    from mtcue.data.clean import _PunctNormalizer

    lines = ["- Wo warst du ?", "Er sagte ( leise ) nichts .", '" Hallo " , sagte er .', "It costs 1,000.50 $ !",
             "C'est « vrai » , non ?", "Привет ,  мир …", "Co ?!  Naprawdę ?", "A  –  B ‘ quoted ’ „ x “"]
    # Random lines over every character the substitutions look for, so each one fires, alone and
    # overlapping ("''" next to "´´", "\xa0" before "»" and ":").
    alphabet = list("ab Z19 .,:;!?%()\"'`´‘’‚„“”«»–—…\xa0\rº") + ["nº", "ºC", "cm", "''", "´´", "  "]
    rng = random.Random(lang)
    lines += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30))) for _ in range(3000)]
    stock = MosesPunctNormalizer(lang=lang)
    ours = _PunctNormalizer(lang)
    assert [ours.normalize(line) for line in lines] == [stock.normalize(line) for line in lines]
