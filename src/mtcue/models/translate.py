"""Beam-search translation of a binarised split with fairseq-generate (in-process, mtcue.models.fairseq_run)."""
from __future__ import annotations

import logging
import re
from pathlib import Path

from mtcue.data.prepare import binarised_size
from mtcue.io import write_lines
from mtcue.models import fairseq_args as fa
from mtcue.models import fairseq_run
from mtcue.models.checkpoints import check_checkpoint

log = logging.getLogger(__name__)
_HYPOTHESIS = re.compile(r"^D-(\d+)\t[^\t]*\t(.*)$")


def parse_generate_output(text: str, n_expected: int) -> list[str]:
    """Detokenised hypotheses in corpus order from fairseq-generate's `D-<id>` lines."""
    hyps: dict[int, str] = {}
    for line in text.splitlines():
        match = _HYPOTHESIS.match(line)
        if match:
            hyps[int(match.group(1))] = match.group(2)
    missing = sorted(set(range(n_expected)) - set(hyps))
    unexpected = sorted(set(hyps) - set(range(n_expected)))
    if missing or unexpected:
        raise RuntimeError(f"fairseq-generate returned {len(hyps)} hypotheses for {n_expected} samples "
                           f"(missing ids: {missing[:10]}, unexpected ids: {unexpected[:10]}; first ten of each)")
    return [hyps[i] for i in range(n_expected)]


def check_split_matches_corpus(data_bin: Path, direction: str, split: str, corpus: Path, n_samples: int) -> None:
    """Refuse, before translating, a corpus that is not the binarised split's (e.g. another split)."""
    n_binarised, idx = binarised_size(data_bin, direction, split)
    if n_binarised != n_samples:
        raise ValueError(f"the binarised {split} split ({idx}) has {n_binarised} sentences but the corpus "
                         f"{corpus} has {n_samples}: give --corpus the cleaned corpus of the {split} split "
                         f"(results/clean/{{pair}}/{split}.jsonl), or the --split of that corpus")


def translate(spec: dict, direction: str, data_bin: Path, checkpoint: Path, split: str, n_samples: int,
              out_path: Path, generation: dict, context_dir: Path | None = None, threads: int = 1) -> int:
    import torch

    check_checkpoint(checkpoint, "the model's checkpoint")
    args = [*fa.task_args(spec, direction, data_bin, context_dir),
            "--path", str(checkpoint), "--gen-subset", split, *fa.generation_args(generation),
            "--remove-bpe", "sentencepiece",
            "--num-workers", "0", "--seed", str(spec["seed"])]
    args += [] if torch.cuda.is_available() else ["--cpu"]
    log.info("fairseq-generate %s", " ".join(args))
    hyps = parse_generate_output(fairseq_run.generate(args, threads, n_samples), n_samples)
    write_lines(out_path, hyps)
    log.info("wrote %d hypotheses to %s", len(hyps), out_path)
    return len(hyps)
