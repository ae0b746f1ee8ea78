"""Deterministic synthetic dialogue corpus shaped like the extracted OpenSubtitles data.

Documents are short dialogues with film metadata, in which the translation depends on the
context: the register of address (German du/ihr/Sie, French tu/vous, Polish
ty/pan/pani/państwo, Russian ты/вы), the speaker's and the addressee's gender (French, Polish
and Russian agreement) and the number of addressees, each labelled where the translation
shows it.
`generate` returns the samples of one split in the corpus format (docs/formats.md,
section 1); `write_split` writes them as JSON lines. See documents.py for how the context
carries the signal, and english.py for how a new target language plugs in.
"""
from mtcue.data.synth.generator import PAIRS, SPLITS, generate, write_split

__all__ = ["PAIRS", "SPLITS", "generate", "write_split"]
