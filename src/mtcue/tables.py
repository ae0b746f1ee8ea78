"""Result tables assembled from score records only, with the paper's figures beside them.

A table is a DataFrame indexed by model display name with two-level columns
(group, metric): group is a direction or AVERAGE. Tables are declared as a tuple of Column
specs, so new metrics (COMET) are new specs, and Markdown rendering goes through a display
frame of strings that later marks (bold best, significance) can edit before rendering.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import pandas as pd

from mtcue.records import atomic_write_text
from mtcue.score import ALL

MODEL_ORDER = ("BASE", "BASE-PM", "TAGGING", "NOVOTNEY-CUE", "MTCUE")
AVERAGE = "avg"
NA = "n/a"
PAPER_QUALITY_CSV = resources.files("mtcue") / "paper_figures" / "mtcue_table4_quality.csv"


@dataclass(frozen=True)
class Column:
    """One metric shown per direction: read from a score record, or from the paper's CSV."""

    label: str
    from_record: Callable[[dict], float | None] | None = None
    paper_field: str | None = None


def _phenomenon_pct(record: dict) -> float | None:
    acc = record["phenomena"].get(ALL, {}).get("accuracy")
    return None if acc is None else 100 * acc


QUALITY_COLUMNS = (
    Column("BLEU", from_record=lambda r: r["bleu"]),
    Column("phenomena %", from_record=_phenomenon_pct),
    Column("paper BLEU", paper_field="bleu"),
)


def display_name(model: str) -> str:
    """Config key to the paper's spelling: "base_pm" -> "BASE-PM", "mtcue" -> "MTCUE"."""
    return model.upper().replace("_", "-")


def _model_key(name: str) -> tuple[int, str]:
    return (MODEL_ORDER.index(name) if name in MODEL_ORDER else len(MODEL_ORDER), name)


def _direction_key(direction: str) -> tuple[bool, str]:
    # The paper's order: en->xx first, then xx->en, each by the other language.
    src, tgt = direction.split("-")
    return (src != "en", tgt if src == "en" else src)


def _cell(col: Column, record: dict | None, paper: pd.DataFrame, model: str, direction: str) -> float:
    if col.from_record is not None:
        value = col.from_record(record) if record is not None else None
    elif (model, direction) in paper.index:
        value = paper.loc[(model, direction), col.paper_field]
    else:
        value = None
    return math.nan if value is None else float(value)


def quality_table(
    score_records: Iterable[dict],
    paper_csv: str | Path | Traversable = PAPER_QUALITY_CSV,
    split: str = "test",
    columns: Sequence[Column] = QUALITY_COLUMNS,
) -> pd.DataFrame:
    """Models x (direction, metric) for the directions present in the records of one split,
    plus an AVERAGE group (NaN where any direction is missing)."""
    records: dict[tuple[str, str], dict] = {}
    for r in score_records:
        if r["split"] != split:
            continue
        key = (display_name(r["model"]), r["direction"])
        if key in records:
            raise ValueError(f"two {split} score records for model {r['model']} and direction {key[1]}")
        records[key] = r
    if not records:
        raise ValueError(f"no {split} score records to tabulate")
    with (Path(paper_csv) if isinstance(paper_csv, str) else paper_csv).open("r", encoding="utf-8") as f:
        paper = pd.read_csv(f).set_index(["model", "direction"])
    models = sorted({m for m, _ in records}, key=_model_key)
    directions = sorted({d for _, d in records}, key=_direction_key)
    df = pd.DataFrame(
        {
            (d, col.label): [_cell(col, records.get((m, d)), paper, m, d) for m in models]
            for d in directions
            for col in columns
        },
        index=pd.Index(models, name="model"),
        dtype=float,
    )
    for col in columns:
        df[(AVERAGE, col.label)] = df.xs(col.label, axis=1, level=1).mean(axis=1, skipna=False)
    df.columns.names = ["group", "metric"]
    return df


def quality_footnotes(score_records: Iterable[dict]) -> list[str]:
    """What the quality table's columns mean, with the BLEU signature(s) of the records."""
    signatures = sorted({r["bleu_signature"] for r in score_records})
    return [
        "BLEU: sacrebleu on detokenised output, signature " + ", ".join(f"`{s}`" for s in signatures) + ".",
        "phenomena %: accuracy on context-determined phenomena (formality, gender, ...), pooled "
        "over all labelled samples and phenomena: a translation is correct when it contains "
        "a marker word of the gold value and none of another value, incorrect in the opposite "
        "case, otherwise ignored; 100 * correct / (correct + incorrect).",
        "paper BLEU: the MTCue paper's Table 4 (OpenSubtitles18 test sets, models trained at full "
        "scale), shown for orientation only; it is not comparable to this run's data and scale.",
        f"{AVERAGE}: mean over the directions shown; {NA} where a value is missing.",
    ]


def format_cell(value: float) -> str:
    return NA if pd.isna(value) else f"{value:.2f}"


def flat_columns(columns: pd.Index) -> list[str]:
    return [" ".join(c) if isinstance(c, tuple) else str(c) for c in columns]


def to_display(df: pd.DataFrame) -> pd.DataFrame:
    """Strings as they will appear in Markdown; edit these to add marks before rendering."""
    return df.map(format_cell)


def render_markdown(display: pd.DataFrame, title: str, footnotes: Sequence[str]) -> str:
    """A GitHub Markdown table (no tabulate dependency), index first, numbers right-aligned."""
    def row(cells: Iterable[object]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    lines = [f"# {title}", "", row([display.index.name or "", *flat_columns(display.columns)]),
             row(["---", *["---:"] * display.shape[1]])]
    lines += [row([name, *values]) for name, values in zip(display.index, display.itertuples(index=False))]
    lines += ["", *[f"- {note}" for note in footnotes]]
    return "\n".join(lines) + "\n"


def write_table(
    df: pd.DataFrame, csv_path: str | Path, md_path: str | Path, title: str, footnotes: Sequence[str],
    display: pd.DataFrame | None = None,
) -> None:
    """CSV with the numbers (NaN as empty) and Markdown for people (`display`, by default
    `to_display(df)`), both written atomically."""
    flat = df.copy()
    flat.columns = flat_columns(df.columns)
    atomic_write_text(csv_path, flat.to_csv())
    atomic_write_text(md_path, render_markdown(to_display(df) if display is None else display, title, footnotes))


def write_quality_table(df: pd.DataFrame, score_records: Sequence[dict], csv_path: str | Path,
                        md_path: str | Path) -> None:
    """The quality table with its title and footnotes (signatures taken from the records)."""
    studies = ", ".join(sorted({r["study"] for r in score_records}))
    title = f"Translation quality, study {studies} (cf. MTCue paper, Table 4)"
    write_table(df, csv_path, md_path, title, quality_footnotes(score_records))


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
    df = pd.DataFrame.from_dict(rows, orient="index", dtype=float)
    df = df.loc[sorted(df.index, key=_model_key)]
    df = df[sorted(df.columns, key=lambda c: (_direction_key(c[0]), c[1]))]
    df.index.name = "model"
    df.columns.names = ["group", "metric"]
    return df


def write_phenomena_table(df: pd.DataFrame, score_records: Sequence[dict], csv_path: str | Path,
                          md_path: str | Path) -> None:
    studies = ", ".join(sorted({r["study"] for r in score_records}))
    footnotes = [
        "Per phenomenon (formality of address, speaker/addressee gender, addressee number): "
        "100 * correct / (correct + incorrect) over the labelled test samples; `judged` counts "
        "the translations that contained a marker of exactly one side. `all` pools them "
        "(the quality table's phenomena column).",
    ]
    display = to_display(df)
    for column in df.columns:
        if column[1].endswith(" judged"):
            display[column] = df[column].map(lambda v: NA if pd.isna(v) else str(int(v)))
    write_table(df, csv_path, md_path, f"Context-determined phenomena, study {studies}", footnotes, display)
