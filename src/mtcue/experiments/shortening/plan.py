"""The sequence-shortening experiment (its rules.smk, the shortening paper's Tables 2-3): its runs, one per model
and context size, and the directions they are trained and scored in. `Shortening` reads its config section by its
key, so a variant (other models, context sizes or directions) is `Shortening(key, label, table_label)` registered
beside it, with its own schema section.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

from mtcue import layout
from mtcue.plan.experiments import Keyed, check_derived_names, check_directions, check_only, suites
from mtcue.plan.registry import SCORES, TABLE_OUTPUTS, Experiment, Option, Section, Step, Table, Targets, register
from mtcue.study import SHORTENING_TYPES, ConfigError, shortening_name

# The table's caption in the report (a variant's table shares it)
CAPTION = str(Path(__file__).with_name("shortening.rst"))


# `mtcue table-shortening`, the step of the shortening paper's table
STEP = Step("table-shortening", "the shortening paper's Tables 2-3: BLEU and contrastive accuracy (by antecedent "
            "distance) per model and context size, beside the shortening paper's",
            "mtcue.experiments.shortening.table:write_shortening_table", (
                Option("--cells", json=True, required=True,
                       help='JSON [{"model", "type", "context_size", "run"}] (table order; Shortening.table_cells)'),
                SCORES,
                Option("--contrastive-records", name="contrastive", records="contrastive",
                       help="contrastive records (one suite a direction)")))


class Shortening(Keyed):
    """The sequence-shortening experiment of config section experiments.{key}, `label` in the GPU-hour table; its
    table is named by the key and labelled `table_label`."""

    def __init__(self, key: str = "shortening", label: str = "sequence shortening",
                 table_label: str = "Mąka et al. (2024): sequence shortening"):
        super().__init__(key)
        self.label, self.table_label = label, table_label

    def cells(self, cfg: dict) -> list[tuple[str, int | None, str]]:
        """The shortening paper's Tables 2-3 in order: (config model, context size, run name); context size 0 for
        the sentence-level model, None for another model without that notion. A concat model is the single-encoder
        row: itself (part 1's run) at C = 1, a run of its own reading C sentences for each larger context size."""
        exp = self.config(cfg)
        cells = []
        for model in exp["models"]:
            kind = cfg["models"][model]["type"]
            if kind in SHORTENING_TYPES:
                cells += [(model, c, shortening_name(model, c)) for c in exp["context_sizes"]]
            elif kind == "concat":
                cells += [(model, 1, model),
                          *((model, c, shortening_name(model, c)) for c in exp["context_sizes"] if c > 1)]
            else:
                cells.append((model, 0 if kind == "base" else None, model))
        return cells

    def models(self, cfg: dict) -> dict[str, dict]:
        """The context-size runs, derived here only: {name: the model's entry with context_sentences}."""
        return {name: {**cfg["models"][model], "context_sentences": size}
                for model, size, name in self.cells(cfg) if name != model}

    def runs(self, cfg: dict) -> list[tuple[str, str]]:
        """(direction, run) pairs the experiment trains and scores."""
        exp = self.config(cfg)
        return [(d, name) for d in exp["directions"] for _, _, name in self.cells(cfg)
                if d in exp["only"].get(name, [d])]

    def names(self, cfg: dict) -> list[str]:
        return self.config(cfg)["models"]

    def table_cells(self, cfg: dict) -> list[dict]:
        """The table's rows in order: {"model", "type", "context_size", "run"} (`cells`)."""
        return [{"model": model, "type": cfg["models"][model]["type"], "context_size": size, "run": run}
                for model, size, run in self.cells(cfg)]

    def groupings_runs(self, cfg: dict) -> list[tuple[str, str, str]]:
        """The shortening paper's Figure 3 (its en-de Latent Grouping and Selecting on a ContraPro sentence):
        (direction, run, suite) of each grouping and selecting run with the experiment's smallest context size, in
        its first direction that has a contrastive suite (the sentence comes from that suite)."""
        exp, by_direction = self.config(cfg), suites(cfg)
        direction = next((d for d in exp["directions"] if by_direction.get(d)), None)
        if direction is None or not exp["context_sizes"]:
            return []
        smallest = min(exp["context_sizes"])
        return [(direction, name, by_direction[direction][0]) for model, size, name in self.cells(cfg)
                if cfg["models"][model]["type"] in ("grouping", "selecting") and size == smallest
                and direction in exp["only"].get(name, [direction])]

    def groupings_suite(self, cfg: dict, direction: str, run: str) -> str:
        """The suite whose sentence a groupings run of `groupings_runs` shows."""
        return next(suite for d, m, suite in self.groupings_runs(cfg) if (d, m) == (direction, run))

    def inputs(self, cfg: dict) -> dict[str, list[str]]:
        """The records of the table and Figure 3: the runs' `scores`, their `contrastive` records (the direction's
        first suite: the synthetic one; on the paper's data ContraPro in en-de, Lopes et al. in en-fr) and the
        `groupings` records."""
        runs, split, by_direction = self.runs(cfg), cfg["evaluation"]["split"], suites(cfg)
        return {"scores": sorted({str(layout.record("score", d, m, split)) for d, m in runs}),
                "contrastive": sorted(str(layout.record("contrastive", d, m, by_direction[d][0]))
                                      for d, m in runs if by_direction.get(d)),
                "groupings": [str(layout.record("groupings", d, m)) for d, m, _suite in self.groupings_runs(cfg)]}

    def targets(self, cfg: dict) -> Targets:
        """The runs' score records, the table and Figure 3."""
        return Targets(records=self.inputs(cfg)["scores"],
                       tables=layout.table_files(self.key) if self.runs(cfg) else [],
                       figures=[layout.figure("shortening_groupings", suffix) for suffix in ("csv", "svg")]
                       if self.groupings_runs(cfg) else [])

    def check(self, cfg: dict) -> None:
        short, key = self.config(cfg), f"experiments.{self.key}"
        too_many = [c for c in short["context_sizes"] if c > cfg["context"]["doc_slots"]]
        if short["models"] and too_many:
            raise ConfigError(f"{key}.context_sizes: {too_many} exceed context.doc_slots "
                              f"({cfg['context']['doc_slots']}), the previous lines the token store keeps")
        runs = {name for _, _, name in self.cells(cfg)}
        unknown = [n for n in short["only"] if n not in runs]
        if unknown:
            raise ConfigError(f"{key}.only: {unknown} are not runs of the experiment "
                              f"(runs: {', '.join(sorted(runs))})")
        check_only(cfg, self.key)
        check_directions(cfg, self.key, short["directions"])
        check_derived_names(cfg, self.models(cfg), f"context-size runs ({key})")

    def experiment(self, **declared) -> Experiment:
        """The experiment to register; `declared`, its other Experiment fields (the README's sections)."""
        table = Table(
            self.key, self.table_label,
            "mtcue table-shortening --cells {params.cells:q} --records {input.score:q} "
            "--contrastive-records {input.contrastive:q} " + TABLE_OUTPUTS,
            lambda cfg: {"score": self.inputs(cfg)["scores"], "contrastive": self.inputs(cfg)["contrastive"]},
            lambda cfg: {"cells": json.dumps(self.table_cells(cfg))}, rule=f"table_{self.key}", step=STEP,
            caption=CAPTION)
        return Experiment(self.key, self.label, self.targets, trains=self.runs, derives=self.models,
                          names=self.names, check=self.check, tables=(table,),
                          figure_records=lambda cfg: self.inputs(cfg)["groupings"], **declared)


SHORTENING = Shortening()

register(SHORTENING.experiment(
    sections=(Section("mtcue.experiments.shortening.table:shortening_section", 100, headline=True),),
    results={"shortening": functools.partial(layout.table, "shortening", "csv")}))
