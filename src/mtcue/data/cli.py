"""Steps of the data stage: corpus generation, cleaning, SentencePiece and binarisation."""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from mtcue.io import atomic_write_text
from mtcue.options import options, positive_int, with_provenance
from mtcue.study import langs_of

log = logging.getLogger("mtcue")


def cmd_generate(a):
    from mtcue.data import synth

    synth.write_split(a.pair, a.split, a.docs, a.seed, a.out)


def cmd_iwslt22_synth(a):
    from mtcue.data.synth.iwslt22 import write_iwslt22

    counts = write_iwslt22(a.corpus, a.pair, a.docs, a.seed, a.out, a.split)
    log.info("IWSLT22-layout %s set of %s: %d lines, %d showing formality -> %s", a.split, a.pair, counts["lines"],
             counts["with_formality"], a.out)


def cmd_clean(a):
    from mtcue.data.clean import clean_corpus

    stats = clean_corpus(a.input, a.output, a.max_chars)
    log.info("cleaned %s: %s", a.input, stats)
    if a.stats:
        atomic_write_text(a.stats, json.dumps(stats, indent=2) + "\n")


def cmd_annotate_eamt22(a):
    from mtcue.data.annotate import annotate_corpus

    stats = annotate_corpus(a.input, a.output)
    log.info("annotated %s: %d of %d lines, %d attribute combinations", a.input, stats.get("annotated", 0),
             stats.get("lines", 0), len(stats["combinations"]))
    atomic_write_text(a.stats, json.dumps(stats, indent=2, ensure_ascii=False) + "\n")


def _workers(value: str) -> int:
    """A whole number >= 1 of worker processes, capped at the CPUs this process may use: more only cost memory
    and start-up time (`--workers 1000` started 1,008 processes)."""
    from mtcue.data.opensubtitles import check_workers, usable_cpus

    try:
        workers = check_workers(int(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: a whole number >= 1 of worker processes") from None
    if workers > usable_cpus():
        log.warning("--workers %d: capped at %d, the CPUs this process may use", workers, usable_cpus())
    return min(workers, usable_cpus())


def cmd_extract_opensubtitles(a):
    from mtcue.data.opensubtitles import Rules, extract

    report = extract(a.mirror, a.pair, a.out, a.films, a.stats, Rules(min_overlap=a.min_overlap, max_gap_s=a.max_gap),
                     a.workers)
    log.info("extracted %d pairs of %s from %d films; dropped links: %s; skipped link groups: %s",
             report["pairs"], a.pair, report["films"], report["dropped"], report["skipped_link_groups"])


def cmd_opus_synth(a):
    from mtcue.data.opus_synth import generate_mirror

    written = generate_mirror(a.out, a.pair, a.links, a.seed)
    log.info("wrote an OPUS-format copy of %d links in %d films to %s", written["links"], written["films"], a.out)


def _mirror_files(a) -> list:
    from mtcue.data.opus_synth import mirror_files

    return mirror_files(a.out, a.pair)


def cmd_omdb(a):
    from mtcue.data.omdb import Settings, fetch_all

    summary = fetch_all(a.ids, a.cache, a.out, Settings(a.api_url, a.min_interval, a.timeout), a.summary)
    log.info("OMDb metadata of %d films: %d found, %d not found, %d without a key; %d requests",
             summary["films"], summary["found"], summary["not_found"], summary["no_key"], summary["requests"])


def cmd_download(a):
    from mtcue.data.download import Policy, download

    result = download(a.source, a.out, Policy(a.retries, a.backoff, a.timeout))
    log.info("%s: %d bytes%s", a.out, result["bytes"], f", MD5 {result['md5']} verified" if result["md5"] else "")


def cmd_split_corpus(a):
    from mtcue.data.splits import make_splits, write_report

    report = make_splits(a.corpus, a.heldout, a.out_dir, a.metadata, a.valid_pairs, a.test_pairs, a.seed)
    write_report(report, a.report)
    log.info("split %s: %s (%s)", a.corpus, report["pairs"], report["sampled_from"])


def _split_files(a) -> list:
    from mtcue.data.splits import SPLITS

    return [*(Path(a.out_dir) / f"{split}.jsonl" for split in SPLITS), a.report]


def cmd_evalset(a):
    from mtcue.data import evalsets
    from mtcue.data.omdb import load_metadata

    if a.name == "iwslt22":
        sources = {Path(p).parent for p in a.inputs}
        if len(sources) != 1:
            raise ValueError(f"iwslt22: give the official files of one folder, got {a.inputs}")
        n = evalsets.iwslt22(sources.pop(), a.pair, a.out, a.split)
    elif a.name == "eamt22":
        n = evalsets.eamt22(a.inputs[0], a.split, a.out)
    elif a.name == "contrapro":
        n = evalsets.contrapro(a.inputs[0], a.inputs[1], a.out, load_metadata(a.metadata) if a.metadata else None)
    else:
        n = evalsets.lopes(*a.inputs, a.out)
    log.info("%s %s: %s", a.name, a.pair, n)


def cmd_contrastive_suite(a):
    if a.name == "synthetic":
        from mtcue.data.synth.contrastive import write_suite

        if not (a.pair and a.docs):
            raise SystemExit("contrastive-suite --name synthetic needs --pair and --docs")
        n = write_suite(a.pair, a.docs, a.seed, a.out, a.per_phenomenon)
    else:
        from mtcue.data.contrastive_suites import from_evalset, voita2019

        if not a.input:
            raise SystemExit(f"contrastive-suite --name {a.name} needs --input")
        n = voita2019(a.input, a.name, a.out) if a.name.startswith("voita2019_") else from_evalset(a.name, a.input, a.out)
    log.info("contrastive suite %s: %s", a.name, n)


def cmd_corpus_stats(a):
    from mtcue.data.stats import corpus_stats
    from mtcue.records import write_record

    record = {"kind": "data", "split": "train", "source": a.source, "config_hash": a.config_hash,
              **corpus_stats(a.corpus, a.pair)}
    if a.omdb_summary:
        record["metadata"] = json.loads(Path(a.omdb_summary).read_text())
    write_record(a.out, with_provenance(record, a.study))
    log.info("%s: %d samples, %d with context", a.pair, record["samples"], record["any_context"])


def cmd_spm_train(a):
    from mtcue.data.prepare import train_spm

    train_spm(a.corpus, a.direction, a.model_file, a.vocab_size, a.model_type, a.character_coverage)


def cmd_spm_encode(a):
    from mtcue.data.prepare import encode_split

    n = encode_split(a.model_file, a.corpus, a.direction, a.out_prefix)
    log.info("encoded %d samples to %s.*", n, a.out_prefix)


def cmd_binarise(a):
    from mtcue.data.prepare import binarise

    binarise(a.prepared, a.direction, a.dest, a.workers)


def cmd_check_config(a):
    from mtcue.config import load_files
    from mtcue.data.sources import check_urls

    cfg = load_files(a.configfile, checks=[check_urls])
    log.info("%s: study '%s', %d directions, %d models: Snakemake may read it", " + ".join(a.configfile),
             cfg["study"], len(cfg["directions"]), len(cfg["models"]))


def register(step) -> None:
    s = step("check-config", cmd_check_config,
             "check a study's config files before Snakemake reads them (`snakemake --configfile` runs a YTE "
             "template's Python and expands aliases before the study's own checks): plain YAML, each key once, "
             "bounded, valid")
    s.add_argument("configfile", nargs="+", help="the files, in the order --configfile gets them")

    s = step("generate", cmd_generate, "write one split of the synthetic dialogue corpus", options("out"))
    s.add_argument("--pair", required=True)
    s.add_argument("--split", required=True, choices=["train", "valid", "test"])
    s.add_argument("--docs", type=int, required=True, help="number of documents (episodes)")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", required=True)

    s = step("contrastive-suite", cmd_contrastive_suite,
             "a contrastive suite (docs/formats.md, section 8): the synthetic one of an en->xx pair, or a real set "
             "converted (ContraPro, Lopes et al. from their converted sets; Voita et al. 2019 from the official JSON)",
             options("out"))
    s.add_argument("--name", required=True, choices=["synthetic", "contrapro", "lopes", "voita2019_deixis",
                                                     "voita2019_lex_cohesion", "voita2019_ellipsis_infl",
                                                     "voita2019_ellipsis_vp"])
    s.add_argument("--input", help="contrapro, lopes: results/eval/{name}/{pair}/test.jsonl; voita2019_*: its JSON")
    s.add_argument("--pair", help="synthetic: the language pair")
    s.add_argument("--docs", type=positive_int, help="synthetic: documents of the test split to draw from")
    s.add_argument("--seed", type=int, default=1, help="synthetic: the corpus seed")
    s.add_argument("--per-phenomenon", type=positive_int,
                   help="synthetic: at most this many examples of each phenomenon")
    s.add_argument("--out", required=True)

    s = step("iwslt22-synth", cmd_iwslt22_synth,
             "the synthetic test split as an IWSLT22 formality test set (official layout, [F]-annotated)")
    s.add_argument("--corpus", required=True, help="the cleaned split")
    s.add_argument("--pair", required=True)
    s.add_argument("--split", choices=["valid", "test"], default="test", help="the split the corpus is")
    s.add_argument("--docs", type=int, required=True, help="documents of the generated split")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", required=True, help="folder for the five formality-control.test.* files")

    s = step("clean", cmd_clean, "normalise and filter a corpus file (Moses + the paper's rules)",
             options("output", "stats"))
    s.add_argument("--input", required=True)
    s.add_argument("--output", required=True)
    s.add_argument("--max-chars", type=int, default=400)
    s.add_argument("--stats", help="write the counts as JSON here")

    s = step("annotate-eamt22", cmd_annotate_eamt22, "EAMT22's attribute annotation of an en-pl corpus from its "
             "Polish (Morfeusz 2): attribute values and EAMT22's context sentences as the lines' cues",
             options("output", "stats"))
    s.add_argument("--input", required=True)
    s.add_argument("--output", required=True)
    s.add_argument("--stats", required=True, help="the counts (JSON)")

    s = step("extract-opensubtitles", cmd_extract_opensubtitles,
             "extract every aligned pair of one language pair from an OPUS OpenSubtitles v2018 copy (streaming)",
             options("out", "films", "stats"))
    s.add_argument("--mirror", required=True, help="OPUS copy: xml/{l1}-{l2}.xml.gz and xml/{lang}.zip or xml/{lang}/")
    s.add_argument("--pair", required=True, help="language pair, English first (en-de)")
    s.add_argument("--out", required=True, help="corpus-format JSONL, metadata empty")
    s.add_argument("--films", help="write the films' OPUS folder names (IMDb ids) here, one per line")
    s.add_argument("--stats", help="write the counts (kept, dropped and why, context resets) as JSON here")
    s.add_argument("--min-overlap", type=float, default=0.9, help="keep links with at least this overlap")
    s.add_argument("--max-gap", type=float, default=7.0, help="reset the context after a longer pause (seconds)")
    s.add_argument("--workers", type=_workers, default=1,
                   help="processes extracting films in parallel (1: none; at most the CPUs this process may use, "
                        "more are capped); the output is the same")

    s = step("opus-synth", cmd_opus_synth, "write a generated OPUS-format OpenSubtitles copy (extraction benchmark)",
             _mirror_files)
    s.add_argument("--out", required=True, help="folder to write xml/{lang}.zip and xml/{l1}-{l2}.xml.gz into")
    s.add_argument("--pair", default="en-de")
    s.add_argument("--links", type=int, required=True, help="number of alignment links")
    s.add_argument("--seed", type=int, default=1)

    s = step("omdb", cmd_omdb, "film metadata from OMDb (key from the OMDB_API_KEY environment variable only)",
             options("out", "summary"))
    s.add_argument("--ids", nargs="+", required=True, help="files of OPUS folder names (111161) or IMDb ids")
    s.add_argument("--cache", required=True, help="folder of cached answers (kept between runs)")
    s.add_argument("--out", required=True, help="JSONL: imdb_id, status (found, not_found, no_key), meta")
    s.add_argument("--summary", help="write the counts as JSON here")
    s.add_argument("--api-url", default="https://www.omdbapi.com/", help="OMDb or a mirror of its API (https)")
    s.add_argument("--min-interval", type=float, default=0.2, help="seconds between two requests")
    s.add_argument("--timeout", type=float, default=30.0)

    s = step("download", cmd_download, "fetch a URL (resumable, verified, retried) or copy a mirror file",
             options("out"))
    s.add_argument("--source", required=True, help="URL, or a local path (a mirror)")
    s.add_argument("--out", required=True)
    s.add_argument("--retries", type=int, default=5)
    s.add_argument("--backoff", type=float, default=2.0, help="first pause between attempts (seconds), doubling")
    s.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for any byte; an attempt bringing less than 1 KiB/s over as many seconds is "
                        "cut and retried (resumed)")

    s = step("split-corpus", cmd_split_corpus,
             "train/valid/test from extracted pairs: held-out films out of train, sampled valid and test, metadata",
             _split_files)
    s.add_argument("--corpus", required=True, help="output of extract-opensubtitles")
    s.add_argument("--heldout", nargs="*", default=[], help="held-out film lists (block lists, contrapro.json, ...)")
    s.add_argument("--metadata", help="output of mtcue omdb")
    s.add_argument("--out-dir", required=True, help="writes {train,valid,test}.jsonl here")
    s.add_argument("--valid-pairs", type=int, default=10_000)
    s.add_argument("--test-pairs", type=int, default=10_000)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--report", required=True, help="counts as JSON")

    s = step("evalset", cmd_evalset, "convert a downloaded evaluation set to what evaluation reads (docs/formats.md)",
             lambda a: [] if a.name == "iwslt22" else [a.out])  # iwslt22: a folder
    s.add_argument("--name", required=True, choices=["iwslt22", "eamt22", "contrapro", "lopes"])
    s.add_argument("--pair", required=True)
    s.add_argument("--inputs", nargs="+", required=True,
                   help="iwslt22: its five files (--split valid: the ten of the training data); eamt22: {split}.json; contrapro: contrapro.json and the Moses "
                        "de-en.txt.zip; lopes: current.src, current.trg, c5.context.src, c5.context.trg, "
                        "testset-en-fr.json")
    s.add_argument("--split", default="test", help="eamt22: valid (the official dev.json) or test; iwslt22: valid "
                   "(the official training data, both domains) or test")
    s.add_argument("--metadata", help="contrapro: OMDb metadata (mtcue omdb) for its films")
    s.add_argument("--out", required=True)

    s = step("corpus-stats", cmd_corpus_stats, "Table 1's counts of one corpus file, as a data record",
             options("out"))
    s.add_argument("--corpus", required=True)
    s.add_argument("--pair", required=True)
    s.add_argument("--source", required=True, choices=["synthetic", "opensubtitles"])
    s.add_argument("--omdb-summary", help="mtcue omdb's summary (whether a key was set, films found)")
    s.add_argument("--config-hash", required=True)
    s.add_argument("--study", required=True)
    s.add_argument("--out", required=True)

    s = step("spm-train", cmd_spm_train, "train a joint SentencePiece model for a direction",
             lambda a: [a.model_file, Path(a.model_file).with_suffix(".vocab")])
    s.add_argument("--corpus", required=True, help="cleaned training corpus (JSONL)")
    s.add_argument("--direction", required=True)
    s.add_argument("--model-file", required=True, help="output .model path (.vocab is written beside it)")
    s.add_argument("--vocab-size", type=int, required=True)
    s.add_argument("--model-type", default="bpe", choices=["bpe", "unigram"])
    s.add_argument("--character-coverage", type=float, default=1.0)

    s = step("spm-encode", cmd_spm_encode, "segment one split into {prefix}.{src} and {prefix}.{tgt}",
             lambda a: [f"{a.out_prefix}.{lang}" for lang in langs_of(a.direction)])
    s.add_argument("--model-file", required=True)
    s.add_argument("--corpus", required=True)
    s.add_argument("--direction", required=True)
    s.add_argument("--out-prefix", required=True)

    s = step("binarise", cmd_binarise, "fairseq-preprocess with a joined dictionary")
    s.add_argument("--prepared", required=True, help="folder with {train,valid,test}.{src,tgt}")
    s.add_argument("--direction", required=True)
    s.add_argument("--dest", required=True)
    s.add_argument("--workers", type=_workers, default=1,
                   help="fairseq-preprocess's processes (at most the CPUs this process may use, more are capped)")
