"""Which of the study's languages a sentence looks to be in, from its most frequent function words: enough to warn
a user who gives a model a sentence of the wrong language (German to an en-de model), which the model would
translate as best it can, without a word. A guess, never a refusal: names and loanwords mislead it, so a
sentence counts as a language's only with two of its words and more than of any other language's.

Imports nothing of the project, so any stage may use it.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

NAMES = {"en": "English", "de": "German", "fr": "French", "pl": "Polish", "ru": "Russian"}

_WORDS = {
    "en": "the and you is are was were have has this that what with for not your they she he it we of be been there "
          "where why how my me did see yesterday ready i to do a in on no so an",
    "de": "der die das und ist sind nicht ich du sie wir ihr ein eine einen den dem mit auf für was wo warum hast habe "
          "bist haben sein wie mein dein ja nein zu es auch noch schon gestern heute sehr bereit gesehen wart",
    "fr": "le la les et est sont je tu vous nous il elle un une des du ne pas que qui avec pour dans où pourquoi "
          "comment mon ton votre êtes suis avez oui non ce cette hier très bien prêt prête",
    "pl": "i w z nie na to jest się że co jak ale do ty ja my wy czy jesteś są był była gdzie dlaczego tak mój "
          "twój pan pani już jeszcze wczoraj bardzo gotowy gotowa",
    "ru": "и в не на я ты вы он она мы они что это как где почему был была да нет с к по за вчера очень мой "
          "твой ваш уже ещё же бы у готов готовы",
}
# A word of two languages' lists ("was", English and German) tells them apart from neither.
_SHARED = {w for a in _WORDS for b in _WORDS if a < b for w in set(_WORDS[a].split()) & set(_WORDS[b].split())}
WORDS = {lang: frozenset(words.split()) - _SHARED for lang, words in _WORDS.items()}
MIN_WORDS = 2


def guess_language(text: str) -> str | None:
    """The language (a code of NAMES) whose words `text` has most of, at least MIN_WORDS and more than any other
    language's; None when no language stands out."""
    words = re.findall(r"\w+", text.lower())
    hits = sorted(((sum(w in WORDS[lang] for w in words), lang) for lang in WORDS), reverse=True)
    (best, lang), (second, _) = hits[0], hits[1]
    return lang if best >= MIN_WORDS and best > second else None


def other_language(sources: Sequence[str], lang: str) -> list[tuple[int, str]]:
    """(position, language) of each of `sources` that looks to be in a language of NAMES other than `lang`; none
    when `lang` is not one of them (nothing to compare with)."""
    if lang not in WORDS:
        return []
    return [(i, guessed) for i, text in enumerate(sources) if (guessed := guess_language(text)) not in (None, lang)]
