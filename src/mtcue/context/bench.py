"""Benchmark of the embedding store (paper appendix A: >90% smaller, >3x faster training).

Size: the store's files against a dense float32 matrix of every sample's context slots.
Speed: preparing the context of a training batch from the store (index lookup in the
memory-mapped matrix) against embedding the batch's context strings on the fly, both
measured here; combined with the training step time measured by fairseq (training record)
they give the training throughput of each approach.
"""
from __future__ import annotations

import json
import random
import time
from pathlib import Path

import numpy as np

from mtcue.config import langs_of
from mtcue.context.embed import context_strings, load_encoder, store_size_report
from mtcue.corpus import read_corpus


def _timed(fn, repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def benchmark_store(store: str | Path, corpus: str | Path, direction: str, batch_size: int, batches: int,
                    train_record: str | Path | None = None, seed: int = 1) -> dict:
    store = Path(store)
    manifest = json.loads((store / "manifest.json").read_text())
    vectors = np.load(store / "vectors.npy", mmap_mode="r")
    index = np.load(store / "train.index.npy")
    samples = list(read_corpus(corpus))
    src, _ = langs_of(direction)
    rng = random.Random(seed)
    picks = [rng.sample(range(len(samples)), batch_size) for _ in range(batches)]
    encoder = load_encoder(manifest["model"])

    def from_store():
        for ids in picks:
            rows = index[ids]
            np.where(rows[..., None] >= 0, vectors[np.maximum(rows, 0)], 0.0)

    def on_the_fly():
        for ids in picks:
            texts = [t for i in ids for t in context_strings(samples[i], src, manifest["columns"]) if t]
            encoder(sorted(set(texts)))

    store_s = _timed(from_store, 3) / batches
    fly_s = _timed(on_the_fly, 1) / batches
    result = {"direction": direction, "batch_size": batch_size, "batches": batches,
              **store_size_report(store),
              "context_s_per_batch_store": store_s, "context_s_per_batch_on_the_fly": fly_s,
              "context_speedup": fly_s / store_s}
    if train_record:
        record = json.loads(Path(train_record).read_text())
        last = record["epochs"][-1]
        step_s = last["wall_s"] / last["updates"] * batch_size / last["sentences_per_update"]
        result.update(train_step_s_per_batch=step_s,
                      training_speedup=(step_s + fly_s) / (step_s + store_s))
    return result
