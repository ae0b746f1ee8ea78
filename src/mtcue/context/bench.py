"""Benchmark of the embedding store (paper appendix A: >90% smaller, >3x faster training).

Size: the store's files against a dense float32 matrix of every sample's context slots.
Speed: preparing the context of a training batch from the store (index lookup in the
memory-mapped matrix) against embedding the batch's context strings on the fly, both
measured here; combined with the training step time measured by fairseq (training record)
they give the training throughput of each approach.
"""
from __future__ import annotations

import csv
import io
import json
import random
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from mtcue.context.embed import (Encoder, build_index, context_strings, embed_all, embedding_order, load_encoder,
                                 store_size_report)
from mtcue.corpus import read_corpus
from mtcue.study import langs_of


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


# Embedding at scale (issue 28): how many strings the paper's stores hold, how fast an encoder embeds them,
# and the store build time that follows for Table 1's pair counts.

def count_context_strings(corpus: str | Path, direction: str, columns: Sequence[str],
                          metadata_fields: Sequence[str] = ()) -> dict:
    """Unique context strings of `direction`'s store over `columns` (as build_index counts them: a string in
    several slots or samples is one string), per 100k pairs. `metadata_fields`: fields the corpus has no values
    for (an OPUS copy without OMDb metadata), estimated as one string per film and field."""
    samples = list(read_corpus(corpus))
    texts, _ = build_index({"all": samples}, langs_of(direction)[0], columns)
    films = len({s["doc_id"] for s in samples})
    per_pair = len(texts) / len(samples) if samples else 0.0
    metadata = films * len(metadata_fields)
    return {"pairs": len(samples), "films": films, "unique_strings": len(texts),
            "unique_per_100k_pairs": per_pair * 1e5, "metadata_fields_estimated": list(metadata_fields),
            "metadata_strings_estimated": metadata,
            "metadata_per_100k_pairs_estimated": metadata / len(samples) * 1e5 if samples else 0.0}


def encoder_throughput(encoder: Encoder, texts: Sequence[str], batch_size: int) -> dict:
    """Strings per second through embed_all in first-seen order and in build_stores' length order."""
    rows = list(range(len(texts)))
    out = np.empty((len(texts), int(encoder.dim)), dtype=np.float32)  # type: ignore[attr-defined]
    encoder(list(texts[:batch_size]))  # warm-up: the first call pays for lazy initialisation
    result = {"strings": len(texts), "batch_size": batch_size,
              "mean_chars": sum(map(len, texts)) / len(texts) if texts else 0.0}
    for order, picked in (("first_seen", rows), ("by_length", embedding_order(texts, rows))):
        seconds = _timed(lambda: embed_all(encoder, [texts[r] for r in picked], out, picked, batch_size,
                                           f"throughput {order}"), 1)
        result[f"strings_per_s_{order}"] = len(texts) / seconds
    return result


def project_build_time(pairs: dict[str, float], strings_per_pair: float, strings_per_s: float,
                       threads: Sequence[int] = (1,), directions_per_pair: int = 2) -> dict:
    """Store build time for `pairs` (pair -> sentence pairs): every direction of a pair (en->xx, xx->en) embeds
    its own strings, `strings_per_pair` of them per sentence pair; N threads are taken to scale linearly (an
    upper bound on the speed-up). Strings several directions share (English documents of the en->xx stores)
    are counted in each: an upper bound on the work."""
    strings = {pair: n * strings_per_pair * directions_per_pair for pair, n in pairs.items()}
    total = sum(strings.values())
    return {"strings_per_pair": strings_per_pair, "strings_per_s_one_thread": strings_per_s,
            "directions_per_pair": directions_per_pair, "strings": strings, "total_strings": total,
            "hours": {str(n): total / (strings_per_s * n) / 3600 for n in threads}}


def paper_pairs(csv_path: str | Path | None = None) -> dict[str, float]:
    """Table 1's source-target pairs per language pair ("5.3M" -> 5.3e6)."""
    from mtcue.paper import PAPER_DATA_CSV, paper_value

    text = Path(csv_path or PAPER_DATA_CSV).read_text()
    rows = {row["field"]: row for row in csv.DictReader(io.StringIO(text))}
    return {pair: paper_value(value) for pair, value in rows["source_target_pairs"].items() if pair != "field"}


def benchmark_embed_scale(corpus: str | Path, direction: str, columns: Sequence[str], encoders: Sequence[str],
                          sample: int, batch_size: int = 256, threads: Sequence[int] = (1, 16),
                          device: str | None = None, seed: int = 1) -> dict:
    """Unique strings of the corpus, each encoder's strings per second on `sample` of them (one torch thread
    unless set otherwise; fp16 when `device` is a CUDA device), and the projected build time of the paper's
    stores."""
    doc = [c for c in columns if c.startswith("doc")]
    counts = count_context_strings(corpus, direction, doc, [c for c in columns if not c.startswith(("doc", "cue"))])
    texts, _ = build_index({"all": read_corpus(corpus)}, langs_of(direction)[0], doc)
    picked = random.Random(seed).sample(texts, min(sample, len(texts)))
    per_pair = (counts["unique_strings"] + counts["metadata_strings_estimated"]) / counts["pairs"]
    import torch

    result = {"corpus": str(corpus), "direction": direction, "columns": list(columns), **counts,
              "torch_threads": torch.get_num_threads(), "device": device or "cpu", "encoders": {}}
    for name in encoders:
        encoder = load_encoder(name, device=device, fp16=bool(device and device.startswith("cuda")))
        speed = encoder_throughput(encoder, picked, batch_size)
        # build_stores embeds in length order: the projection takes that speed
        result["encoders"][name] = {**speed, "projection": project_build_time(
            paper_pairs(), per_pair, speed["strings_per_s_by_length"], threads)}
    return result
