"""Voita et al. (2018), Tables 6-7: does VOITA-CONTEXT's attention from a source pronoun to the context
sentence point at the pronoun's antecedent? For each pronoun example of the synthetic contrastive suite
whose antecedent is in the previous line (distance 1) and whose previous line has more than one noun,
the context token with the most attention from the pronoun (the source encoder's last layer, its
context attention averaged over heads, over the pronoun's pieces; marker, </s> and punctuation
excluded) agrees when it lies inside the antecedent span: the noun and the determiner or possessive
directly before it (Voita et al., section 5.3.2: "an antecedent noun phrase (usually a determiner or a
possessive pronoun followed by a noun)"; "If this token falls within the antecedent span, then we treat
it as agreement"). Baselines as the paper's: the first noun, the last noun and a random noun of the
context line (its expected agreement, 1 / number of nouns)."""
from __future__ import annotations

import re
import string
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

WORD_START = "\u2581"  # SentencePiece's word-boundary mark
PUNCTUATION = set(string.punctuation) | set("«»„“”‘’…—–¿¡")
# English determiners and possessives that open an antecedent noun phrase (its span starts there).
DETERMINERS = frozenset("the a an this that these those my your his her its our their".split())


def normalise(word: str) -> str:
    return word.strip("".join(PUNCTUATION)).lower()


def piece_words(pieces: Sequence[str]) -> list[int]:
    """The word (0-based, by SentencePiece's word-start mark) of each piece; -1 for a punctuation-only piece."""
    words, current = [], -1
    for piece in pieces:
        if piece.startswith(WORD_START) or current < 0:
            current += 1
        text = piece.lstrip(WORD_START)
        words.append(-1 if not text or all(c in PUNCTUATION for c in text) else current)
    return words


def word_positions(line: str, word: str) -> list[int]:
    """Positions (whitespace words of `line`) of `word`, compared without punctuation and case, and
    without a clitic ("It's" is a position of "it")."""
    target = normalise(word)
    return [i for i, w in enumerate(line.split()) if normalise(re.split("['’]", w)[0]) == target]


def antecedent_span(line: str, antecedent: str) -> set[int]:
    """Word positions of the antecedent noun phrase(s) in `line`: each position of the noun and the
    determiner or possessive directly before it."""
    words = line.split()
    span = set()
    for p in word_positions(line, antecedent):
        span |= {p - 1, p} if p > 0 and normalise(words[p - 1]) in DETERMINERS else {p}
    return span


def most_attended_word(attention: np.ndarray, pronoun_rows: Sequence[int], context_words: Sequence[int]) -> int:
    """The context word of the token with the most attention from the pronoun's rows (their mean), among
    the tokens with a word (`context_words` >= 0: marker, </s> and punctuation are -1)."""
    weights = np.asarray(attention, dtype=np.float64)[list(pronoun_rows)].mean(axis=0)
    allowed = np.asarray(context_words) >= 0
    if not allowed.any():
        raise ValueError("the context sentence has no word token")
    return int(np.asarray(context_words)[np.flatnonzero(allowed)[np.argmax(weights[allowed])]])


def heuristics(nouns: Sequence[int], antecedent: set[int]) -> dict[str, float]:
    """Agreement of Voita et al.'s baselines: first, last and (expected) random noun of the context line."""
    ordered = sorted(nouns)
    return {"random": sum(n in antecedent for n in ordered) / len(ordered),
            "first": float(ordered[0] in antecedent), "last": float(ordered[-1] in antecedent)}


def agreement_table(examples: Sequence[dict]) -> dict:
    """`examples`: {"pronoun", "attention": agreed (bool), "random", "first", "last"} -> per pronoun and
    over all: {"n", "attention", "random", "first", "last"} (shares, 0-1)."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for e in examples:
        groups[e["pronoun"]].append(e)
        groups["all"].append(e)
    return {name: {"n": len(rows), **{k: float(np.mean([float(r[k]) for r in rows]))
                                      for k in ("attention", "random", "first", "last")}}
            for name, rows in sorted(groups.items())}


def read_suite(path) -> list[dict]:
    """A contrastive suite's examples (JSONL); a bad line stops reading with file:line."""
    import json

    from mtcue.io import read_text_lines

    examples = []
    for lineno, line in read_text_lines(path):
        if line.strip():
            try:
                examples.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({err.msg})") from None
    return examples


def context_line(example: dict, src: str) -> str | None:
    previous = example["previous"]
    previous = previous.get(src, []) if isinstance(previous, dict) else previous
    return previous[0] if previous else None


def source_text(example: dict, src: str) -> str:
    text = example["text"]
    return text[src] if isinstance(text, dict) else text


def selected(examples: Sequence[dict], src: str, min_nouns: int = 2) -> list[dict]:
    """The suite's pronoun examples at distance 1 whose context line has at least `min_nouns` nouns (the
    Voita et al.'s Table 7: 2; its Table 6: 1)."""
    out = []
    for e in examples:
        group, anaphor = e.get("group") or {}, e.get("anaphor")
        if group.get("phenomenon") != "pronoun" or group.get("distance") != 1 or not anaphor:
            continue
        line = context_line(e, src)
        nouns = {p for n in anaphor["nouns"] for p in word_positions(line or "", n)}
        if line and len(nouns) >= min_nouns and word_positions(line, anaphor["antecedent"]):
            out.append(e)
    return out


def measure(examples: Sequence[dict], src: str, pieces, attend, min_nouns: int = 2) -> dict:
    """Agreement over the selected examples of a suite. `pieces(text)` -> SentencePiece pieces;
    `attend(source_pieces, context_pieces)` -> attention [len(source) + 1, 1 + len(context) + 1] (rows: the
    source pieces then </s>; columns: marker, context pieces, </s>)."""
    rows = []
    for e in selected(examples, src, min_nouns):
        anaphor, line, text = e["anaphor"], context_line(e, src), source_text(e, src)
        source, context = pieces(text), pieces(line)
        pronoun = word_positions(text, anaphor["pronoun"])
        if not pronoun:
            raise ValueError(f"example {e.get('id')}: pronoun {anaphor['pronoun']!r} is not a word of {text!r}")
        pronoun_rows = [i for i, w in enumerate(piece_words(source)) if w == pronoun[0]]
        context_words = [-1, *piece_words(context), -1]  # marker and </s> excluded
        attention = np.asarray(attend(source, context))
        antecedent = antecedent_span(line, anaphor["antecedent"])
        nouns = sorted({p for n in anaphor["nouns"] for p in word_positions(line, n)})
        rows.append({"pronoun": anaphor["pronoun"].lower(),
                     "attention": most_attended_word(attention, pronoun_rows, context_words) in antecedent,
                     **heuristics(nouns, antecedent)})
    return {"examples": len(rows), "pronouns": agreement_table(rows)}


def model_attention(translator):
    """attend(source_pieces, context_pieces) of a trained VOITA-CONTEXT model (mtcue.Translator): its last
    source layer's context attention, averaged over heads."""
    import torch

    task, model = translator._task, translator._models[0]
    d = task.source_dictionary
    layer = model.encoder.layers[-1]
    device = next(model.parameters()).device

    def attend(source: list[str], context: list[str]) -> np.ndarray:
        src = torch.tensor([[d.index(p) for p in source] + [d.eos()]], device=device)
        ctx = torch.tensor([[d.bos(), *(d.index(p) for p in context), d.eos()]], device=device)
        layer.keep_attention = True
        try:
            with torch.no_grad():
                model.encoder(src, torch.tensor([src.shape[1]]), ctx, ctx.eq(d.pad()))
        finally:
            layer.keep_attention = False
        return layer.context_attention[0].float().cpu().numpy()

    return attend
