"""How learnable the demo's context-determined phenomena are from what each model reads (issue 46 section 3;
docs/study.md, "What the demo's phenomena measure").

For each labelled phenomenon of each en->xx test split, a multinomial naive Bayes classifier is trained on the
train split's labelled lines and predicts the gold value of each test line from (a) the source sentence alone
(what BASE reads) and (b) the source sentence, the previous source lines and the metadata (what MTCUE reads, as
words rather than sentence vectors). Its accuracy is a reference for each model's measured accuracy (the score
records' `phenomena`): (b) - (a) is how much the corpus lets context decide within its 400 training documents.
The classifier sees every labelled line; the score records judge only lines whose hypothesis shows a marker.

    PYTHONPATH=src python workflow/scripts/phenomena_ceiling.py --results results --out ceiling.json
"""
from __future__ import annotations

import argparse
import json
import math
import re
from collections import Counter, defaultdict
from pathlib import Path

from mtcue.corpus import read_corpus
from mtcue.data.synth.english import FIRST_NAMES
from mtcue.data.synth.situation import FEMININE, MASCULINE

WORD = re.compile(r"\w+")
# The generator's gendered vocatives (names, titles, honorifics: data/synth/english.py), lower case.
GENDERED = {**{n.lower(): g for g, names in FIRST_NAMES.items() for n in names},
            **dict.fromkeys(("mrs", "ms", "madam", "girl", "lady"), FEMININE),
            **dict.fromkeys(("mr", "sir", "man", "dude", "buddy"), MASCULINE)}
# Two characters speak in turn (documents.py), so a vocative in a line 1, 3, 5 back names the speaker (it was
# said to them) and one 2, 4 back names the addressee.
NAMING_PARITY = {"speaker_gender": 1, "addressee_gender": 0}


def features(sample: dict, with_context: bool) -> list[str]:
    """Words of the source sentence; with context also the previous lines' (tagged by distance) and metadata's."""
    words = [f"s:{w}" for w in WORD.findall(sample["text"]["en"].lower())]
    if with_context:
        for distance, line in enumerate(sample["previous"]["en"], 1):
            words += [f"p{distance}:{w}" for w in WORD.findall(line.lower())]
        words += [f"m:{w}" for value in sample["meta"].values() if value for w in WORD.findall(str(value).lower())]
    return words


def labelled(samples: list[dict], tgt: str) -> dict[str, list[tuple[dict, str]]]:
    """{phenomenon: [(sample, gold value)]} of a split."""
    out = defaultdict(list)
    for sample in samples:
        for phenomenon, label in ((sample.get("labels") or {}).get(tgt) or {}).items():
            out[phenomenon].append((sample, label["gold"]))
    return out


def naive_bayes_accuracy(train: list[tuple[dict, str]], test: list[tuple[dict, str]], with_context: bool) -> float:
    """Accuracy on `test` of a multinomial naive Bayes (add-one smoothing) fitted on `train`."""
    prior, counts, totals = Counter(), defaultdict(Counter), Counter()
    for sample, gold in train:
        prior[gold] += 1
        for word in features(sample, with_context):
            counts[gold][word] += 1
            totals[gold] += 1
    vocabulary = len({w for c in counts.values() for w in c}) + 1

    def predict(sample):
        words = features(sample, with_context)
        return max(prior, key=lambda v: math.log(prior[v]) + sum(
            math.log((counts[v][w] + 1) / (totals[v] + vocabulary)) for w in words))

    return sum(predict(s) == gold for s, gold in test) / len(test)


def vocative_rule(test: list[tuple[dict, str]], phenomenon: str) -> tuple[float, float]:
    """(share of lines, accuracy on them) where a previous line that would name the character holds a gendered
    word (the nearest such line, its last such word): how often the context says the gender at all, read with
    the generator's own lexicon and turn-taking."""
    decided = []
    for sample, gold in test:
        for distance, line in enumerate(sample["previous"]["en"], 1):
            words = [GENDERED[w] for w in WORD.findall(line.lower()) if w in GENDERED]
            if distance % 2 == NAMING_PARITY[phenomenon] and words:
                decided.append(words[-1] == gold)
                break
    return len(decided) / len(test), (sum(decided) / len(decided) if decided else float("nan"))


def model_accuracy(results: Path, direction: str, model: str) -> dict[str, float | None]:
    record = json.loads((results / "records" / "score" / direction / f"{model}.test.json").read_text())
    return {p: v["accuracy"] for p, v in record["phenomena"].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path("results"), help="a finished demo's results folder")
    parser.add_argument("--models", nargs="*", default=["base", "mtcue"])
    parser.add_argument("--out", type=Path, required=True)
    a = parser.parse_args()
    out = {}
    for pair_dir in sorted((a.results / "clean").glob("en-*")):
        direction, tgt = pair_dir.name, pair_dir.name.split("-")[1]
        train = labelled(list(read_corpus(pair_dir / "train.jsonl")), tgt)
        test = labelled(list(read_corpus(pair_dir / "test.jsonl")), tgt)
        measured = {m: model_accuracy(a.results, direction, m) for m in a.models}
        for phenomenon in sorted(test):
            row = {"test_lines": len(test[phenomenon]), "train_lines": len(train[phenomenon]),
                   "majority": max(Counter(g for _, g in test[phenomenon]).values()) / len(test[phenomenon]),
                   "nb_source": naive_bayes_accuracy(train[phenomenon], test[phenomenon], False),
                   "nb_source_context": naive_bayes_accuracy(train[phenomenon], test[phenomenon], True),
                   **{m: measured[m].get(phenomenon) for m in a.models}}
            if phenomenon in NAMING_PARITY:
                row["vocative_share"], row["vocative_accuracy"] = vocative_rule(test[phenomenon], phenomenon)
            out[f"{direction} {phenomenon}"] = row
            print(f"{direction} {phenomenon:17s} " + " ".join(
                f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    a.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
