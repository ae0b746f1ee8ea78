"""Steps of the data stage: corpus generation, cleaning, SentencePiece and binarisation."""
from __future__ import annotations

import json
import logging
from pathlib import Path

log = logging.getLogger("mtcue")


def cmd_generate(a):
    from mtcue.data import synth

    synth.write_split(a.pair, a.split, a.docs, a.seed, a.out)


def cmd_clean(a):
    from mtcue.data.clean import clean_corpus

    stats = clean_corpus(a.input, a.output, a.max_chars)
    log.info("cleaned %s: %s", a.input, stats)
    if a.stats:
        Path(a.stats).write_text(json.dumps(stats, indent=2) + "\n")


def cmd_extract_opensubtitles(a):
    from mtcue.data.opensubtitles import Rules, extract

    report = extract(a.mirror, a.pair, a.out, a.films, a.stats, Rules(min_overlap=a.min_overlap, max_gap_s=a.max_gap))
    log.info("extracted %d pairs of %s from %d films; dropped links: %s; skipped link groups: %s",
             report["pairs"], a.pair, report["films"], report["dropped"], report["skipped_link_groups"])


def cmd_opus_synth(a):
    from mtcue.data.opus_synth import generate_mirror

    written = generate_mirror(a.out, a.pair, a.links, a.seed)
    log.info("wrote an OPUS-format copy of %d links in %d films to %s", written["links"], written["films"], a.out)


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


def register(step) -> None:
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

    s = step("extract-opensubtitles", cmd_extract_opensubtitles,
             "extract every aligned pair of one language pair from an OPUS OpenSubtitles v2018 copy (streaming)")
    s.add_argument("--mirror", required=True, help="OPUS copy: xml/{l1}-{l2}.xml.gz and xml/{lang}.zip or xml/{lang}/")
    s.add_argument("--pair", required=True, help="language pair, English first (en-de)")
    s.add_argument("--out", required=True, help="corpus-format JSONL, metadata empty")
    s.add_argument("--films", help="write the films' OPUS folder names (IMDb ids) here, one per line")
    s.add_argument("--stats", help="write the counts (kept, dropped and why, context resets) as JSON here")
    s.add_argument("--min-overlap", type=float, default=0.9, help="keep links with at least this overlap")
    s.add_argument("--max-gap", type=float, default=7.0, help="reset the context after a longer pause (seconds)")

    s = step("opus-synth", cmd_opus_synth, "write a generated OPUS-format OpenSubtitles copy (extraction benchmark)")
    s.add_argument("--out", required=True, help="folder to write xml/{lang}.zip and xml/{l1}-{l2}.xml.gz into")
    s.add_argument("--pair", default="en-de")
    s.add_argument("--links", type=int, required=True, help="number of alignment links")
    s.add_argument("--seed", type=int, default=1)

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
