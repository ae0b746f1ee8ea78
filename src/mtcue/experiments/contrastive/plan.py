"""Contrastive evaluation (its rules.smk): the models that score the suites of each en->xx direction (the
synthetic one, or on the paper's data the configured real ones: plan.experiments.suites).
"""
from __future__ import annotations

import functools
from pathlib import Path

from mtcue import layout
from mtcue.experiments.style.plan import STYLE
from mtcue.plan.experiments import bootstrap, suites
from mtcue.plan.models import model_entry, trained_models
from mtcue.plan.registry import Experiment, Option, Section, Step, Table, Targets, register

# The table's caption in the report (a variant's table shares it)
CAPTION = str(Path(__file__).with_name("contrastive.rst"))


def records(cfg: dict) -> list[str]:
    """Every trained model of a direction scores its suites, but the repeats with other seeds (`seed_of`:
    Table 6's and Figure 4's spread), which would double the jobs, and the style-control models (scored at
    their neutral level they would say little about context)."""
    by_direction, style = suites(cfg), {m for _d, m in STYLE.models(cfg)}
    return [str(layout.record("contrastive", d, m, s)) for d, m in trained_models(cfg)
            if "seed_of" not in model_entry(cfg, m) and m not in style for s in by_direction.get(d, [])]


def targets(cfg: dict) -> Targets:
    """The records and their table."""
    scored = records(cfg)
    return Targets(records=scored, tables=layout.table_files("contrastive") if scored else [])


TABLE = Table(
    "contrastive", "Contrastive accuracy",
    "mtcue table-contrastive --records {input.records:q} --csv {output.csv:q} "
    "--md {output.md:q} --html {output.html:q} --bootstrap-samples {params.bootstrap[samples]:q} "
    "--alpha {params.bootstrap[alpha]:q} "
    "2> {log:q}",
    lambda cfg: {"records": records(cfg)}, bootstrap, rule="table_contrastive",
    step=Step("table-contrastive", "the contrastive table (models x suites) from contrastive records",
              "mtcue.experiments.contrastive.table:write_contrastive_table",
              (Option("--records", records="contrastive", required=True),), bootstrap=True), caption=CAPTION)

register(Experiment("contrastive", "contrastive suites", targets, tables=(TABLE,),
                    sections=(Section("mtcue.experiments.contrastive.table:contrastive_section", 50),),
                    results={"contrastive": functools.partial(layout.table, "contrastive", "csv")}))
