"""Gold labels with markers, computed by rendering a line once per phenomenon value.

The markers of a value are the target tokens that its rendering(s) contain and the
renderings of every other value lack (docs/formats.md, section 1), so they follow from the
grammar instead of being listed by hand.
"""
from __future__ import annotations

from mtcue.corpus import marker_tokens
from mtcue.data.synth.situation import Situation, alternatives, gold
from mtcue.data.synth.template import Language


def line_labels(language: Language, frame: str, slots: dict[str, str],
                situation: Situation) -> dict[str, dict]:
    """{phenomenon: {"gold", "markers"}} for the phenomena this line's translation shows."""
    cache: dict[Situation, set[str]] = {}

    def rendered(s: Situation) -> set[str]:
        if s not in cache:
            cache[s] = marker_tokens(language.render(frame, slots, s))
        return cache[s]

    labels = {}
    for phenomenon in language.phenomena:
        variants = alternatives(phenomenon, situation)
        if variants is None:
            continue
        per_value = {value: set().union(*map(rendered, sits)) for value, sits in variants.items()}
        markers = {}
        for value, toks in per_value.items():
            others = (other for v, other in per_value.items() if v != value)
            markers[value] = sorted(toks.difference(*others))
        value = gold(phenomenon, situation)
        # Label only where every value is visible and the actual translation shows its own.
        if all(markers.values()) and rendered(situation) & set(markers[value]):
            labels[phenomenon] = {"gold": value, "markers": markers}
    return labels
