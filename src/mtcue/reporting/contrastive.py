"""The contrastive table from contrastive records only (docs/formats.md, sections 4, 7 and 8).

CSV, long: one row per (direction, model, suite, group) with accuracy (0-1), n and ties; group "all" is
the whole suite, "key=value" a group of it (phenomenon=pronoun, distance=2, set=deixis); the shortening
paper's published accuracies (ContraPro, Lopes et al.) are rows with their source named.
Markdown/HTML: per direction, models x suites in %, with each suite's phenomena and distances, ties
in brackets where there are any, and a note for the sets that need target-side context.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mtcue.io import atomic_write_text
from mtcue.reporting.layout import Block, Layout, render_html, render_markdown
from mtcue.reporting.tables import NA, PAPER_FIGURES, RunIds, _read_csv, display_name, html_path, model_key

PAPER_CONTRASTIVE_CSV = PAPER_FIGURES / "shortening_iwslt17_contrastive.csv"
PAPER_LABEL = "shortening paper (IWSLT17), contrastive accuracy"
PAPER_SUITES = {"en-de": "contrapro", "en-fr": "lopes"}  # the shortening paper's test sets by pair
SHOWN_GROUPS = ("phenomenon", "set", "distance")  # breakdowns with a column in the Markdown
CSV_COLUMNS = ["direction", "model", "suite", "group", "accuracy", "n", "ties", "source", "measure"]  # then run_id
# What decides a verdict (the CSV's `measure`): here the summed log-probability; the shortening paper's numbers
# the per-token mean (its authors score with fairseq's SequenceScorer, whose score is the mean over the target's
# tokens and </s>, and feed ContraPro's evaluate.py); its own table (reporting/shortening.py) shows ours so too.
SUM_MEASURE, MEAN_MEASURE = "summed log-probability", "per-token mean log-probability"
OURS = "this study"


def long_rows(records: Sequence[dict], run_ids: RunIds | None = None) -> pd.DataFrame:
    """The CSV's rows: ours, then the shortening paper's published ones; with `run_ids`, a `run_id` column (the MLflow
    run of the row's model in its direction; empty for the shortening paper's rows)."""
    rows, seen = [], set()
    for r in records:
        key = (r["direction"], r["model"], r["suite"])
        if key in seen:
            raise ValueError(f"two contrastive records for {' '.join(key)}")
        seen.add(key)
        rows.append([*key, "all", r["accuracy"], r["n"], r["ties"], OURS, SUM_MEASURE])
        for group, values in r["groups"].items():
            rows += [[*key, f"{group}={value}", s["accuracy"], s["n"], s["ties"], OURS, SUM_MEASURE]
                     for value, s in values.items()]
    paper = _read_csv(PAPER_CONTRASTIVE_CSV)
    for p in paper.itertuples():
        if p.pair in PAPER_SUITES:
            rows.append([p.pair, f"{p.model} ({p.context_size} previous)" if p.context_size else p.model,
                         PAPER_SUITES[p.pair], "all", p.contrastive_accuracy / 100, None, None, PAPER_LABEL,
                         MEAN_MEASURE])
    df = pd.DataFrame(rows, columns=CSV_COLUMNS).astype({"n": "Int64", "ties": "Int64"})
    if run_ids is not None:
        df["run_id"] = [run_ids.runs.get(f"{d}/{m}") if s == OURS else None
                        for d, m, s in zip(df["direction"], df["model"], df["source"])]
    return df


def _sort_value(value: str) -> tuple:
    return (1, value) if not value.lstrip(">").isdigit() else (0, int(value.lstrip(">")) + (">" in value), value)


def direction_block(records: Sequence[dict], direction: str) -> Block:
    """Models x (suite, then its shown groups) for one direction, accuracies in %."""
    mine = [r for r in records if r["direction"] == direction]
    suites = sorted({r["suite"] for r in mine}, key=lambda s: (s != "synthetic", s))
    columns: list[str] = []
    for suite in suites:
        columns.append(suite)
        groups = {(g, v) for r in mine if r["suite"] == suite for g, vs in r["groups"].items() if g in SHOWN_GROUPS
                  for v in vs}
        columns += [f"{suite} {g}={v}" for g, v in sorted(groups, key=lambda gv: (SHOWN_GROUPS.index(gv[0]),
                                                                                  _sort_value(gv[1])))]
    cells: dict[str, dict[str, str]] = {}
    for r in sorted(mine, key=lambda r: model_key(r["model"])):
        row = cells.setdefault(display_name(r["model"]), dict.fromkeys(columns, NA))
        row[r["suite"]] = _cell(r)
        for g, values in r["groups"].items():
            for v, s in values.items():
                if f"{r['suite']} {g}={v}" in row:
                    row[f"{r['suite']} {g}={v}"] = _cell(s)
    display = pd.DataFrame.from_dict(cells, orient="index", columns=columns).rename_axis("model")
    paper = _paper(direction)
    needs = sorted({r["suite"] for r in mine if r["needs_target_context"]})
    note = (f"{', '.join(needs)}: needs target-side context (the candidates differ where only the earlier "
            "target lines decide); a model reading source context only is not measured there." if needs else "")
    return Block(direction, display, paper, PAPER_LABEL if paper is not None else "", note)


def _cell(s: dict) -> str:
    if s["accuracy"] is None:
        return NA
    text = f"{100 * s['accuracy']:.1f}"
    return f"{text} ({s['ties']} ties)" if s["ties"] else text


def _paper(direction: str) -> pd.DataFrame | None:
    if direction not in PAPER_SUITES:
        return None
    paper = _read_csv(PAPER_CONTRASTIVE_CSV)
    paper = paper[paper["pair"] == direction]
    rows = {f"{p.model} ({p.context_size} prev.)" if p.context_size else p.model: f"{p.contrastive_accuracy:.2f}"
            for p in paper.itertuples()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=[PAPER_SUITES[direction]]).rename_axis("model")


def write_contrastive_table(records: Sequence[dict], csv: str | Path, md: str | Path,
                            run_ids: RunIds | None = None) -> None:
    if not records:
        raise ValueError("no contrastive records to tabulate")
    directions = sorted({r["direction"] for r in records})
    n = {r["suite"]: r["n"] for r in records}
    layout = Layout("Contrastive accuracy (%): the correct candidate scored strictly best",
                    [direction_block(records, d) for d in directions],
                    ["Every candidate is force-decoded with the example's own context; a tie with the best other "
                     "candidate counts as wrong (ContraPro's rule). Ours: summed log-probabilities (the records also "
                     "hold the per-token mean's accuracy); the shortening paper's numbers beside are by the per-token "
                     "mean, its measure (the CSV's `measure`; `shortening.md` compares by it).",
                     "Examples per suite: " + ", ".join(f"{s} {k}" for s, k in sorted(n.items())) + ".",
                     f"Study: {', '.join(sorted({r['study'] for r in records}))}.",
                     *([run_ids.footnote()] if run_ids else [])])
    atomic_write_text(csv, long_rows(records, run_ids).to_csv(index=False))
    atomic_write_text(md, render_markdown(layout))
    atomic_write_text(html_path(md), render_html(layout))
