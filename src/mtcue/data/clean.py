"""Cleaning of subtitle text: Moses punctuation normalisation plus the paper's rules.

Applied to every sentence and previous line of the corpus; a sample whose sentence in
either language becomes empty is dropped, and the counts say how many and why.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator

from sacremoses import MosesDetokenizer, MosesPunctNormalizer

from mtcue.corpus import read_corpus
from mtcue.io import write_jsonl
from mtcue.progress import track

_LEADING_DASH = re.compile(r"^\s*[-–—]+\s*")
_BRACKETED = re.compile(r"\[[^\]]*\]|\([^)]*\)|\{[^}]*\}")
_SPEAKER = re.compile(r"^\s*[A-Z][A-Z .'-]{1,30}:\s+")
_MUSIC = re.compile(r"[♪♫♬#]")
_LETTER = re.compile(r"[^\W\d_]")
_SPACES = re.compile(r"\s+")
# OCR confuses capital I with lower-case l in English subtitles ("lt's", "l'm", "l ").
_OCR_L = re.compile(r"\bl(?=(?:'m|'ll|'ve|'d|t's|t\b|n\b|f\b|s\b)|\s|$)")



# A pattern without regex syntax other than escaped punctuation: a plain string.
_LITERAL_PATTERN = re.compile(r"(?:[^\\.^$*+?{}\[\]|()]|\\[^A-Za-z0-9])+")


class _PunctNormalizer(MosesPunctNormalizer):
    """sacremoses' punctuation normaliser with the same output, faster: most of its ~45
    substitutions replace one fixed string ("„" by '"'), done by str.replace when the string
    occurs; the rest go through patterns compiled once (sacremoses hands each pattern string to
    re.sub for every line). Extraction cleans every sentence: this is most of its time."""

    def __init__(self, lang: str):
        super().__init__(lang=lang)
        self._steps = []
        for pattern, repl in self.substitutions:
            if _LITERAL_PATTERN.fullmatch(pattern) and "\\" not in repl:
                self._steps.append((re.sub(r"\\(.)", r"\1", pattern), repl, None))
            else:
                self._steps.append((None, repl, re.compile(pattern).sub))

    def normalize(self, text: str) -> str:
        for literal, repl, substitute in self._steps:
            if literal is None:
                text = substitute(repl, text)
            elif literal in text:
                text = text.replace(literal, repl)
        return text.strip()


_moses: dict[str, tuple[MosesPunctNormalizer, MosesDetokenizer]] = {}


def _unmatched_removed(text: str) -> str:
    for opening, closing in ("()", "[]", "{}"):
        if text.count(opening) != text.count(closing):
            text = text.replace(opening, "").replace(closing, "")
    if text.count('"') % 2:
        text = text.replace('"', "")
    return text


# A line comes back as the previous line of up to five later samples: clean it once.
@lru_cache(maxsize=1 << 16)
def clean_line(text: str, lang: str) -> str:
    """Return the cleaned line, or "" when nothing usable is left."""
    if _MUSIC.search(text):
        return ""
    if lang not in _moses:
        _moses[lang] = _PunctNormalizer(lang=lang), MosesDetokenizer(lang=lang)
    normaliser, detokeniser = _moses[lang]
    text = normaliser.normalize(text)
    # Every XML escape the detokeniser undoes starts with "&"; without one it is a no-op.
    text = detokeniser.detokenize(text.split(), unescape="&" in text)
    text = _BRACKETED.sub(" ", text)
    text = _SPEAKER.sub("", text)
    text = _LEADING_DASH.sub("", text)
    text = _unmatched_removed(text)
    if lang == "en":
        text = _OCR_L.sub("I", text)
    text = _SPACES.sub(" ", text).strip()
    return text if _LETTER.search(text) else ""


def _context_until_empty(lines: list[str], lang: str) -> list[str]:
    """The cleaned previous lines, most recent first, up to the first that cleans to nothing: the
    context stops there (as the extraction resets it at a dropped line), so slot j still means
    "j lines back" instead of older lines sliding closer."""
    kept = []
    for line in lines:
        cleaned = clean_line(line, lang)
        if not cleaned:
            break
        kept.append(cleaned)
    return kept


def clean_samples(samples: Iterable[dict], max_chars: int, stats: Counter) -> Iterator[dict]:
    for sample in samples:
        stats["input"] += 1
        text = {lang: clean_line(t, lang) for lang, t in sample["text"].items()}
        if not all(text.values()):
            stats["dropped_empty"] += 1
            continue
        if max(len(t) for t in text.values()) > max_chars:
            stats["dropped_too_long"] += 1
            continue
        previous = {lang: _context_until_empty(lines, lang) for lang, lines in sample["previous"].items()}
        stats["kept"] += 1
        yield {**sample, "text": text, "previous": previous}


def clean_corpus(in_path: str | Path, out_path: str | Path, max_chars: int) -> dict:
    """Clean one corpus file into a fresh output file; returns the counts."""
    stats: Counter = Counter()
    samples = track(read_corpus(in_path), f"clean {in_path}", unit="samples")
    write_jsonl(out_path, clean_samples(samples, max_chars, stats))
    if stats["kept"] == 0:
        Path(out_path).unlink()
        raise ValueError(f"{in_path}: cleaning left no samples ({dict(stats)})")
    return dict(stats)
