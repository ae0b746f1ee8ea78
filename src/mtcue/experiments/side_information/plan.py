"""Hoang et al.'s side-information experiment (its rules.smk, their Table 3): its rows and runs. `SideInformation`
reads its config section by its key, so a variant (other models, baseline or directions) is
`SideInformation(key, label, table_label)` registered beside it, with its own schema section.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

from mtcue import layout
from mtcue.plan.experiments import Keyed, bootstrap, check_directions, suites
from mtcue.plan.registry import SCORES, TABLE_OUTPUTS, Experiment, Option, Section, Step, Table, Targets, register
from mtcue.study import CONTEXT_KIND, ConfigError, is_contextual

# The table's caption in the report (a variant's table shares it)
CAPTION = str(Path(__file__).with_name("side_information.rst"))

# `mtcue table-side-information`, the step of Hoang et al.'s table
STEP = Step("table-side-information", "Hoang et al. (2018) Table 3: BLEU of the ways of feeding side-information "
            "labels against the baseline, contrastive accuracy, beside Hoang et al.'s",
            "mtcue.experiments.side_information.table:write_side_information_table", (
                Option("--rows", json=True, required=True,
                       help='JSON [{"label", "model", "type", "variant": "", "no_context" or "predicted_labels"}] '
                            "(table order)"),
                SCORES,
                Option("--no-context-records", name="no_context_scores", records="score",
                       help="score records of decoding without labels"),
                Option("--predicted-records", name="predicted_scores", records="score",
                       help="score records of the target-prefix model decoding with the labels it predicts"),
                Option("--contrastive-records", name="contrastive", records="contrastive",
                       help="contrastive records (en->xx)"),
                # what chooses each grid point, not a number of the table: no run of its own
                Option("--valid-records", name="valid_scores", records="score", linked=False,
                       help="score records of the validation split: the claims compare each system's grid point "
                            "with the best validation BLEU (without them: the best test BLEU, said so in the table)"),
                Option("--baseline", default="",
                       help="the model 'without side information' (significance reference)")), bootstrap=True)


# The hyper-parameter of each type's grid (Hoang et al.'s H_s and lambda): (arch key, name in the table).
GRID_PARAMETER = {"si_output_layer": ("side_dim", "H_s"), "si_mtl": ("mtl_weight", "lambda")}


def _grid_point(cfg: dict, row: dict) -> str:
    """What tells a row apart from the same type's other rows: its grid point ("H_s 64"), else its model."""
    key, name = GRID_PARAMETER.get(row["type"], (None, None))
    value = cfg["models"][row["model"]].get("arch", {}).get(key)
    return f"{name} {value:g}" if value is not None else row["model"]


def grid_points(rows) -> dict[str, list[str]]:
    """Table rows ({"model", "type", "variant"}) -> each type's grid points: its models, in row order."""
    points: dict[str, list[str]] = {}
    for r in rows:
        if not r["variant"] and r["model"] not in points.setdefault(r["type"], []):
            points[r["type"]].append(r["model"])
    return points


class SideInformation(Keyed):
    """Hoang et al.'s experiment of config section experiments.{key}, `label` in the GPU-hour table; its table is
    named by the key and labelled `table_label`."""

    def __init__(self, key: str = "side_information", label: str = "side information (Hoang et al.)",
                 table_label: str = "Hoang et al. (2018): side information"):
        super().__init__(key)
        self.label, self.table_label = label, table_label

    def rows(self, cfg: dict) -> list[str]:
        """The models of Hoang et al.'s Table 3 in row order: the baseline ("without side information"), then
        the variants; TAGGING and MTCUE beside them where configured."""
        exp = self.config(cfg)
        return list(dict.fromkeys(([exp["baseline"]] if exp["baseline"] else []) + exp["models"] + exp["beside"]))

    def models(self, cfg: dict) -> list[tuple[str, str]]:
        """(direction, model) pairs the experiment trains and scores."""
        return [(d, m) for d in self.config(cfg)["directions"] for m in self.rows(cfg)]

    def table_rows(self, cfg: dict) -> list[dict]:
        """Hoang et al.'s Table 3 rows in order: {"label" (Hoang et al.'s name where the model is one of its
        systems), "model", "type" (the model's; "control" for a BASE trained on like the variants, which
        separates the labels' effect from that of the extra epochs), "variant": "", "no_context" (decoded
        without labels) or "predicted_labels" (the target-prefix model predicting its labels)}."""
        exp = self.config(cfg)
        names = {"base": "base (without side information)", "si_src_prefix": "si-src-prefix",
                 "si_src_suffix": "si-src-suffix", "si_trg_prefix": "si-trg-prefix-h",
                 "si_output_layer": "output-layer", "si_mtl": "mtl", "tagging": "TAGGING", "mtcue": "MTCUE"}
        rows = []
        for model in self.rows(cfg):
            kind = cfg["models"][model]["type"]
            if kind == "base" and model != exp["baseline"]:   # BASE trained on like the variants: not Hoang et al.'s
                rows.append({"label": "base, fine-tuned as the variants (no labels)", "model": model,
                             "type": "control", "variant": ""})
                continue
            if kind == "si_trg_prefix":  # one model, decoded with the labels predicted (-p) and given (-h)
                rows.append({"label": "si-trg-prefix-p", "model": model, "type": kind, "variant": "predicted_labels"})
            rows.append({"label": names.get(kind, model), "model": model, "type": kind, "variant": ""})
            if model in exp["no_labels"]:
                rows.append({"label": f"{names.get(kind, model)}, w/o side info at test", "model": model,
                             "type": kind, "variant": "no_context"})
        labels = [r["label"] for r in rows]
        return [{**r, "label": f"{r['label']} ({_grid_point(cfg, r)})"} if labels.count(r["label"]) > 1 else r
                for r in rows]

    def grid_models(self, cfg: dict) -> list[str]:
        """The models that are one of several grid points of their type (Hoang et al.'s H_s of output-layer, lambda
        of mtl): each type's point is chosen on the validation split, as Hoang et al. tune on development data."""
        return [m for models in grid_points(self.table_rows(cfg)).values() if len(models) > 1 for m in models]

    def inputs(self, cfg: dict) -> dict[str, list[str]]:
        """Table 3's score records: `scores`, `no_context` (decoded without labels), `predicted` (the
        target-prefix model predicting its labels), `valid` (the validation split's, of every grid point: what
        chooses a type's point); and the models' `contrastive` records (every suite of their direction)."""
        exp, split, runs = self.config(cfg), cfg["evaluation"]["split"], self.models(cfg)
        records = lambda kind, keep, split=split: sorted({str(layout.record(kind, d, m, split)) for d, m in runs
                                                          if keep(m)})
        grid = set(self.grid_models(cfg))
        return {"scores": records("score", lambda m: True),
                "valid": records("score", grid.__contains__, "valid"),
                "no_context": records("score_no_context", lambda m: m in exp["no_labels"]),
                "predicted": records("score_predicted_labels", lambda m: cfg["models"][m]["type"] == "si_trg_prefix"),
                "contrastive": [str(layout.record("contrastive", d, m, s)) for d, m in runs
                                for s in suites(cfg).get(d, [])]}

    def targets(self, cfg: dict) -> Targets:
        """The score records and the table."""
        return Targets(records=self.inputs(cfg)["scores"],
                       tables=layout.table_files(self.key) if self.models(cfg) else [])

    def check(self, cfg: dict) -> None:
        side, key = self.config(cfg), f"experiments.{self.key}"
        wrong = [m for m in side["models"] if CONTEXT_KIND[cfg["models"][m]["type"]] != "labels"]
        if wrong:
            raise ConfigError(f"{key}.models: {wrong} are not side-information (si_*) models")
        unknown = [n for n in side["no_labels"] if n not in side["models"]]
        if unknown:
            raise ConfigError(f"{key}.no_labels: {unknown} are not in {key}.models")
        if side["baseline"] and is_contextual(cfg["models"][side["baseline"]]):
            raise ConfigError(f"{key}.baseline: '{side['baseline']}' reads context; the row "
                              "'without side information' is a model without context (base)")
        check_directions(cfg, self.key, side["directions"])

    def table_inputs(self, cfg: dict) -> dict[str, list[str]]:
        """The records by input name; `valid`: what chooses each type's grid point (H_s, lambda)."""
        inputs = self.inputs(cfg)
        return {key: inputs[name] for key, name in (("score", "scores"), ("no_context", "no_context"),
                                                    ("predicted", "predicted"), ("valid", "valid"),
                                                    ("contrastive", "contrastive"))}

    def table_params(self, cfg: dict) -> dict:
        return {"rows": json.dumps(self.table_rows(cfg)), "baseline": self.config(cfg)["baseline"] or "",
                **bootstrap(cfg)}

    def experiment(self, **declared) -> Experiment:
        """The experiment to register; `declared`, its other Experiment fields (the README's sections)."""
        table = Table(
            self.key, self.table_label,
            "mtcue table-side-information --rows {params.rows:q} --records {input.score:q} "
            "--no-context-records {input.no_context:q} --predicted-records {input.predicted:q} "
            "--contrastive-records {input.contrastive:q} --valid-records {input.valid:q} "
            "--baseline {params.baseline:q} --bootstrap-samples {params.bootstrap[samples]:q} "
            "--alpha {params.bootstrap[alpha]:q} " + TABLE_OUTPUTS,
            self.table_inputs, self.table_params, rule=f"table_{self.key}", step=STEP,
            caption=CAPTION)
        return Experiment(self.key, self.label, self.targets, trains=self.models, names=self.rows, check=self.check,
                          tables=(table,), **declared)


SIDE_INFORMATION = SideInformation()

register(SIDE_INFORMATION.experiment(
    sections=(Section("mtcue.experiments.side_information.table:side_information_section", 80, headline=True),),
    results={"side_information": functools.partial(layout.table, "side_information", "csv")}))
