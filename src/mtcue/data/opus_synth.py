"""OPUS-format OpenSubtitles files: writers for the exact XML layout, and a generated copy of any
size for the extraction benchmark (`mtcue opus-synth`).

The writers produce what OPUS distributes: tokenised documents (`<document id>`, `<s id>` holding
`<w id="s.n">` tokens and `<time id="T{n}S|E" value="HH:MM:SS,mmm"/>` markers, a trailing `<meta>`)
and cesAlign alignment files (`<linkGrp fromDoc toDoc>` with `<link id xtargets overlap>`). The
generated copy has the oddities of the real one at realistic rates: links below the overlap
threshold, one-sided links, multi-sentence links with unordered ids, music and bracket-only
lines, blocks without <time> markers and long pauses.
"""
from __future__ import annotations

import gzip
import random
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator
from xml.sax.saxutils import escape, quoteattr

from mtcue.data.opensubtitles import ZIP_PREFIX, alignment_name


@dataclass
class Sent:
    """One <s>: its tokens, and the time markers before its first and after its last token."""

    sid: str
    tokens: list[str]
    before: list[tuple[str, str]] = field(default_factory=list)  # (time id, value)
    after: list[tuple[str, str]] = field(default_factory=list)


def clock(seconds: float) -> str:
    """84.5 -> "00:01:24,500" (OPUS's time value format)."""
    ms = int(round(seconds * 1000))
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


def sentence_xml(s: Sent) -> str:
    out = [f"  <s id={quoteattr(s.sid)}>\n"]
    out += [f'    <time id="{tid}" value="{value}" />\n' for tid, value in s.before]
    out += [f'    <w id="{s.sid}.{k}">{escape(tok)}</w>\n' for k, tok in enumerate(s.tokens, 1)]
    out += [f'    <time id="{tid}" value="{value}" />\n' for tid, value in s.after]
    out.append("  </s>\n")
    return "".join(out)


def document_xml(doc_id: str, sentences: Iterable[Sent]) -> bytes:
    out = ['<?xml version="1.0" encoding="utf-8"?>\n', f"<document id={quoteattr(doc_id)}>\n"]
    out += [sentence_xml(s) for s in sentences]
    out.append("  <meta>\n    <conversion>\n      <sentences>generated</sentences>\n    </conversion>\n  </meta>\n")
    out.append("</document>\n")
    return "".join(out).encode("utf-8")


ALIGN_HEAD = ('<?xml version="1.0" encoding="utf-8"?>\n'
              '<!DOCTYPE cesAlign PUBLIC "-//CES//DTD XML cesAlign//EN" "">\n<cesAlign version="1.0">\n')
ALIGN_TAIL = "</cesAlign>\n"


def link_group_xml(from_doc: str, to_doc: str, links: Iterable[tuple[str, str, str | None]]) -> str:
    """One <linkGrp>; a link is (id, xtargets, overlap or None)."""
    out = [f'<linkGrp targType="s" fromDoc={quoteattr(from_doc)} toDoc={quoteattr(to_doc)} >\n']
    for lid, xtargets, overlap in links:
        extra = f' overlap="{overlap}"' if overlap is not None else ""
        out.append(f'<link id="{lid}" xtargets="{xtargets}"{extra} />\n')
    out.append("</linkGrp>\n")
    return "".join(out)


# ---- the generated copy ----------------------------------------------------------------

WORDS = {
    "en": "I you we they it the a that this what where when why how is are was were have has do did not "
          "know want think see go come tell need right here there now then never always just really okay "
          "good time man woman night home house car money friend father mother brother sister dead kill "
          "love talk look wait stop help please sorry thanks yes no well so but and or if".split(),
    "xx": "ich du wir sie es der die das ein eine was wo wann warum wie ist sind war waren habe hat nicht "
          "weiß will denke sehe gehe komme sage brauche richtig hier dort jetzt dann nie immer nur wirklich "
          "gut Zeit Mann Frau Nacht Haus Auto Geld Freund Vater Mutter Bruder Schwester tot liebe rede warte "
          "bitte danke ja nein also aber und oder wenn".split(),
}
MUSIC = ["♪", "la", "la", "la", "♪"]


def _tokens(rng: random.Random, words: list[str]) -> list[str]:
    n = rng.randint(2, 11)
    tokens = [rng.choice(words) for _ in range(n)]
    tokens[0] = tokens[0].capitalize()
    if rng.random() < 0.15:
        tokens.insert(0, "-")
    return tokens + [rng.choice([".", ".", ".", "?", "!", "..."])]


def _film(rng: random.Random, n_links: int, langs: tuple[str, str]) -> tuple[list[list[Sent]], list[tuple]]:
    """The two documents of one film and the links between them."""
    docs: list[list[Sent]] = [[], []]
    links: list[tuple[str, str, str | None]] = []
    clock_s = rng.uniform(20, 60)
    block = [1, 1]  # the next time-marker number on each side
    for n in range(1, n_links + 1):
        clock_s += rng.uniform(8, 40) if rng.random() < 0.08 else rng.uniform(0.3, 3.0)
        duration = rng.uniform(1.0, 4.0)
        kind = rng.random()
        sizes = (1, 0) if kind < 0.03 else (0, 1) if kind < 0.06 else (2, 1) if kind < 0.12 else (1, 1)
        ids: list[list[str]] = [[], []]
        music = rng.random() < 0.02
        timed = rng.random() > 0.01
        for side, size in enumerate(sizes):
            words = WORDS["en" if langs[side] == "en" else "xx"]
            for k in range(size):
                sid = str(len(docs[side]) + 1)
                sent = Sent(sid, list(MUSIC) if music else _tokens(rng, words))
                if timed and k == 0:
                    sent.before.append((f"T{block[side]}S", clock(clock_s)))
                if timed and k == size - 1:
                    sent.after.append((f"T{block[side]}E", clock(clock_s + duration)))
                    block[side] += 1
                docs[side].append(sent)
                ids[side].append(sid)
        if len(ids[0]) == 2 and rng.random() < 0.3:
            ids[0].reverse()  # OPUS lists some multi-sentence ids out of order
        overlap = None if not all(ids) else f"{min(1.0, rng.betavariate(5, 0.8)):.3f}"
        links.append((f"SL{n}", f"{' '.join(ids[0])};{' '.join(ids[1])}", overlap))
        clock_s += duration
    return docs, links


def mirror_files(root: str | Path, pair: str) -> list[Path]:
    """The files generate_mirror writes: `xml/{lang}.zip` of each language, then `xml/{l1}-{l2}.xml.gz`."""
    xml = Path(root) / "xml"
    return [*(xml / f"{lang}.zip" for lang in alignment_name(pair).split("-")), xml / f"{alignment_name(pair)}.xml.gz"]


def film_documents(film: int, pair: str) -> dict[str, str]:
    """{language: OPUS document path} of the two sides of generated film number `film` (its IMDb number
    is the folder, 100000 + `film`)."""
    year, imdb = 1950 + film % 70, 100000 + film
    return {lang: f"{lang}/{year}/{imdb}/{film * 2 + side + 1}.xml.gz"
            for side, lang in enumerate(alignment_name(pair).split("-"))}


def generate_mirror(root: str | Path, pair: str, n_links: int, seed: int = 1, links_per_film: int = 900,
                    first_film: int = 0, append: bool = False) -> dict:
    """An OPUS-layout copy under `root` (`xml/{lang}.zip`, `xml/{l1}-{l2}.xml.gz`) with about
    `n_links` links in films of about `links_per_film` links, numbered from `first_film`; returns what
    was written. With `append`, the language archives already there gain the pair's documents (OPUS's
    en.zip holds the English side of every pair), so pairs written one after another need distinct films."""
    rng = random.Random(seed)
    langs = tuple(alignment_name(pair).split("-"))
    *zips, alignment = mirror_files(root, pair)
    alignment.parent.mkdir(parents=True, exist_ok=True)
    archives = [zipfile.ZipFile(path, "a" if append else "w", zipfile.ZIP_DEFLATED, compresslevel=1)
                for path in zips]
    written = {"films": 0, "links": 0}
    try:
        with gzip.open(alignment, "wt", encoding="utf-8", compresslevel=1) as align:
            align.write(ALIGN_HEAD)
            for film, size in enumerate(_film_sizes(rng, n_links, links_per_film), first_film):
                docs, links = _film(rng, size, langs)
                paths = list(film_documents(film, pair).values())
                for side, archive in enumerate(archives):
                    member = ZIP_PREFIX + paths[side].removesuffix(".gz")
                    archive.writestr(member, document_xml(str(film * 2 + side + 1), docs[side]))
                align.write(link_group_xml(paths[0], paths[1], links))
                written["films"] += 1
                written["links"] += len(links)
            align.write(ALIGN_TAIL)
    finally:
        for archive in archives:
            archive.close()
    return written


def _film_sizes(rng: random.Random, total: int, mean: int) -> Iterator[int]:
    left = total
    while left > 0:
        size = min(left, max(10, int(rng.gauss(mean, mean / 3))))
        left -= size
        yield size
