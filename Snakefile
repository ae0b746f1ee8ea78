# MTCue reproducibility pipeline (Vincent, Flynn and Scarton, Findings of ACL 2023).
#
#   corpus -> clean -> SentencePiece -> binarise ─┐
#                  └-> context embedding store ───┼-> train BASE -> train MTCue (from BASE)
#                                                 └-> translate -> score -> tables, MLflow
#
# Each stage is one file in workflow/rules/; its logic is a small function in src/mtcue/,
# called through the `mtcue <step>` command line. Formats between stages: docs/formats.md.

configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/corpus.smk"
include: "workflow/rules/prepare.smk"
include: "workflow/rules/embed.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        TABLES,
        MLFLOW_SYNC,
