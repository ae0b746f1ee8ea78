"""What each cluster job of a study asks for (runtime in minutes, mem_mb, CPUs) and where it goes, from the study's
own figures and the config's `slurm` keys (docs/paper-scale.md, "The cluster jobs" and "The cluster's own limits"):
the rules' `resources:` and `threads:` read it, so the SLURM profile names no rule.

A training asks its GPU hours (`plan.gpu_hours`: the paper's Table 3, i.e. the paper's model sizes on the
paper's corpus) times the study's size against the paper's: the training sentences of a direction (Table 1's
mean; a synthetic corpus: its documents times the generator's mean lines per document; OpenSubtitles counts
as the paper's) times the weights a token passes through (MTCUE's against the paper's MTCUE), in as many jobs of
at most slurm.max_minutes as it needs. An evaluation step asks its work: the test split's lines times a line's
cost in training steps of its model. Embedding and preparation ask the paper-scale figures times the same size.
Every request is at least its floor (a toy study asks minutes, not hours) and at most the site's longest job.
"""
from __future__ import annotations

import math
from statistics import mean

from mtcue.plan.gpu_hours import paper_sentences, table3, train_weights, training_cost
from mtcue.plan.models import model_spec
from mtcue.study import LINES_PER_DOCUMENT

# The paper's MTCUE (config/paper.yaml: d = 512, FFN 2048, 6 + 6 + 6 layers, 32,000 pieces): the weights one
# training token passes through, the size Table 3's hours are for (tests/test_cluster_plan.py checks it).
PAPER_MTCUE_WEIGHTS = 85_590_016
TRAIN_MARGIN = 1.25  # over the expected hours: Table 3's sd is about half its mean
TRAIN_FLOOR = 20  # minutes: a model process's start, a few epochs of a toy corpus on a shared node
# Data-loader processes beside a training's main process (fairseq --num-workers), per GPU, for a training of an
# hour or more; a shorter one would spend more starting them than they save.
LOADER_WORKERS = 3
# {kind: (runtime minutes, mem_mb, mem_mb at least)} at the paper's size (not derived from Table 3: the embedding of
# every context string, the preparation of a pair's 5-15 M lines); a step that loads no model asks less at a toy
# size. Every study asks at least FLOOR's minutes and memory but where a step says less.
PAPER_STEPS = {"embed": (480, 16000, 2000),       # every context string of the directions reading one encoder
               "measure": (60, 16000, 2000),      # the memory figure: a decoding and a training step per model
               "prepare": (120, 16000, 1000),     # cleaning, SentencePiece, binarising, stores of one pair
               "score": (10, 2000, 1000)}         # BLEU and friends of a test set: seconds
FLOOR = {"runtime": 5, "mem_mb": 2000}
# A training's memory-mapped binarised corpus and context store index at the paper's size.
TRAIN_MEM_MB = 32000
# Evaluation, from its work: the lines it reads times a line's cost in training steps of the same model (a step:
# Table 3's hours per epoch over the paper's sentences, times the model's weights against MTCUE's). Beam search
# runs the decoder once per target token for each hypothesis, in small batches: about 4 steps per hypothesis
# (fairseq decodes a few hundred sentences a second with beam 5 on an A100 where it trains a few thousand).
# Forced decoding is a forward pass per scored line (a third of a step, counted whole for its small batches):
# context usage scores each line with and without its context, a contrastive suite each example's correct and
# up to three contrastive translations (ContraPro: 12,000 examples, about a test split); the attention and
# grouping analyses read each line once, on one CPU thread of the evaluation job (CPU_SLOWDOWN times a GPU's
# time).
STEPS_PER_HYPOTHESIS = 4
FORCED_PASSES = {"context": 2, "contrastive": 4, "attention": 1, "groupings": 1}
ON_CPU = {"attention", "groupings"}
CPU_SLOWDOWN = 30
# COMET's encoder (XLM-R large for wmt20-comet-da) reads source, hypothesis and reference: lines a second on
# one GPU, and the memory its weights take; a model not listed is counted as wmt20-comet-da.
COMET_LINES_PER_S = 50
COMET_MEM_MB = {"Unbabel/eamt22-cometinho-da": 2000}  # COMETINHO's MiniLM encoder (the tiny study's)
COMET_DEFAULT_MEM_MB = 16000
EVAL_START_MINUTES = 3  # a step's process start, its model's and data's loading
EVAL_MARGIN = 2  # over the work: estimates, not measurements (docs/paper-scale.md)
EVAL_MEM_MB = 16000  # a decoding's model, corpus and context store at the paper's size


def data_scale(cfg: dict) -> float:
    """A direction's training sentences against the paper's (1 for OpenSubtitles, whose size is known only
    after extraction)."""
    if cfg["corpus"]["source"] == "opensubtitles":
        return 1.0
    return min(1.0, cfg["corpus"]["docs"]["train"] * mean(LINES_PER_DOCUMENT) / paper_sentences())


def weights_scale(cfg: dict) -> float:
    """The weights a token passes through in the study's MTCUE against the paper's (its first direction; 1
    without an MTCUE)."""
    spec = model_spec(cfg, "mtcue", cfg["directions"][0]) if "mtcue" in cfg["models"] else None
    return train_weights(spec, cfg["spm"]["vocab_size"]) / PAPER_MTCUE_WEIGHTS if spec else 1.0


def size_scale(cfg: dict) -> float:
    """The study's size against the paper's: its data times its MTCUE's weights."""
    return min(1.0, data_scale(cfg) * weights_scale(cfg))


def epoch_hours(cfg: dict, model: str, direction: str) -> float:
    """GPU hours of one epoch of `model` over the paper's corpus at the study's model size: plan.gpu_hours' (Table
    3) times the study's MTCUE against the paper's; without an MTCUE to scale from, the paper's MTCUE per epoch,
    weight for weight."""
    if "mtcue" in cfg["models"]:
        return training_cost(cfg, model, direction)["gpu_h_per_epoch"] * weights_scale(cfg)
    spec = model_spec(cfg, model, direction)
    return table3()["mtcue"]["gpu_h_per_epoch"] * train_weights(spec, cfg["spm"]["vocab_size"]) / PAPER_MTCUE_WEIGHTS


def max_minutes(cfg: dict) -> int:
    """The site's longest job (slurm.max_minutes)."""
    return cfg["slurm"]["max_minutes"]


def _minutes(cfg: dict, minutes: float, floor: int) -> int:
    """`minutes` rounded up, at least the floor, at most the site's longest job."""
    return min(max_minutes(cfg), max(floor, math.ceil(minutes)))


def _request(paper: int, scale: float, floor: int, cap: int) -> int:
    """`paper` x `scale`, rounded up, at least the floor (or the paper's figure, if smaller), at most `cap`."""
    return max(min(floor, paper), min(cap, math.ceil(paper * scale)))


def training_hours(cfg: dict, model: str, direction: str) -> tuple[float, float]:
    """A training's GPU hours at the study's size: (expected, upper bound)."""
    if "mtcue" in cfg["models"]:
        cost, scale = training_cost(cfg, model, direction), size_scale(cfg)
        return cost["gpu_h"] * scale, cost["gpu_h_max"] * scale
    # No MTCUE to scale the others from (plan.gpu_hours): max_epoch epochs (an upper bound, as gpu_hours counts a
    # training from scratch).
    epochs = model_spec(cfg, model, direction)["training"]["max_epoch"]
    hours = epoch_hours(cfg, model, direction) * epochs * data_scale(cfg)
    return hours, hours


def training(cfg: dict, model: str, direction: str) -> dict:
    """One training's request: {runtime, mem_mb, threads, jobs}. Its expected hours with a margin in one job, at
    most the site's longest (slurm.max_minutes); `jobs`: how many such jobs its upper bound (max_epoch) with the
    margin, or the floor, needs, each resuming from checkpoint_last.pt where the last one was stopped; threads: per
    GPU, the main process and its data loaders."""
    expected, most = training_hours(cfg, model, direction)
    runtime = _minutes(cfg, TRAIN_MARGIN * expected * 60, TRAIN_FLOOR)
    return {"runtime": runtime,
            "mem_mb": _request(TRAIN_MEM_MB, data_scale(cfg), FLOOR["mem_mb"], TRAIN_MEM_MB),
            "threads": 1 + (LOADER_WORKERS if expected >= 1 else 0),
            "jobs": math.ceil(max(TRAIN_FLOOR, TRAIN_MARGIN * most * 60) / runtime)}


def step(cfg: dict, kind: str) -> dict:
    """An embedding, preparation or scoring job's request (PAPER_STEPS' kinds): {runtime, mem_mb}."""
    minutes, mem_mb, floor_mb = PAPER_STEPS[kind]
    scale = size_scale(cfg)
    return {"runtime": min(max_minutes(cfg), _request(minutes, scale, FLOOR["runtime"], minutes)),
            "mem_mb": _request(mem_mb, scale, floor_mb, mem_mb)}


def test_lines(cfg: dict) -> float:
    """The lines of a direction's test split (a bound on every evaluation set the study translates or scores)."""
    if cfg["corpus"]["source"] == "opensubtitles":
        return cfg["corpus"]["splits"]["test_pairs"]
    return cfg["corpus"]["docs"]["test"] * mean(LINES_PER_DOCUMENT)


def step_seconds(cfg: dict, model: str, direction: str) -> float:
    """GPU seconds of one training step of a line of `model` at the study's model size."""
    return epoch_hours(cfg, model, direction) * 3600 / paper_sentences()


def evaluation_work(cfg: dict, kind: str, model: str, direction: str) -> float:
    """The expected minutes of one evaluation step's work on the test split (`kind`: translate, comet, or
    FORCED_PASSES'), its start left out."""
    lines = test_lines(cfg)
    if kind == "comet":
        return lines / COMET_LINES_PER_S / 60
    passes = STEPS_PER_HYPOTHESIS * cfg["generation"]["beam"] if kind == "translate" else FORCED_PASSES[kind]
    return lines * passes * step_seconds(cfg, model, direction) * (CPU_SLOWDOWN if kind in ON_CPU else 1) / 60


def evaluation(cfg: dict, kind: str, model: str, direction: str) -> dict:
    """One evaluation step's request ({runtime, mem_mb}): its start and its work times a margin; memory, the
    decoding's at the study's size, or the COMET model's."""
    if kind == "comet":
        mem_mb = COMET_MEM_MB.get(cfg["evaluation"]["comet"]["model"], COMET_DEFAULT_MEM_MB)
    else:
        mem_mb = _request(EVAL_MEM_MB, size_scale(cfg), FLOOR["mem_mb"], EVAL_MEM_MB)
    minutes = EVAL_START_MINUTES + EVAL_MARGIN * evaluation_work(cfg, kind, model, direction)
    return {"runtime": _minutes(cfg, minutes, FLOOR["runtime"]), "mem_mb": mem_mb}


# The request kind of each step of a trained model's evaluation job (plan.evaluation's records by kind; a
# translation is "translate"); a score of files asks PAPER_STEPS' "score".
RECORD_REQUESTS = {"comet": "comet", "context_usage": "context", "contrastive": "contrastive", "attention": "attention",
                   "groupings": "groupings"}


def step_kinds(steps) -> list[str | None]:
    """The request kind of each step of an evaluation (`plan.evaluation.Evaluation`): "translate" for each
    translation, RECORD_REQUESTS' for each record (None: a score of files)."""
    return [*("translate" for _ in steps.translations), *(RECORD_REQUESTS.get(kind) for kind, _ in steps.records)]


def evaluation_job(cfg: dict, steps, model: str, direction: str) -> dict:
    """A trained model's evaluation job (`plan.evaluation.Evaluation`: its steps one after another in one process):
    the sum of its steps' runtimes and the most memory any of them asks, at most the site's longest job."""
    kinds = step_kinds(steps)
    requests = [evaluation(cfg, kind, model, direction) if kind else step(cfg, "score") for kind in kinds]
    return {"runtime": min(max_minutes(cfg), sum(r["runtime"] for r in requests)),
            "mem_mb": max(r["mem_mb"] for r in requests)}


def evaluation_hours(cfg: dict, steps, model: str, direction: str) -> float:
    """A trained model's evaluation job at its expected time (the calendar's figure; the requests add a margin):
    one process's start, then its steps' work one after another (`steps`: its `plan.evaluation.Evaluation`; None,
    a model no experiment evaluates: 0)."""
    if steps is None:
        return 0.0
    work = sum(evaluation_work(cfg, kind, model, direction) for kind in step_kinds(steps) if kind)
    return (EVAL_START_MINUTES + work) / 60


def site(cfg: dict) -> dict[str, dict]:
    """The SLURM resources that send a job to its partition and account: {"gpu": ..., "cpu": ...}, each with
    slurm_partition and slurm_account where the config names them (none: the cluster's default)."""
    s = cfg["slurm"]
    account = {"slurm_account": s["account"]} if s["account"] else {}
    return {where: {**({"slurm_partition": s[f"{where}_partition"]} if s[f"{where}_partition"] else {}), **account}
            for where in ("gpu", "cpu")}
