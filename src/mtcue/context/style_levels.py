"""The style store of the style-control models (Jeong et al.; docs/formats.md, section 2): one level
1..5 per line of each split.

Jeong et al. score every target sentence with an XLM-R formality regressor (-3..3), bins the score into
5 levels and flattens the levels' distribution by sampling per bin. Two sources of levels here
(`experiments.style.levels_from`):
- `labels`: the register label the corpus carries (the synthetic corpus's formality labels), mapped by
  `mapping` ({"informal", "formal", "unlabelled": level}; the demo: 1, 5 and 3); levels 2 and 4 are
  never trained. A corpus without labels is refused.
- `address`: a formality score per target sentence (German, Russian: `formality_score`, the address
  forms of the project's generators, formal minus informal), binned into 5 levels and, in the training
  split only, flattened as Jeong et al. do: the score range cut into 100 equal bins, each bin over 10K
  lines sampled down to 10K with the study's seed; a line not sampled gets level 0, which training leaves
  out (style_task). Used where the corpus has no labels (the paper's OpenSubtitles). docs/deviations.md
  says how it departs from Jeong et al.'s regressor.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np

from mtcue.corpus import read_corpus
from mtcue.data.synth import german, russian
from mtcue.outputs import atomic_directory
from mtcue.study import langs_of, pair_of

MAPPING_KEYS = ("informal", "formal", "unlabelled")
NOT_SAMPLED = 0  # a training line the flattening left out (address levels): training skips it
SCORE_BINS, BIN_CAP = 100, 10_000  # Jeong et al.'s flattening (their section 5.1): 100 score bins, at most 10K lines each
_WORDS = re.compile(r"[^\W\d_]+")


def _address_words() -> dict[str, tuple[frozenset, frozenset, frozenset]]:
    """{language: (informal words, formal words anywhere, formal words only after the first word)}, from the
    generators' address tables (data/synth). German: du (its cases, verbs, possessive), ihr's cases, possessive
    and two unambiguous verbs (its other verb forms are also the third person singular, "macht"; the nominative
    "ihr" is also "her" and "their") against Sie, Ihnen and Ihr- capitalised mid-sentence (sentence-initial they
    can be "she", "they", "her"); Russian: ты against вы, their verbs, cases and possessives (вы is
    also the plural: counted formal, as the generator writes a group)."""
    de_informal = {f for forms in german.PRONOUNS.values() for f in forms[:2]}
    de_informal |= {forms[0] for forms in german.VERBS_2ND.values()} | {"seid", "habt"}
    de_informal |= {german.possessive(stem, g, case) for stem in ("dein", "euer") for g in german.GENDERS
                    for case in german.POSSESSIVE_ENDINGS}
    de_informal -= {"ihr"}
    de_formal_mid = {"Sie", *(german.possessive("Ihr", g, case) for g in german.GENDERS
                              for case in german.POSSESSIVE_ENDINGS), "Ihrem", "Ihrer", "Ihres"}
    ru = {i: {f for table in (russian.PRONOUNS, russian.PRESENT_2ND) for forms in table.values() for f in forms[i:i + 1]}
          | set(russian.POSSESSIVES[("твой", "ваш")[i]]) for i in (0, 1)}
    return {"de": (frozenset(de_informal), frozenset({"Ihnen"}), frozenset(de_formal_mid)),
            "ru": (frozenset(ru[0]), frozenset(ru[1]), frozenset())}


ADDRESS_WORDS = _address_words()


def formality_score(text: str, lang: str) -> int:
    """Formal minus informal address forms in `text` (informal forms and Russian case-folded; German's formal
    forms capitalised, "Sie" and "Ihr-" only after the first word): > 0 formal, < 0 informal, 0 neither or both equally."""
    if lang not in ADDRESS_WORDS:
        raise ValueError(f"no formality scorer for '{lang}' (address scores: {', '.join(ADDRESS_WORDS)})")
    informal, formal, formal_mid = ADDRESS_WORDS[lang]
    words = _WORDS.findall(text.lower() if lang == "ru" else text)
    return (sum(w in formal or (i > 0 and w in formal_mid) for i, w in enumerate(words))
            - sum(w.lower() in informal for w in words))


def score_level(score: int) -> int:
    """The 5 levels of a score: -2 or below 1, -1 2, 0 3, +1 4, +2 or above 5."""
    return int(np.clip(score, -2, 2)) + 3


def flatten(scores: np.ndarray, seed: int, bins: int = SCORE_BINS, cap: int = BIN_CAP) -> np.ndarray:
    """Which lines training keeps (bool per line): the scores' range [min, max] cut into `bins` equal bins
    (each closed on the left, the last on both sides, as numpy.histogram's), every bin holding more than `cap`
    lines sampled down to `cap` (seeded), the other bins kept whole."""
    keep = np.ones(len(scores), dtype=bool)
    if not len(scores):
        return keep
    edges = np.linspace(scores.min(), scores.max(), bins + 1)
    which = np.clip(np.searchsorted(edges, scores, side="right") - 1, 0, bins - 1)
    rng = np.random.default_rng(seed)
    for b, n in zip(*np.unique(which, return_counts=True)):
        if n > cap:
            members = np.flatnonzero(which == b)
            keep[members] = False
            keep[rng.choice(members, cap, replace=False)] = True
    return keep


def address_scores(corpus: str | Path, direction: str) -> np.ndarray:
    """The formality score of every line of `corpus`'s target (formality_score)."""
    tgt = langs_of(direction)[1]
    return np.asarray([formality_score(sample["text"][tgt], tgt) for sample in read_corpus(corpus)], dtype=np.int64)


def line_levels(corpus: str | Path, direction: str, mapping: dict[str, int]) -> np.ndarray:
    """The level of every line of `corpus` (its target side's formality label mapped by `mapping`)."""
    if sorted(mapping) != sorted(MAPPING_KEYS) or not all(v in range(1, 6) for v in mapping.values()):
        raise ValueError(f"style mapping {mapping}: give a level 1..5 for each of {', '.join(MAPPING_KEYS)}")
    tgt = langs_of(direction)[1]
    levels, labelled = [], False
    for n, sample in enumerate(read_corpus(corpus), 1):
        gold = ((sample.get("labels") or {}).get(tgt) or {}).get("formality", {}).get("gold")
        if gold not in (None, "formal", "informal"):
            raise ValueError(f"{corpus}:{n}: formality label {gold!r} for '{tgt}' is neither formal nor informal")
        levels.append(mapping[gold or "unlabelled"])
        labelled = labelled or gold is not None
    if not labelled:
        raise ValueError(f"{corpus}: no line has a formality label for '{tgt}' (docs/formats.md, section 1): the "
                         "style models would learn nothing from their levels")
    return np.asarray(levels, dtype=np.int8)


def build_style_store(corpora: dict[str, str | Path], direction: str, mapping: dict[str, int] | None,
                      out_dir: str | Path, seed: int = 1, bin_cap: int = BIN_CAP) -> dict:
    """`out_dir`/{split}.npy for each split of `corpora` and manifest.json (mapping, lines per level; level 0:
    not sampled). `mapping` None: address levels (`address_scores` binned by `score_level`), the training split
    flattened by its scores (`flatten`, at most `bin_cap` lines per score bin, sampled with `seed`)."""
    with atomic_directory(out_dir, "style-levels") as out:
        counts = {}
        for split, corpus in corpora.items():
            if mapping is None:
                scores = address_scores(corpus, direction)
                levels = np.asarray([score_level(score) for score in scores], dtype=np.int8)
                if split == "train":
                    levels[~flatten(scores, seed, cap=bin_cap)] = NOT_SAMPLED
            else:
                levels = line_levels(corpus, direction, mapping)
            np.save(out / f"{split}.npy", levels)
            counts[split] = {str(k): v for k, v in sorted(Counter(levels.tolist()).items())}
        manifest = {"kind": "style", "direction": direction, "levels_from": "address" if mapping is None else "labels",
                    "mapping": mapping, "lines_per_level": counts}
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def reference_agreement(refs_dir: str | Path, direction: str) -> dict:
    """How the address levels agree with IWSLT22's contrastive references (the official files of
    `refs_dir`): for the formal and the informal references, the share scored formal (level above 3), neither
    (3) and informal (below 3); `ordered`, the share of sources whose formal reference is scored above its
    informal one (the two differ only in register, so this is the scorer's accuracy on the pairs)."""
    from mtcue.data.evalsets import iwslt22_files
    from mtcue.io import read_text

    tgt, names = langs_of(direction)[1], iwslt22_files(pair_of(direction))
    levels = {register: [score_level(formality_score(line, tgt)) for line in
                         read_text(Path(refs_dir) / name).splitlines()]
              for register, name in zip(("formal", "informal"), names[1:3])}
    n = len(levels["formal"])
    share = lambda values, keep: round(sum(map(keep, values)) / len(values), 4)
    return {"kind": "style_agreement", "direction": direction, "references": str(refs_dir), "n": n,
            **{register: {"formal": share(values, lambda v: v > 3), "neither": share(values, lambda v: v == 3),
                          "informal": share(values, lambda v: v < 3)} for register, values in levels.items()},
            "ordered": share(list(zip(levels["formal"], levels["informal"])), lambda pair: pair[0] > pair[1])}
