"""Forced decoding of a contrastive suite's candidates with a trained model (mtcue score-contrastive)."""
from __future__ import annotations

from pathlib import Path

from mtcue.study import langs_of
from mtcue.suites import check_direction, read_suite


def score_suite(model_dir: str | Path, suite: str | Path, batch_size: int = 64, threads: int | None = None
                ) -> tuple[str, list[dict], list[list[tuple[float, int]]]]:
    """(direction, the suite's examples, per example and candidate (summed log-prob, tokens)): every candidate
    of the suite file `suite` force-decoded by the model in `model_dir` with the example's own context (its
    previous lines, metadata and cues). The suite is checked before the model loads, and must be of the
    model's language pair."""
    import torch

    from mtcue.models.translator import Translator

    examples = read_suite(suite)
    if threads:
        torch.set_num_threads(threads)
    translator = Translator.load(model_dir)
    check_direction(examples, translator.direction, suite)
    src = langs_of(translator.direction)[0]
    # The target side of the corpus format is left out: each candidate fills it in turn.
    samples = [{**ex, "text": {src: ex["text"][src]}, "previous": {src: ex["previous"][src]}} for ex in examples]
    # Identical candidates of an example (the official ellipsis sets repeat the correct one) are scored once and
    # share the score: scored apart, batch composition moves each by ~1e-6, and whether they tie would depend on it.
    distinct = [list(dict.fromkeys(ex["candidates"])) for ex in examples]
    with torch.no_grad():
        scores = translator.score_samples(samples, distinct, batch_size)
    return translator.direction, examples, [[dict(zip(d, s))[c] for c in ex["candidates"]]
                                            for ex, d, s in zip(examples, distinct, scores)]
