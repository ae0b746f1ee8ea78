"""How much of CXMI is the pass without context being out of distribution (issue 46; docs/deviations.md,
"CXMI's pass without context"). Fernandes et al. measure models trained with a context size drawn per
sample from 0..k (contextual-mt's --sample-context-size), so a share of their training samples has no
context and the pass without it is one the model was trained on; ours see an empty context only where a
document starts with no metadata. Here two MTCUE twins are fine-tuned from one BASE on the same synthetic
corpus: one on it as it is, one with the context of a random `--drop` share of its training lines removed
(`without_context`: what CXMI's pass without context reads), then both are measured on the same test split.

    PYTHONPATH=src python workflow/scripts/cxmi_context_drop.py --work WORK --out cxmi_drop.json

The share is drawn once (seeded), not afresh each epoch as contextual-mt's; the plugin has no option for
that (what it needs: docs/deviations.md).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from mtcue import config as cfgmod
from mtcue.context.embed import build_stores
from mtcue.corpus import read_corpus
from mtcue.data import synth
from mtcue.data.prepare import binarise, encode_split, train_spm
from mtcue.evaluation.context_usage import interval, measure_model, without_context
from mtcue.models.train import train
from mtcue.options import with_provenance
from mtcue.plan.models import model_spec
from mtcue.records import write_record

DIRECTION = "en-de"


def write_lines(samples: list[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples), encoding="utf-8")
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", type=Path, required=True, help="a folder for the corpus, stores and models")
    p.add_argument("--out", type=Path, required=True, help="the JSON summary")
    p.add_argument("--docs", default="300,30,60", help="synthetic documents of train, valid, test")
    p.add_argument("--drop", type=float, default=0.25,
                   help="the share of training lines without context (1/(k+1) for contextual-mt's 0..k, k = 3)")
    p.add_argument("--base-epochs", type=int, default=20)
    p.add_argument("--epochs", type=int, default=12, help="MTCUE's fine-tuning epochs (the demo's)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    start = time.monotonic()
    results = a.work / "results"
    corpora = {split: write_lines(synth.generate(DIRECTION, split, int(n), a.seed), a.work / "clean" / f"{split}.jsonl")
               for split, n in zip(("train", "valid", "test"), a.docs.split(","))}
    train_lines = list(read_corpus(corpora["train"]))
    dropped = np.random.default_rng(a.seed).random(len(train_lines)) < a.drop
    drop_corpora = {**corpora, "train": write_lines([without_context(s) if d else s for s, d in zip(train_lines, dropped)],
                                                    a.work / "clean_drop" / "train.jsonl")}
    arch = {"embed_dim": 64, "heads": 4, "encoder_layers": 2, "encoder_ffn_dim": 128, "decoder_layers": 2,
            "decoder_ffn_dim": 128}
    config = cfgmod.validate({
        "study": "cxmi-drop", "seed": a.seed, "directions": [DIRECTION], "spm": {"vocab_size": 500},
        "context": {"columns": ["doc", "metadata"]},
        # the demo's settings (config/config.yaml), BASE's epochs capped
        "training": {"lr": 0.003, "warmup_updates": 100, "max_tokens": 1536, "update_freq": 1, "dropout": 0.1,
                     "max_epoch": a.base_epochs, "patience": a.base_epochs},
        "models": {"base": {"type": "base", "arch": arch},
                   "mtcue": {"type": "mtcue", "init_from": "base",
                             "arch": {**arch, "context_layers": 2, "context_ffn_dim": 128, "context_dropout": 0.25},
                             "training": {"lr": 0.0015, "warmup_updates": 50, "max_epoch": a.epochs,
                                          "patience": a.epochs}}},
        "experiments": {"quality": {"models": ["base", "mtcue"]}, "formality": {"directions": []}}})
    spm = results / "spm" / f"{DIRECTION}.model"
    train_spm(corpora["train"], DIRECTION, spm, config["spm"]["vocab_size"])
    for split, path in corpora.items():
        encode_split(spm, path, DIRECTION, results / "prepared" / split)
    binarise(results / "prepared", DIRECTION, results / "bin" / DIRECTION)
    spec = model_spec(config, "mtcue", DIRECTION)
    stores = {"as_is": a.work / "store", "dropped": a.work / "store_drop"}
    for name, splits in (("as_is", corpora), ("dropped", drop_corpora)):
        build_stores({DIRECTION: splits}, {DIRECTION: stores[name]}, spec["context"]["columns"],
                     spec["context"]["encoder"])
    models = results / "models" / DIRECTION
    runs = [("base", "base", None), ("mtcue", "mtcue", stores["as_is"]), ("mtcue_drop", "mtcue", stores["dropped"])]
    for name, model, store in runs:
        record = train({**model_spec(config, model, DIRECTION), "model": name}, DIRECTION, results / "bin" / DIRECTION,
                       a.work / "ckpt" / name, models / name / "checkpoint_best.pt", context_dir=store,
                       init_checkpoint=None if model == "base" else models / "base" / "checkpoint_best.pt", threads=2)
        write_record(results / "records" / "train" / DIRECTION / f"{name}.json",
                     {"kind": "train", **with_provenance(record, "cxmi-drop")})
    test, sentences = list(read_corpus(corpora["test"])), {}
    summary = {"direction": DIRECTION, "docs": a.docs, "drop": a.drop, "dropped_train_lines": int(dropped.sum()),
               "train_lines": len(train_lines), "test_lines": len(test), "seed": a.seed}
    for name in ("mtcue", "mtcue_drop"):
        _direction, usage, _without = measure_model(models / name, test, threads=2)
        sentences[name] = np.array(usage["sentence_cxmi"])
        summary[name] = {"cxmi": round(usage["cxmi"], 4), "interval_95": [round(x, 4) for x in interval(usage)],
                         "cross_entropy": {
            k: round(v, 4) for k, v in usage["cross_entropy"].items()},
            "phenomena": {k: {"n": v["n"], "cxmi": round(v["cxmi"], 4)} for k, v in usage["phenomena"].items()}}
    # paired by sentence: how much CXMI the twin trained without context on some lines loses
    difference = sentences["mtcue"] - sentences["mtcue_drop"]
    summary["difference"] = {"cxmi": round(float(difference.mean()), 4), "interval_95": [
        round(x, 4) for x in interval({"sentence_cxmi": difference, "sentence_phenomena": [[]] * len(difference)})]}
    summary["wall_s"] = round(time.monotonic() - start)
    a.out.write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
