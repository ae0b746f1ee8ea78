"""The paper's Tables 3 and 4 (report.smk): the quality models trained and scored in every direction, and the
figures drawn from their records.
"""
from __future__ import annotations

from mtcue.plan.experiments import experiment_models


def targets(cfg: dict) -> dict[str, list[str]]:
    """`scores`, `comets` (none when evaluation.comet.model is null) and `train` records of the quality
    models, the `tables` and the `figures` where there is something to draw. Phenomena are labelled only by
    the synthetic corpus, and only from English: OpenSubtitles carries no labels, and at paper scale the
    contrastive suites (contrastive.smk) measure the same phenomena. A gain needs a second model."""
    models, directions, split = experiment_models(cfg)["quality"], cfg["directions"], cfg["evaluation"]["split"]
    records = lambda kind: [f"results/records/{kind}/{d}/{m}.{split}.json" for d in directions for m in models]
    labelled = cfg["corpus"]["source"] == "synthetic" and any(d.startswith("en-") for d in directions)
    return {
        "scores": records("score"),
        "comets": records("comet") if cfg["evaluation"]["comet"]["model"] else [],
        "train": [f"results/records/train/{d}/{m}.json" for d in directions for m in models],
        "tables": [f"results/tables/{table}.{ext}" for table in ("table1_data", "table3_models", "table4_quality",
                                                                 *(["phenomena"] if labelled else []))
                   for ext in ("csv", "md", "html")],
        "figures": ["results/figures/training_curves.svg",
                    *(["results/figures/phenomena_accuracy.svg"] if labelled else []),
                    *(["results/figures/bleu_gain.svg"] if len(models) > 1 else [])],
    }
