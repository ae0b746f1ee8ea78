"""Where the demo's context-determined phenomena are decided: how learnable each one is from each column a model
reads (docs/study.md, "What the demo's phenomena measure"; issue 54).

For each labelled phenomenon of each en->xx test split, a multinomial naive Bayes classifier is trained on the
train split's labelled lines and predicts the gold value of each test line from one channel at a time: the source
sentence (what BASE reads), the previous source lines, the metadata, both context columns, and the source with
both (what MTCUE reads, as words rather than sentence vectors). `majority`: the train split's most frequent value,
predicted for every test line. `named`: the share of gender lines whose previous lines name that character's
gender (a vocative said to them, or a `self` line they spoke: the generator's own lexicon and turn-taking), and
how often that name is right; given a finished demo's hypotheses, `named_<model>` is each model's accuracy on those
lines alone (does a model read the gender where the dialogue states it?). `probe` (and `named_probe` on the named
lines): a linear probe (ridge regression, one output per value) on the sentence vectors of the previous lines as
the demo's embedding store holds them, the very vectors MTCUE reads, fitted on the train split's labelled lines:
whether the context MTCUE is given carries the value in a form a linear layer can read. This measures the gold label's
predictability, an upper reference, not what the marker-word scorer judges: the score records (given a finished
demo's results, `--models`) judge only the lines whose hypothesis shows a marker. Needs only the cleaned corpora
(results/clean/en-*/{train,test}.jsonl).

    PYTHONPATH=src python workflow/scripts/phenomena_ceiling.py --results results --out ceiling.json
"""
from __future__ import annotations

import argparse
import json
import math
import re
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from mtcue.context.store import ContextStore
from mtcue.corpus import read_corpus
from mtcue.data.synth.english import FIRST_NAMES
from mtcue.data.synth.situation import FEMININE, MASCULINE
from mtcue.evaluation.score import phenomenon_accuracy, read_lines

WORD = re.compile(r"\w+")
# The generator's gendered vocatives (names, titles, honorifics: data/synth/english.py), lower case.
GENDERED = {**{n.lower(): g for g, names in FIRST_NAMES.items() for n in names},
            **dict.fromkeys(("mrs", "ms", "madam", "girl", "lady"), FEMININE),
            **dict.fromkeys(("mr", "sir", "man", "dude", "buddy"), MASCULINE)}
# Two characters speak in turn (documents.py), so a vocative in a line 1, 3, 5 back names the speaker (it was
# said to them) and one 2, 4 back names the addressee; a `self` line ("I'm a grown woman.") names the one who
# said it: 1, 3, 5 back the addressee, 2, 4 back the speaker.
NAMING_PARITY = {"speaker_gender": 1, "addressee_gender": 0}
# The `self` frames of data/synth/english.py: how they open, and the words that say the speaker's gender.
SELF_LINE = re.compile(r"^(look, )?i'm |^i am |^do i look like |^as a |^i consider myself ")
SELF_WORDS = {**dict.fromkeys(("girl", "woman", "lady", "waitress", "mother", "mom"), FEMININE),
              **dict.fromkeys(("boy", "man", "guy", "waiter", "gentleman", "father", "dad"), MASCULINE)}
# The probe's ridge penalty: its accuracies on the demo's en-pl gender lines move by at most 0.05 between 0.1 and 10.
PROBE_RIDGE = 1.0
# What each classifier reads: the source sentence, the previous lines, the metadata.
CHANNELS = {"source": ("source",), "previous": ("previous",), "metadata": ("metadata",),
            "context": ("previous", "metadata"), "source_context": ("source", "previous", "metadata")}


def features(sample: dict, channels: tuple[str, ...]) -> list[str]:
    """Words of the channels read: the source sentence's, the previous lines' (tagged by distance), the metadata's."""
    words = [f"s:{w}" for w in WORD.findall(sample["text"]["en"].lower())] if "source" in channels else []
    if "previous" in channels:
        for distance, line in enumerate(sample["previous"]["en"], 1):
            words += [f"p{distance}:{w}" for w in WORD.findall(line.lower())]
    if "metadata" in channels:
        words += [f"m:{w}" for value in sample["meta"].values() if value for w in WORD.findall(str(value).lower())]
    return words


def labelled(samples: list[dict], tgt: str) -> dict[str, list[tuple[dict, str]]]:
    """{phenomenon: [(sample, gold value)]} of a split."""
    out = defaultdict(list)
    for sample in samples:
        for phenomenon, label in ((sample.get("labels") or {}).get(tgt) or {}).items():
            out[phenomenon].append((sample, label["gold"]))
    return out


def naive_bayes_accuracy(train: list[tuple[dict, str]], test: list[tuple[dict, str]],
                         channels: tuple[str, ...]) -> float:
    """Accuracy on `test` of a multinomial naive Bayes (add-one smoothing) fitted on `train`, reading `channels`."""
    prior, counts, totals = Counter(), defaultdict(Counter), Counter()
    for sample, gold in train:
        prior[gold] += 1
        for word in features(sample, channels):
            counts[gold][word] += 1
            totals[gold] += 1
    vocabulary = len({w for c in counts.values() for w in c}) + 1

    def predict(sample):
        words = features(sample, channels)
        return max(prior, key=lambda v: math.log(prior[v]) + sum(
            math.log((counts[v][w] + 1) / (totals[v] + vocabulary)) for w in words))

    return sum(predict(s) == gold for s, gold in test) / len(test)


def named_gender(line: str, distance: int, phenomenon: str) -> str | None:
    """The character's gender as a previous line `distance` back names it: a `self` line its speaker's (when that
    speaker is the character), else a vocative's (when said to the character); None when the line names neither."""
    text = line.lower()
    if SELF_LINE.match(text):
        words = [SELF_WORDS[w] for w in WORD.findall(text) if w in SELF_WORDS]
        return words[-1] if words and distance % 2 != NAMING_PARITY[phenomenon] else None
    words = [GENDERED[w] for w in WORD.findall(text) if w in GENDERED]
    return words[-1] if words and distance % 2 == NAMING_PARITY[phenomenon] else None


def named_lines(test: list[tuple[dict, str]], phenomenon: str) -> list[tuple[dict, bool]]:
    """(sample, whether the name is right) of the lines whose previous lines name the character's gender (the
    nearest line that does), read with the generator's own lexicon and turn-taking."""
    decided = []
    for sample, gold in test:
        named = (named_gender(line, d, phenomenon) for d, line in enumerate(sample["previous"]["en"], 1))
        found = next((g for g in named if g), None)
        if found:
            decided.append((sample, found == gold))
    return decided


def named_rule(test: list[tuple[dict, str]], phenomenon: str) -> tuple[float, float]:
    """(share of lines, accuracy on them) whose previous lines name the character's gender: how often the context
    says the gender at all."""
    decided = [right for _, right in named_lines(test, phenomenon)]
    return len(decided) / len(test), (sum(decided) / len(decided) if decided else float("nan"))


def accuracy_on(hyps: list[str], samples: list[dict], tgt: str, phenomenon: str, ids: set[str]) -> float | None:
    """A hypothesis file's accuracy (the marker-word scorer's rule) on `phenomenon` over the samples in `ids`; None
    when none of them shows a marker."""
    labels = [{phenomenon: s["labels"][tgt][phenomenon]} if s["id"] in ids else None for s in samples]
    return phenomenon_accuracy(hyps, labels).get(phenomenon, {}).get("accuracy")


def previous_vectors(store: ContextStore, split: str, rows: list[int]) -> np.ndarray:
    """[len(rows), previous slots x dim]: the store's vectors of the previous lines (doc1..docK; zeros where a line
    is missing) of the samples at `rows` of `split`, concatenated in slot order."""
    index = np.asarray(store.index(split))[rows][:, 1:store.doc_columns]
    vectors = np.vstack([np.asarray(store.vectors), np.zeros((1, store.dim), np.float32)])  # row -1: missing
    return vectors[index].reshape(len(rows), -1)


def probe_predictions(train_x: np.ndarray, train_gold: list[str], test_x: np.ndarray) -> list[str]:
    """A ridge regression from the features to one-hot gold values (with a bias), the largest output predicted."""
    values = sorted(set(train_gold))
    targets = np.array([[g == v for v in values] for g in train_gold], dtype=np.float64)
    a = np.c_[train_x, np.ones(len(train_x))]
    weights = np.linalg.solve(a.T @ a + PROBE_RIDGE * np.eye(a.shape[1]), a.T @ targets)
    return [values[i] for i in (np.c_[test_x, np.ones(len(test_x))] @ weights).argmax(axis=1)]


def probe(store: ContextStore, train: list[tuple[dict, str]], test: list[tuple[dict, str]],
          rows: dict[str, dict[str, int]], named_ids: set[str]) -> dict[str, float]:
    """The probe's accuracy on every test line (`probe`) and on the named ones (`named_probe`, gender only);
    `rows`: {split: {sample id: row of the split}}."""
    train_x = previous_vectors(store, "train", [rows["train"][s["id"]] for s, _ in train])
    test_x = previous_vectors(store, "test", [rows["test"][s["id"]] for s, _ in test])
    right = [p == g for p, (_, g) in zip(probe_predictions(train_x, [g for _, g in train], test_x), test)]
    out = {"probe": sum(right) / len(right)}
    named = [r for r, (s, _) in zip(right, test) if s["id"] in named_ids]
    if named:
        out["named_probe"] = sum(named) / len(named)
    return out


def model_accuracy(results: Path, direction: str, model: str) -> dict[str, float | None]:
    """The score record's accuracy per phenomenon; {} without one (a study whose models are not scored yet)."""
    path = results / "records" / "score" / direction / f"{model}.test.json"
    return {p: v["accuracy"] for p, v in json.loads(path.read_text())["phenomena"].items()} if path.is_file() else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path("results"), help="a finished demo's results folder")
    parser.add_argument("--models", nargs="*", default=["base", "mtcue"])
    parser.add_argument("--store", default="all-MiniLM-L6-v2.mean",
                        help="the embedding store the probe reads: results/embed/<direction>/<store>")
    parser.add_argument("--out", type=Path, required=True)
    a = parser.parse_args()
    out = {}
    for pair_dir in sorted((a.results / "clean").glob("en-*")):
        direction, tgt = pair_dir.name, pair_dir.name.split("-")[1]
        train_samples, test_samples = (list(read_corpus(pair_dir / f"{split}.jsonl")) for split in ("train", "test"))
        train, test = labelled(train_samples, tgt), labelled(test_samples, tgt)
        store_dir = a.results / "embed" / direction / a.store
        store = ContextStore(store_dir) if store_dir.is_dir() else None
        rows = {split: {s["id"]: i for i, s in enumerate(samples)}
                for split, samples in (("train", train_samples), ("test", test_samples))}
        measured = {m: model_accuracy(a.results, direction, m) for m in a.models}
        hyp_files = {m: a.results / "hyps" / direction / f"{m}.test.txt" for m in a.models}
        for phenomenon in sorted(test):
            majority = Counter(g for _, g in train[phenomenon]).most_common(1)[0][0]
            row = {"test_lines": len(test[phenomenon]), "train_lines": len(train[phenomenon]),
                   "majority": sum(g == majority for _, g in test[phenomenon]) / len(test[phenomenon]),
                   **{f"nb_{name}": naive_bayes_accuracy(train[phenomenon], test[phenomenon], channels)
                      for name, channels in CHANNELS.items()},
                   **{m: measured[m].get(phenomenon) for m in a.models}}
            ids = set()
            if phenomenon in NAMING_PARITY:
                row["named_share"], row["named_accuracy"] = named_rule(test[phenomenon], phenomenon)
                ids = {sample["id"] for sample, _ in named_lines(test[phenomenon], phenomenon)}
                row |= {f"named_{m}": accuracy_on(read_lines(path), test_samples, tgt, phenomenon, ids)
                        for m, path in hyp_files.items() if path.is_file()}
            if store is not None:
                row |= probe(store, train[phenomenon], test[phenomenon], rows, ids)
            out[f"{direction} {phenomenon}"] = row
            print(f"{direction} {phenomenon:17s} " + " ".join(
                f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    a.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
