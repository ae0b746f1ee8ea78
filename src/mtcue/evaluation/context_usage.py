"""Context usage: conditional cross-mutual information, CXMI (Fernandes et al. 2021, neulab/contextual-mt).

CXMI(C -> Y | X) = H(Y | X) - H(Y | X, C): how much better one model predicts the reference Y of a source
X when it reads the context C than when it does not. As contextual-mt's docmt_cxmi.py measures it, the
same model scores each reference twice, with its real context and with none, each sentence's score being
fairseq's SequenceScorer score (the mean log-probability per target token, end of sentence included); a
sentence's CXMI is the difference, the model's CXMI their mean over the test sentences; P-CXMI per token
(Fernandes et al.'s pointwise measure) the difference of each reference token's log-probability. Positive: the
context helps predict the reference; 0: the model does not read it (a model without context gives
exactly 0, its two passes being the same computation).

"Without context" is the sample with its context removed (no previous lines, no metadata, no cues), as a
document's first line with no metadata is given; what each kind of model then reads is in
`WITHOUT_CONTEXT`. The sentence itself (a vector model's doc0) is the source X, not context, and stays.

`cxmi` and `measure` compute from scores; `measure_model` makes them by forced decoding
(Translator.score_samples, the contrastive scorer's path).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from mtcue.evaluation.score import ALL, bootstrap_interval, mean_from_stats, mean_stats

# What the model reads in the pass without context, by the kind of its context (the training spec's).
WITHOUT_CONTEXT = {
    "vectors": "every context column missing (masked), doc0 (the sentence itself) kept",
    "tags": "every tag column missing (masked)",
    "labels": "every label column missing (masked)",
    "tokens": "no previous line: an empty context sentence, as for a document's first line",
    None: "the same input (a model without context)",
}

# Per sentence: (summed log-probability, tokens scored), optionally with the log-probability of each token.
Scores = Sequence[tuple]


def without_context(sample: dict) -> dict:
    """The corpus-format sample with its context removed: no previous lines, metadata or cues."""
    return {**sample, "previous": {lang: [] for lang in sample.get("previous", {})},
            "meta": dict.fromkeys(sample.get("meta", {})), "cues": []}


def cxmi(with_context: Scores, no_context: Scores, phenomena: Sequence[Sequence[str]] | None = None) -> dict:
    """CXMI (nats per token) from each sentence's scores with and without context, overall and per
    phenomenon (`phenomena[i]`: the phenomena sentence i is labelled with); the two cross-entropies (nats
    per token, sentence means); each sentence's CXMI and phenomena (`sentence_cxmi`, `sentence_phenomena`),
    which the table resamples for its intervals (`interval`); where the scores hold each token's
    log-probability, each sentence's P-CXMI per token (`token_cxmi`)."""
    if len(with_context) != len(no_context):
        raise ValueError(f"{len(with_context)} sentences scored with context but {len(no_context)} without")
    if not with_context:
        raise ValueError("no sentences to measure context usage on")
    phenomena = [sorted(p) for p in phenomena] if phenomena is not None else [[] for _ in with_context]
    if len(phenomena) != len(with_context):
        raise ValueError(f"{len(phenomena)} phenomenon labels for {len(with_context)} sentences")
    if any(p == ALL for labels in phenomena for p in labels):
        raise ValueError(f"a phenomenon may not be called {ALL!r}")
    for (_, t_c, *_), (_, t_b, *_) in zip(with_context, no_context):
        if t_c != t_b or t_c < 1:
            raise ValueError(f"a reference scored as {t_c} tokens with context and {t_b} without: both passes must "
                             "score the same reference tokens")
    lp_context = np.array([s / t for s, t, *_ in with_context], dtype=float)
    lp_none = np.array([s / t for s, t, *_ in no_context], dtype=float)
    per_sentence = lp_context - lp_none
    if not np.isfinite(per_sentence).all():
        raise ValueError(f"sentence {int(np.argmin(np.isfinite(per_sentence))) + 1}: a score is not finite (NaN or "
                         "infinite): the model failed on its input with or without context")
    groups = sorted({p for labels in phenomena for p in labels})
    tokens = [[a - b for a, b in zip(c[2], n[2])] for c, n in zip(with_context, no_context)] \
        if all(len(c) == 3 for c in (*with_context, *no_context)) else None
    return {"n": len(per_sentence), "cxmi": float(per_sentence.mean()),
            "cross_entropy": {"context": float(-lp_context.mean()), "no_context": float(-lp_none.mean())},
            "phenomena": {p: {"n": len(rows), "cxmi": float(np.mean(rows))}
                          for p in groups for rows in [[x for x, ls in zip(per_sentence, phenomena) if p in ls]]},
            "sentence_cxmi": [float(x) for x in per_sentence], "sentence_phenomena": phenomena,
            **({"token_cxmi": tokens} if tokens is not None else {})}


def interval(record: dict, phenomenon: str | None = None, n: int = 1000, seed: int = 12345, alpha: float = 0.05
             ) -> tuple[float, float]:
    """The (1 - alpha) bootstrap interval of a CXMI result's mean (sentences resampled), over all its
    sentences or those labelled with `phenomenon`."""
    rows = [x for x, labels in zip(record["sentence_cxmi"], record["sentence_phenomena"])
            if phenomenon is None or phenomenon in labels]
    return bootstrap_interval(mean_stats(rows), mean_from_stats, n, seed, alpha)


def measure(score: Callable[[list[dict]], Scores], samples: list[dict], tgt: str) -> dict:
    """CXMI of the model behind `score` (corpus-format samples, their references filled in -> per sample
    (summed log-prob, tokens)) on `samples`: one pass with each sample's own context, one without."""
    missing = [s["id"] for s in samples if not isinstance(s["text"].get(tgt), str)]
    if missing:
        raise ValueError(f"sample {missing[0]}: no '{tgt}' reference to score ({len(missing)} samples without one)")
    phenomena = [sorted((s.get("labels") or {}).get(tgt) or {}) for s in samples]
    return cxmi(score(samples), score([without_context(s) for s in samples]), phenomena)


def measure_model(model_dir: str | Path, samples: list[dict], batch_size: int = 64, threads: int | None = None
                  ) -> tuple[str, dict, str]:
    """(direction, CXMI result, what the pass without context reads) of the trained model in `model_dir` on
    corpus-format `samples`, every reference force-decoded as the contrastive suites' candidates are."""
    import torch

    from mtcue.models.translator import Translator
    from mtcue.study import langs_of

    if threads:
        torch.set_num_threads(threads)
    translator = Translator.load(model_dir)
    src, tgt = langs_of(translator.direction)
    kind = translator.model.spec.get("context", {}).get("kind")

    def score(batch: list[dict]) -> Scores:
        # The reference is the one candidate; the sample's target side is left out, as for a suite.
        sources = [{**s, "text": {src: s["text"][src]}, "previous": {src: s["previous"].get(src, [])}} for s in batch]
        with torch.no_grad():
            return [c[0] for c in translator.score_samples(sources, [[s["text"][tgt]] for s in batch], batch_size,
                                                           per_token=True)]

    return translator.direction, measure(score, samples, tgt), WITHOUT_CONTEXT[kind]
