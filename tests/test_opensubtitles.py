"""OpenSubtitles extraction on OPUS files in OPUS's exact formats, written here."""
import gzip
import json
import logging
import os
import re
import subprocess
import sys
import threading
import zipfile
import zlib
from pathlib import Path

import pytest

from mtcue.corpus import read_corpus
from mtcue.data.opensubtitles import Extractor, Mirror, OpusError, extract, parse_document, parse_time
from mtcue.data.opus_synth import (
    ALIGN_HEAD,
    ALIGN_TAIL,
    Sent,
    clock,
    document_xml,
    generate_mirror,
    link_group_xml,
    sentence_xml,
)

# Two subtitle files of one film as OPUS ships them (tokenised XML), German first as in de-en.xml.gz.
DE = """<?xml version="1.0" encoding="utf-8"?>
<document id="222">
  <s id="1">
    <time id="T1S" value="00:00:01,100" />
    <w id="1.1">-</w>
    <w id="1.2">Wo</w>
    <w id="1.3">warst</w>
    <w id="1.4">du</w>
    <w id="1.5">?</w>
    <time id="T1E" value="00:00:02,400" />
  </s>
{early}
  <s id="4">
    <time id="T4S" value="00:00:06,500" />
    <w id="4.1">Ja</w>
  </s>
  <s id="5">
    <w id="5.1">,</w>
    <w id="5.2">wirklich</w>
    <w id="5.3">.</w>
    <time id="T4E" value="00:00:07,500" />
  </s>
{rest}
  <meta>
    <conversion>
      <sentences>16</sentences>
    </conversion>
  </meta>
</document>
"""
# (id, tokens, start, end) of the other German lines, written by opus_synth.sentence_xml as above
DE_EARLY = [("2", "- Zu Hause .", 2.6, 3.9), ("3", "Wirklich ?", 5.0, 6.0)]
DE_REST = [("6", "JOHN : Setz dich ."), ("7", "♪ la la ♪"), ("8", "Schon gut ."), ("9", "Wer ist da ?"), ("10", "Geh weg ."), ("11", "Gut ."), ("12", "Warte ."),
           ("13", "Halt ."), ("14", "Was ?"), ("15", "Jetzt ."), ("16", "")]
EN = [("1", "- Where were you ?"), ("2", "- At home ."), ("3", "Really ?"), ("4", "Yes ."), ("5", "JOHN : Sit down ."),
      ("6", "♪ la la ♪"), ("7", "lt 's fine ."), ("8", "[ door slams ] Who 's there ?"), ("9", "Nobody ."),
      ("10", "Go away ."), ("11", "Fine ."), ("12", "Wait ."), ("13", "Stop ."), ("14", "What ?"), ("15", "Now ."),
      ("16", "Here .")]
EN_TIMES = [1.0, 2.5, 5.0, 6.5, 20.0, 21.5, 22.5, 23.5, 24.5, 25.5, 26.5, 27.5, 28.5, 29.5, 30.5, 31.5]
LINKS = """<linkGrp targType="s" fromDoc="de/2009/1234567/222.xml.gz" toDoc="en/2009/1234567/111.xml.gz" >
<link id="SL1" xtargets="1;1" overlap="0.95" />
<link id="SL2" xtargets="2;2" overlap="0.9" />
<link id="SL3" xtargets="3;3" overlap="0.932" />
<link id="SL4" xtargets="5 4;4" overlap="0.91" />
<link id="SL5" xtargets="6;5" overlap="0.97" />
<link id="SL6" xtargets="7;6" overlap="0.99" />
<link id="SL7" xtargets="8;7" overlap="0.95" />
<link id="SL8" xtargets="9;8" overlap="0.95" />
<link id="SL9" xtargets=";9" />
<link id="SL10" xtargets="10;10" overlap="0.85" />
<link id="SL11" xtargets="11;11" overlap="0.95" />
<link id="SL13" xtargets="12;12" overlap="0.95" />
<link id="SL14" xtargets="13;13 99" overlap="0.95" />
<link id="SL15" xtargets="14;14" overlap="n/a" />
<link id="SL16" xtargets="15;15" />
<link id="SL17" xtargets="16;16" overlap="0.95" />
</linkGrp>
"""


def _timed(sid: str, text: str, start: float, end: float | None = None) -> Sent:
    end = start + 0.5 if end is None else end
    return Sent(sid, text.split(), [(f"T{sid}S", clock(start))], [(f"T{sid}E", clock(end))])


def de_document() -> bytes:
    early = "".join(sentence_xml(_timed(*line)) for line in DE_EARLY)
    rest = "".join(sentence_xml(_timed(sid, text, 21.5 + int(sid) - 7)) for sid, text in DE_REST)
    return DE.replace("{early}\n", early).replace("{rest}\n", rest).encode()


def en_document() -> bytes:
    return document_xml("111", [_timed(sid, text, t) for (sid, text), t in zip(EN, EN_TIMES)])


def write_mirror(root: Path, docs: dict[str, bytes], groups: list[str], layout: str = "gz",
                 pair_name: str = "de-en") -> Path:
    """An OPUS copy: documents unpacked as .xml.gz (`gz`), unpacked .xml (`xml`) or in
    xml/{lang}.zip as OPUS ships them (`zip`); the alignment file gzipped."""
    xml = root / "xml"
    xml.mkdir(parents=True, exist_ok=True)
    for path, data in docs.items():
        if layout == "zip":
            with zipfile.ZipFile(xml / f"{path.split('/')[0]}.zip", "a") as archive:
                archive.writestr("OpenSubtitles/xml/" + path.removesuffix(".gz"), data)
        else:
            target = xml / (path if layout == "gz" else path.removesuffix(".gz"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(gzip.compress(data) if layout == "gz" else data)
    (xml / f"{pair_name}.xml.gz").write_bytes(gzip.compress((ALIGN_HEAD + "".join(groups) + ALIGN_TAIL).encode()))
    return root


@pytest.fixture
def film_mirror(tmp_path):
    return write_mirror(tmp_path / "opus", {"de/2009/1234567/222.xml.gz": de_document(),
                                            "en/2009/1234567/111.xml.gz": en_document()}, [LINKS])


def run(mirror, tmp_path, pair="en-de"):
    out = tmp_path / "out.jsonl"
    report = extract(mirror, pair, out, tmp_path / "films.txt", tmp_path / "stats.json")
    return list(read_corpus(out, ("en", pair.split("-")[1]))), report


def test_every_rule_on_one_film(film_mirror, tmp_path):
    samples, report = run(film_mirror, tmp_path)
    expected = [  # (en, de, previous en) as the paper's rules give them
        ("Where were you?", "Wo warst du?", []),
        ("At home.", "Zu Hause.", ["Where were you?"]),                        # overlap exactly 0.9: kept
        ("Really?", "Wirklich?", ["At home.", "Where were you?"]),
        ("Yes.", "Ja, wirklich.", ["Really?", "At home.", "Where were you?"]),  # "5 4": document order
        ("Sit down.", "Setz dich.", []),                                        # 13 s pause: reset
        ("It's fine.", "Schon gut.", []),                                       # after the music line: reset
        ("Who's there?", "Wer ist da?", ["It's fine."]),
        ("Fine.", "Gut.", []),                                                  # after one-sided, low overlap
        ("Wait.", "Warte.", []),                                                # link ids 11 -> 13: reset
    ]
    assert [(s["text"]["en"], s["text"]["de"], s["previous"]["en"]) for s in samples] == expected
    de_previous = {s["text"]["de"]: s["previous"]["de"] for s in samples}
    assert de_previous["Ja, wirklich."] == ["Wirklich?", "Zu Hause.", "Wo warst du?"]
    first = samples[0]
    assert first["id"] == "en-de.000000000" and samples[-1]["id"] == "en-de.000000008"
    assert first["doc_id"] == "en/2009/1234567/111|de/2009/1234567/222"
    assert {s["imdb_id"] for s in samples} == {"tt1234567"}
    assert first["meta"] == dict.fromkeys(["genre", "pg_rating", "writers", "year", "country", "plot"])
    assert report["pairs"] == 9 and report["links"] == 16
    assert report["dropped"] == {"empty_after_cleaning": 1, "empty_sentence": 1, "no_overlap": 1,
                                 "one_sided": 1, "overlap_below_threshold": 1, "overlap_not_a_number": 1,
                                 "unknown_sentence_id": 1}
    assert report["pairs"] + sum(report["dropped"].values()) == report["links"]
    assert report["context_resets"] == {"gap": 1, "link_ids_not_consecutive": 1}
    assert report["repaired"] == {"unordered_ids": 1}
    assert json.loads((tmp_path / "stats.json").read_text()) == report
    assert (tmp_path / "films.txt").read_text() == "1234567\n"


def test_block_times_are_split_over_its_sentences():
    from collections import Counter

    sentences = parse_document(de_document(), Counter())
    assert (sentences["4"].start, sentences["4"].end) == (6.5, 7.0)
    assert (sentences["5"].start, sentences["5"].end) == (7.0, 7.5)
    assert sentences["16"].text == "" and sentences["6"].text == "JOHN : Setz dich ."
    assert parse_time("01:02:03,450") == pytest.approx(3723.45) and parse_time("garbage") is None


def _film(n: int, folder: int, timed: tuple[bool, bool] = (True, True), de_words: str = "Zeile {i} .",
          en_words: str = "Line {i} .") -> tuple[dict[str, bytes], str]:
    """A film of `n` aligned one-sentence lines, one second apart; times per side optional."""
    docs = {}
    for side, (lang, words, fid) in enumerate((("de", de_words, 1), ("en", en_words, 2))):
        sents = [_timed(str(i), words.format(i=i), float(i)) if timed[side] else Sent(str(i), words.format(i=i).split())
                 for i in range(1, n + 1)]
        docs[f"{lang}/2001/{folder}/{folder * 10 + fid}.xml.gz"] = document_xml(str(folder * 10 + fid), sents)
    paths = list(docs)
    group = link_group_xml(paths[0], paths[1], [(f"SL{i}", f"{i};{i}", "0.95") for i in range(1, n + 1)])
    return docs, group


def test_five_previous_lines_most_recent_first(tmp_path):
    docs, group = _film(8, 4321)
    samples, _ = run(write_mirror(tmp_path / "opus", docs, [group]), tmp_path)
    assert [len(s["previous"]["en"]) for s in samples] == [0, 1, 2, 3, 4, 5, 5, 5]
    assert samples[7]["previous"]["en"] == ["Line 7.", "Line 6.", "Line 5.", "Line 4.", "Line 3."]
    assert samples[7]["previous"]["de"] == ["Zeile 7.", "Zeile 6.", "Zeile 5.", "Zeile 4.", "Zeile 3."]


def test_timing_falls_back_to_the_other_side_then_resets(tmp_path):
    only_en, g1 = _film(3, 1001, timed=(False, True))
    untimed, g2 = _film(3, 1002, timed=(False, False))
    samples, report = run(write_mirror(tmp_path / "opus", {**only_en, **untimed}, [g1, g2]), tmp_path)
    assert [len(s["previous"]["en"]) for s in samples] == [0, 1, 2, 0, 0, 0]
    assert report["context_resets"] == {"no_time": 2}
    assert (tmp_path / "films.txt").read_text() == "1001\n1002\n"


@pytest.mark.parametrize("layout", ["zip", "xml"])
def test_zipped_and_unpacked_copies_give_the_same_pairs(tmp_path, layout):
    docs, group = _film(4, 7)
    reference, _ = run(write_mirror(tmp_path / "gz", docs, [group]), tmp_path)
    other, _ = run(write_mirror(tmp_path / layout, docs, [group], layout=layout), tmp_path)
    assert other == reference and len(reference) == 4


def test_unpacked_alignment_file_and_raw_text(tmp_path):
    raw = {"de/1999/55/1.xml.gz": b'<?xml version="1.0" encoding="utf-8"?>\n<document id="1">\n'
                                  b'<s id="1"><time id="T1S" value="00:00:01,000"/>Guten  Tag.'
                                  b'<time id="T1E" value="00:00:02,000"/></s>\n</document>\n',
           "en/1999/55/2.xml.gz": b'<?xml version="1.0" encoding="utf-8"?>\n<document id="2">\n'
                                  b'<s id="1"><time id="T1S" value="00:00:01,000"/>Good day.'
                                  b'<time id="T1E" value="00:00:02,000"/></s>\n</document>\n'}
    root = write_mirror(tmp_path / "opus", raw, [link_group_xml(*raw, [("SL1", "1;1", "1.0")])])
    align = root / "xml" / "de-en.xml.gz"
    (root / "xml" / "de-en.xml").write_bytes(gzip.decompress(align.read_bytes()))
    align.unlink()
    samples, _ = run(root, tmp_path)
    assert [s["text"] for s in samples] == [{"en": "Good day.", "de": "Guten Tag."}]


def test_imdb_id_is_the_english_folder(tmp_path):
    docs, group = _film(2, 31)
    renamed = {p.replace("/31/", "/32/") if p.startswith("de/") else p: d for p, d in docs.items()}
    samples, report = run(write_mirror(tmp_path / "opus", renamed, [group.replace("de/2001/31/", "de/2001/32/")]),
                          tmp_path)
    assert {s["imdb_id"] for s in samples} == {"tt0000031"}
    assert report["repaired"] == {"imdb_differs_between_sides": 1}


def test_broken_encodings(tmp_path, caplog):
    docs, group = _film(3, 9, de_words="Zeile {i} .", en_words="Line {i} .")
    de_path = next(p for p in docs if p.startswith("de/"))
    en_path = next(p for p in docs if p.startswith("en/"))
    docs[de_path] = docs[de_path].replace("Zeile</w>".encode(), b"Zeil\xe9</w>", 1)  # Latin-1 byte: line 1
    docs[en_path] = docs[en_path].replace(b"Line</w>\n    <w id=\"3.2\">", "CafÃ©</w>\n    <w id=\"3.2\">".encode())
    with caplog.at_level(logging.WARNING, logger="mtcue"):
        samples, report = run(write_mirror(tmp_path / "opus", docs, [group]), tmp_path)
    assert [s["text"]["en"] for s in samples] == ["Line 2.", "Café 3."]   # mojibake repaired
    assert samples[0]["previous"]["en"] == []                                # line 1 dropped: no context
    assert report["dropped"] == {"damaged_encoding": 1} and report["repaired"] == {"mojibake": 1}
    assert report["documents_with_invalid_utf8"] == 1
    assert f"{de_path}: not valid UTF-8" in caplog.text


def test_damaged_or_missing_documents_skip_their_film_and_are_named(tmp_path, caplog):
    good, g1 = _film(2, 1)
    bad, g2 = _film(2, 2)
    missing, g3 = _film(2, 3)
    root = write_mirror(tmp_path / "opus", {**good, **bad}, [g1, g2, g3])
    truncated = root / "xml" / next(p for p in bad if p.startswith("en/"))
    truncated.write_bytes(truncated.read_bytes()[:40])
    with caplog.at_level(logging.WARNING, logger="mtcue"):
        samples, report = run(root, tmp_path)
    assert {s["imdb_id"] for s in samples} == {"tt0000001"}
    assert report["skipped_link_groups"] == {"document_missing": 1, "document_unreadable": 1}
    assert report["links_in_skipped_groups"] == 4
    assert "en/2001/2/22.xml.gz cannot be read (EOFError" in caplog.text
    assert "document de/2001/3/31.xml.gz is not in the copy" in caplog.text


def test_a_damaged_zip_member_skips_its_film_and_is_named(tmp_path, caplog):
    # A deflated member whose data is damaged raises zlib.error (not OSError) when read.
    good, g1 = _film(2, 1)
    bad, g2 = _film(2, 2)
    xml = tmp_path / "opus" / "xml"
    xml.mkdir(parents=True)
    for lang in ("de", "en"):
        with zipfile.ZipFile(xml / f"{lang}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
            for path, data in {**good, **bad}.items():
                if path.startswith(f"{lang}/"):
                    archive.writestr("OpenSubtitles/xml/" + path.removesuffix(".gz"), data)
    (xml / "de-en.xml.gz").write_bytes(gzip.compress((ALIGN_HEAD + g1 + g2 + ALIGN_TAIL).encode()))
    member = "OpenSubtitles/xml/" + next(p for p in bad if p.startswith("en/")).removesuffix(".gz")
    with zipfile.ZipFile(xml / "en.zip") as archive:
        info = archive.getinfo(member)
    raw = bytearray((xml / "en.zip").read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start:start + 4] = b"\xff\xff\xff\xff"  # deflate block type 3: "invalid block type"
    (xml / "en.zip").write_bytes(bytes(raw))
    with pytest.raises(zlib.error):
        zipfile.ZipFile(xml / "en.zip").read(member)
    with caplog.at_level(logging.WARNING, logger="mtcue"):
        samples, report = run(tmp_path / "opus", tmp_path)
    assert {s["imdb_id"] for s in samples} == {"tt0000001"} and len(samples) == 2
    assert report["skipped_link_groups"] == {"document_unreadable": 1}
    assert "en/2001/2/22.xml.gz cannot be read (error: Error -3 while decompressing data: invalid block type)" \
        in caplog.text


SECRET = "s3cret-hostname-7f1"


def _hostile(xml: bytes, root: str, entity: str, targets: list[Path]) -> bytes:
    """`xml` with a DOCTYPE declaring `targets` as external entities of one kind, each used."""
    if entity == "parameter":
        decls, uses = "".join(f'<!ENTITY % e{i} SYSTEM "{t.as_uri()}"> %e{i};' for i, t in enumerate(targets)), ""
    else:
        decls = "".join(f'<!ENTITY e{i} SYSTEM "{t.as_uri()}">' for i, t in enumerate(targets))
        uses = "".join(f"&e{i};" for i in range(len(targets)))
    declaration, rest = xml.split(b"\n", 1)
    rest = re.sub(rb"^<!DOCTYPE[^>]*>\n", b"", rest)  # the alignment file's own
    start_tag = rest.index(b">") + 1
    doctype = f"\n<!DOCTYPE {root} [{decls}]>\n".encode()
    return declaration + doctype + rest[:start_tag] + uses.encode() + rest[start_tag:]


def _watch(fifo: Path) -> threading.Event:
    """Set once something opens `fifo` to read it: a parser reading `file:///dev/stdin` would hang there."""
    os.mkfifo(fifo)
    opened = threading.Event()

    def writer():
        with open(fifo, "w"):  # waits for a reader
            opened.set()

    threading.Thread(target=writer, daemon=True).start()
    return opened


@pytest.mark.parametrize("entity", ["general", "parameter"])
@pytest.mark.parametrize("where", ["documents", "alignment"])
def test_external_entities_are_never_read(tmp_path, caplog, where, entity):
    docs, group = _film(3, 5)
    reference, _ = run(write_mirror(tmp_path / "clean", docs, [group]), tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text(f'<!ENTITY {SECRET} "x" z>\n')  # read as DTD markup, it would be named in a parser error
    opened = _watch(tmp_path / "stdin")
    targets = [tmp_path / "stdin", secret]
    if where == "documents":
        docs = {path: _hostile(data, "document", entity, targets) for path, data in docs.items()}
    root = write_mirror(tmp_path / "opus", docs, [group])
    if where == "alignment":
        align = root / "xml" / "de-en.xml.gz"
        align.write_bytes(gzip.compress(_hostile(gzip.decompress(align.read_bytes()), "cesAlign", entity, targets)))
    try:
        with caplog.at_level(logging.DEBUG, logger="mtcue"):
            samples, report = run(root, tmp_path)
        assert not opened.is_set()
    finally:
        os.close(os.open(tmp_path / "stdin", os.O_RDONLY | os.O_NONBLOCK))  # lets the watcher end
    assert samples == reference and report["skipped_link_groups"] == {}  # the entities are left out, unread
    assert SECRET not in caplog.text
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p != secret and SECRET.encode() in p.read_bytes()]


def test_truncated_alignment_file_is_an_error_and_writes_nothing(tmp_path):
    films = [_film(30, i) for i in range(1, 40)]
    root = write_mirror(tmp_path / "opus", {p: d for docs, _ in films for p, d in docs.items()},
                        [g for _, g in films])
    align = root / "xml" / "de-en.xml.gz"
    align.write_bytes(align.read_bytes()[: align.stat().st_size // 2])
    with pytest.raises(OpusError, match=r"de-en\.xml\.gz: damaged after \d+ link groups \(EOFError"):
        extract(root, "en-de", tmp_path / "out.jsonl")
    assert not list(tmp_path.glob("*.jsonl")) and not list(tmp_path.glob(".out.jsonl*"))


def test_a_folder_that_is_not_an_opus_copy_is_named(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(OpusError, match=r"empty: neither xml/de\.zip nor xml/de/"):
        extract(tmp_path / "empty", "en-de", tmp_path / "out.jsonl")
    (tmp_path / "empty" / "xml" / "de").mkdir(parents=True)
    (tmp_path / "empty" / "xml" / "en").mkdir()
    with pytest.raises(OpusError, match=r"no alignment file xml/de-en\.xml\.gz"):
        extract(tmp_path / "empty", "en-de", tmp_path / "out.jsonl")


def test_other_pairs_read_english_first_alignments(tmp_path):
    # en-fr is aligned as en-fr.xml.gz: English is the first document of each group.
    docs = {"en/2010/77/1.xml.gz": document_xml("1", [_timed("1", "Hello .", 1.0)]),
            "fr/2010/77/2.xml.gz": document_xml("2", [_timed("1", "Bonjour .", 1.0)])}
    root = write_mirror(tmp_path / "opus", docs, [link_group_xml(*docs, [("SL1", "1;1", "0.99")])],
                        pair_name="en-fr")
    samples, _ = run(root, tmp_path, pair="en-fr")
    assert samples[0]["text"] == {"en": "Hello.", "fr": "Bonjour."} and samples[0]["doc_id"] == "en/2010/77/1|fr/2010/77/2"


def test_command_line(film_mirror, tmp_path):
    out = tmp_path / "all.jsonl"
    run_ = subprocess.run([sys.executable, "-m", "mtcue.cli", "extract-opensubtitles", "--mirror", str(film_mirror),
                           "--pair", "en-de", "--out", str(out), "--films", str(tmp_path / "films.txt"),
                           "--stats", str(tmp_path / "stats.json"), "--min-overlap", "0.95"],
                          capture_output=True, text=True)
    assert run_.returncode == 0, run_.stderr
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["pairs"] == 6 and stats["dropped"]["overlap_below_threshold"] == 4  # 0.9, 0.932, 0.91, 0.85
    assert "extracted 6 pairs of en-de" in run_.stderr


def test_generated_copy_extracts(tmp_path, caplog, monkeypatch):
    written = generate_mirror(tmp_path / "gen", "en-ru", 3000, seed=3, links_per_film=300)
    assert written["links"] == 3000
    monkeypatch.setattr("mtcue.progress.INTERVAL_S", 0)
    with caplog.at_level(logging.INFO, logger="mtcue.progress"):
        samples, report = run(tmp_path / "gen", tmp_path, pair="en-ru")
    # Progress in pairs done and their rate (the stream's length is unknown), and the end.
    lines = [r.getMessage() for r in caplog.records if r.name == "mtcue.progress"]
    assert re.fullmatch(r"extract en-ru: 1 pairs, [\d.]+/s", lines[0])
    assert re.fullmatch(rf"extract en-ru: done {len(samples)} pairs in \d+ s(, [\d.]+/s)?", lines[-1])
    assert report["links"] == 3000 and report["pairs"] == len(samples) > 1000
    assert report["pairs"] + sum(report["dropped"].values()) == report["links"]
    assert (tmp_path / "gen" / "xml" / "ru.zip").exists()  # zipped as OPUS ships it


# ---- parallel extraction ---------------------------------------------------------------

def _alignment_from_docs(path: Path) -> list[str]:
    """The fromDoc of each link group, read with a regular expression (independent of the extractor)."""
    return re.findall(r'fromDoc="([^"]+)"', gzip.decompress(path.read_bytes()).decode())


def test_parallel_output_is_the_serial_output(tmp_path, caplog, monkeypatch):
    from mtcue.data import opensubtitles

    monkeypatch.setattr(opensubtitles, "usable_cpus", lambda: 8)  # 3 workers even on a smaller machine
    gen = tmp_path / "gen"
    generate_mirror(gen, "en-de", 6000, seed=5, links_per_film=250)
    # One film's English document is damaged: its warning must come once, at its place.
    with zipfile.ZipFile(gen / "xml" / "en.zip") as archive:
        member = next(n for n in archive.namelist() if n.endswith("/8.xml"))
    damaged = tmp_path / "damaged"
    with zipfile.ZipFile(gen / "xml" / "en.zip") as src, zipfile.ZipFile(damaged, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, b"<document><s id='1'>" if name == member else src.read(name))
    damaged.replace(gen / "xml" / "en.zip")
    outputs = {}
    for workers in (1, 3):
        folder = tmp_path / f"w{workers}"
        folder.mkdir()
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="mtcue"):
            extract(gen, "en-de", folder / "all.jsonl", folder / "films.txt", folder / "stats.json", workers=workers)
        outputs[workers] = [(folder / name).read_bytes() for name in ("all.jsonl", "films.txt", "stats.json")]
        outputs[workers].append([r.getMessage() for r in caplog.records if r.name == "mtcue"])
    assert outputs[3] == outputs[1]
    stats = json.loads(outputs[1][2])
    assert stats["skipped_link_groups"] == {"document_not_xml": 1} and len(outputs[1][3]) == 1
    samples = [json.loads(line) for line in outputs[1][0].splitlines()]
    assert [s["id"] for s in samples] == [f"en-de.{k:09d}" for k in range(len(samples))]
    # Films in the alignment file's order (the damaged one left out), each film's pairs together.
    films_in_order = [d.split("/")[2] for d in _alignment_from_docs(gen / "xml" / "de-en.xml.gz")]
    seen = list(dict.fromkeys(s["imdb_id"] for s in samples))
    assert seen == [f"tt{int(f):07d}" for f in films_in_order if f != member.split("/")[4]]
    assert len(seen) == stats["films"] == len(films_in_order) - 1 > 20


@pytest.mark.parametrize("workers", [0, -2, 1.5, "2", True, None])
def test_worker_count_is_checked(film_mirror, tmp_path, workers):
    with pytest.raises(ValueError, match="workers must be a whole number >= 1"):
        extract(film_mirror, "en-de", tmp_path / "all.jsonl", workers=workers)
    assert not (tmp_path / "all.jsonl").exists()


@pytest.mark.parametrize("value", ["0", "two"])
def test_worker_count_on_the_command_line(film_mirror, tmp_path, value):
    run_ = subprocess.run([sys.executable, "-m", "mtcue.cli", "extract-opensubtitles", "--mirror", str(film_mirror),
                           "--pair", "en-de", "--out", str(tmp_path / "all.jsonl"), "--workers", value],
                          capture_output=True, text=True)
    assert run_.returncode == 2
    assert f"argument --workers: '{value}': a whole number >= 1 of worker processes" in run_.stderr
    assert not (tmp_path / "all.jsonl").exists()


def test_workers_are_capped_at_the_cpus_this_process_may_use(film_mirror, tmp_path, monkeypatch, caplog):
    from mtcue.data import opensubtitles

    cpus = len(os.sched_getaffinity(0))
    assert Extractor(Mirror(film_mirror), "en-de", workers=1000).workers == cpus
    monkeypatch.setattr(opensubtitles, "usable_cpus", lambda: 3)
    with caplog.at_level(logging.WARNING, logger="mtcue"):
        assert Extractor(Mirror(film_mirror), "en-de", workers=1000).workers == 3
        assert Extractor(Mirror(film_mirror), "en-de", workers=2).workers == 2
    assert caplog.text.count("1000 workers: capped at 3, the CPUs this process may use") == 1
    help_ = subprocess.run([sys.executable, "-m", "mtcue.cli", "extract-opensubtitles", "--help"], capture_output=True,
                           text=True).stdout
    assert "at most the CPUs this process may use" in " ".join(help_.split())


@pytest.mark.slow  # about 17 s on 2 cores
def test_a_worker_holds_one_film_at_a_time(tmp_path, monkeypatch):
    """What a worker does per film: it reads that film's two documents and nothing else, and what
    it keeps after a film does not grow with the films it has done."""
    import gc
    import statistics
    import tracemalloc

    from mtcue.data.clean import clean_line
    from mtcue.data.opensubtitles import Extractor, Films, Mirror, Rules, Sentence, _Side

    gen = tmp_path / "gen"
    generate_mirror(gen, "en-de", 12000, seed=2, links_per_film=600)
    mirror = Mirror(gen)
    groups = list(Extractor(mirror, "en-de").groups(mirror.alignment("en-de")))
    assert len(groups) == 20
    reads: list[str] = []
    original = Mirror.read_document
    monkeypatch.setattr(Mirror, "read_document", lambda self, path: (reads.append(path), original(self, path))[1])
    films = Films(mirror, "en-de", Rules())
    attributes = set(vars(films))
    tracemalloc.start()
    try:
        retained, peaks = [], []
        for group in groups:
            reads.clear()
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            result = films.film(group)
            peaks.append(tracemalloc.get_traced_memory()[1] - before)
            del result
            clean_line.cache_clear()  # a bounded cache of cleaned lines, counted apart (below)
            retained.append(tracemalloc.get_traced_memory()[0])
            assert reads == [group.from_doc, group.to_doc]
            assert not any(isinstance(o, (Sentence, _Side)) for o in gc.get_objects())  # no document kept
    finally:
        tracemalloc.stop()
        mirror.close()
    assert set(vars(films)) == attributes  # no per-film state left on the extractor
    # After the first films (caches of the cleaning rules warm up), 15 films together leave less
    # behind than a quarter of what one film needs while it is extracted: nothing of a film stays.
    assert retained[-1] - retained[4] < statistics.median(peaks) / 4, (retained, peaks)
    assert clean_line.cache_info().maxsize == 1 << 16  # what the cache may hold is bounded


def test_ordered_map_reads_ahead_at_most_a_window():
    from mtcue.data.opensubtitles import ordered_map

    pulled = []

    def items():
        for k in range(-30, 0):
            pulled.append(k)
            yield k

    got = []
    for value in ordered_map(abs, items(), workers=2, window=3):
        got.append(value)
        assert len(pulled) - len(got) <= 3 - 1  # the window less the one just yielded
    assert got == list(range(30, 0, -1))


def test_a_dead_worker_is_a_clear_error():
    from mtcue.data.opensubtitles import OpusError, ordered_map

    with pytest.raises(OpusError, match="a worker process of 2 died"):
        list(ordered_map(os._exit, [3, 4], workers=2))
