"""Who speaks to whom, how formally: the hidden variables that the context reveals.

A line's `Situation` fixes everything a target language may need beyond the English
sentence. Phenomena are its attributes as the corpus labels them; `alternatives` gives, for
one phenomenon, the situations to render for each of its values with everything else kept.
Groups of addressees are always of mixed gender here, so addressee gender is a phenomenon
of singular addressees only.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace

from mtcue.corpus import (  # noqa: F401 - the values, for the language modules
    ADDRESSEE_CUES,
    FEMININE,
    FORMAL,
    FORMALITY_CUES,
    GROUP,
    INFORMAL,
    MASCULINE,
    SPEAKER_CUES,
)


@dataclass(frozen=True)
class Situation:
    formality: str   # FORMAL | INFORMAL
    speaker: str     # FEMININE | MASCULINE
    addressee: str   # FEMININE | MASCULINE | GROUP

    @property
    def plural(self) -> bool:
        return self.addressee == GROUP


def lean(rng: random.Random, register: str, agrees: float) -> str:
    """A register that matches `register` with probability `agrees`: one noisy channel."""
    return register if rng.random() < agrees else (INFORMAL if register == FORMAL else FORMAL)


PHENOMENA = ("formality", "speaker_gender", "addressee_gender", "addressee_number")


def gold(phenomenon: str, s: Situation) -> str:
    if phenomenon == "formality":
        return s.formality
    if phenomenon == "speaker_gender":
        return s.speaker
    if phenomenon == "addressee_gender":
        return s.addressee
    if phenomenon == "addressee_number":
        return "plural" if s.plural else "singular"
    raise ValueError(f"unknown phenomenon {phenomenon!r}")


def alternatives(phenomenon: str, s: Situation) -> dict[str, list[Situation]] | None:
    """Situations per value of `phenomenon`, the rest of `s` fixed; None if not applicable."""
    if phenomenon == "formality":
        return {v: [replace(s, formality=v)] for v in (FORMAL, INFORMAL)}
    if phenomenon == "speaker_gender":
        return {v: [replace(s, speaker=v)] for v in (FEMININE, MASCULINE)}
    if phenomenon == "addressee_gender":
        if s.plural:
            return None
        return {v: [replace(s, addressee=v)] for v in (FEMININE, MASCULINE)}
    if phenomenon == "addressee_number":
        return {"singular": [replace(s, addressee=FEMININE), replace(s, addressee=MASCULINE)],
                "plural": [replace(s, addressee=GROUP)]}
    raise ValueError(f"unknown phenomenon {phenomenon!r}")


def cue_sentences(s: Situation) -> list[str]:
    """All cues true of `s`, in the fixed order speaker, addressee, formality."""
    return [SPEAKER_CUES[s.speaker], ADDRESSEE_CUES[s.addressee], FORMALITY_CUES[s.formality]]
