"""The paper's Tables 3 and 4 (report.smk): the quality models trained and scored in every direction, and the
figures drawn from their records.
"""
from __future__ import annotations

from mtcue import layout
from mtcue.plan.registry import Experiment, Targets, register


def quality_models(cfg: dict) -> list[str]:
    """The models of Tables 3-4 (experiments.quality.models; by default every configured model)."""
    return cfg["experiments"]["quality"]["models"] or list(cfg["models"])


def inputs(cfg: dict) -> dict[str, list[str]]:
    """The records the tables and figures read: `scores`, `comets` (none when evaluation.comet.model is null)
    and `train` of the quality models in every direction."""
    models, directions, split = quality_models(cfg), cfg["directions"], cfg["evaluation"]["split"]
    records = lambda kind: [str(layout.record(kind, d, m, split)) for d in directions for m in models]
    return {"scores": records("score"), "comets": records("comet") if cfg["evaluation"]["comet"]["model"] else [],
            "train": [str(layout.train_record(d, m)) for d in directions for m in models]}


def targets(cfg: dict) -> Targets:
    """The score and COMET records, the tables and the figures where there is something to draw. Phenomena are
    labelled only by the synthetic corpus, and only from English: OpenSubtitles carries no labels, and at
    paper scale the contrastive suites (contrastive.smk) measure the same phenomena. A gain needs a second
    model."""
    records, directions = inputs(cfg), cfg["directions"]
    labelled = cfg["corpus"]["source"] == "synthetic" and any(d.startswith("en-") for d in directions)
    return Targets(
        records=[*records["scores"], *records["comets"]],
        tables=[path for table in ("table1_data", "table3_models", "table4_quality",
                                   *(["phenomena"] if labelled else [])) for path in layout.table_files(table)],
        figures=[layout.figure(figure, "svg") for figure in ("training_curves",
                                                             *(["phenomena_accuracy"] if labelled else []),
                                                             *(["bleu_gain"] if len(quality_models(cfg)) > 1 else []))])


register(Experiment(
    "quality", "Tables 3-4 (quality)", targets, names=quality_models,
    trains=lambda cfg: [(d, m) for m in quality_models(cfg) for d in cfg["directions"]]))
