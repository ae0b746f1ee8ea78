# Every experiment's tables, one rule each, as its Experiment declares them (mtcue.plan: `Experiment.tables`, a
# `Table` each): what a table reads (its own experiment's records and those it `reads`, never a file of the whole
# study, so that one table is one target that trains what it needs and nothing else, docs/reruns.md), its options
# and the command that writes its numbers (CSV), Markdown and the Markdown's HTML rendering, a result of the HTML
# report captioned by its caption file (`Table.caption`; docs/results-and-tracking.md, "Tables, figures and the
# report").
# Each number names its MLflow run by name, `{direction}/{model}` in the study's experiment, and its HTML links it
# through the study's MLflow page (mlflow_study, report.smk).
from mtcue.plan import EXPERIMENTS

TABLES = {table.rule: table for experiment in EXPERIMENTS.values() for table in experiment.tables}

# The loop variable is named `rule` on purpose: Snakemake reads a rule's shell command again when its job runs,
# inside a function whose argument `rule` is the job's rule name, so `TABLES[rule]` is each job's own table there
# as here (a loop variable of another name would be the last table's by then).
for rule in TABLES:

    rule:
        name: rule
        localrule: True
        input:
            **TABLES[rule].inputs(config),
        output:
            **table_outputs(TABLES[rule]),
        params:
            **TABLES[rule].params(config),
        log:
            layout.log(rule),
        benchmark:
            layout.benchmark(*TABLES[rule].benchmark)
        shell:
            TABLES[rule].command
