"""The sequence-shortening experiment (shortening.smk, the shortening paper's Tables 2-3): its runs, one per model
and context size, and the directions they are trained and scored in.
"""
from __future__ import annotations

import json

from mtcue import layout
from mtcue.plan.experiments import check_derived_names, check_directions, check_only, suites
from mtcue.plan.registry import TABLE_OUTPUTS, Experiment, Table, Targets, register
from mtcue.study import SHORTENING_TYPES, ConfigError, shortening_name


def shortening_cells(cfg: dict) -> list[tuple[str, int | None, str]]:
    """The shortening paper's Tables 2-3 in order: (config model, context size, run name); context size 0 for the
    sentence-level model, None for another model without that notion. A concat model is the single-encoder
    row: itself (part 1's run) at C = 1, a run of its own reading C sentences for each larger context size."""
    exp = cfg["experiments"]["shortening"]
    cells = []
    for model in exp["models"]:
        kind = cfg["models"][model]["type"]
        if kind in SHORTENING_TYPES:
            cells += [(model, c, shortening_name(model, c)) for c in exp["context_sizes"]]
        elif kind == "concat":
            cells += [(model, 1, model), *((model, c, shortening_name(model, c)) for c in exp["context_sizes"] if c > 1)]
        else:
            cells.append((model, 0 if kind == "base" else None, model))
    return cells


def shortening_models(cfg: dict) -> dict[str, dict]:
    """The context-size runs, derived here only: {name: the model's entry with context_sentences}."""
    return {name: {**cfg["models"][model], "context_sentences": size}
            for model, size, name in shortening_cells(cfg) if name != model}


def shortening_runs(cfg: dict) -> list[tuple[str, str]]:
    """(direction, run) pairs the shortening experiment trains and scores."""
    exp = cfg["experiments"]["shortening"]
    return [(d, name) for d in exp["directions"] for _, _, name in shortening_cells(cfg)
            if d in exp["only"].get(name, [d])]


def shortening_table_cells(cfg: dict) -> list[dict]:
    """The table's rows in order: {"model", "type", "context_size", "run"} (shortening_cells)."""
    return [{"model": model, "type": cfg["models"][model]["type"], "context_size": size, "run": run}
            for model, size, run in shortening_cells(cfg)]


def groupings_runs(cfg: dict) -> list[tuple[str, str, str]]:
    """The shortening paper's Figure 3 (its en-de Latent Grouping and Selecting on a ContraPro sentence):
    (direction, run, suite) of each grouping and selecting run with the experiment's smallest context size, in
    its first direction that has a contrastive suite (the sentence comes from that suite)."""
    exp, by_direction = cfg["experiments"]["shortening"], suites(cfg)
    direction = next((d for d in exp["directions"] if by_direction.get(d)), None)
    if direction is None or not exp["context_sizes"]:
        return []
    smallest = min(exp["context_sizes"])
    return [(direction, name, by_direction[direction][0]) for model, size, name in shortening_cells(cfg)
            if cfg["models"][model]["type"] in ("grouping", "selecting") and size == smallest
            and direction in exp["only"].get(name, [direction])]


def groupings_suite(cfg: dict, direction: str, run: str) -> str:
    """The suite whose sentence a groupings run of `groupings_runs` shows."""
    return next(suite for d, m, suite in groupings_runs(cfg) if (d, m) == (direction, run))


def inputs(cfg: dict) -> dict[str, list[str]]:
    """The records of the table and Figure 3: the runs' `scores`, their `contrastive` records (the direction's
    first suite: the synthetic one; on the paper's data ContraPro in en-de, Lopes et al. in en-fr) and the
    `groupings` records."""
    runs, split, by_direction = shortening_runs(cfg), cfg["evaluation"]["split"], suites(cfg)
    return {"scores": sorted({str(layout.record("score", d, m, split)) for d, m in runs}),
            "contrastive": sorted(str(layout.record("contrastive", d, m, by_direction[d][0]))
                                  for d, m in runs if by_direction.get(d)),
            "groupings": [str(layout.record("groupings", d, m)) for d, m, _suite in groupings_runs(cfg)]}


def targets(cfg: dict) -> Targets:
    """The runs' score records, the table and Figure 3."""
    runs = shortening_runs(cfg)
    return Targets(records=inputs(cfg)["scores"],
                   tables=layout.table_files("shortening") if runs else [],
                   figures=[layout.figure("shortening_groupings", suffix) for suffix in ("csv", "svg")]
                   if groupings_runs(cfg) else [])


def check(cfg: dict) -> None:
    short = cfg["experiments"]["shortening"]
    too_many = [c for c in short["context_sizes"] if c > cfg["context"]["doc_slots"]]
    if short["models"] and too_many:
        raise ConfigError(f"experiments.shortening.context_sizes: {too_many} exceed context.doc_slots "
                          f"({cfg['context']['doc_slots']}), the previous lines the token store keeps")
    runs = {name for _, _, name in shortening_cells(cfg)}
    unknown = [n for n in short["only"] if n not in runs]
    if unknown:
        raise ConfigError(f"experiments.shortening.only: {unknown} are not runs of the experiment "
                          f"(runs: {', '.join(sorted(runs))})")
    check_only(cfg, "shortening")
    check_directions(cfg, "shortening", short["directions"])
    check_derived_names(cfg, shortening_models(cfg), "context-size runs (experiments.shortening)")


TABLE = Table(
    "shortening", "Mąka et al. (2024): sequence shortening",
    "mtcue table-shortening --cells {params.cells:q} --records {input.score:q} "
    "--contrastive-records {input.contrastive:q} " + TABLE_OUTPUTS,
    lambda cfg: {"score": inputs(cfg)["scores"], "contrastive": inputs(cfg)["contrastive"]},
    lambda cfg: {"cells": json.dumps(shortening_table_cells(cfg))}, rule="table_shortening")

register(Experiment("shortening", "sequence shortening", targets, trains=shortening_runs, derives=shortening_models,
                    names=lambda cfg: cfg["experiments"]["shortening"]["models"], check=check, tables=(TABLE,),
                    figure_records=lambda cfg: inputs(cfg)["groupings"]))
