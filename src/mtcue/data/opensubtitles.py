"""OpenSubtitles v2018 (OPUS) into the corpus format (docs/formats.md, section 1), streaming.

An OPUS copy in OPUS's own layout (a "mirror") holds the documents of each language, zipped
(`xml/{lang}.zip`, members `OpenSubtitles/xml/{lang}/{year}/{imdb}/{file}.xml`) or unpacked
(`xml/{lang}/{year}/{imdb}/{file}.xml.gz` or `.xml`), and the sentence alignments of each pair,
`xml/{l1}-{l2}.xml.gz` (languages in alphabetical order). The alignment file is read one link
group at a time (one pair of documents: one film), and only those two documents are in memory,
so memory does not grow with the corpus. The films are independent: with `workers` > 1, as many
processes extract them (each opens the copy itself and holds one film), at most two films per
worker are read ahead, and their pairs are written in the alignment file's order, as in one process.

The rules are the paper's (appendix A, after Voita et al. 2019):
- a link is kept when both sides are present and its overlap is >= `min_overlap` (0.9); the
  sentences of a multi-sentence link are concatenated in document order;
- each side is cleaned (mtcue.data.clean: Moses normalisation and detokenisation, brackets,
  speakers, music lines, OCR fixes); a link whose side cleans to nothing is dropped;
- the running document context is reset at every dropped link (no omitted pairs), when the link
  ids are not consecutive, and when more than `max_gap_s` seconds pass between two kept links
  (or the gap cannot be measured); up to 5 previous lines are kept, most recent first;
- the IMDb id is the English document's folder name.
Timing comes from the first document of each link group (the public code's choice), falling back
to the other side: a subtitle block's <time> start and end markers, split evenly over the
sentences of the block.

The files come from the internet: they are parsed with entities unexpanded and no external
resource (DTD, external or parameter entity) read, nor any file or URL it names opened.
"""
from __future__ import annotations

import gzip
import json
import logging
import multiprocessing
import re
import os
import zipfile
import zlib
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import ftfy
from lxml import etree

from mtcue.corpus import MAX_PREVIOUS, META_FIELDS
from mtcue.data.clean import clean_line
from mtcue.io import atomic_write_text, write_jsonl
from mtcue.progress import track

log = logging.getLogger("mtcue")

ENGLISH = "en"
ZIP_PREFIX = "OpenSubtitles/xml/"
# de/2008/1014051/6733127.xml.gz: language, year (0 when unknown), IMDb id (the folder name), OPUS file id.
DOC_PATH = re.compile(r"^([a-z]{2,3})/(\d+)/(\d+)/(\d+)\.xml(?:\.gz)?$")
TIME = re.compile(r"^\s*(\d+):(\d{1,2}):(\d{1,2})(?:[,.:](\d+))?\s*$")
LINK_ID = re.compile(r"^[A-Za-z]*(\d+)$")
NAMED_LOG_LIMIT = 10  # files named in the log per kind of problem; the counts cover all


class OpusError(ValueError):
    """The OPUS copy cannot be read; the message names the file and what to do."""


@dataclass(frozen=True)
class Rules:
    min_overlap: float = 0.9
    max_gap_s: float = 7.0
    max_previous: int = MAX_PREVIOUS


def imdb_id(folder: str) -> str:
    """An OPUS folder name as an IMDb id: "111161" -> "tt0111161" (7 digits at least)."""
    return f"tt{int(folder):07d}"


def alignment_name(pair: str) -> str:
    """OPUS names an alignment file by its languages in alphabetical order: en-de -> de-en."""
    return "-".join(sorted(pair.split("-")))


# ---- the mirror ------------------------------------------------------------------------

class Mirror:
    """Read access to an OPUS OpenSubtitles copy, zipped or unpacked (see the module doc)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self._zips: dict[str, zipfile.ZipFile | None] = {}

    def alignment(self, pair: str) -> Path:
        name = alignment_name(pair)
        for candidate in (self.root / "xml" / f"{name}.xml.gz", self.root / "xml" / f"{name}.xml"):
            if candidate.exists():
                return candidate
        raise OpusError(f"{self.root}: no alignment file xml/{name}.xml.gz (or .xml); corpus.mirror must be an "
                        "OPUS OpenSubtitles v2018 copy in OPUS's layout (xml/{l1}-{l2}.xml.gz, xml/{lang}.zip or "
                        "xml/{lang}/{year}/{imdb}/{file}.xml.gz)")

    def check_language(self, lang: str) -> None:
        if not ((self.root / "xml" / f"{lang}.zip").exists() or (self.root / "xml" / lang).is_dir()):
            raise OpusError(f"{self.root}: neither xml/{lang}.zip nor xml/{lang}/ holds the '{lang}' documents")

    def _zip(self, lang: str) -> zipfile.ZipFile | None:
        if lang not in self._zips:
            path = self.root / "xml" / f"{lang}.zip"
            try:
                self._zips[lang] = zipfile.ZipFile(path) if path.exists() else None
            except zipfile.BadZipFile as err:
                raise OpusError(f"{path}: not a readable zip archive ({err}); download it again") from None
        return self._zips[lang]

    def read_document(self, doc_path: str) -> tuple[bytes, str]:
        """The XML bytes of a document named as in an alignment file (`de/2008/1/2.xml.gz`), and where
        they came from. Raises FileNotFoundError when absent, OSError/BadZipFile/EOFError/zlib.error when
        damaged."""
        bare = doc_path.removesuffix(".gz")
        for candidate in (self.root / "xml" / f"{bare}.gz", self.root / "xml" / bare):
            if candidate.exists():
                data = candidate.read_bytes()
                return (gzip.decompress(data) if candidate.suffix == ".gz" else data), str(candidate)
        archive = self._zip(doc_path.split("/", 1)[0])
        if archive is not None:
            for member in (ZIP_PREFIX + bare, ZIP_PREFIX + bare + ".gz"):
                try:
                    data = archive.read(member)
                except KeyError:
                    continue
                where = f"{archive.filename}:{member}"
                return (gzip.decompress(data) if member.endswith(".gz") else data), where
        raise FileNotFoundError(doc_path)

    def close(self) -> None:
        for archive in self._zips.values():
            if archive is not None:
                archive.close()


# ---- documents -------------------------------------------------------------------------

def parse_time(value: str | None) -> float | None:
    """"00:01:24,000" -> 84.0 seconds; None when unparseable."""
    match = TIME.match(value or "")
    if not match:
        return None
    h, m, s, frac = match.groups()
    return int(h) * 3600 + int(m) * 60 + int(s) + (float(f"0.{frac}") if frac else 0.0)


@dataclass
class Sentence:
    index: int          # position in the document
    text: str           # tokens joined by spaces (tokenised variant) or the raw text
    start: float | None = None
    end: float | None = None


def _spread(sentences: list[Sentence], start: float | None, end: float) -> None:
    """A subtitle block's time span split evenly over its sentences."""
    start = end if start is None else min(start, end)
    step = (end - start) / len(sentences)
    for k, sentence in enumerate(sentences):
        sentence.start, sentence.end = start + k * step, start + (k + 1) * step


def _marker_time(child: etree._Element, stats: Counter) -> float | None:
    value = parse_time(child.get("value"))
    if value is None:
        stats["time_unparseable"] += 1
    return value


def _block_marks(s: etree._Element, stats: Counter) -> tuple[float | None, float | None]:
    """The time of the last <time> before the sentence's first word (a block starts) and of the
    first <time> after its last word (a block ends); markers between words are inside a block."""
    before = after = None
    n = len(s)
    i = 0
    if not (s.text and s.text.strip()):
        while i < n:
            child = s[i]  # each s[i] makes a new Python proxy: once per child
            if child.tag != "time":
                break
            value = _marker_time(child, stats)
            before = before if value is None else value
            i += 1
            if child.tail and child.tail.strip():
                break
    j = n - 1
    while j >= i:
        child = s[j]
        if child.tag != "time" or (child.tail and child.tail.strip()):
            break
        value = _marker_time(child, stats)
        after = after if value is None else value
        j -= 1
    return before, after


class _NoExternalResources(etree.Resolver):
    """The files come from the internet and OPUS's name no DTD or external entity: a request for one
    (`file:///etc/...`, `/dev/stdin`, a URL) is answered with nothing, and nothing is opened."""

    def resolve(self, system_url, public_id, context):
        return self.resolve_string("", context)


# Entities are left unexpanded, and DTDs unread. (No collect_ids=False: lxml passes it to libxml2 as a
# DTD-loading flag, which made it read external DTDs and parameter entities.)
_SAFE = {"resolve_entities": False, "load_dtd": False, "no_network": True, "huge_tree": True}
# One document is one film (a few thousand sentences at most): it is parsed whole; the corpus streams.
_PARSER = etree.XMLParser(**_SAFE)
_PARSER.resolvers.add(_NoExternalResources())
_TEXT = etree.XPath("string()")


def parse_document(data: bytes, stats: Counter) -> dict[str, Sentence]:
    """Sentences by id, with their times. A <time> before a sentence's first word starts a block,
    one after its last word ends it; the block's span is split evenly over its sentences."""
    sentences: dict[str, Sentence] = {}
    block: list[Sentence] = []
    block_start: float | None = None
    for s in etree.fromstring(data, _PARSER).iter("s"):
        sid = s.get("id")
        if sid is None or sid in sentences:
            stats["sentence_id_missing_or_repeated"] += 1
            continue
        before, after = _block_marks(s, stats)
        sentence = Sentence(len(sentences), " ".join(_TEXT(s).split()))
        sentences[sid] = sentence
        if before is not None:
            if block:  # a block that never ended: it ends where the next one starts
                _spread(block, block_start, before)
            block, block_start = [], before
        block.append(sentence)
        if after is not None:
            _spread(block, block_start, after)
            block, block_start = [], after
    if block and block_start is not None:
        for sentence in block:
            sentence.start = sentence.end = block_start
    return sentences


def _decoded(data: bytes, where: str, result: FilmResult) -> bytes:
    """Bytes that are valid UTF-8: bytes that are not become U+FFFD (those sentences are dropped)."""
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError as err:
        result.stats["documents_with_invalid_utf8"] += 1
        result.warnings.append(("invalid_utf8", (f"{where}: not valid UTF-8 (byte {err.start}); its damaged "
                                                 "sentences are dropped")))
        return data.decode("utf-8", "replace").encode("utf-8")


def _name_once(named: Counter, kind: str, message: str) -> None:
    named[kind] += 1
    if named[kind] <= NAMED_LOG_LIMIT:
        log.warning("%s", message)


# ---- extraction ------------------------------------------------------------------------

@dataclass
class _Side:
    lang: str
    path: str
    sentences: dict[str, Sentence]
    cleaned: dict[str, str]

    def text(self, ids: list[str], stats: Counter) -> str | None:
        """The cleaned text of a link side, or None with the reason counted."""
        if any(i not in self.sentences for i in ids):
            stats["dropped:unknown_sentence_id"] += 1
            return None
        ordered = sorted(ids, key=lambda i: self.sentences[i].index)
        if ordered != ids:
            stats["repaired:unordered_ids"] += 1
        raw = " ".join(self.sentences[i].text for i in ordered)
        if not raw:
            stats["dropped:empty_sentence"] += 1
            return None
        if "\ufffd" in raw:  # bytes that were not UTF-8, or text OPUS itself could not decode
            stats["dropped:damaged_encoding"] += 1
            return None
        key = " ".join(ordered)
        if key not in self.cleaned:
            fixed = raw if raw.isascii() else ftfy.fix_encoding(raw)
            if fixed != raw:
                stats["repaired:mojibake"] += 1
            self.cleaned[key] = clean_line(fixed, self.lang)
        if not self.cleaned[key]:
            stats["dropped:empty_after_cleaning"] += 1
            return None
        return self.cleaned[key]

    def span(self, ids: list[str]) -> tuple[float | None, float | None]:
        starts = [self.sentences[i].start for i in ids]
        ends = [self.sentences[i].end for i in ids]
        if None in starts or None in ends:
            return None, None
        return min(starts), max(ends)


@dataclass(frozen=True)
class LinkGroup:
    """One <linkGrp> of the alignment file (one film's two documents), as plain data that a worker
    process receives: the document paths and each link's (id, xtargets, overlap)."""
    from_doc: str | None
    to_doc: str | None
    links: tuple[tuple[str | None, str | None, str | None], ...]


@dataclass
class FilmResult:
    """What one link group gives: its samples (without their running "id"), the counts, the film's
    folder name (None when the group was skipped) and the warnings to log, in order."""
    samples: list[dict] = field(default_factory=list)
    stats: Counter = field(default_factory=Counter)
    film: str | None = None
    warnings: list[tuple[str, str]] = field(default_factory=list)


class Films:
    """Extracts one link group at a time; it keeps nothing between groups (its state is the copy,
    the pair and the rules), so a worker holds one film's two documents at most."""

    def __init__(self, mirror: Mirror, pair: str, rules: Rules):
        self.mirror, self.pair, self.rules = mirror, pair, rules
        self.langs = tuple(alignment_name(pair).split("-"))  # fromDoc, toDoc languages

    def _side(self, lang: str, path: str | None, result: FilmResult) -> _Side | None:
        stats, warn = result.stats, result.warnings
        if path is None or not DOC_PATH.match(path) or not path.startswith(f"{lang}/"):
            stats["skipped_link_groups:bad_document_path"] += 1
            warn.append(("path", f"link group with document path {path!r}: not {lang}/YEAR/IMDB/FILE.xml.gz; skipped"))
            return None
        try:
            data, where = self.mirror.read_document(path)
        except FileNotFoundError:
            stats["skipped_link_groups:document_missing"] += 1
            warn.append(("missing", (f"{self.mirror.root}: document {path} is not in the copy; its link group is "
                                     "skipped")))
            return None
        except (OSError, EOFError, zlib.error, zipfile.BadZipFile, zipfile.LargeZipFile) as err:
            stats["skipped_link_groups:document_unreadable"] += 1
            warn.append(("unreadable", (f"{self.mirror.root}: document {path} cannot be read "
                                        f"({type(err).__name__}: {err}); its link group is skipped")))
            return None
        try:
            sentences = parse_document(_decoded(data, where, result), stats)
        except etree.XMLSyntaxError as err:
            stats["skipped_link_groups:document_not_xml"] += 1
            warn.append(("xml", f"{where}: not well-formed XML ({err}); its link group is skipped"))
            return None
        return _Side(lang, path, sentences, {})

    def film(self, group: LinkGroup) -> FilmResult:
        result = FilmResult()
        sides = []
        for lang, path in zip(self.langs, (group.from_doc, group.to_doc)):
            side = self._side(lang, path, result)
            if side is None:
                result.stats["links_in_skipped_groups"] += len(group.links)
                return result
            sides.append(side)
        by_lang = dict(zip(self.langs, sides))
        english, other = by_lang[ENGLISH], by_lang[next(lang for lang in self.langs if lang != ENGLISH)]
        folders = {lang: DOC_PATH.match(side.path).group(3) for lang, side in by_lang.items()}
        if len(set(folders.values())) > 1:
            result.stats["repaired:imdb_differs_between_sides"] += 1
        result.film = film = folders[ENGLISH]
        doc_id = f"{english.path.removesuffix('.xml.gz')}|{other.path.removesuffix('.xml.gz')}"
        stats = result.stats
        context: list[dict[str, str]] = []
        last_end: float | None = None
        last_number: int | None = None
        for link in group.links:
            texts, span = self._link(link, sides, stats)
            number = _link_number(link[0])
            if texts is None:
                context, last_end, last_number = [], None, None
                continue
            start, end = span
            if context:
                if last_number is not None and number is not None and number != last_number + 1:
                    stats["context_resets:link_ids_not_consecutive"] += 1
                    context = []
                elif start is None or last_end is None:
                    stats["context_resets:no_time"] += 1
                    context = []
                elif start - last_end > self.rules.max_gap_s:
                    stats["context_resets:gap"] += 1
                    context = []
            last_end, last_number = end, number
            stats["pairs"] += 1
            result.samples.append(self._sample(texts, context, doc_id, film))
            context = [texts, *context][: self.rules.max_previous]
        return result

    def _link(self, link: tuple, sides: list[_Side], stats: Counter):
        """({lang: cleaned text}, (start, end)) of a kept link, or (None, None) with the reason counted."""
        _, xtargets, overlap = link
        left, sep, right = (xtargets or "").partition(";")
        ids = [left.split(), right.split()]
        if not sep or not all(ids):
            stats["dropped:one_sided"] += 1
            return None, None
        if overlap is None:
            stats["dropped:no_overlap"] += 1
            return None, None
        try:
            value = float(overlap)
        except ValueError:
            stats["dropped:overlap_not_a_number"] += 1
            return None, None
        if not value >= self.rules.min_overlap:
            stats["dropped:overlap_below_threshold"] += 1
            return None, None
        texts = {}
        for side, side_ids in zip(sides, ids):
            text = side.text(side_ids, stats)
            if text is None:
                return None, None
            texts[side.lang] = text
        span = sides[0].span(ids[0])
        if span[0] is None:
            span = sides[1].span(ids[1])
        return texts, span

    def _sample(self, texts: dict[str, str], context: list[dict[str, str]], doc_id: str, film: str) -> dict:
        langs = self.pair.split("-")
        return {
            "doc_id": doc_id,
            "imdb_id": imdb_id(film),
            "text": {lang: texts[lang] for lang in langs},
            "previous": {lang: [line[lang] for line in context] for lang in langs},
            "meta": dict.fromkeys(META_FIELDS),
        }


# A worker process's extractor, made once by _start_worker (each worker opens the copy itself).
_WORKER: Films | None = None


def _start_worker(root: str, pair: str, rules: Rules) -> None:
    global _WORKER
    _WORKER = Films(Mirror(root), pair, rules)


def _extract_film(group: LinkGroup) -> FilmResult:
    return _WORKER.film(group)


def ordered_map(fn, items: Iterable, workers: int, initializer=None, initargs: tuple = (),
                window: int | None = None) -> Iterator:
    """fn(item) for each item, computed by `workers` processes, yielded in the items' order. At most
    `window` items (default 2 per worker) are read ahead of what has been yielded, so neither the
    input nor the results pile up in memory, whatever their number."""
    window = window or 2 * workers
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=initializer, initargs=initargs)
    pending: deque = deque()
    try:
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool:
        raise OpusError(f"a worker process of {workers} died (out of memory? try fewer workers)") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity: a SLURM or taskset allocation, not the machine's)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def check_workers(workers) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1 (processes extracting films in parallel), "
                         f"not {workers!r}")
    return workers


class Extractor:
    """Streams the pairs of one language pair, films extracted by `workers` processes (1: in this
    one), in the alignment file's order; `stats` counts every link's fate."""

    def __init__(self, mirror: Mirror, pair: str, rules: Rules = Rules(), workers: int = 1):
        self.mirror, self.pair, self.rules = mirror, pair, rules
        self.workers = min(check_workers(workers), usable_cpus())
        if self.workers < workers:  # more processes than CPUs only cost memory and start-up time
            log.warning("%d workers: capped at %d, the CPUs this process may use", workers, self.workers)
        self.films_reader = Films(mirror, pair, rules)
        if ENGLISH not in self.films_reader.langs:
            raise OpusError(f"pair {pair}: one side must be English")
        self.stats: Counter = Counter()
        self.films: set[str] = set()
        self._named: Counter = Counter()
        self._count = 0

    def groups(self, path: Path) -> Iterator[LinkGroup]:
        """The alignment file's link groups, streamed: one <linkGrp> element in memory at a time."""
        opener = gzip.open if path.suffix == ".gz" else open
        try:
            with opener(path, "rb") as handle:
                groups = etree.iterparse(handle, events=("end",), tag="linkGrp", **_SAFE)
                groups.resolvers.add(_NoExternalResources())
                for _, group in groups:
                    links = tuple((link.get("id"), link.get("xtargets"), link.get("overlap"))
                                  for link in group if link.tag == "link")
                    self.stats["link_groups"] += 1
                    self.stats["links"] += len(links)
                    item = LinkGroup(group.get("fromDoc"), group.get("toDoc"), links)
                    group.clear(keep_tail=False)
                    while group.getprevious() is not None:
                        del group.getparent()[0]
                    yield item
        except (EOFError, OSError, zipfile.BadZipFile) as err:
            raise OpusError(f"{path}: damaged after {self.stats['link_groups']} link groups ({type(err).__name__}: "
                            f"{err}); download it again") from None
        except etree.XMLSyntaxError as err:
            raise OpusError(f"{path}: not well-formed XML after {self.stats['link_groups']} link groups ({err}); "
                            "download it again") from None

    def samples(self) -> Iterator[dict]:
        for lang in self.films_reader.langs:
            self.mirror.check_language(lang)
        groups = self.groups(self.mirror.alignment(self.pair))
        if self.workers == 1:
            results = map(self.films_reader.film, groups)
        else:
            results = ordered_map(_extract_film, groups, self.workers, _start_worker,
                                  (str(self.mirror.root), self.pair, self.rules))
        for result in results:
            self.stats.update(result.stats)
            for kind, message in result.warnings:
                _name_once(self._named, kind, message)
            if result.film is not None:
                self.films.add(result.film)
            for sample in result.samples:
                yield {"id": f"{self.pair}.{self._count:09d}", **sample}
                self._count += 1

    def report(self) -> dict:
        """The counts, grouped: what was kept, what was dropped and why, what was repaired."""
        report: dict = {"pair": self.pair, "pairs": self.stats["pairs"], "films": len(self.films),
                        "link_groups": self.stats["link_groups"], "links": self.stats["links"],
                        "links_in_skipped_groups": self.stats["links_in_skipped_groups"]}
        for group in ("dropped", "skipped_link_groups", "context_resets", "repaired"):
            report[group] = {k.split(":", 1)[1]: v for k, v in sorted(self.stats.items())
                             if k.startswith(group + ":")}
        report["documents_with_invalid_utf8"] = self.stats["documents_with_invalid_utf8"]
        report["time_values_unparseable"] = self.stats["time_unparseable"]
        report["sentence_ids_missing_or_repeated"] = self.stats["sentence_id_missing_or_repeated"]
        return report


def _link_number(link_id: str | None) -> int | None:
    match = LINK_ID.match(link_id or "")
    return int(match.group(1)) if match else None


def extract(mirror_dir: str | Path, pair: str, out: str | Path, films_out: str | Path | None = None,
            stats_out: str | Path | None = None, rules: Rules = Rules(), workers: int = 1) -> dict:
    """Write every extracted pair of `pair` (corpus format, metadata empty) to `out`, the films'
    OPUS folder names to `films_out`, the counts to `stats_out`; returns the counts. With
    `workers` > 1 the films are extracted by that many processes; the output is the same."""
    mirror = Mirror(mirror_dir)
    extractor = Extractor(mirror, pair, rules, workers)
    try:
        # The alignment file is streamed: its size in pairs is known only at the end.
        write_jsonl(out, track(extractor.samples(), f"extract {pair}", unit="pairs"))
    finally:
        mirror.close()
    report = extractor.report()
    if report["pairs"] == 0:
        Path(out).unlink()
        raise OpusError(f"{mirror_dir}: no pair of {pair} survived extraction ({json.dumps(report)})")
    if films_out:
        atomic_write_text(films_out, "".join(f"{f}\n" for f in sorted(extractor.films, key=int)))
    if stats_out:
        atomic_write_text(stats_out, json.dumps(report, indent=2) + "\n")
    return report
