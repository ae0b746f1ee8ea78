"""What each cluster job of a study asks for (runtime in minutes, mem_mb, CPUs), from the study's own figures
(docs/paper-scale.md, "The SLURM profile's requests"): the rules' `resources:` and `threads:` read it, so the
SLURM profile names no rule.

A training asks its GPU hours (`plan.gpu_hours`: the paper's Table 3, i.e. the paper's model sizes on the
paper's corpus) times the study's size against the paper's: the training sentences of a direction (Table 1's
mean; a synthetic corpus: its documents times the generator's mean lines per document; OpenSubtitles counts
as the paper's) times the weights a token passes through (MTCUE's against the paper's MTCUE). Decoding,
scoring, embedding and preparation ask the profile's paper-scale figures times the same size. Every request
is at least its floor (a toy study asks minutes, not hours) and at most the paper's.
"""
from __future__ import annotations

import csv
import math
from statistics import mean

from mtcue.paper import PAPER_FIGURES
from mtcue.plan.gpu_hours import table3, train_weights, training_cost
from mtcue.plan.models import model_spec
from mtcue.study import LINES_PER_DOCUMENT

# The paper's MTCUE (config/paper.yaml: d = 512, FFN 2048, 6 + 6 + 6 layers, 32,000 pieces): the weights one
# training token passes through, the size Table 3's hours are for (tests/test_cluster_plan.py checks it).
PAPER_MTCUE_WEIGHTS = 85_590_016
# A job killed at its time limit is resubmitted (the profile's `retries: 2`) and resumes from
# checkpoint_last.pt: a training's upper bound must fit in this many jobs.
ATTEMPTS = 3
MAX_MINUTES = 2880  # 48 h, what most GPU partitions allow one job
TRAIN_MARGIN = 1.25  # over the expected hours: Table 3's sd is about half its mean
TRAIN_FLOOR = 20  # minutes: a model process's start, a few epochs of a toy corpus on a shared node
# Data-loader processes beside a training's main process (fairseq --num-workers) for a training of an hour
# or more; a shorter one would spend more starting them than they save.
LOADER_WORKERS = 3
# {kind: (runtime minutes, mem_mb)} at the paper's size (not derived from Table 3: decoding and encoding of
# the evaluation sets, the preparation of a pair's 5-15 M lines), and the floor every study asks at least.
PAPER_STEPS = {"decode": (240, 16000),      # beam search or forced decoding of an evaluation set
               "comet": (60, 16000),        # XLM-R large, whatever the study's size
               "embed": (480, 16000),       # every context string of the directions reading one encoder
               "prepare": (120, 16000),     # cleaning, SentencePiece, binarising, stores of one pair
               "score": (10, 2000)}         # BLEU and friends of a test set: seconds
FLOOR = {"runtime": 15, "mem_mb": 2000}
# A training's memory-mapped binarised corpus and context store index at the paper's size.
TRAIN_MEM_MB = 32000
COMET_MEM_MB = 16000


def paper_sentences() -> float:
    """The mean training sentence pairs of a direction in the paper's Table 1 (its GPU hours are that mean's)."""
    with open(PAPER_FIGURES / "mtcue_table1_data.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["field"] == "source_target_pairs")
    return mean(float(v.removesuffix("M")) * 1e6 for k, v in row.items() if k != "field")


def data_scale(cfg: dict) -> float:
    """A direction's training sentences against the paper's (1 for OpenSubtitles, whose size is known only
    after extraction)."""
    if cfg["corpus"]["source"] == "opensubtitles":
        return 1.0
    return min(1.0, cfg["corpus"]["docs"]["train"] * mean(LINES_PER_DOCUMENT) / paper_sentences())


def size_scale(cfg: dict) -> float:
    """The study's size against the paper's: its data times its MTCUE's weights (its first direction)."""
    spec = model_spec(cfg, "mtcue", cfg["directions"][0]) if "mtcue" in cfg["models"] else None
    weights = train_weights(spec, cfg["spm"]["vocab_size"]) / PAPER_MTCUE_WEIGHTS if spec else 1.0
    return min(1.0, data_scale(cfg) * weights)


def _request(paper: int, scale: float, floor: int, cap: int = MAX_MINUTES) -> int:
    """`paper` x `scale`, rounded up, at least the floor (or the paper's figure, if smaller), at most `cap`."""
    return max(min(floor, paper), min(cap, math.ceil(paper * scale)))


def training_hours(cfg: dict, model: str, direction: str) -> tuple[float, float]:
    """A training's GPU hours at the study's size: (expected, upper bound)."""
    if "mtcue" in cfg["models"]:
        cost, scale = training_cost(cfg, model, direction), size_scale(cfg)
        return cost["gpu_h"] * scale, cost["gpu_h_max"] * scale
    # No MTCUE to scale the others from (plan.gpu_hours): the paper's MTCUE per epoch, weight for weight, for
    # max_epoch epochs (an upper bound, as gpu_hours counts a training from scratch).
    spec = model_spec(cfg, model, direction)
    hours = (table3()["mtcue"]["gpu_h_per_epoch"] * train_weights(spec, cfg["spm"]["vocab_size"]) / PAPER_MTCUE_WEIGHTS
             * spec["training"]["max_epoch"] * data_scale(cfg))
    return hours, hours


def training(cfg: dict, model: str, direction: str) -> dict:
    """One training's request: {runtime, mem_mb, threads}. Its expected hours (with a margin) fit in one job,
    its upper bound (max_epoch) in ATTEMPTS jobs; threads: the main process and its data loaders."""
    expected, most = training_hours(cfg, model, direction)
    minutes = math.ceil(max(TRAIN_MARGIN * expected, most / ATTEMPTS) * 60)
    return {"runtime": max(TRAIN_FLOOR, min(MAX_MINUTES, minutes)),
            "mem_mb": _request(TRAIN_MEM_MB, data_scale(cfg), FLOOR["mem_mb"], TRAIN_MEM_MB),
            "threads": 1 + (LOADER_WORKERS if expected >= 1 else 0)}


def step(cfg: dict, kind: str) -> dict:
    """A decoding, scoring, embedding or preparation job's request (PAPER_STEPS' kinds): {runtime, mem_mb}."""
    minutes, mem_mb = PAPER_STEPS[kind]
    scale = size_scale(cfg)
    return {"runtime": _request(minutes, scale, FLOOR["runtime"]),
            # the COMET model's size, not the study's
            "mem_mb": COMET_MEM_MB if kind == "comet" else _request(mem_mb, scale, FLOOR["mem_mb"], mem_mb)}
