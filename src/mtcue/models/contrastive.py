"""Forced decoding of a contrastive suite's candidates with a trained model (mtcue score-contrastive)."""
from __future__ import annotations

from pathlib import Path

from mtcue.study import langs_of


def score_suite(model_dir: str | Path, examples: list[dict], batch_size: int = 64, threads: int | None = None
                ) -> tuple[str, list[list[tuple[float, int]]]]:
    """(direction, per example and candidate (summed log-prob, tokens)): every candidate force-decoded by the
    model in `model_dir` with the example's own context (its previous lines, metadata and cues)."""
    import torch

    from mtcue.models.translator import Translator

    if threads:
        torch.set_num_threads(threads)
    translator = Translator.load(model_dir)
    src, tgt = langs_of(translator.direction)
    # The target side of the corpus format is left out: each candidate fills it in turn.
    samples = [{**ex, "text": {src: ex["text"][src]}, "previous": {src: ex["previous"].get(src, [])}}
               for ex in examples]
    for i, ex in enumerate(examples):
        if src not in ex["text"]:
            raise ValueError(f"example {i + 1} ({ex['id']}): no '{src}' source text for a {translator.direction} model")
    with torch.no_grad():
        return translator.direction, translator.score_samples(samples, [ex["candidates"] for ex in examples],
                                                              batch_size)
