"""Steps of the context stage: the embedding store, TAGGING's tag store, the store benchmark."""
from __future__ import annotations

import json

from mtcue.cli import corpora_from_args


def cmd_embed(a):
    from mtcue.context.embed import build_store

    build_store(corpora_from_args(a), a.direction, a.columns.split(","), a.encoder, a.out, a.batch_size,
                pooling=a.pooling)


def cmd_tags(a):
    from mtcue.context.tags import build_tag_store

    build_tag_store(corpora_from_args(a), a.direction, a.columns.split(","), a.min_docs, a.out)


def cmd_bench_store(a):
    from mtcue.context.bench import benchmark_store

    print(json.dumps(benchmark_store(a.store, a.corpus, a.direction, a.batch_size, a.batches, a.train_record),
                     indent=2))


def register(step) -> None:
    s = step("embed", cmd_embed, "embed every unique context string once into a store")
    s.add_argument("--direction", required=True)
    s.add_argument("--corpus", action="append", required=True, metavar="SPLIT=PATH")
    s.add_argument("--columns", required=True, help="comma-separated store columns (docs/formats.md)")
    s.add_argument("--encoder", required=True)
    s.add_argument("--pooling", choices=["mean", "cls"], default="mean")
    s.add_argument("--out", required=True)
    s.add_argument("--batch-size", type=int, default=256)

    s = step("tags", cmd_tags, "TAGGING's tag store: a tag per context value, vocabulary from the training split")
    s.add_argument("--direction", required=True)
    s.add_argument("--corpus", action="append", required=True, metavar="SPLIT=PATH", help="train is required")
    s.add_argument("--columns", required=True, help="comma-separated store columns (docs/formats.md)")
    s.add_argument("--min-docs", type=int, default=2, help="training documents a value needs for its own tag")
    s.add_argument("--out", required=True)

    s = step("bench-store", cmd_bench_store, "embedding store vs on-the-fly embedding: size and speed")
    s.add_argument("--store", required=True)
    s.add_argument("--corpus", required=True, help="cleaned training corpus of the direction")
    s.add_argument("--direction", required=True)
    s.add_argument("--batch-size", type=int, default=64)
    s.add_argument("--batches", type=int, default=20)
    s.add_argument("--train-record", help="training record of a contextual model, for the training speed-up")
