"""Scoring of detokenised hypotheses: BLEU, phenomenon accuracy, paired bootstrap.

Reads plain files only (hypotheses, cleaned corpus JSONL); knows nothing of fairseq.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from sacrebleu.metrics import BLEU

from mtcue.corpus import marker_tokens, read_corpus

# Per-segment statistics layout, as sacrebleu lays them out:
# [hyp_len, ref_len, correct_1..correct_4, total_1..total_4].
Stats = list[int]
ALL = "all"  # key of the micro-average over phenomena


def _metric() -> BLEU:
    # sacrebleu defaults: 13a tokenizer, exp smoothing, mixed case.
    return BLEU()


def _bleu_from_stats(metric: BLEU, summed: Sequence[float]) -> float:
    """Corpus BLEU from summed segment statistics, exactly as sacrebleu aggregates."""
    order = metric.max_ngram_order
    return BLEU.compute_bleu(
        correct=[int(c) for c in summed[2 : 2 + order]],
        total=[int(t) for t in summed[2 + order :]],
        sys_len=int(summed[0]),
        ref_len=int(summed[1]),
        smooth_method=metric.smooth_method,
        smooth_value=metric.smooth_value,
        effective_order=metric.effective_order,
        max_ngram_order=order,
    ).score


def _segment_stats(metric: BLEU, hyp: str, ref: str) -> Stats:
    # A one-segment corpus score is sacrebleu's public way to get the segment's n-gram
    # statistics (sentence_score would warn about effective order on every line).
    s = metric.corpus_score([hyp], [[ref]])
    return [s.sys_len, s.ref_len, *s.counts, *s.totals]


def bleu(hyps: list[str], refs: list[str]) -> dict:
    """Corpus BLEU with its signature and the per-segment statistics for significance tests."""
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    if not hyps:
        raise ValueError("cannot score an empty test set")
    metric = _metric()
    segments = [_segment_stats(metric, h, r) for h, r in zip(hyps, refs)]
    summed = np.asarray(segments, dtype=np.int64).sum(0)
    # The signature is read after scoring: sacrebleu learns the number of references then.
    return {
        "bleu": _bleu_from_stats(metric, summed),
        "bleu_signature": str(metric.get_signature()),
        "bleu_stats": [int(x) for x in summed],
        "segment_stats": segments,
    }


def paired_bootstrap(
    stats_a: Sequence[Stats], stats_b: Sequence[Stats], n: int = 1000, seed: int = 12345
) -> dict:
    """Paired bootstrap resampling (Koehn 2004) of BLEU for two systems on the same segments.

    p_value is the share of resamples in which system A does NOT score strictly higher than
    system B: A is better than B at level alpha when p_value <= alpha. Identical systems tie
    in every resample and get p_value 1.0.
    """
    a = np.asarray(stats_a, dtype=np.int64)
    b = np.asarray(stats_b, dtype=np.int64)
    if a.shape != b.shape or a.ndim != 2 or len(a) == 0:
        raise ValueError(f"need equally many non-empty segment statistics, got {a.shape} and {b.shape}")
    metric = _metric()
    rng = np.random.default_rng(seed)
    not_better = 0
    for _ in range(n):
        idx = rng.integers(0, len(a), size=len(a))
        if _bleu_from_stats(metric, a[idx].sum(0)) <= _bleu_from_stats(metric, b[idx].sum(0)):
            not_better += 1
    return {
        "bleu_a": _bleu_from_stats(metric, a.sum(0)),
        "bleu_b": _bleu_from_stats(metric, b.sum(0)),
        "p_value": not_better / n,
        "n": n,
        "seed": seed,
    }


def _judge(tokens: set[str], gold: str, markers: Mapping[str, Sequence[str]]) -> str:
    has_gold = any(m in tokens for m in markers.get(gold, ()))
    has_other = any(m in tokens for value, ms in markers.items() if value != gold for m in ms)
    if has_gold and not has_other:
        return "correct"
    if has_other and not has_gold:
        return "incorrect"
    return "ignored"


def _with_accuracy(counts: dict[str, int]) -> dict:
    judged = counts["correct"] + counts["incorrect"]
    return {**counts, "accuracy": counts["correct"] / judged if judged else None}


def phenomenon_accuracy(hyps: list[str], labels: list[Mapping | None]) -> dict[str, dict]:
    """Per-phenomenon correct/incorrect/ignored counts and accuracy, plus an "all" micro-average.

    labels[i] is sample i's labels for the target language ({phenomenon: {gold, markers}}),
    or None/{} when it has none. Rule in docs/formats.md section 1.
    """
    if len(hyps) != len(labels):
        raise ValueError(f"{len(hyps)} hypotheses but {len(labels)} label entries")
    counts: dict[str, dict[str, int]] = {}
    for hyp, sample_labels in zip(hyps, labels):
        tokens = marker_tokens(hyp)
        for phenomenon, label in (sample_labels or {}).items():
            outcome = _judge(tokens, label["gold"], label["markers"])
            c = counts.setdefault(phenomenon, {"correct": 0, "incorrect": 0, "ignored": 0})
            c[outcome] += 1
    if ALL in counts:
        raise ValueError(f"a phenomenon may not be called {ALL!r}")
    result = {p: _with_accuracy(c) for p, c in sorted(counts.items())}
    total = {k: sum(c[k] for c in counts.values()) for k in ("correct", "incorrect", "ignored")}
    result[ALL] = _with_accuracy(total)
    return result


def _read_lines(path: Path) -> list[str]:
    # Split on "\n" only: str.splitlines would also break on U+2028 etc. inside subtitles.
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def score_files(hyp_path: str | Path, corpus_jsonl_path: str | Path, direction: str) -> dict:
    """Score a detokenised hypothesis file against the cleaned corpus of its direction.

    Returns the fields of a score record: bleu, bleu_signature, bleu_stats, segment_stats,
    phenomena, n_segments, hyp_path, hyp_sha256.
    """
    hyp_path, corpus_jsonl_path = Path(hyp_path), Path(corpus_jsonl_path)
    tgt = direction.split("-")[1]
    hyps = _read_lines(hyp_path)
    samples = list(read_corpus(corpus_jsonl_path))
    if len(hyps) != len(samples):
        raise ValueError(
            f"line count mismatch: {hyp_path} has {len(hyps)} hypotheses, "
            f"{corpus_jsonl_path} has {len(samples)} samples"
        )
    refs = [s["text"][tgt] for s in samples]
    labels = [(s.get("labels") or {}).get(tgt) for s in samples]
    return {
        **bleu(hyps, refs),
        "phenomena": phenomenon_accuracy(hyps, labels),
        "n_segments": len(hyps),
        "hyp_path": str(hyp_path),
        "hyp_sha256": hashlib.sha256(hyp_path.read_bytes()).hexdigest(),
    }
