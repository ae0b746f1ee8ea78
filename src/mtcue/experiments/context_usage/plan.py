"""Context usage (CXMI as Fernandes et al. 2021, a step of each model's evaluation): which trained models score the
evaluation split's references with and without their context.
"""
from __future__ import annotations

import functools
from pathlib import Path

from mtcue import layout
from mtcue.experiments.style.plan import STYLE
from mtcue.plan.experiments import bootstrap
from mtcue.plan.models import model_entry, trained_models
from mtcue.plan.registry import Experiment, Option, Section, Step, Table, Targets, register
from mtcue.study import context_kind

# The table's caption in the report (a variant's table shares it)
CAPTION = str(Path(__file__).with_name("context_usage.rst"))


def records(cfg: dict) -> list[str]:
    """The same models as the contrastive suites (no repeats with other seeds, no style-control models), but the
    few-shot variants (they read EAMT22's attribute sentences, which the split has not) and, of the models without
    context, all but BASE (its row is the 0 every such model gives)."""
    split, style = cfg["evaluation"]["split"], {m for _d, m in STYLE.models(cfg)}
    return [str(layout.record("context_usage", d, m, split)) for d, m in trained_models(cfg)
            if not {"seed_of", "fewshot"} & set(model_entry(cfg, m)) and m not in style
            and (m == "base" or context_kind(model_entry(cfg, m)) is not None)]


def targets(cfg: dict) -> Targets:
    """The records and their table."""
    scored = records(cfg)
    return Targets(records=scored, tables=layout.table_files("context_usage") if scored else [])


TABLE = Table(
    "context_usage", "Context usage (CXMI)",
    "mtcue table-context-usage --records {input.records:q} --csv {output.csv:q} "
    "--md {output.md:q} --html {output.html:q} --bootstrap-samples {params.bootstrap[samples]:q} "
    "--alpha {params.bootstrap[alpha]:q} 2> {log:q}",
    lambda cfg: {"records": records(cfg)}, bootstrap, rule="table_context_usage",
    step=Step("table-context-usage", "the context-usage table (CXMI per model and direction, per phenomenon) from "
              "context_usage records", "mtcue.experiments.context_usage.table:write_context_usage_table",
              (Option("--records", records="context_usage", required=True),), bootstrap=True), caption=CAPTION)

register(Experiment("context_usage", "context usage (CXMI)", targets, tables=(TABLE,),
                    sections=(Section("mtcue.experiments.context_usage.table:context_usage_section", 60),),
                    results={"context_usage": functools.partial(layout.table, "context_usage", "csv")}))
