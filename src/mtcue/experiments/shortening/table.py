"""The shortening paper's Tables 2 (en-de) and 3 (en-fr): BLEU and contrastive accuracy per model
and context size, the accuracy also by antecedent distance, ours beside the paper's (IWSLT17; ContraPro
for en-de, Lopes et al. for en-fr), both by the paper's measure (MEASURE). Built from score and
contrastive records only."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mtcue.experiments.contrastive.table import MEAN_MEASURE as MEASURE
from mtcue.experiments.contrastive.table import PAPER_CONTRASTIVE_CSV, PAPER_SUITES
from mtcue.reporting.kit import NA, Runs, format_number, per_direction, read_table_csv, study_names, write_table
from mtcue.reporting.render import Block, markdown_table
from mtcue.reporting.results import Run

# The shortening paper's row names, by model type (its Tables 2-3 and the published CSV).
PAPER_LABELS = {"base": "Sentence-level", "concat": "Single-encoder", "multi_encoder": "Multi-encoder",
                "caching_tokens": "Caching Tokens", "caching_sentence": "Caching Sentence",
                "pool_max": "Shortening - Max Pooling", "pool_mean": "Shortening - Avg Pooling",
                "pool_linear": "Shortening - Linear Pooling", "grouping": "Shortening - Grouping",
                "selecting": "Shortening - Selecting"}
OURS, PAPER = "this study", "shortening paper (IWSLT17)"
# The paper's accuracies judge each candidate by its per-token mean log-probability (MEASURE); ours beside
# them are judged the same way (the records' "mean" verdicts).


def label(cell: dict) -> str:
    """The shortening paper's row name of a cell's model type, else the config model's name."""
    return PAPER_LABELS.get(cell["type"], cell["model"])


def row_name(cell: dict) -> str:
    return label(cell) if cell["context_size"] is None else f"{label(cell)} (C={cell['context_size']})"


def our_frame(cells: Sequence[dict], scores: Sequence[dict], contrastive: Sequence[dict],
              direction: str) -> pd.DataFrame:
    """Rows: `cells` ({"model", "type", "context_size", "run"}) in order; columns BLEU, then the contrastive accuracy
    (%, candidates judged by their per-token mean score: MEASURE) of the whole suite, of its pronoun examples and
    of those with the antecedent d lines back."""
    bleu = {r["model"]: r["bleu"] for r in scores if r["direction"] == direction}
    acc = {}
    for r in contrastive:
        if r["direction"] != direction:
            continue
        if r["model"] in acc:
            raise ValueError(f"two contrastive records for {r['model']} in {direction} (suites "
                             f"{acc[r['model']]['suite']}, {r['suite']}): the table reads one suite per direction")
        acc[r["model"]] = r
    distances = sorted({d for r in acc.values() for d in r["groups"].get("distance", {})},
                       key=lambda d: (len(d), d))
    rows = {}
    for cell in cells:
        r = acc.get(cell["run"])
        groups = r["groups"] if r else {}
        row = {"BLEU": bleu.get(cell["run"], float("nan")),
               "accuracy": _mean_accuracy(r) if r else float("nan"),
               "pronouns": _mean_accuracy(groups["phenomenon"]["pronoun"])
               if "pronoun" in groups.get("phenomenon", {}) else float("nan")}
        row |= {f"d={d}": _mean_accuracy(groups["distance"][d]) if d in groups.get("distance", {}) else float("nan")
                for d in distances}
        rows[row_name(cell)] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _mean_accuracy(summary: dict) -> float:
    """The accuracy (%) of a contrastive record or group by the per-token mean score."""
    accuracy = summary["mean"]["accuracy"]
    return float("nan") if accuracy is None else 100 * accuracy


def paper_frame(cells: Sequence[dict], direction: str) -> pd.DataFrame:
    """The shortening paper's BLEU and accuracy (%) of the same rows (empty where it has none)."""
    paper = read_table_csv(PAPER_CONTRASTIVE_CSV)
    paper = paper[paper["pair"] == direction]
    index = {(p.model, int(p.context_size)): p for p in paper.itertuples()}
    rows = {}
    for cell in cells:
        p = index.get((label(cell), cell["context_size"] or 0))
        rows[row_name(cell)] = {"BLEU": p.bleu if p else float("nan"),
                                "accuracy": p.contrastive_accuracy if p else float("nan")}
    return pd.DataFrame.from_dict(rows, orient="index")


def _show(df: pd.DataFrame, digits: int) -> pd.DataFrame:
    return df.map(lambda v: NA if pd.isna(v) else f"{v:.{digits}f}")


def write_shortening_table(cells: Sequence[dict], scores: Sequence[dict], contrastive: Sequence[dict],
                           csv: str | Path, md: str | Path, runs: Runs | None = None) -> None:
    """The CSV is long: one row per (direction, row, metric, source) with the run (`model`) of ours and,
    with `runs`, its MLflow run."""
    directions = sorted({r["direction"] for r in [*scores, *contrastive]})
    long, blocks = [], []
    run_of = {row_name(c): c["run"] for c in cells}
    for direction in directions:
        ours, paper = our_frame(cells, scores, contrastive, direction), paper_frame(cells, direction)
        for source, frame in ((OURS, ours), (PAPER, paper)):
            long += [{"direction": direction, "row": row, "metric": metric, "value": value, "source": source,
                      "measure": "" if metric == "BLEU" else MEASURE, "model": run_of[row] if source == OURS else None}
                     for row, values in frame.iterrows() for metric, value in values.items() if not pd.isna(value)]
        suite = next((r["suite"] for r in contrastive if r["direction"] == direction), NA)
        shown = _show(ours, 2)
        block = Block(f"{direction}: BLEU and contrastive accuracy (%, suite {suite}, by {MEASURE})", shown,
                      _show(paper.reindex(columns=shown.columns), 2),
                      f"shortening paper, IWSLT17 ({PAPER_SUITES.get(direction, NA)})")
        blocks.append(runs.linked(block, run_of, direction) if runs else block)
    df = pd.DataFrame(long, columns=["direction", "row", "metric", "value", "source", "measure", "model"])
    if runs is not None:
        df["run"] = [runs.name(d, m) if isinstance(m, str) else None
                        for d, m in zip(df["direction"], df["model"])]
    df = df.set_index(["direction", "row", "metric", "source"])
    footnotes = [
        "C: previous sentences of context (the sentence-level model none; the single-encoder concatenation is "
        "part 1's CONCAT at C = 1 and the same model reading the C previous sentences, farthest first, at C > 1, "
        "trained per size). BLEU: sacreBLEU on the study's test split. Accuracy: share of contrastive "
        "examples whose correct translation scores strictly best by its per-token mean log-probability (`</s>` "
        "included), the shortening paper's measure (fairseq's SequenceScorer into ContraPro's evaluate.py), not "
        "the summed score of the contrastive table; pronouns: the pronoun examples; d=k: those whose antecedent "
        "is k lines back (the suite's distance groups).",
        "The shortening paper's numbers: IWSLT17 TED talks, trained from scratch, one run (seed 42); ContraPro "
        "(en-de) and Lopes et al. (en-fr) accuracy. Ours: see docs/deviations.md (the demo fine-tunes from BASE; "
        "config/paper.yaml trains from scratch).",
        f"Study: {study_names([*scores, *contrastive]) or NA}.",
        *([runs.footnote()] if runs else []),
    ]
    write_table(df, csv, md, "Sequence shortening for context-aware MT: BLEU and contrastive accuracy", footnotes,
                blocks=blocks)


def shortening_section(run: Run) -> list[str]:
    """The shortening paper's Tables 2-3 on our data: per system and context size, BLEU and the synthetic
    contrastive accuracy (all / pronouns, by the paper's per-token mean), and the pronouns by antecedent distance."""
    table = run.shortening
    if table is None or table.empty:
        return []
    ours = table[table["source"] == "this study"]
    rows = list(dict.fromkeys(ours["row"]))
    display = pd.DataFrame(index=pd.Index(rows, name="system"))
    for direction, cell in per_direction(ours, rows):
        column = cell.get
        display[f"{direction} BLEU"] = [format_number(v, 2) for v in column("BLEU", pd.Series(index=rows))]
        display[f"{direction} all / pronouns %"] = [
            f"{format_number(a, 1)} / {format_number(p, 1)}"
            for a, p in zip(column("accuracy", pd.Series(index=rows)), column("pronouns", pd.Series(index=rows)))]
        distances = sorted((c for c in cell.columns if str(c).startswith("d=")), key=lambda c: int(c[2:]))
        if distances:
            display[f"{direction} pronouns {'/'.join(distances)} %"] = [
                "/".join(format_number(cell.loc[r, d], 0) for d in distances) for r in rows]
    return ["Sequence shortening (Mąka et al. (2024), Tables 2-3 in `results/tables/shortening.md`, its IWSLT17 "
            "numbers beside): test BLEU and synthetic contrastive accuracy (all phenomena / anaphoric pronouns, and "
            "the pronouns by antecedent distance; candidates judged by their per-token mean log-probability, the "
            "paper's measure) per system and number C of previous sentences read; one run each:",
            "", *markdown_table(display.fillna(NA))]
