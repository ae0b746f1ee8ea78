"""Table 1 (data): pairs per language pair and the share of training samples carrying each context,
from the data records (`mtcue corpus-stats`), the paper's figures beside them."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from mtcue.corpus import MAX_PREVIOUS, META_FIELDS
from mtcue.paper import PAPER_DATA_CSV, paper_value
from mtcue.reporting.kit import NA, read_table_csv, study_names, to_display, write_table

PAIRS_ROW = "source_target_pairs"
DOC_ROWS = tuple(f"n-{j}" for j in range(1, MAX_PREVIOUS + 1))
ANY_ROW = "any_context"
ROWS = (PAIRS_ROW, *META_FIELDS, *DOC_ROWS, ANY_ROW)
OURS, PAPER = "this run", "paper"


def _by_pair(records: Iterable[dict]) -> dict[str, dict]:
    by_pair: dict[str, dict] = {}
    for r in records:
        if r["pair"] in by_pair:
            raise ValueError(f"two data records for pair {r['pair']}")
        by_pair[r["pair"]] = r
    if not by_pair:
        raise ValueError("no data records to tabulate")
    return dict(sorted(by_pair.items()))


def data_table(records: Iterable[dict], paper_csv=PAPER_DATA_CSV) -> pd.DataFrame:
    """Rows: pairs, then % of samples with each metadata field, with n-1..n-5 previous lines, with any
    context. Columns: (pair, this run | paper)."""
    by_pair = _by_pair(records)
    paper = read_table_csv(paper_csv).set_index("field")
    columns = {}
    for pair, r in by_pair.items():
        n = r["samples"]
        share = {**{f: r["meta"][f] for f in META_FIELDS}, **{f"n-{j}": r["previous"][str(j)] for j in range(1, 6)},
                 ANY_ROW: r["any_context"]}
        columns[(pair, OURS)] = [float(n), *(100 * share[row] / n if n else float("nan") for row in ROWS[1:])]
        columns[(pair, PAPER)] = [paper_value(paper[pair][row]) if pair in paper and row in paper.index
                                  else float("nan") for row in ROWS]
    df = pd.DataFrame(columns, index=pd.Index(ROWS, name="field"))
    df.columns.names = ["pair", "source"]
    return df


def _display(df: pd.DataFrame) -> pd.DataFrame:
    display = to_display(df)
    for column in df.columns:
        value = df.loc[PAIRS_ROW, column]
        display.loc[PAIRS_ROW, column] = NA if pd.isna(value) else (
            f"{value / 1e6:.1f}M" if column[1] == PAPER else f"{int(value):,}")
        for row in ROWS[1:]:
            cell = df.loc[row, column]
            display.loc[row, column] = NA if pd.isna(cell) else f"{cell:.1f}%"
    return display


def data_footnotes(records: Sequence[dict]) -> list[str]:
    by_pair = _by_pair(records)
    sources = sorted({r["source"] for r in by_pair.values()})
    notes = [
        f"{PAIRS_ROW}: training pairs after cleaning (results/clean/{{pair}}/train.jsonl); the other rows: % of "
        "them with the metadata field present, with at least j previous lines (n-j, counted on the English "
        f"side), with any context ({ANY_ROW}; the paper reports 81% on average).",
        f"{PAPER}: MTCue paper, Table 1 (OpenSubtitles18, training data).",
    ]
    if "synthetic" in sources:
        notes.append("Corpus: the synthetic dialogue corpus (no subtitle corpus is available offline): its context "
                     "shares are set to resemble Table 1; its size is the demo's, not the paper's.")
    if "opensubtitles" in sources:
        notes.append("Corpus: OpenSubtitles v2018 (OPUS), extracted with the paper's rules (docs/data.md).")
    for r in by_pair.values():
        omdb = r.get("metadata")
        if omdb and not omdb["api_key"] and not omdb["found"]:
            notes.append(f"{r['pair']}: OMDb was not queried (no OMDB_API_KEY was set), so every metadata share is "
                         "0%; see docs/data.md, 'Film metadata'.")
        elif omdb and not omdb["api_key"]:
            notes.append(f"{r['pair']}: no OMDB_API_KEY was set; metadata comes from the {omdb['found']} of "
                         f"{omdb['films']} films answered in an earlier run.")
        elif omdb:
            notes.append(f"{r['pair']}: OMDb found {omdb['found']} of {omdb['films']} films of the extraction.")
    return notes


def write_data_table(records: Sequence[dict], csv_path: str | Path, md_path: str | Path,
                     paper_csv=PAPER_DATA_CSV) -> None:
    df = data_table(records, paper_csv)
    title = f"Data, study {study_names(records)} (cf. MTCue paper, Table 1)"
    write_table(df, csv_path, md_path, title, data_footnotes(records), _display(df))
