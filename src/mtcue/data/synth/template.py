"""Sentence patterns and the renderer that every language module builds on.

A pattern is literal text with placeholders `{head}` or `{head:arg:...}`. The head names
either a slot of the line (`obj`, `verb`, ...: the value comes from the line's slots) or a
grammatical form of the address situation (`du`, `pro`, `past2`, ...). A language resolves
head `x` with its method `h_x(slots, situation, *args)`; so a new language is one class with
one method per head its patterns use.
"""
from __future__ import annotations

import re
from functools import lru_cache

from mtcue.data.synth.situation import Situation

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.?!])")


@lru_cache(maxsize=None)
def compile_pattern(pattern: str) -> tuple:
    """Split a pattern once into literal strings and (head, args) tuples."""
    parts: list = []
    pos = 0
    for match in _PLACEHOLDER.finditer(pattern):
        parts.append(pattern[pos:match.start()])
        head, *args = match.group(1).split(":")
        parts.append((head, tuple(args)))
        pos = match.end()
    parts.append(pattern[pos:])
    return tuple(p for p in parts if p != "")


def tidy(text: str) -> str:
    """Collapse the gaps left by empty forms (Polish pro-drop) and capitalise the sentence."""
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", _SPACES.sub(" ", text).strip())
    return text[:1].upper() + text[1:]


class Language:
    """Renders patterns in one language; subclasses add the `h_*` heads and `frames`."""

    code: str = ""
    # Phenomena this language makes visible (situation.PHENOMENA); empty for English.
    phenomena: tuple[str, ...] = ()
    # Frame id -> pattern; English keeps its patterns with the frames instead.
    frames: dict[str, str] = {}
    # Slot kind -> slot value -> text, for slots that a `{kind}` placeholder inserts as is.
    lexicon: dict[str, dict[str, str]] = {}
    # Noun slot value -> its forms, the grammatical gender ("m", "f", "n") last (anaphoric pronouns agree).
    nouns: dict[str, tuple[str, ...]] = {}
    # Vocatives: "mr"/"mrs"/"ms" -> the title before a surname; fixed words ("sir") -> text.
    titles: dict[str, str] = {}
    vocative_words: dict[str, str] = {}

    def render(self, frame: str, slots: dict[str, str], situation: Situation) -> str:
        return self.render_pattern(self.frames[frame], slots, situation)

    def render_pattern(self, pattern: str, slots: dict[str, str], situation: Situation) -> str:
        out = []
        for part in compile_pattern(pattern):
            if isinstance(part, str):
                out.append(part)
            else:
                head, args = part
                if head in self.lexicon and not args:
                    out.append(self.lexicon[head][slots[head]])
                else:
                    out.append(getattr(self, "h_" + head)(slots, situation, *args))
        text = tidy("".join(out))
        if "tail" in slots:
            text = self._with_tail_vocative(text, self.vocative(slots["tail"]))
        return text

    @staticmethod
    def _with_tail_vocative(text: str, vocative: str) -> str:
        """Insert the vocative before the final punctuation (every pattern has one)."""
        return f"{text[:-1]}, {vocative}{text[-1]}"

    def vocative(self, key: str) -> str:
        """Render a vocative key: "name:Anna", "mr:Novak", or a word such as "sir"."""
        kind, _, name = key.partition(":")
        if kind == "name":
            return name
        if kind in self.titles:
            return f"{self.titles[kind]} {name}"
        return self.vocative_words[key]

    def h_voc(self, slots, situation):
        return self.vocative(slots["voc"])

    def h_self(self, slots, situation, feminine, masculine):
        """A word for the speaker, chosen by the line's `self` slot: {self:girl:boy}."""
        return feminine if slots["self"] == "feminine" else masculine
