"""Scoring of detokenised hypotheses: BLEU, phenomenon accuracy, paired bootstrap (BLEU, COMET).

Reads plain files only (hypotheses, cleaned corpus JSONL); knows nothing of fairseq.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sacrebleu.metrics import BLEU

from mtcue.corpus import marker_tokens, read_corpus
from mtcue.io import read_text_lines

# Per-segment statistics layout, as sacrebleu lays them out:
# [hyp_len, ref_len, correct_1..correct_4, total_1..total_4].
Stats = list[int]
# Per-segment statistics of any metric (rows: segments) whose corpus score is a function of
# their column sums: BLEU's Stats, or `mean_stats` of per-segment COMET scores.
SegmentStats = Sequence[Sequence[float]] | np.ndarray
CorpusScore = Callable[[np.ndarray], float]  # summed segment statistics -> corpus score
ALL = "all"  # key of the micro-average over phenomena


def _metric() -> BLEU:
    # sacrebleu defaults: 13a tokenizer, exp smoothing, mixed case.
    return BLEU()


def bleu_from_stats(summed: Sequence[float]) -> float:
    """Corpus BLEU from summed segment statistics, exactly as sacrebleu aggregates."""
    metric = _metric()
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


def mean_stats(segment_scores: Sequence[float]) -> np.ndarray:
    """Statistics of a segment-averaged metric (COMET): [score, 1] per segment, so that a sum
    over any resample holds the total score and the number of segments."""
    scores = np.asarray(segment_scores, dtype=float)
    return np.column_stack([scores, np.ones_like(scores)])


def mean_from_stats(summed: Sequence[float]) -> float:
    """Corpus score of a segment-averaged metric from summed `mean_stats`: the mean."""
    return float(summed[0] / summed[1])


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
        "bleu": bleu_from_stats(summed),
        "bleu_signature": str(metric.get_signature()),
        "bleu_stats": [int(x) for x in summed],
        "segment_stats": segments,
    }


def paired_bootstrap(
    stats_a: SegmentStats,
    stats_b: SegmentStats,
    corpus_score: CorpusScore = bleu_from_stats,
    n: int = 1000,
    seed: int = 12345,
    higher_is_better: bool = True,
) -> dict:
    """Paired bootstrap resampling (Koehn 2004) of a corpus metric for two systems on the same
    segments: BLEU by default, COMET with `mean_stats` and `mean_from_stats`.

    p_value is the share of resamples in which system A does NOT score strictly better than
    system B: A is better than B at level alpha when p_value <= alpha. Identical systems tie
    in every resample and get p_value 1.0.
    """
    a, b, score_a, score_b = _resampled_scores(stats_a, stats_b, corpus_score, n, seed)
    better = score_a > score_b if higher_is_better else score_a < score_b
    return {
        "score_a": corpus_score(a.sum(0)),
        "score_b": corpus_score(b.sum(0)),
        "p_value": float(1 - better.mean()),
        "n": n,
        "seed": seed,
    }


def _resampled_scores(stats_a: SegmentStats, stats_b: SegmentStats, corpus_score: CorpusScore, n: int, seed: int):
    """Both systems' segment statistics as arrays and their corpus scores on the same `n` resamples."""
    a = np.asarray(stats_a, dtype=float)
    b = np.asarray(stats_b, dtype=float)
    if a.shape != b.shape or a.ndim != 2 or len(a) == 0:
        raise ValueError(f"need equally many non-empty segment statistics, got {a.shape} and {b.shape}")
    counts = _resample_counts(len(a), n, seed)
    return a, b, np.array([corpus_score(s) for s in counts @ a]), np.array([corpus_score(s) for s in counts @ b])


def paired_bootstrap_ci(
    stats_a: SegmentStats,
    stats_b: SegmentStats,
    corpus_score: CorpusScore = bleu_from_stats,
    n: int = 1000,
    seed: int = 12345,
    alpha: float = 0.05,
) -> dict:
    """The difference A - B of a corpus metric and its (1 - alpha) percentile confidence interval over
    the same paired resamples as `paired_bootstrap` (resamples where a score is undefined, NaN, are
    left out of the interval)."""
    a, b, score_a, score_b = _resampled_scores(stats_a, stats_b, corpus_score, n, seed)
    diffs = score_a - score_b
    diffs = diffs[~np.isnan(diffs)]
    low, high = (np.quantile(diffs, [alpha / 2, 1 - alpha / 2]) if len(diffs) else (math.nan, math.nan))
    return {"difference": corpus_score(a.sum(0)) - corpus_score(b.sum(0)), "low": float(low), "high": float(high),
            "n": n, "seed": seed, "alpha": alpha}


def _resample_counts(m: int, n: int, seed: int) -> np.ndarray:
    """[n, m]: how often each of m segments is drawn in each of n bootstrap resamples. All resamples
    at once, as counts: the summed statistics of every resample are then one matrix product
    (n x m x k stays out of memory). The same (m, n, seed) draws the same resamples, so intervals of
    systems on the same segments are paired."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, m, size=(n, m)) + m * np.arange(n)[:, None]
    return np.bincount(idx.ravel(), minlength=n * m).reshape(n, m).astype(float)


def bootstrap_interval(stats: SegmentStats, corpus_score: CorpusScore, n: int = 1000, seed: int = 12345,
                       alpha: float = 0.05) -> tuple[float, float]:
    """The (1 - alpha) percentile interval of one system's corpus metric under bootstrap resampling of
    its segments (the resamples of paired_bootstrap and paired_bootstrap_ci, so the intervals of
    systems on the same segments are paired). Resamples whose score is undefined (NaN, e.g. nothing
    judged) are left out."""
    a = np.asarray(stats, dtype=float)
    if a.ndim != 2 or len(a) == 0:
        raise ValueError(f"need non-empty segment statistics, got shape {a.shape}")
    scores = np.array([corpus_score(s) for s in _resample_counts(len(a), n, seed) @ a], dtype=float)
    scores = scores[~np.isnan(scores)]
    if not len(scores):
        return float("nan"), float("nan")
    low, high = np.quantile(scores, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


@dataclass(frozen=True)
class BestAndTied:
    """The best system of a column and those statistically indistinguishable from it."""

    best: str
    tied: frozenset[str]  # p_value(best vs system) > alpha
    p_values: dict[str, float]  # best vs each other system


def indistinguishable_from_best(
    systems: Mapping[str, SegmentStats],
    corpus_score: CorpusScore = bleu_from_stats,
    alpha: float = 0.05,
    n: int = 1000,
    seed: int = 12345,
    higher_is_better: bool = True,
) -> BestAndTied:
    """The system with the best corpus score, and the systems it does not significantly beat
    (paired bootstrap of the best against each, p_value > alpha); ties on the corpus score
    go to the first system given."""
    if not systems:
        raise ValueError("no systems to compare")
    scores = {name: corpus_score(np.asarray(s, dtype=float).sum(0)) for name, s in systems.items()}
    sign = 1 if higher_is_better else -1
    best = max(scores, key=lambda name: sign * scores[name])
    p_values = {
        name: paired_bootstrap(systems[best], s, corpus_score, n, seed, higher_is_better)["p_value"]
        for name, s in systems.items()
        if name != best
    }
    return BestAndTied(best, frozenset(name for name, p in p_values.items() if p > alpha), p_values)


def outcome(shows_gold: bool, shows_other: bool) -> str:
    """The EAMT22 rule: correct when the hypothesis shows the requested value and no other, incorrect
    when it shows another and not the requested one, ignored otherwise."""
    if shows_gold and not shows_other:
        return "correct"
    if shows_other and not shows_gold:
        return "incorrect"
    return "ignored"


def judge_markers(tokens: set[str], gold: str, markers: Mapping[str, Sequence[str]]) -> str:
    """`outcome` of a hypothesis (its marker tokens) against the marker words of each value."""
    return outcome(any(m in tokens for m in markers.get(gold, ())),
                   any(m in tokens for value, ms in markers.items() if value != gold for m in ms))


def with_accuracy(counts: dict[str, int]) -> dict:
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
            judged = judge_markers(tokens, label["gold"], label["markers"])
            c = counts.setdefault(phenomenon, {"correct": 0, "incorrect": 0, "ignored": 0})
            c[judged] += 1
    if ALL in counts:
        raise ValueError(f"a phenomenon may not be called {ALL!r}")
    result = {p: with_accuracy(c) for p, c in sorted(counts.items())}
    total = {k: sum(c[k] for c in counts.values()) for k in ("correct", "incorrect", "ignored")}
    result[ALL] = with_accuracy(total)
    return result


def read_lines(path: Path) -> list[str]:
    # Split on "\n" only: str.splitlines would also break on U+2028 etc. inside subtitles.
    return [line.removesuffix("\n").removesuffix("\r") for _, line in read_text_lines(path)]


def direction_langs(direction: str) -> tuple[str, str]:
    """(source, target) of a direction given on the command line (`--direction en-de`)."""
    langs = direction.split("-")
    if len(langs) != 2 or not all(langs):
        raise ValueError(f"--direction {direction!r} is not a language pair such as en-de")
    return langs[0], langs[1]


def read_hyps_and_corpus(hyp_path: str | Path, corpus_jsonl_path: str | Path, direction: str
                         ) -> tuple[list[str], list[dict]]:
    """A hypothesis file and the cleaned corpus of `direction` it translates, line for line (else ValueError)."""
    langs = direction_langs(direction)
    hyps = read_lines(Path(hyp_path))
    samples = list(read_corpus(corpus_jsonl_path))
    for lineno, sample in enumerate(samples, 1):  # read_corpus reads every line: lineno is the line
        if set(sample["text"]) != set(langs):
            raise ValueError(f"{corpus_jsonl_path}:{lineno}: a sample in {' and '.join(sorted(sample['text']))}, but "
                             f"the direction is {direction}: give the corpus of {direction}, or the corpus's own "
                             "direction (--direction)")
    if len(hyps) != len(samples):
        raise ValueError(
            f"line count mismatch: {hyp_path} has {len(hyps)} hypotheses, "
            f"{corpus_jsonl_path} has {len(samples)} samples"
        )
    return hyps, samples


def hyp_provenance(hyp_path: str | Path, hyps: list[str]) -> dict:
    """The record fields that tie scores to the exact hypothesis file."""
    return {"n_segments": len(hyps), "hyp_path": str(hyp_path),
            "hyp_sha256": hashlib.sha256(Path(hyp_path).read_bytes()).hexdigest()}


def score_files(hyp_path: str | Path, corpus_jsonl_path: str | Path, direction: str) -> dict:
    """Score a detokenised hypothesis file against the cleaned corpus of its direction.

    Returns the fields of a score record: bleu, bleu_signature, bleu_stats, segment_stats,
    phenomena, n_segments, hyp_path, hyp_sha256.
    """
    hyps, samples = read_hyps_and_corpus(hyp_path, corpus_jsonl_path, direction)
    tgt = direction_langs(direction)[1]
    refs = [s["text"][tgt] for s in samples]
    labels = [(s.get("labels") or {}).get(tgt) for s in samples]
    return {
        **bleu(hyps, refs),
        "phenomena": phenomenon_accuracy(hyps, labels),
        **hyp_provenance(hyp_path, hyps),
    }
