"""Steps of the context stage: the embedding store, TAGGING's tag store, the style store, the store benchmark."""
from __future__ import annotations

import json
import logging

from mtcue.options import corpora_from_args, options, positive_int

log = logging.getLogger("mtcue")


def cmd_embed(a):
    from mtcue.context.embed import build_stores
    from mtcue.study import pair_of

    stores = dict(_pair_option("--store", item, "DIRECTION=DIR", "=") for item in a.store)
    corpora: dict[str, dict[str, str]] = {}
    for item in a.corpus:
        pair, split_path = _pair_option("--corpus", item, "PAIR:SPLIT=PATH", ":")
        split, path = _pair_option("--corpus", split_path, "PAIR:SPLIT=PATH", "=")
        corpora.setdefault(pair, {})[split] = path
    missing = sorted({pair_of(d) for d in stores} - set(corpora))
    if missing:
        raise ValueError(f"no --corpus PAIR:SPLIT=PATH for the pair(s) {missing}")
    build_stores({d: corpora[pair_of(d)] for d in stores}, stores, a.columns.split(","), a.encoder, a.batch_size,
                 pooling=a.pooling)


def _pair_option(option: str, value: str, form: str, sep: str) -> tuple[str, str]:
    key, found, rest = value.partition(sep)
    if not (key and found and rest):
        raise ValueError(f"{option} {value!r}: expected {form}")
    return key, rest


def cmd_tags(a):
    from mtcue.context.tags import build_tag_store

    build_tag_store(corpora_from_args(a), a.direction, a.columns.split(","), a.min_docs, a.out)


def cmd_token_store(a):
    from mtcue.context.token_store import build_token_store

    build_token_store(corpora_from_args(a), a.direction, a.spm, a.data_bin, a.previous, a.next, a.out)


def cmd_mask_store(a):
    from mtcue.context.masked import ALL, build_masked_store

    per_combination = a.per_combination if a.per_combination == ALL else int(a.per_combination)
    build_masked_store(a.store, corpora_from_args(a), per_combination, a.seed, a.out)


def cmd_bench_store(a):
    from mtcue.context.bench import benchmark_store

    print(json.dumps(benchmark_store(a.store, a.corpus, a.direction, a.batch_size, a.batches, a.train_record),
                     indent=2))


def cmd_bench_embed_scale(a):
    import torch

    from mtcue.context.bench import benchmark_embed_scale

    torch.set_num_threads(a.torch_threads)
    result = benchmark_embed_scale(a.corpus, a.direction, a.columns.split(","), a.encoder, a.sample, a.batch_size,
                                   a.project_threads, a.device, a.seed)
    text = json.dumps(result, indent=2)
    if a.out:
        from mtcue.io import atomic_write_text

        atomic_write_text(a.out, text + "\n")
    print(text)


def cmd_style_levels(a):
    from mtcue.context.style_levels import build_style_store
    from mtcue.options import json_option

    if (a.levels_from == "labels") != bool(a.mapping):
        raise SystemExit("style-levels: --mapping with --levels-from labels (only)")
    mapping = json_option(a.mapping, "--mapping") if a.mapping else None
    build_style_store(corpora_from_args(a), a.direction, mapping, a.out, a.seed)


def cmd_style_agreement(a):
    from mtcue.context.style_levels import reference_agreement
    from mtcue.io import atomic_write_text

    record = reference_agreement(a.references, a.direction)
    atomic_write_text(a.out, json.dumps(record, indent=1) + "\n")
    log.info("%s: formal references scored formal %.1f%%, informal informal %.1f%%, pairs ordered %.1f%%",
             a.direction, 100 * record["formal"]["formal"], 100 * record["informal"]["informal"],
             100 * record["ordered"])


def register(step) -> None:
    s = step("embed", cmd_embed, "embed every unique context string once, with one encoder, into the store "
                                 "of each direction (a string several directions read is embedded once)")
    s.add_argument("--store", action="append", required=True, metavar="DIRECTION=DIR",
                   help="a direction and the store folder to write for it (repeat for several directions)")
    s.add_argument("--corpus", action="append", required=True, metavar="PAIR:SPLIT=PATH",
                   help="cleaned corpus of a split of a pair (en-de serves en-de and de-en)")
    s.add_argument("--columns", required=True, help="comma-separated store columns (docs/formats.md)")
    s.add_argument("--encoder", required=True)
    s.add_argument("--pooling", choices=["mean", "cls"], default="mean")
    s.add_argument("--batch-size", type=positive_int, default=256)

    s = step("tags", cmd_tags, "TAGGING's tag store: a tag per context value, vocabulary from the training split")
    s.add_argument("--direction", required=True)
    s.add_argument("--corpus", action="append", required=True, metavar="SPLIT=PATH", help="train is required")
    s.add_argument("--columns", required=True, help="comma-separated store columns (docs/formats.md)")
    s.add_argument("--min-docs", type=int, default=2, help="training documents a value needs for its own tag")
    s.add_argument("--out", required=True)

    s = step("token-store", cmd_token_store, "the token context store: previous (and next) source lines of "
             "every sample as token ids of the direction's dictionary (docs/formats.md, section 2)")
    s.add_argument("--direction", required=True)
    s.add_argument("--corpus", action="append", required=True, metavar="SPLIT=PATH")
    s.add_argument("--spm", required=True, help="the direction's SentencePiece model")
    s.add_argument("--data-bin", required=True, help="the binarised data (its source dictionary)")
    s.add_argument("--previous", type=int, required=True, help="previous-line slots prev1..prevK")
    s.add_argument("--next", action="store_true", help="also the slot next1 (the following line)")
    s.add_argument("--out", required=True)

    s = step("style-levels", cmd_style_levels, "the style store: a level 1..5 per line of each split, the "
             "target's register label mapped or its formality score binned (the style-control models; "
             "docs/formats.md, section 2)")
    s.add_argument("--direction", required=True)
    s.add_argument("--corpus", action="append", required=True, metavar="SPLIT=PATH")
    s.add_argument("--levels-from", choices=["labels", "address"], default="labels",
                   help="labels: the corpus's register labels (--mapping); address: each target's formality score "
                        "(German, Russian address forms) in 5 levels, the training split flattened as the style-control "
                        "paper's (100 score bins, at most 10K lines each)")
    s.add_argument("--mapping", help='labels: JSON {"informal": 1, "formal": 5, "unlabelled": 3}')
    s.add_argument("--seed", type=int, default=1, help="address: the flattening's sampling seed")
    s.add_argument("--out", required=True)

    s = step("style-agreement", cmd_style_agreement, "how the address levels (style-levels --levels-from "
             "address) agree with IWSLT22's formal and informal references", options("out"))
    s.add_argument("--references", required=True, help="an IWSLT22 folder (official files, results/eval/iwslt22)")
    s.add_argument("--direction", required=True)
    s.add_argument("--out", required=True)

    s = step("mask-store", cmd_mask_store, "a few-shot store: attribute sentences kept for N lines per "
             "combination of the train and valid splits, cleared elsewhere")
    s.add_argument("--store", required=True, help="the full context store (vectors or tags)")
    s.add_argument("--corpus", action="append", required=True, metavar="SPLIT=PATH", help="train and valid")
    s.add_argument("--per-combination", required=True, help="lines per attribute combination, or 'all'")
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--out", required=True)

    s = step("bench-store", cmd_bench_store, "embedding store vs on-the-fly embedding: size and speed")
    s.add_argument("--store", required=True)
    s.add_argument("--corpus", required=True, help="cleaned training corpus of the direction")
    s.add_argument("--direction", required=True)
    s.add_argument("--batch-size", type=positive_int, default=64)
    s.add_argument("--batches", type=int, default=20)
    s.add_argument("--train-record", help="training record of a contextual model, for the training speed-up")

    s = step("bench-embed-scale", cmd_bench_embed_scale, "embedding at scale: unique context strings per 100k "
             "pairs, each encoder's strings/s (first-seen and length order), projected store build time for "
             "Table 1's pairs", options("out"))
    s.add_argument("--corpus", required=True, help="corpus-format JSONL (e.g. extract-opensubtitles' output)")
    s.add_argument("--direction", required=True)
    s.add_argument("--columns", required=True, help="comma-separated store columns; metadata columns without "
                   "values are estimated as one string per film and field")
    s.add_argument("--encoder", action="append", required=True, help="repeat for several encoders")
    s.add_argument("--sample", type=int, default=4000, help="unique strings to time each encoder on")
    s.add_argument("--batch-size", type=positive_int, default=256)
    s.add_argument("--torch-threads", type=positive_int, default=1)
    s.add_argument("--project-threads", type=positive_int, nargs="+", default=[1, 16])
    s.add_argument("--device", help="e.g. cuda (fp16); default CPU")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", help="also write the JSON here")
