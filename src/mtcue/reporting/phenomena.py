"""The phenomena table: each model's accuracy on the context-determined phenomena of the test sets (formality
of address, speaker/addressee gender, addressee number) per direction, from the score records only (the
quality table's phenomena block, split by phenomenon). The paper has no such table."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from mtcue.evaluation.score import ALL
from mtcue.reporting.kit import (
    Runs,
    direction_key,
    display_name,
    format_cell,
    format_number,
    model_key,
    study_names,
    write_table,
)
from mtcue.reporting.render import Block


def phenomena_table(score_records: Iterable[dict], split: str = "test") -> pd.DataFrame:
    """Models x (direction, phenomenon): accuracy % and the number of judged translations."""
    rows: dict[str, dict[tuple[str, str], float]] = {}
    for r in score_records:
        if r["split"] != split:
            continue
        row = rows.setdefault(display_name(r["model"]), {})
        for name, counts in r["phenomena"].items():
            judged = counts["correct"] + counts["incorrect"]
            acc = counts["accuracy"]
            row[(r["direction"], f"{name} %")] = math.nan if acc is None else 100 * acc
            row[(r["direction"], f"{name} judged")] = judged
    if not rows:
        raise ValueError(f"no {split} score records to tabulate")
    names = sorted(rows, key=model_key)
    columns = sorted({c for row in rows.values() for c in row}, key=lambda c: (direction_key(c[0]), c[1]))
    # A model with no labelled direction (into English only) keeps its row, all NaN.
    return pd.DataFrame([[rows[n].get(c, math.nan) for c in columns] for n in names], dtype=float,
                        index=pd.Index(names, name="model"),
                        columns=pd.MultiIndex.from_tuples(columns, names=["group", "metric"]))


def phenomena_blocks(df: pd.DataFrame) -> list[Block]:
    """One block per phenomenon (pooled `all` first), directions as columns where any model was
    judged on it, each cell "accuracy (judged)". The paper has no such table."""
    names = sorted({m.removesuffix(" %") for _, m in df.columns if m.endswith(" %")}, key=lambda n: (n != ALL, n))
    blocks = []
    for name in names:
        judged = df.xs(f"{name} judged", axis=1, level=1)
        accuracy = df.xs(f"{name} %", axis=1, level=1)
        shown = [d for d in judged.columns if judged[d].fillna(0).gt(0).any()]
        if not shown:
            continue
        cells = pd.DataFrame({d: [f"{format_cell(a)} ({format_number(n, 0)})" for a, n in zip(accuracy[d], judged[d])]
                              for d in shown}, index=df.index)
        heading = "all phenomena, pooled" if name == ALL else name.replace("_", " ")
        blocks.append(Block(heading, cells))
    return blocks


def write_phenomena_table(df: pd.DataFrame, score_records: Sequence[dict], csv_path: str | Path,
                          md_path: str | Path, runs: Runs | None = None) -> None:
    studies = study_names(score_records)
    footnotes = [
        "Per phenomenon (formality of address, speaker/addressee gender, addressee number): "
        "100 * correct / (correct + incorrect) over the labelled test samples, and in brackets the "
        "number of translations judged (the CSV's `judged`): those that contained a marker of exactly one "
        "side. `all phenomena, pooled` is the quality table's phenomena block. Only directions with "
        "judged translations are shown (English marks none of these phenomena).",
        "The paper reports no per-phenomenon accuracy on its OpenSubtitles test sets; its Table 5 "
        "(IWSLT22 formality) and Figure 4 (EAMT22 speaker/addressee attributes) test some of these "
        "phenomena on other data.",
    ]
    title = f"Context-determined phenomena, study {studies}"
    write_table(df, csv_path, md_path, title, footnotes, runs=runs, blocks=phenomena_blocks(df))
