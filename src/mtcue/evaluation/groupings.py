"""The shortening paper's Figure 3 (section 5.4): how Latent Grouping assigns the tokens of a sentence to its
K groups and which tokens Latent Selecting's K groups select. The sentence is one a contrastive example's
pronoun refers back into: the previous line of the suite's first example whose antecedent is one line back
(the paper: "the sentence from the ContraPro dataset"), the sentence a caching model stores and shortens. Its
categorisation c [pieces + </s>, K] is the shortener's (plugin/shortening/shorteners.py, read by
`Translator.groupings`), c_ik the weight of piece i in group k: for Grouping each piece's row sums to 1 over
the groups, for Selecting each group's column sums to 1 over the pieces. A group is used when some piece has
weight in it (the paper: "only four groups out of nine are utilized")."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def figure3_example(examples: Sequence[dict], src: str, where: str) -> dict:
    """The first example whose antecedent is one line back (`group.distance` 1) and which has that line, not
    empty (ContraPro keeps a document's empty lines)."""
    for example in examples:
        if str(example.get("group", {}).get("distance")) == "1" and any(example["previous"][src][:1]):
            return example
    raise ValueError(f"{where}: no example with its antecedent one line back (group.distance 1) and a previous "
                     "line: nothing for the shortening paper's Figure 3 to show")


def measure(examples: Sequence[dict], src: str, pieces: Callable[[str], list[str]],
            categorise: Callable[[list[str]], np.ndarray], where: str) -> dict:
    """The fields of a groupings record: the example and its sentence, the sentence's pieces (then </s>),
    the weights [piece][group], K and the groups used."""
    example = figure3_example(examples, src, where)
    sentence = example["previous"][src][0]
    shown = pieces(sentence)
    weights = categorise(shown)
    return {"example": example["id"], "sentence": sentence, "antecedent": example.get("anaphor", {}).get("antecedent"),
            "pieces": [*shown, "</s>"], "groups": int(weights.shape[1]),
            "used": int((weights > 0).any(axis=0).sum()), "weights": weights.round(6).tolist()}
