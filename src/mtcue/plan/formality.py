"""The IWSLT22 zero-shot formality experiment (formality.smk, Table 5): its directions and prompts.
"""
from __future__ import annotations

from mtcue.plan.experiments import experiment_models
from mtcue.study import pair_of



def formality_directions(cfg: dict) -> list[str]:
    """The directions of the IWSLT22 zero-shot test (null: the paper's en-de and en-ru, where run)."""
    chosen = cfg["experiments"]["formality"]["directions"]
    return [d for d in ("en-de", "en-ru") if d in cfg["directions"]] if chosen is None else chosen


def formality_prompts(cfg: dict) -> list[dict]:
    """The zero-shot prompts, each {"id" (f0.., i0..: file names), "attribute", "text"}."""
    return [{"id": f"{attribute[0]}{i}", "attribute": attribute, "text": text}
            for attribute in ("formal", "informal")
            for i, text in enumerate(cfg["experiments"]["formality"]["prompts"][attribute])]


def targets(cfg: dict) -> dict[str, list[str]]:
    """The IWSLT22 formality records (`records`) of the experiment's models (`models`)."""
    models = experiment_models(cfg)["formality"]
    return {"models": models,
            "records": [f"results/records/formality/{d}/{m}.json" for d in formality_directions(cfg) for m in models]}


def chosen_on_valid(cfg: dict, direction: str) -> bool:
    """Whether Table 5 chooses each model's best prompt in `direction` on a validation set: the embedded
    default's valid split (data.smk); at paper scale IWSLT22's training data where the pair has some
    (evaluation_sets.iwslt22.valid_pairs: en-de), else (en-ru, a zero-shot pair in IWSLT22) the test set (the
    record says which, `chosen_on`). Table 6's IWSLT22 column reads the same validation translations, scored on
    their own (`formality_score_valid`), and needs no test-set translations of its rows."""
    return (cfg["corpus"]["source"] != "opensubtitles"
            or pair_of(direction) in cfg["evaluation_sets"]["iwslt22"]["valid_pairs"])
