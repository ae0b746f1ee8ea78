"""Table 5 (IWSLT22 zero-shot formality control) from formality records only: per direction, each
model's best-prompt formal and informal accuracy, their average and the mean over prompts (%), the
paper's rows below; the CSV also holds every prompt's accuracy."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mtcue.reporting.layout import Block
from mtcue.reporting.tables import NA, PAPER_FIGURES, RunIds, _read_csv, _studies, display_name, write_table

PAPER_FORMALITY_CSV = PAPER_FIGURES / "mtcue_table5_iwslt22_formality.csv"
PAPER_METRICS = ("formal", "informal", "average")
# Column name -> record field.
METRICS = {"formal": "formal", "informal": "informal", "average": "average",
           "formal mean": "formal_mean", "informal mean": "informal_mean"}


def formality_table(records: Sequence[dict], models: Sequence[str]) -> pd.DataFrame:
    """Rows: `models` (display names) in that order; columns (direction, metric), accuracies in %:
    METRICS, then `prompt <id>` for every prompt of the direction."""
    directions = sorted({r["direction"] for r in records})
    by_cell = {}
    for r in records:
        if (r["model"], r["direction"]) in by_cell:
            raise ValueError(f"two formality records for model {r['model']} and direction {r['direction']}")
        by_cell[(r["model"], r["direction"])] = r
    rows = {}
    for model in models:
        row = {}
        for direction in directions:
            record = by_cell.get((model, direction), {})
            for metric, field in METRICS.items():
                row[(direction, metric)] = _percent(record.get(field))
            for prompt in record.get("prompts", []):
                if prompt["attribute"]:
                    row[(direction, f"prompt {prompt['id']}")] = _percent(prompt["accuracy"])
        rows[display_name(model)] = row
    df = pd.DataFrame.from_dict(rows, orient="index")
    columns = [(d, m) for d in directions for m in METRICS] + sorted(c for c in df.columns if c[1] not in METRICS)
    df = df[sorted(columns, key=lambda c: (directions.index(c[0]), columns.index(c)))]
    df.columns = pd.MultiIndex.from_tuples(df.columns, names=["direction", "metric"])
    return df.rename_axis("model")


def _percent(value: float | None) -> float:
    return float("nan") if value is None else 100 * value


def _display(df: pd.DataFrame, direction: str) -> pd.DataFrame:
    return df[direction][list(METRICS)].map(lambda v: NA if pd.isna(v) else f"{v:.1f}")


def _paper(direction: str) -> pd.DataFrame | None:
    paper = _read_csv(PAPER_FORMALITY_CSV)
    paper = paper[paper["pair"] == direction]
    if paper.empty:
        return None
    rows = paper.assign(model=paper["model"] + " (" + paper["supervision"] + ")").set_index("model")
    return rows[list(PAPER_METRICS)].map(lambda v: f"{v:.1f}")


def _prompts_note(records: Sequence[dict], direction: str) -> str:
    best = [f"{display_name(r['model'])}: {r['best_prompt']['formal']} / {r['best_prompt']['informal']}"
            for r in records if r["direction"] == direction and r["prompts"] and r["prompts"][0]["attribute"]]
    return "Best prompt (formal / informal): " + "; ".join(best) + "." if best else ""


def write_formality_table(records: Sequence[dict], models: Sequence[str], csv: str | Path, md: str | Path,
                          run_ids: RunIds | None = None) -> None:
    df = formality_table(records, models)
    prompts = {p["id"]: p["text"] for r in records for p in r["prompts"] if p["attribute"]}
    blocks = [Block(direction, _display(df, direction), _paper(direction), "paper, Table 5",
                    _prompts_note(records, direction)) for direction in df.columns.get_level_values(0).unique()]
    test_sets = sorted({f"{r['direction']}: {r['lines']} lines of {r['test_set']}" for r in records})
    footnotes = [
        "formal / informal: the share of judged outputs in the requested register (FORMAL / (FORMAL + "
        "INFORMAL), the official IWSLT22 rule; outputs with no or both registers' phrases are left out), with "
        "the best of the prompts for that register; average: their mean; formal mean, informal mean: the mean "
        "over the register's prompts (the CSV has each prompt's). A model without context translates "
        "once: its two accuracies are the two shares of one output and sum to 100.",
        "Prompts: " + "; ".join(f"{i} \"{t}\"" for i, t in prompts.items()) + ".",
        "Test sets: " + "; ".join(test_sets) + ".",
    ]
    write_table(df, csv, md, f"Table 5: IWSLT22 zero-shot formality | {_studies(records)}", footnotes,
                blocks=blocks, run_ids=run_ids)
