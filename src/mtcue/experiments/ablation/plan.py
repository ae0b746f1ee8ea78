"""The ablation experiment (the paper's Table 6, its rule tables.smk's): the seeded runs of its rows and its zero-shot
columns. An `Ablation` reads its config section by its key, so a variant (other rows, directions or split) is
`Ablation(key, table, label)` registered beside it, with its own schema section.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

from mtcue import layout
from mtcue.experiments.formality.plan import FORMALITY, chosen_on_valid
from mtcue.plan.experiments import Keyed, bootstrap, check_derived_names, check_directions, seed_runs, with_seeds
from mtcue.plan.registry import TABLE_OUTPUTS, Experiment, Option, Section, Step, Table, Targets, register

# The table's caption in the report (a variant's table shares it)
CAPTION = str(Path(__file__).with_name("table6_ablation.rst"))

# Table 6's zero-shot columns: record kind -> the experiment whose rules write those records.
ZEROSHOT_RECORDS = {"formality": "formality", "eamt22": "fewshot"}

# `mtcue table-ablation`, the step of every ablation's table
STEP = Step("table-ablation", "Table 6: each ablation row against the full model",
            "mtcue.experiments.ablation.table:write_ablation_table", (
                Option("--rows", json=True, required=True,
                       help='JSON {"Table 6 label": "model", ...}, the full model first'),
                Option("--split", default="valid", help="split of the score records shown"),
                Option("--seeds", json=True, default="{}",
                       help='JSON {"model": ["run", ...]}: the runs averaged per row (experiments.ablation.plan\'s '
                            "Ablation.seeds); default one run, the model itself"),
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
            bootstrap=True)


def zeroshot_options(kind: str, task: dict) -> list[str]:
    """table-ablation's options of a zero-shot column (`task`: Ablation.zeroshot's), as arguments."""
    reason = ["--unavailable", f"{kind}={task['unavailable']}"] if task["unavailable"] else []
    return ["--zeroshot-direction", f"{kind}={task['direction']}", *reason]


class Ablation(Keyed):
    """An ablation of config section experiments.{key}: each row model against the full one, seeded, with the
    zero-shot columns, in the table `table` (its files' and rule's name) labelled `label`."""

    def __init__(self, key: str = "ablation", table: str = "table6_ablation", label: str = "Table 6"):
        super().__init__(key)
        self.table, self.label = table, label

    def rows(self, cfg: dict) -> list[str]:
        """The models of the table's rows (experiments.{key}.rows), each once."""
        return list(dict.fromkeys(self.config(cfg)["rows"].values()))

    def seed_models(self, cfg: dict) -> dict[str, dict]:
        """The repeated fine-tunings of the rows (experiments.{key}.seeds), derived here only."""
        rows = {m: cfg["models"][m] for m in self.rows(cfg)}
        return {name: entry for name, entry in with_seeds(cfg, self.key, rows).items() if name not in rows}

    def seeds(self, cfg: dict) -> dict[str, list[str]]:
        """{row model: its runs} (seed_runs)."""
        return {m: seed_runs(cfg, self.key, m, cfg["models"][m]) for m in self.rows(cfg)}

    def runs(self, cfg: dict) -> list[str]:
        """Every run the table reads: each row model's seeds."""
        return [run for runs in self.seeds(cfg).values() for run in runs]

    def trains(self, cfg: dict) -> list[tuple[str, str]]:
        return [(d, m) for m in self.runs(cfg) for d in self.config(cfg)["directions"]]

    def zeroshot(self, cfg: dict) -> dict[str, dict]:
        """The zero-shot columns: {record kind: {"direction", "unavailable"}}, where `unavailable` is None when the
        row models' records of that kind are written in this study (results/records/{kind}/{direction}/{model}.json),
        else the reason they cannot be."""
        ablation, out = self.config(cfg), {}
        for kind, experiment in ZEROSHOT_RECORDS.items():
            direction = ablation["zeroshot"][kind]
            directions = (FORMALITY.directions(cfg) if experiment == "formality"
                          else cfg["experiments"][experiment]["directions"])
            if not directions:
                reason = f"this config runs no {experiment} experiment (experiments.{experiment}), which writes them"
            elif direction not in directions:
                reason = f"experiments.{experiment}.directions does not include {direction}"
            elif direction not in ablation["directions"]:
                reason = (f"the {self.key} models are not trained in {direction} "
                          f"(experiments.{self.key}.directions: {', '.join(ablation['directions'])})")
            else:
                reason = None
            out[kind] = {"direction": direction, "unavailable": reason}
        return out

    def zeroshot_records(self, cfg: dict, kind: str) -> list[str]:
        """The records of the zero-shot column `kind`, on the validation sets (the paper: "on the validation sets
        in all cases"): EAMT22's dev.json and IWSLT22's validation set (the demo: its valid split; at paper scale
        IWSLT22's training data, where the pair has some, else the test set's records: formality's chosen_on_valid,
        docs/deviations.md). None where the column cannot be measured."""
        task = self.zeroshot(cfg)[kind]
        if task["unavailable"]:
            return []
        of = "valid" if kind == "eamt22" or chosen_on_valid(cfg, task["direction"]) else None
        return [str(layout.record(kind, task["direction"], m, of)) for m in self.runs(cfg)]

    def inputs(self, cfg: dict) -> dict[str, list[str]]:
        """The records the table reads: `scores`, `comets` (none when evaluation.comet.model is null), `formality` and
        `eamt22` (its zero-shot columns)."""
        exp, runs = self.config(cfg), self.runs(cfg)
        records = lambda kind: [str(layout.record(kind, d, m, exp["split"])) for d in exp["directions"] for m in runs]
        return {"scores": records("score"), "comets": records("comet") if cfg["evaluation"]["comet"]["model"] else [],
                "formality": self.zeroshot_records(cfg, "formality"), "eamt22": self.zeroshot_records(cfg, "eamt22")}

    def targets(self, cfg: dict) -> Targets:
        """The records the table reads and the table."""
        exp = self.config(cfg)
        return Targets(records=[r for records in self.inputs(cfg).values() for r in records],
                       tables=layout.table_files(self.table) if exp["directions"] and exp["rows"] else [])

    def check(self, cfg: dict) -> None:
        check_derived_names(cfg, self.seed_models(cfg), f"seeded runs (experiments.{self.key}.seeds)")
        check_directions(cfg, self.key, self.config(cfg)["directions"])

    def table_params(self, cfg: dict) -> dict:
        """The rows, each row's seeded runs, the split shown, the zero-shot columns' options, the bootstrap."""
        exp = self.config(cfg)
        return {"rows": json.dumps(exp["rows"]), "seeds": json.dumps(self.seeds(cfg)), "split": exp["split"],
                "zeroshot": [a for kind, task in self.zeroshot(cfg).items() for a in zeroshot_options(kind, task)],
                **bootstrap(cfg)}

    def table_inputs(self, cfg: dict) -> dict[str, list[str]]:
        inputs = self.inputs(cfg)
        return {"score": inputs["scores"], "comet": inputs["comets"], "formality": inputs["formality"],
                "eamt22": inputs["eamt22"]}

    def experiment(self, **declared) -> Experiment:
        """The experiment to register; `declared`, its other Experiment fields (the README's sections)."""
        table = Table(
            self.table, f"{self.label}: ablations",
            "mtcue table-ablation --rows {params.rows:q} --seeds {params.seeds:q} --split {params.split:q} "
            "--records {input.score:q} "
            "--comet-records {input.comet:q} --formality-records {input.formality:q} --eamt22-records {input.eamt22:q} "
            "{params.zeroshot:q} --bootstrap-samples {params.bootstrap[samples]:q} --alpha {params.bootstrap[alpha]:q} "
            + TABLE_OUTPUTS, self.table_inputs, self.table_params, step=STEP, caption=CAPTION)
        return Experiment(self.key, f"{self.label} ({self.key})", self.targets, names=self.rows, names_key="rows",
                          derives=self.seed_models, trains=self.trains, check=self.check, tables=(table,), **declared)


ABLATION = Ablation()

register(ABLATION.experiment(
    # Table 6's claims and Figure 4's
    sections=(Section("mtcue.reporting.readme_sections:claims_section", 40, bootstrap=True),),
    results={"table6": functools.partial(layout.table, "table6_ablation", "csv")}))
