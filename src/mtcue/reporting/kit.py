"""The table kit every table module builds on: the paper's model order and display names, the bootstrap
settings of the marks, metric columns, the MLflow run of each number (by name), and writing a table as CSV,
Markdown and HTML (through `layout`). Markdown goes through a display frame of strings, so marks and
"mean ± sd" cells are edits of that frame.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib.resources.abc import Traversable
from pathlib import Path

import pandas as pd

from mtcue.evaluation.score import CorpusScore, SegmentStats, bleu_from_stats
from mtcue.io import atomic_write_text
from mtcue.layout import RESULTS, mlflow_page
from mtcue.reporting.render import Block, Layout, flat_columns, render_html, render_markdown
from mtcue.study import display_name


MODEL_ORDER = ("BASE", "BASE-PM", "TAGGING", "NOVOTNEY-CUE", "MTCUE")
AVERAGE = "avg"
NA = "n/a"
DIRECTION = re.compile(r"\b[a-z]{2}-[a-z]{2}\b")  # a column's language pair: en-de, "en-de BLEU"
MARKUP = {"best": "**{}**", "tied": "<u>{}</u>", "": "{}"}


@dataclass(frozen=True)
class Bootstrap:
    """Paired bootstrap settings of the marks (written into the table's footnote)."""

    n: int = 1000
    seed: int = 12345
    alpha: float = 0.05


BOOTSTRAP = Bootstrap()


@dataclass(frozen=True)
class Column:
    """One metric shown per direction. `source` names the dict its value is read from: the
    "score" record, the "comet" record, or the "paper" CSV row (label `PAPER.format(metric)`).
    A column with `segments` (per-segment statistics of a record, None when it has none) is
    marked in each direction, with significance tested on `corpus_score` of resampled
    statistics. A `labelled_only` metric exists only where the test set is labelled for it (the
    phenomena: not into English): its average leaves out the directions where no model has it."""

    label: str
    source: str
    value: Callable[[dict], float | None]
    segments: Callable[[dict], SegmentStats | None] | None = None
    corpus_score: CorpusScore = bleu_from_stats
    labelled_only: bool = False


PAPER = "paper {}"  # the label of the paper's figure for a metric


@dataclass(frozen=True)
class Runs:
    """The MLflow run of each number of a table, by name: the sync gives the run of (direction, model) of study S
    the name `{direction}/{model}` in experiment S (tags mtcue.study, mtcue.direction, mtcue.model), so a table
    names its runs from its own records, needing no sync and no other experiment's models. Its HTML links each
    number to the study's MLflow page (`page`, relative to the HTML; `mtcue track-study` writes it once the
    study is synced), which goes on to the run in the UI: run ids and the UI's address are resolved there."""

    study: str
    cells: frozenset[tuple[str, str]]  # (direction, model) of every run the table's records come from
    page: str = ""  # the study's MLflow page, as the table's HTML links to it ("": no links)

    @classmethod
    def of_records(cls, records: Iterable[dict], html: str | Path | None = None) -> Runs:
        """The runs of `records` (one study's); with `html`, the table's HTML linking to the study's MLflow page."""
        records = list(records)
        studies = sorted({r["study"] for r in records})
        page = ""
        if html and len(studies) == 1:  # a table of several studies' records names their runs only
            folder = Path(html).parent  # a study's results/tables/, else a folder beside the working directory's study
            root = folder.parent if folder.name == "tables" else RESULTS
            page = os.path.relpath(mlflow_page(studies[0], root), folder)
        # a pair's data record (Table 1's) is no model's run
        return cls(", ".join(studies), frozenset((r["direction"], r["model"]) for r in records if "model" in r), page)

    def name(self, direction: str, model: str) -> str | None:
        """The run's name, None where the table's records have no run of (direction, model)."""
        return f"{direction}/{model}" if (direction, model) in self.cells else None

    def links(self, display: pd.DataFrame, model_of: Mapping[str, str] | None = None,
              direction: str | None = None) -> pd.DataFrame | None:
        """Per cell of a table block, where its run is: the run of the row's model (`model_of[row]`; by default the
        row is a model's display name) in `direction` (by default the one its column names, `en-de BLEU`, else
        its row, `en-de all`); a row model's number of no one direction (Table 3's means) links to the list of
        its runs. None for the paper's columns and where no run of ours made the number."""
        if not self.page:
            return None

        def link(row: object, column: object) -> str | None:
            column = " ".join(column) if isinstance(column, tuple) else str(column)
            model = model_key_of(model_of.get(str(row), "") if model_of is not None else str(row))
            if PAPER.format("") in f"{column} " or not model or not self.of(model):
                return None
            found = direction or next((m.group() for m in map(DIRECTION.search, (column, str(row))) if m), None)
            run = self.name(found, model) if found else model
            return f"{self.page}#{run}" if run else None

        return pd.DataFrame([[link(row, column) for column in display.columns] for row in display.index],
                            index=display.index, columns=display.columns)

    def linked(self, block: Block, model_of: Mapping[str, str] | None = None, direction: str | None = None) -> Block:
        """`block` with its numbers linked to their runs (`links`)."""
        return replace(block, links=self.links(block.display, model_of, direction))

    def of(self, name: str) -> dict[str, str]:
        """{direction: run name} of a table row's model (a display name or a config key: keys are lower case,
        without hyphens)."""
        model = model_key_of(name)
        return {d: f"{d}/{m}" for d, m in self.cells if m == model}

    def footnote(self) -> str:
        where = f" Each number links to its run through the study's MLflow page (`{self.page}`), written once the " \
                "study is synced (`snakemake mlflow_study`)." if self.page else ""
        return (f"MLflow: experiment `{self.study}`, one run per model and direction, named `{{direction}}/{{model}}` "
                f"(the CSV's `run` columns).{where}")


def model_key_of(name: str) -> str:
    """A model's config key from its display name (MTCUE, BASE-PM) or its key."""
    return name.lower().replace("-", "_")


def with_runs(df: pd.DataFrame, runs: Runs, groups: Mapping[str, str] | None = None) -> pd.DataFrame:
    """`df` (rows: models, index level "model") with a (group, "run") column per column group whose numbers
    runs made: `groups` maps it to the direction of those runs (default: each group but the average is a
    direction). Without column groups (Table 3: rows span every direction), one "run" column listing the
    model's runs."""
    out = df.copy()
    names = df.index.get_level_values("model")
    if isinstance(df.columns, pd.MultiIndex):
        if groups is None:
            groups = {g: g for g in df.columns.get_level_values(0) if g != AVERAGE}
        for group, direction in groups.items():
            out[(group, "run")] = [runs.of(name).get(direction) for name in names]
    else:
        out["run"] = [" ".join(runs.of(name)[d] for d in sorted(runs.of(name), key=direction_key)) for name in names]
    return out


def model_key(name: str) -> tuple[int, str]:
    return (MODEL_ORDER.index(name) if name in MODEL_ORDER else len(MODEL_ORDER), name)


def direction_key(direction: str) -> tuple[bool, str]:
    # The paper's order: en->xx first, then xx->en, each by the other language.
    src, tgt = direction.split("-")
    return (src != "en", tgt if src == "en" else src)


def read_table_csv(path: str | Path | Traversable) -> pd.DataFrame:
    with (Path(path) if isinstance(path, str) else path).open("r", encoding="utf-8") as f:
        return pd.read_csv(f)


def by_cell(records: Iterable[dict], what: str) -> dict[tuple[str, str], dict]:
    """Records by (display name, direction); two for the same cell are an error."""
    cells: dict[tuple[str, str], dict] = {}
    for r in records:
        key = (display_name(r["model"]), r["direction"])
        if key in cells:
            raise ValueError(f"two {what} records for model {r['model']} and direction {r['direction']}")
        cells[key] = r
    return cells


def format_cell(value: float | str) -> str:
    if isinstance(value, str):
        return value
    return NA if pd.isna(value) else f"{value:.2f}"


def format_number(value: float, digits: int) -> str:
    return NA if pd.isna(value) else f"{value:.{digits}f}"


def format_mean_sd(mean: float, sd: float) -> str:
    return NA if pd.isna(mean) else f"{mean:.1f} ± {format_number(sd, 1)}"


def per_direction(ours: pd.DataFrame, rows: list[str]):
    """(direction, its rows × metrics frame of values, in `rows` order) for each direction of a long CSV."""
    for direction in sorted(ours["direction"].unique()):
        yield direction, ours[ours["direction"] == direction].pivot_table(
            index="row", columns="metric", values="value", aggfunc="first").reindex(rows)


def to_display(df: pd.DataFrame) -> pd.DataFrame:
    """Strings as they will appear in Markdown; edit these to add marks before rendering."""
    return df.map(format_cell)


def html_path(md_path: str | Path) -> Path:
    """Where a table's HTML rendering is written: beside its Markdown."""
    return Path(md_path).with_suffix(".html")


def write_table(
    df: pd.DataFrame, csv_path: str | Path, md_path: str | Path, title: str, footnotes: Sequence[str],
    display: pd.DataFrame | None = None, runs: Runs | None = None, blocks: Sequence[Block] = (),
    run_groups: Mapping[str, str] | None = None,
) -> None:
    """CSV with every number of `df` (NaN as empty; with `runs`, each cell's MLflow run:
    `with_runs(df, runs, run_groups)`) and, for people, Markdown and its HTML rendering
    (`html_path(md_path)`, what the report shows): `blocks` (the paper's layout), or one block of
    `display` (by default `to_display(df)`). All written atomically."""
    flat = df.copy() if runs is None else with_runs(df, runs, run_groups)
    flat.columns = flat_columns(flat.columns)
    notes = [*footnotes, runs.footnote()] if runs else footnotes
    blocks = blocks or [Block("", to_display(df) if display is None else display)]
    if runs:  # a block that links its own numbers (rows that are not models) keeps them
        blocks = [b if b.links is not None else runs.linked(b) for b in blocks]
    layout = Layout(title, blocks, notes)
    atomic_write_text(csv_path, flat.to_csv())
    atomic_write_text(md_path, render_markdown(layout))
    atomic_write_text(html_path(md_path), render_html(layout))


def study_names(records: Iterable[dict]) -> str:
    return ", ".join(sorted({r["study"] for r in records}))
