"""Subword segmentation (SentencePiece BPE per direction) and fairseq binarisation."""
from __future__ import annotations

import logging
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import sentencepiece as spm

from mtcue.corpus import read_corpus
from mtcue.io import write_lines
from mtcue.outputs import atomic_directory
from mtcue.study import langs_of

log = logging.getLogger(__name__)
SPLITS = ("train", "valid", "test")
# Header of fairseq's mmap index (`{split}.{src}-{tgt}.{lang}.idx`, fairseq.data.indexed_dataset):
# magic, version (u64, 1), dtype code (u8), number of sentences (u64). Read here so that counting
# a split does not import fairseq (seconds).
_IDX_MAGIC = b"MMIDIDX\x00\x00"
_IDX_HEADER = struct.Struct("<9sQBQ")


def train_spm(train_corpus: str | Path, direction: str, model_path: str | Path, vocab_size: int,
              model_type: str = "bpe", character_coverage: float = 1.0) -> None:
    """Train one joint SentencePiece model on both sides of the training corpus.

    Writes `model_path` (`.model`) and the matching `.vocab` only once training succeeded.
    BPE training is deterministic for a given input, so no seed is needed.
    """
    model_path = Path(model_path)
    model_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=model_path.parent) as tmp:
        text = Path(tmp) / "text.txt"
        n = write_lines(text, (s["text"][lang] for s in read_corpus(train_corpus) for lang in langs_of(direction)))
        log.info("training SentencePiece %s (vocab %d) on %d lines", model_type, vocab_size, n)
        prefix = Path(tmp) / "spm"
        spm.SentencePieceTrainer.train(
            input=str(text), model_prefix=str(prefix), vocab_size=vocab_size, model_type=model_type,
            character_coverage=character_coverage, hard_vocab_limit=False,
            # fairseq adds its own <s>, <pad>, </s>, <unk>; keep SentencePiece's out of the text.
            bos_id=-1, eos_id=-1, unk_id=0, num_threads=1, minloglevel=2)
        os.replace(f"{prefix}.vocab", model_path.with_suffix(".vocab"))
        os.replace(f"{prefix}.model", model_path)


def encode_split(spm_model: str | Path, corpus: str | Path, direction: str, out_prefix: str | Path) -> int:
    """Write `{out_prefix}.{src}` and `{out_prefix}.{tgt}`: one line of pieces per sample."""
    processor = spm.SentencePieceProcessor(model_file=str(spm_model))
    samples = list(read_corpus(corpus))
    for lang in langs_of(direction):
        write_lines(f"{out_prefix}.{lang}",
                    (" ".join(processor.encode(s["text"][lang], out_type=str)) for s in samples))
    return len(samples)


def binarise(prepared_prefix: str | Path, direction: str, dest_dir: str | Path, workers: int = 1) -> None:
    """fairseq-preprocess with a joined dictionary; `dest_dir` appears only when complete.

    `prepared_prefix` is the folder holding `{split}.{lang}` files from `encode_split`.
    """
    src, tgt = langs_of(direction)
    prefix = Path(prepared_prefix)
    with atomic_directory(dest_dir, "binarise") as tmp:
        cmd = [sys.executable, "-m", "fairseq_cli.preprocess", "--source-lang", src, "--target-lang", tgt,
               *(arg for split in SPLITS for arg in (f"--{split}pref", str(prefix / split))),
               "--destdir", str(tmp), "--joined-dictionary", "--workers", str(workers)]
        log.info("running %s", " ".join(cmd))
        subprocess.run(cmd, check=True)


def binarised_size(data_bin: str | Path, direction: str, split: str) -> tuple[int, Path]:
    """(number of sentences, index file) of one binarised split's source side."""
    src, tgt = langs_of(direction)
    idx = Path(data_bin) / f"{split}.{src}-{tgt}.{src}.idx"
    try:
        with idx.open("rb") as handle:
            magic, version, _, size = _IDX_HEADER.unpack(handle.read(_IDX_HEADER.size))
    except FileNotFoundError:
        raise FileNotFoundError(f"{idx}: no binarised {split} split of {direction} (run the binarise step)") from None
    except struct.error:
        raise ValueError(f"{idx}: truncated fairseq index; rerun the binarise step") from None
    if magic != _IDX_MAGIC or version != 1:
        raise ValueError(f"{idx}: not a fairseq mmap index (version 1); rerun the binarise step")
    return size, idx
