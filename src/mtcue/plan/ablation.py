"""The ablation experiment (the paper's Table 6, its rule tables.smk's): the seeded runs of its rows and its zero-shot
columns.
"""
from __future__ import annotations

import functools
import json

from mtcue import layout
from mtcue.plan.experiments import bootstrap, check_derived_names, check_directions, seed_runs, with_seeds
from mtcue.plan.formality import chosen_on_valid, formality_directions
from mtcue.plan.registry import TABLE_OUTPUTS, Experiment, Option, Section, Step, Table, Targets, register

# Table 6's zero-shot columns: record kind -> the experiment whose rules write those records.
ZEROSHOT_RECORDS = {"formality": "formality", "eamt22": "fewshot"}


def ablation_rows(cfg: dict) -> list[str]:
    """The models of Table 6's rows (experiments.ablation.rows), each once."""
    return list(dict.fromkeys(cfg["experiments"]["ablation"]["rows"].values()))


def ablation_seed_models(cfg: dict) -> dict[str, dict]:
    """The repeated fine-tunings of Table 6's rows (experiments.ablation.seeds), derived here only."""
    rows = {m: cfg["models"][m] for m in ablation_rows(cfg)}
    return {name: entry for name, entry in with_seeds(cfg, "ablation", rows).items() if name not in rows}


def ablation_seeds(cfg: dict) -> dict[str, list[str]]:
    """{row model: its runs} of Table 6 (seed_runs)."""
    return {m: seed_runs(cfg, "ablation", m, cfg["models"][m]) for m in ablation_rows(cfg)}


def ablation_runs(cfg: dict) -> list[str]:
    """Every run Table 6 reads: each row model's seeds."""
    return [run for runs in ablation_seeds(cfg).values() for run in runs]


def ablation_zeroshot(cfg: dict) -> dict[str, dict]:
    """Table 6's zero-shot columns: {record kind: {"direction", "unavailable"}}, where
    `unavailable` is None when the ablation models' records of that kind are written in this
    study (results/records/{kind}/{direction}/{model}.json), else the reason they cannot be."""
    ablation, out = cfg["experiments"]["ablation"], {}
    for kind, experiment in ZEROSHOT_RECORDS.items():
        direction = ablation["zeroshot"][kind]
        directions = formality_directions(cfg) if experiment == "formality" else cfg["experiments"][experiment]["directions"]
        if not directions:
            reason = f"this config runs no {experiment} experiment (experiments.{experiment}), which writes them"
        elif direction not in directions:
            reason = f"experiments.{experiment}.directions does not include {direction}"
        elif direction not in ablation["directions"]:
            reason = (f"the ablation models are not trained in {direction} "
                      f"(experiments.ablation.directions: {', '.join(ablation['directions'])})")
        else:
            reason = None
        out[kind] = {"direction": direction, "unavailable": reason}
    return out


def zeroshot_records(cfg: dict, kind: str) -> list[str]:
    """The records of Table 6's zero-shot column `kind`, on the validation sets (the paper: "on the
    validation sets in all cases"): EAMT22's dev.json and IWSLT22's validation set (the demo: its valid
    split; at paper scale IWSLT22's training data, where the pair has some, else the test set's records:
    plan.formality.chosen_on_valid, docs/deviations.md). None where the column cannot be measured."""
    task = ablation_zeroshot(cfg)[kind]
    if task["unavailable"]:
        return []
    of = "valid" if kind == "eamt22" or chosen_on_valid(cfg, task["direction"]) else None
    return [str(layout.record(kind, task["direction"], m, of)) for m in ablation_runs(cfg)]


def inputs(cfg: dict) -> dict[str, list[str]]:
    """The records Table 6 reads: `scores`, `comets` (none when evaluation.comet.model is null), `formality` and
    `eamt22` (its zero-shot columns)."""
    exp, runs = cfg["experiments"]["ablation"], ablation_runs(cfg)
    records = lambda kind: [str(layout.record(kind, d, m, exp["split"])) for d in exp["directions"] for m in runs]
    return {"scores": records("score"), "comets": records("comet") if cfg["evaluation"]["comet"]["model"] else [],
            "formality": zeroshot_records(cfg, "formality"), "eamt22": zeroshot_records(cfg, "eamt22")}


def targets(cfg: dict) -> Targets:
    """The records Table 6 reads and the table."""
    exp = cfg["experiments"]["ablation"]
    return Targets(records=[r for records in inputs(cfg).values() for r in records],
                   tables=layout.table_files("table6_ablation") if exp["directions"] and exp["rows"] else [])


def check(cfg: dict) -> None:
    check_derived_names(cfg, ablation_seed_models(cfg), "seeded runs (experiments.ablation.seeds)")
    check_directions(cfg, "ablation", cfg["experiments"]["ablation"]["directions"])


def zeroshot_options(kind: str, task: dict) -> list[str]:
    """table-ablation's options of a zero-shot column (`task`: ablation_zeroshot's), as arguments."""
    reason = ["--unavailable", f"{kind}={task['unavailable']}"] if task["unavailable"] else []
    return ["--zeroshot-direction", f"{kind}={task['direction']}", *reason]


def table_params(cfg: dict) -> dict:
    """Table 6's rows, each row's seeded runs, the split shown, the zero-shot columns' options, the bootstrap."""
    exp = cfg["experiments"]["ablation"]
    return {"rows": json.dumps(exp["rows"]), "seeds": json.dumps(ablation_seeds(cfg)), "split": exp["split"],
            "zeroshot": [a for kind, task in ablation_zeroshot(cfg).items() for a in zeroshot_options(kind, task)],
            **bootstrap(cfg)}


TABLE = Table(
    "table6_ablation", "Table 6: ablations",
    "mtcue table-ablation --rows {params.rows:q} --seeds {params.seeds:q} --split {params.split:q} "
    "--records {input.score:q} "
    "--comet-records {input.comet:q} --formality-records {input.formality:q} --eamt22-records {input.eamt22:q} "
    "{params.zeroshot:q} --bootstrap-samples {params.bootstrap[samples]:q} --alpha {params.bootstrap[alpha]:q} "
    + TABLE_OUTPUTS,
    lambda cfg: {"score": inputs(cfg)["scores"], "comet": inputs(cfg)["comets"], "formality": inputs(cfg)["formality"],
                 "eamt22": inputs(cfg)["eamt22"]},
    table_params,
    step=Step("table-ablation", "Table 6: each ablation row against the full model",
              "mtcue.reporting.ablation:write_ablation_table", (
                  Option("--rows", json=True, required=True,
                         help='JSON {"Table 6 label": "model", ...}, the full model first'),
                  Option("--split", default="valid", help="split of the score records shown"),
                  Option("--seeds", json=True, default="{}",
                         help='JSON {"model": ["run", ...]}: the runs averaged per row (plan.ablation.ablation_seeds); '
                              "default one run, the model itself"),
                  Option("--records", name="score_records", records="score", required=True,
                         help="score records of every row model and direction"),
                  Option("--comet-records", records="comet"),
                  Option("--formality-records", records="formality",
                         help="IWSLT22 formality records, one per row model"),
                  Option("--eamt22-records", records="eamt22", help="EAMT22 records, one per row model"),
                  Option("--zeroshot-direction", name="zeroshot_directions", pairs=True, metavar="KIND=DIRECTION",
                         help="direction of each zero-shot task, e.g. formality=en-de eamt22=en-pl"),
                  Option("--unavailable", pairs=True, metavar="KIND=REASON",
                         help="why a zero-shot record kind has no records (the column shows n/a and the reason)")),
              bootstrap=True))

register(Experiment(
    "ablation", "Table 6 (ablation)", targets, names=ablation_rows, names_key="rows", derives=ablation_seed_models,
    trains=lambda cfg: [(d, m) for m in ablation_runs(cfg) for d in cfg["experiments"]["ablation"]["directions"]],
    check=check, tables=(TABLE,),
    # Table 6's claims and Figure 4's
    sections=(Section("mtcue.reporting.readme_sections:claims_section", 40, bootstrap=True),),
    results={"table6": functools.partial(layout.table, "table6_ablation", "csv")}))
