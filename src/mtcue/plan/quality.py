"""The paper's Tables 1, 3 and 4 (their rules tables.smk's, the figures' figures.smk's): the quality models trained
and scored in every direction, and the figures drawn from their records.
"""
from __future__ import annotations

from mtcue import layout
from mtcue.plan.experiments import bootstrap
from mtcue.plan.registry import TABLE_OUTPUTS, Experiment, Option, Section, Step, Table, Targets, register
from mtcue.study import pairs


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
    paper scale the contrastive suites (experiments/contrastive/rules.smk) measure the same phenomena. A gain needs a second
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


# `mtcue table`, the step of all four tables (--kind), its --records of the kind's record kind
STEP = Step("table", "assemble a table from records", "mtcue.reporting.quality:write_table_of_kind", (
    Option("--kind", choices=("quality", "phenomena", "models", "data"), default="quality",
           help="quality: BLEU, COMET and phenomena with significance marks (paper Table 4); phenomena: per-phenomenon "
                "accuracy; models: sizes and training time (paper Table 3); data: pairs and context shares (paper "
                "Table 1, from data records)"),
    Option("--records", records="any", required=True,
           help="score records (train records for --kind models, data records for --kind data)"),
    Option("--comet-records", records="comet", help="quality: COMET records of the same hypotheses"),
    Option("--train-records", records="train", linked=False,
           help="quality: train records, for footnotes on the context encoders")), bootstrap=True)

TABLES = (
    Table("table3_models", "Table 3: models, sizes and training time",
          "mtcue table --kind models --records {input.train:q} " + TABLE_OUTPUTS,
          lambda cfg: {"train": inputs(cfg)["train"]}, step=STEP),
    Table("table4_quality", "Table 4: translation quality",
          "mtcue table --records {input.score:q} --comet-records {input.comet:q} --train-records {input.train:q} "
          "--bootstrap-samples {params.bootstrap[samples]:q} --alpha {params.bootstrap[alpha]:q} " + TABLE_OUTPUTS,
          lambda cfg: {"score": inputs(cfg)["scores"], "comet": inputs(cfg)["comets"], "train": inputs(cfg)["train"]},
          bootstrap, step=STEP),
    Table("phenomena", "Phenomena: accuracy per phenomenon",
          "mtcue table --kind phenomena --records {input.score:q} " + TABLE_OUTPUTS,
          lambda cfg: {"score": inputs(cfg)["scores"]}, step=STEP),
    # Table 1 reads every pair's data record (corpus_stats), its benchmark beside the others' folder
    Table("table1_data", "Table 1: the data", "mtcue table --kind data --records {input:q} " + TABLE_OUTPUTS,
          lambda cfg: {"records": [str(layout.study_record("data", pair)) for pair in pairs(cfg)]},
          benchmark=("table1_data",), step=STEP),
)

register(Experiment(
    "quality", "Tables 3-4 (quality)", targets, names=quality_models,
    trains=lambda cfg: [(d, m) for m in quality_models(cfg) for d in cfg["directions"]], tables=TABLES,
    sections=(Section("mtcue.reporting.readme_sections:bleu_section", 10, headline=True, bootstrap=True),
              Section("mtcue.reporting.readme_sections:phenomena_section", 11),
              Section("mtcue.reporting.readme_sections:models_section", 12))))
