# MTCue reproducibility pipeline (Vincent, Flynn and Scarton, Findings of ACL 2023).
#
#   corpus -> clean -> SentencePiece -> binarise ─┐
#                  └-> context stores ────────────┼-> train BASE -> train MTCue (from BASE)
#                                                 └-> translate -> score -> tables, MLflow
#
# Each stage is one file in workflow/rules/ and one package in src/mtcue/; its logic is a small
# function called through the `mtcue <step>` command line. Each experiment is one folder, src/mtcue/experiments/{name}/:
# its plan (registered in mtcue.plan.EXPERIMENTS, which common.smk reads, and tables.smk: a rule per table it
# declares), its table module, captions and its own rules (rules.smk). Formats between stages: docs/formats.md.

# The study is exactly one config: the files given with --configfile (defaults from the schema
# only), else the embedded default. Snakemake's `configfile:` directive would merge the default
# under a user's file, silently adding the demo's settings to it.
if not workflow.config_settings.configfiles:
    workflow.configfile("config/config.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/local.smk"
include: "workflow/rules/inputs.smk"
include: "workflow/rules/pretrained.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/prepare.smk"
include: "workflow/rules/context.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/figures.smk"
# each experiment's own rules, where it has steps beyond training, evaluation and its tables (mtcue.experiments)
for rule_file in experiment_rules():
    include: rule_file
include: "workflow/rules/tables.smk"


# `snakemake --report results/report.html`: this page, then every table and figure captioned. Snakemake renders
# the page with the config files' config alone (the workflow's, not the validated one), so what it derives for
# the page goes there: the configured models the study trains and how many runs it derives from them.
workflow.config["trained_models"] = trained_entries(config)
workflow.config["derived_runs"] = len({m for _, m in TRAINED} - set(config["models"]))
# `mtcue report` (make report) reports what is built and names here what it leaves out, not built yet.
workflow.config["not_built"] = os.environ.get("MTCUE_REPORT_NOT_BUILT", "").split()
report: "workflow/report/workflow.rst"
refuse_grouped_site_overrides()  # every rule is known now (inputs.smk)


# Every experiment's tables and figures (each experiment plan's `targets`, common.smk's all_targets).
rule all:
    input:
        all_targets(),
