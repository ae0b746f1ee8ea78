"""`mtcue <step> ...`: every pipeline step, runnable by hand exactly as Snakemake runs it.

`snakemake -n -p <target>` prints the command line of each step.
"""
from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
from pathlib import Path

from mtcue import config as cfgmod

log = logging.getLogger("mtcue")
# The checkout the code runs from (editable install): records name its commit.
CODE_DIR = Path(__file__).resolve().parents[2]


def _spec(args: argparse.Namespace) -> dict:
    """A model spec from --spec (JSON, as Snakemake passes it) or --config + --model (by hand)."""
    if args.spec:
        return json.loads(args.spec)
    if not (args.config and args.model):
        raise cfgmod.ConfigError("give --spec JSON, or --config FILE with --model NAME")
    return cfgmod.model_spec(cfgmod.load(args.config), args.model, args.direction)


def _provenance(record: dict, study: str) -> dict:
    from mtcue.records import git_commit

    return {**record, "study": study, "git_commit": git_commit(CODE_DIR)}


def cmd_generate(a):
    from mtcue import synth

    synth.write_split(a.pair, a.split, a.docs, a.seed, a.out)


def cmd_clean(a):
    from mtcue.clean import clean_corpus

    stats = clean_corpus(a.input, a.output, a.max_chars)
    log.info("cleaned %s: %s", a.input, stats)
    if a.stats:
        Path(a.stats).write_text(json.dumps(stats, indent=2) + "\n")


def cmd_spm_train(a):
    from mtcue.prepare import train_spm

    train_spm(a.corpus, a.direction, a.model_file, a.vocab_size, a.model_type, a.character_coverage)


def cmd_spm_encode(a):
    from mtcue.prepare import encode_split

    n = encode_split(a.model_file, a.corpus, a.direction, a.out_prefix)
    log.info("encoded %d samples to %s.*", n, a.out_prefix)


def cmd_binarise(a):
    from mtcue.prepare import binarise

    binarise(a.prepared, a.direction, a.dest, a.workers)


def _corpora(a) -> dict[str, str]:
    """--corpus SPLIT=PATH options as {split: path}."""
    return dict(item.split("=", 1) for item in a.corpus)


def cmd_embed(a):
    from mtcue.embed import build_store

    build_store(_corpora(a), a.direction, a.columns.split(","), a.encoder, a.out, a.batch_size, pooling=a.pooling)


def cmd_tags(a):
    from mtcue.tags import build_tag_store

    build_tag_store(_corpora(a), a.direction, a.columns.split(","), a.min_docs, a.out)


def cmd_train(a):
    from mtcue.records import write_record
    from mtcue.train import train

    record = train(_spec(a), a.direction, Path(a.data_bin), Path(a.checkpoint_dir), Path(a.out),
                   Path(a.context_dir) if a.context_dir else None,
                   Path(a.init_checkpoint) if a.init_checkpoint else None, a.threads)
    write_record(a.record, {"kind": "train", **_provenance(record, a.study)})


def cmd_translate(a):
    from mtcue.corpus import read_corpus
    from mtcue.translate import translate

    n = sum(1 for _ in read_corpus(a.corpus))
    translate(_spec(a), a.direction, Path(a.data_bin), Path(a.checkpoint), a.split, n, Path(a.out),
              json.loads(a.generation), Path(a.context_dir) if a.context_dir else None, a.threads)


def cmd_score(a):
    from mtcue.records import write_record
    from mtcue.score import score_files

    scores = score_files(a.hyps, a.corpus, a.direction)
    record = {"kind": "score", "model": a.model, "direction": a.direction, "split": a.split,
              "config_hash": a.config_hash, **scores}
    write_record(a.out, _provenance(record, a.study))
    log.info("%s %s %s: BLEU %.2f", a.direction, a.model, a.split, scores["bleu"])


def cmd_comet(a):
    from mtcue.comet import comet_files
    from mtcue.records import write_record

    # CometUnavailable is a RuntimeError: with --required, main() reports its reason and exits 1.
    scores = comet_files(a.hyps, a.corpus, a.direction, a.comet_model, a.batch_size, a.required)
    record = {"kind": "comet", "model": a.model, "direction": a.direction, "split": a.split,
              "config_hash": a.config_hash, **scores}
    write_record(a.out, _provenance(record, a.study))
    if scores["comet"] is None:
        log.warning("%s %s %s: no COMET score: %s", a.direction, a.model, a.split, scores["unavailable"])
    else:
        log.info("%s %s %s: COMET %.2f", a.direction, a.model, a.split, scores["comet"])


def cmd_table(a):
    from mtcue import tables
    from mtcue.records import load_records

    if a.kind == "models":
        tables.write_models_table(load_records(a.records, "train"), a.csv, a.md)
        return
    records = load_records(a.records, "score")
    if a.kind == "quality":
        tables.write_quality_table(records, a.csv, a.md, load_records(a.comet_records, "comet"),
                                   load_records(a.train_records, "train"),
                                   bootstrap=tables.Bootstrap(n=a.bootstrap_samples, alpha=a.alpha))
    else:
        tables.write_phenomena_table(tables.phenomena_table(records), records, a.csv, a.md)


def cmd_track(a):
    from mtcue.records import load_records
    from mtcue.tracking import resolve_uri, sync_records

    uri = resolve_uri(a.uri)
    sync_records(uri, a.study, load_records(a.train_records, "train"), load_records(a.score_records, "score"),
                 load_records(a.comet_records, "comet"))
    log.info("synced records of study '%s' to %s", a.study, uri)
    if a.done:
        Path(a.done).write_text(uri + "\n")


def cmd_count_params(a):
    from mtcue.params import count_config

    print(json.dumps(count_config(cfgmod.load(a.config), a.vocab_size, a.n_tags), indent=2))


def cmd_bench_store(a):
    from mtcue.bench import benchmark_store

    print(json.dumps(benchmark_store(a.store, a.corpus, a.direction, a.batch_size, a.batches, a.train_record),
                     indent=2))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtcue", description=__doc__)
    sub = p.add_subparsers(dest="step", required=True, metavar="STEP")

    def step(name, fn, help_):
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(fn=fn)
        return sp

    s = step("generate", cmd_generate, "write one split of the synthetic dialogue corpus")
    s.add_argument("--pair", required=True)
    s.add_argument("--split", required=True, choices=["train", "valid", "test"])
    s.add_argument("--docs", type=int, required=True, help="number of documents (episodes)")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", required=True)

    s = step("clean", cmd_clean, "normalise and filter a corpus file (Moses + the paper's rules)")
    s.add_argument("--input", required=True)
    s.add_argument("--output", required=True)
    s.add_argument("--max-chars", type=int, default=400)
    s.add_argument("--stats", help="write the counts as JSON here")

    s = step("spm-train", cmd_spm_train, "train a joint SentencePiece model for a direction")
    s.add_argument("--corpus", required=True, help="cleaned training corpus (JSONL)")
    s.add_argument("--direction", required=True)
    s.add_argument("--model-file", required=True, help="output .model path (.vocab is written beside it)")
    s.add_argument("--vocab-size", type=int, required=True)
    s.add_argument("--model-type", default="bpe", choices=["bpe", "unigram"])
    s.add_argument("--character-coverage", type=float, default=1.0)

    s = step("spm-encode", cmd_spm_encode, "segment one split into {prefix}.{src} and {prefix}.{tgt}")
    s.add_argument("--model-file", required=True)
    s.add_argument("--corpus", required=True)
    s.add_argument("--direction", required=True)
    s.add_argument("--out-prefix", required=True)

    s = step("binarise", cmd_binarise, "fairseq-preprocess with a joined dictionary")
    s.add_argument("--prepared", required=True, help="folder with {train,valid,test}.{src,tgt}")
    s.add_argument("--direction", required=True)
    s.add_argument("--dest", required=True)
    s.add_argument("--workers", type=int, default=1)

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

    def model_args(s):
        s.add_argument("--spec", help="model spec as JSON (what Snakemake passes)")
        s.add_argument("--config", help="config file, with --model, instead of --spec")
        s.add_argument("--model", help="model name in the config")
        s.add_argument("--direction", required=True)
        s.add_argument("--data-bin", required=True)
        s.add_argument("--context-dir")
        s.add_argument("--threads", type=int, default=1)

    s = step("train", cmd_train, "train (or resume) one model with fairseq-train")
    model_args(s)
    s.add_argument("--checkpoint-dir", required=True, help="resumable checkpoints (kept across failures)")
    s.add_argument("--init-checkpoint", help="checkpoint of the model named by init_from")
    s.add_argument("--out", required=True, help="where the best checkpoint is copied")
    s.add_argument("--record", required=True, help="training record (JSON)")
    s.add_argument("--study", required=True)

    s = step("translate", cmd_translate, "beam-search translation of a split with fairseq-generate")
    model_args(s)
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--split", required=True)
    s.add_argument("--corpus", required=True, help="the cleaned corpus of the split (for the sample count)")
    s.add_argument("--generation", default='{"beam": 5, "batch_size": 64, "max_len_a": 1.2, "max_len_b": 10}')
    s.add_argument("--out", required=True)

    def scoring_args(s):
        for name in ("--hyps", "--corpus", "--direction", "--model", "--split", "--study", "--config-hash", "--out"):
            s.add_argument(name, required=True)

    s = step("score", cmd_score, "BLEU and phenomenon accuracy of a hypothesis file into a record")
    scoring_args(s)

    s = step("comet", cmd_comet, "COMET (x100) of a hypothesis file into a record")
    scoring_args(s)
    s.add_argument("--comet-model", required=True,
                   help="hub name (e.g. Unbabel/wmt20-comet-da) or local checkpoint (file or model directory)")
    s.add_argument("--batch-size", type=int, default=16)
    s.add_argument("--required", action="store_true",
                   help="fail when the model is unavailable, instead of recording why")

    s = step("table", cmd_table, "assemble a table from records")
    s.add_argument("--kind", choices=["quality", "phenomena", "models"], default="quality",
                   help="quality: BLEU, COMET and phenomena with significance marks (paper Table 4); "
                        "phenomena: per-phenomenon accuracy; models: sizes and training time (paper Table 3)")
    s.add_argument("--records", nargs="+", required=True, help="score records (train records for --kind models)")
    s.add_argument("--comet-records", nargs="*", default=[], help="quality: COMET records of the same hypotheses")
    s.add_argument("--train-records", nargs="*", default=[],
                   help="quality: train records, for footnotes on the context encoders")
    s.add_argument("--bootstrap-samples", type=int, default=1000, help="quality: paired bootstrap resamples")
    s.add_argument("--alpha", type=float, default=0.05,
                   help="quality: systems with p > alpha against the best are marked indistinguishable from it")
    s.add_argument("--csv", required=True)
    s.add_argument("--md", required=True)

    s = step("track", cmd_track, "mirror training, score and COMET records into MLflow")
    s.add_argument("--study", required=True)
    s.add_argument("--uri", required=True, help="MLflow tracking URI (MLFLOW_TRACKING_URI overrides)")
    s.add_argument("--train-records", nargs="+", required=True)
    s.add_argument("--score-records", nargs="+", required=True)
    s.add_argument("--comet-records", nargs="*", default=[])
    s.add_argument("--done", help="marker file written after a successful sync")

    s = step("count-params", cmd_count_params, "count the parameters of every model of a config")
    s.add_argument("--config", required=True)
    s.add_argument("--vocab-size", type=int, default=32864)
    s.add_argument("--n-tags", type=int, default=1000,
                   help="TAGGING's tag vocabulary (data-dependent: see a tag store's manifest)")

    s = step("bench-store", cmd_bench_store, "embedding store vs on-the-fly embedding: size and speed")
    s.add_argument("--store", required=True)
    s.add_argument("--corpus", required=True, help="cleaned training corpus of the direction")
    s.add_argument("--direction", required=True)
    s.add_argument("--batch-size", type=int, default=64)
    s.add_argument("--batches", type=int, default=20)
    s.add_argument("--train-record", help="training record of a contextual model, for the training speed-up")
    return p


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = _parser().parse_args(argv)
    try:
        args.fn(args)
    except (cfgmod.ConfigError, ValueError, FileNotFoundError, RuntimeError) as err:
        log.error("%s failed: %s", args.step, err)
        return 1
    except subprocess.CalledProcessError as err:
        log.error("%s failed: %s exited with %s (its output is above)", args.step, err.cmd[:3], err.returncode)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
