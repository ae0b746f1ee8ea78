"""Why en-de is the weak direction of Table 5 and of the phenomena (issue 24): each candidate cause
measured separately on a finished study's results folder, which it only reads.

    PYTHONPATH=src python workflow/scripts/ende_diagnosis.py RESULTS [--swing] [--model mtcue]

(a) scorer: the share of annotated IWSLT22 lines whose own references each rule judges, and how;
(b) data: metadata / previous-line shares, register balance, a naive-Bayes register classifier on the
    English context (the ceiling a model could reach from it), per en->xx direction;
(c) prompts: each prompt's accuracy (Table 5 records);
(d) model: phenomena accuracy with the study's own context, and with --swing the force-decoded
    register log-odds log P(formal rendering) - log P(informal rendering) of every labelled test line
    under a formal and an informal context (the model's sensitivity to context; ~1 CPU minute per
    direction). Findings and numbers: docs/study.md, "Why en-de is the weak direction".
"""
from __future__ import annotations

import argparse
import math
import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path

from mtcue.corpus import marker_tokens, read_corpus
from mtcue.evaluation.formality import annotated_phrases, official_label

DIRECTIONS = ("en-de", "en-fr", "en-pl", "en-ru")
WORD = re.compile(r"[a-z']+")
# Strong in-distribution context of each register (the generator's formal / informal genres, ratings,
# plots and greetings): three metadata fields and two previous lines.
CONTEXT = {"formal": ({"genre": "Crime, History", "pg_rating": "PG rating: PG",
                       "plot": "A retired judge uncovers a conspiracy in a London courtroom."},
                      ["Thank you, Mr Novak.", "Good evening, madam."]),
           "informal": ({"genre": "Adventure, Comedy", "pg_rating": "PG rating: R",
                         "plot": "Two slackers go on a wild road trip across the desert."},
                        ["Thanks, dude.", "Hey, Anna."])}


def formality(sample: dict, tgt: str) -> dict | None:
    return ((sample.get("labels") or {}).get(tgt) or {}).get("formality")


def marker_judge(hyp: str, markers: dict) -> str | None:
    tokens = marker_tokens(hyp)
    shown = [v for v, words in markers.items() if any(w in tokens for w in words)]
    return shown[0] if len(shown) == 1 else None


def scorer_coverage(results: Path) -> None:
    print("(a) IWSLT22 references judged by the official rule (FORMAL+INFORMAL of annotated lines):")
    for d in sorted(p.name for p in (results / "eval" / "iwslt22").iterdir()):
        t = d.split("-")[1]

        def lines(kind):
            return (results / "eval" / "iwslt22" / d / f"formality-control.test.{d}.{kind}").read_text(
                encoding="utf-8").splitlines()
        fa, ia = lines(f"formal.annotated.{t}"), lines(f"informal.annotated.{t}")
        fr, ir = lines(f"formal.{t}"), lines(f"informal.{t}")
        judged, right, annotated = 0, 0, 0
        for n in range(len(fa)):
            f, i = annotated_phrases(fa[n]), annotated_phrases(ia[n])
            if not f:
                continue
            annotated += 1
            labels = official_label(fr[n], f, i), official_label(ir[n], f, i)
            judged += sum(x in ("FORMAL", "INFORMAL") for x in labels)
            right += (labels[0] == "FORMAL") + (labels[1] == "INFORMAL")
        print(f"  {d}: {annotated} annotated lines, references judged {100 * judged / (2 * annotated):.1f}%, "
              f"correct when judged {100 * right / max(judged, 1):.1f}%")
    print("    the corpus markers (phenomena table) on the same references:")
    for d in DIRECTIONS:
        t = d.split("-")[1]
        labelled = [(s, formality(s, t)) for s in read_corpus(results / "clean" / d / "test.jsonl") if formality(s, t)]
        verdicts = Counter(marker_judge(s["text"][t], lab["markers"]) == lab["gold"] for s, lab in labelled)
        print(f"  {d}: {len(labelled)} labelled, reference judged correct {100 * verdicts[True] / len(labelled):.1f}%")


def context_words(r: dict) -> set[str]:
    words = {f"meta:{w}" for k in ("genre", "pg_rating", "plot") if r["meta"][k]
             for w in WORD.findall(r["meta"][k].lower())}
    for j, line in enumerate(r["previous"]["en"]):
        words |= {f"prev{j % 2}:{w}" for w in WORD.findall(line.lower())}
    return words


def data_shares(results: Path) -> None:
    print("(b) data: train shares with metadata / previous lines; test labelled lines, formal share; "
          "naive-Bayes register from the English context (test, labelled lines):")
    for d in DIRECTIONS:
        t = d.split("-")[1]
        train = list(read_corpus(results / "clean" / d / "train.jsonl"))
        test = list(read_corpus(results / "clean" / d / "test.jsonl"))
        prior, counts = Counter(), defaultdict(Counter)
        for r in train:
            if formality(r, t):
                prior[formality(r, t)["gold"]] += 1
                counts[formality(r, t)["gold"]].update(context_words(r))

        def predict(r):
            score = {v: math.log(prior[v])
                     + sum(math.log((counts[v][w] + 1) / (prior[v] + 2)) for w in context_words(r)) for v in prior}
            return max(score, key=score.get)
        labelled = [r for r in test if formality(r, t)]
        nb = sum(predict(r) == formality(r, t)["gold"] for r in labelled) / len(labelled)
        meta = sum(r["meta"]["genre"] is not None for r in train) / len(train)
        prev = sum(bool(r["previous"]["en"]) for r in train) / len(train)
        formal = sum(formality(r, t)["gold"] == "formal" for r in labelled) / len(labelled)
        print(f"  {d}: metadata {100 * meta:.0f}%, previous line {100 * prev:.0f}%; test {len(labelled)} labelled, "
              f"{100 * formal:.0f}% formal; naive Bayes {100 * nb:.1f}%")


def prompts(results: Path, model: str) -> None:
    import json
    print(f"(c) Table 5 per prompt ({model}): accuracy in the prompted register, judged lines")
    for folder in sorted((results / "records" / "formality").iterdir()):
        record = json.loads((folder / f"{model}.json").read_text(encoding="utf-8"))
        cells = [f"{p['id']} {100 * p['accuracy']:.0f}" for p in record["prompts"]]
        print(f"  {folder.name}: " + ", ".join(cells))


def model_use(results: Path, model: str, swing: bool) -> None:
    print(f"(d) phenomena formality accuracy with the study's context (BASE -> {model}):")
    for d in DIRECTIONS:
        t = d.split("-")[1]
        test = list(read_corpus(results / "clean" / d / "test.jsonl"))
        cells = []
        for m in ("base", model):
            hyps = (results / "hyps" / d / f"{m}.test.txt").read_text(encoding="utf-8").splitlines()
            v = [marker_judge(h, formality(s, t)["markers"]) == formality(s, t)["gold"]
                 for h, s in zip(hyps, test) if formality(s, t) and marker_judge(h, formality(s, t)["markers"])]
            cells.append(f"{100 * sum(v) / len(v):.1f}")
        print(f"  {d}: {' -> '.join(cells)}")
    if swing:
        context_swing(results, model)


def context_swing(results: Path, model: str) -> None:
    import yaml
    from fairseq.sequence_scorer import SequenceScorer

    from mtcue import Translator
    from mtcue.corpus import META_FIELDS
    from mtcue.data.clean import clean_line
    from mtcue.data.synth.generator import contrasts as formality_contrasts
    cfg = yaml.safe_load((results.parent / "config" / "config.yaml").read_text(encoding="utf-8"))
    print(f"    force-decoded register log-odds (nats), formal context minus informal context ({model}):")
    for d in DIRECTIONS:
        t = d.split("-")[1]
        contrasts = formality_contrasts(d, "test", cfg["corpus"]["docs"]["test"], cfg["seed"])
        labelled = [s for s in read_corpus(results / "clean" / d / "test.jsonl") if formality(s, t)]
        tr = Translator.load(results / "models" / d / model, device="cpu")
        odds = {}
        for register, (meta, previous) in CONTEXT.items():
            # Each line's two renderings with the same context, force-decoded as Translator.score does,
            # but with the metadata fields named (score() fills them in column order).
            samples = [{**s, "id": f"{s['id']}.{r}", "meta": dict.fromkeys(META_FIELDS) | meta,
                        "previous": {"en": previous},
                        "text": {"en": s["text"]["en"], t: clean_line(contrasts[s["id"]][r], t)}}
                       for s in labelled for r in ("formal", "informal")]
            scorer, logp = SequenceScorer(tr._task.target_dictionary), {}
            for batch in tr._batches(tr._dataset(samples, with_targets=True), 64):
                for i, hypos in zip(batch["id"].tolist(), tr._task.inference_step(scorer, tr._models, batch)):
                    logp[i] = float(hypos[0]["positional_scores"].sum())
            odds[register] = [logp[2 * k] - logp[2 * k + 1] for k in range(len(labelled))]
        swing = [a - b for a, b in zip(odds["formal"], odds["informal"])]
        flips = sum((a > 0) != (b > 0) for a, b in zip(odds["formal"], odds["informal"])) / len(swing)
        print(f"  {d}: mean {statistics.mean(swing):.2f}, lines whose preferred register flips {100 * flips:.0f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a finished study's results/ folder (read only)")
    parser.add_argument("--model", default="mtcue")
    parser.add_argument("--swing", action="store_true", help="also the force-decoded context swing (loads models)")
    args = parser.parse_args()
    scorer_coverage(args.results)
    data_shares(args.results)
    prompts(args.results, args.model)
    model_use(args.results, args.model, args.swing)


if __name__ == "__main__":
    main()
