"""Strings no context of the synthetic corpus may contain: the paper's zero-shot prompts.

The IWSLT22 protocol (paper, appendix D) prompts a model with strings such as "Biography, Drama," or
"Drama, Family, Romance", strings a genre sampler can produce. A model that had read one in training
would not be tested zero-shot, so the generator draws again until no context mentions a prompt. A
text mentions a prompt when the prompt's words occur in it as a contiguous run, ignoring case and
punctuation ("Biography, Drama, Romance" mentions "Biography, Drama,").
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from mtcue.config import paper_formality_prompts

_WORD = re.compile(r"\w+")


@lru_cache(maxsize=65536)
def words(text: str) -> str:
    """Lower-case words joined by single spaces, padded with spaces for whole-word search."""
    return " " + " ".join(_WORD.findall(text.casefold())) + " "


RESERVED = tuple(words(p) for prompts in paper_formality_prompts().values() for p in prompts)


def mentions_reserved(texts: Iterable[str | None], reserved: Iterable[str] = RESERVED) -> bool:
    """Whether any of `texts` mentions any of the `reserved` strings (normalised by `words`)."""
    reserved = tuple(reserved)
    return any(r in normalised for normalised in map(words, filter(None, texts)) for r in reserved)
