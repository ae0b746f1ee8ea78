"""Table 6 (ablations) from records only.

Each row is a model (MTCUE with one part switched off, or BASE) under its Table 6 label; the
first row is the full model and every other row is compared with it: quality per direction with
its difference to the full model (paired bootstrap for BLEU), the two zero-shot accuracies from
the records of the formality and few-shot experiments, and the paper's row beside. A zero-shot
column without records must come with the reason (shown as n/a), never silently empty.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np
import pandas as pd

from mtcue.evaluation.score import bleu_from_stats, paired_bootstrap
from mtcue.paper import PAPER_FIGURES
from mtcue.reporting.kit import (
    BOOTSTRAP,
    NA,
    Bootstrap,
    Runs,
    display_name,
    format_cell,
    read_table_csv,
    study_names,
    write_table,
)
from mtcue.reporting.quality import QUALITY_COLUMNS, _comet_footnotes, _quality_records, quality_table
from mtcue.reporting.render import Block

PAPER_ABLATION_CSV = PAPER_FIGURES / "mtcue_table6_ablation.csv"
QUALITY = [c for c in QUALITY_COLUMNS if c.source != "paper"]  # BLEU, COMET, phenomena %
SIGNIFICANT = "†"


@dataclass(frozen=True)
class ZeroShotTask:
    """A zero-shot column: the accuracy `field` (a fraction) of `kind` records, shown x100."""

    kind: str    # record kind: results/records/{kind}/{direction}/{model}.json
    label: str
    field: str
    paper: str   # its column in the paper's CSV
    described: str


ZEROSHOT_TASKS = (
    ZeroShotTask("formality", "IWSLT22 formality", "average", "zeroshot_acc_iwslt22_de",
                 "mean of the formal and the informal best-prompt accuracy (paper appendix D)"),
    ZeroShotTask("eamt22", "EAMT22", "accuracy_mean", "zeroshot_acc_eamt22",
                 "mean attribute accuracy given the attribute sentences as context, without fine-tuning"),
)
PAPER_COLUMNS = {"comet_en-de": "COMET en-de", "comet_en-fr": "COMET en-fr", "comet_en-pl": "COMET en-pl",
                 **{t.paper: t.label for t in ZEROSHOT_TASKS}}


def _zeroshot_group(task: ZeroShotTask, direction: str) -> str:
    """The column group of a zero-shot task: its label and direction."""
    return f"{task.label} {direction}".strip()


def _zeroshot_values(task: ZeroShotTask, rows: Mapping[str, str], records: Sequence[dict],
                     direction: str) -> dict[str, float]:
    """{model: accuracy %} of every row model, from its record in `direction`."""
    by_model = {}
    for r in records:
        if r["direction"] != direction:
            raise ValueError(f"{task.kind} record of {r['model']} is for {r['direction']}, the table shows {direction}")
        if r["model"] in by_model:
            raise ValueError(f"two {task.kind} records for model {r['model']} in {direction}")
        value = r.get(task.field)
        if value is not None and (not isinstance(value, (int, float)) or not 0 <= value <= 1):
            raise ValueError(f"{task.kind} record of {r['model']} ({direction}): '{task.field}' must be an "
                             f"accuracy in [0, 1] or null (nothing judged), got {value!r}")
        by_model[r["model"]] = math.nan if value is None else 100 * value
    missing = [m for m in rows.values() if m not in by_model]
    if missing:
        raise ValueError(f"no {task.kind} record in {direction} for {missing}: give one per row, or the reason "
                         f"the column is unavailable")
    return by_model


def ablation_table(
    rows: Mapping[str, str],
    score_records: Sequence[dict],
    comet_records: Sequence[dict] = (),
    zeroshot: Mapping[str, Sequence[dict]] | None = None,
    zeroshot_directions: Mapping[str, str] | None = None,
    unavailable: Mapping[str, str] | None = None,
    split: str = "valid",
    paper_csv: str | Path | Traversable = PAPER_ABLATION_CSV,
    bootstrap: Bootstrap = BOOTSTRAP,
    seeds: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """(ablation, model) x (group, metric). `rows`: label -> model, the first the full model.
    `zeroshot`: {record kind: records} and `zeroshot_directions`: {kind: direction} of each task
    in ZEROSHOT_TASKS, or `unavailable`: {kind: why there are none}. `seeds`: {row model: its runs}
    (experiments.ablation.plan's Ablation.seeds; default one run, the model itself): each value is the mean over the
    row's runs, with its sample standard deviation in "<metric> sd" (NaN for one run) and the
    number of runs in ("", "n_seeds"); Δ is the difference of the means; the BLEU p-value and the
    paper's figures are those of the first runs."""
    runs = {m: list((seeds or {}).get(m) or [m]) for m in rows.values()}
    frames = [_one_run_table({label: runs[m][min(k, len(runs[m]) - 1)] for label, m in rows.items()}, score_records,
                             comet_records, zeroshot, zeroshot_directions, unavailable, split, paper_csv, bootstrap)
              for k in range(max(len(r) for r in runs.values()))]
    first = frames[0]
    first.index = pd.MultiIndex.from_tuples(list(rows.items()), names=["ablation", "model"])
    n_seeds = [len(runs[m]) for m in rows.values()]
    out: dict[tuple[str, str], list[float]] = {("", "n_seeds"): n_seeds}
    for group, metric in first.columns:
        if group == "paper" or metric == "BLEU p":
            out[(group, metric)] = first[(group, metric)].tolist()
            continue
        if metric.endswith(" Δ") or metric == "Δ":
            continue
        per_run = np.array([f[(group, metric)].to_numpy() for f in frames])   # runs x rows
        values = [per_run[:n, i] for i, n in enumerate(n_seeds)]
        means = [float(np.mean(v)) for v in values]
        out[(group, metric)] = means
        out[(group, f"{metric} sd")] = [float(np.std(v, ddof=1)) if len(v) > 1 else math.nan for v in values]
        out[(group, "Δ" if metric == "accuracy %" else f"{metric} Δ")] = [m - means[0] for m in means]
    order = [("", "n_seeds")] + [c for col in first.columns if col in out
                                 for c in (col, (col[0], f"{col[1]} sd")) if c in out]
    order += [c for c in out if c not in order]
    df = pd.DataFrame({c: out[c] for c in order}, index=first.index, dtype=float)
    df.columns = pd.MultiIndex.from_tuples(df.columns, names=["group", "metric"])
    df[("", "n_seeds")] = df[("", "n_seeds")].astype(int)
    return df


def _one_run_table(rows: Mapping[str, str], score_records: Sequence[dict], comet_records: Sequence[dict],
                   zeroshot: Mapping[str, Sequence[dict]] | None, zeroshot_directions: Mapping[str, str] | None,
                   unavailable: Mapping[str, str] | None, split: str, paper_csv: str | Path | Traversable,
                   bootstrap: Bootstrap) -> pd.DataFrame:
    """ablation_table of one run per row (`rows`: label -> that run)."""
    zeroshot, zeroshot_directions, unavailable = zeroshot or {}, zeroshot_directions or {}, unavailable or {}
    if not rows:
        raise ValueError("no ablation rows")
    full = next(iter(rows.values()))
    q = _quality_records(score_records, comet_records, split)
    quality = quality_table(score_records, comet_records, split=split, columns=QUALITY)
    names = {model: display_name(model) for model in rows.values()}
    for d in q.directions:
        missing = [m for m in rows.values() if q.record("score", names[m], d) is None]
        if missing:
            raise ValueError(f"no {split} score record in {d} for {missing}")
    table: dict[tuple[str, str], list[float]] = {}
    for d in q.directions:
        for col in QUALITY:
            values = [quality.loc[names[m], (d, col.label)] for m in rows.values()]
            table[(d, col.label)] = values
            table[(d, f"{col.label} Δ")] = [v - values[0] for v in values]
            if col.label == "BLEU":
                table[(d, "BLEU p")] = [_p_value(q.record("score", names[full], d), q.record("score", names[m], d),
                                                 bootstrap) for m in rows.values()]
    for task in ZEROSHOT_TASKS:
        direction = zeroshot_directions.get(task.kind, "")
        group = _zeroshot_group(task, direction)
        if task.kind in unavailable:
            values = [math.nan] * len(rows)
        elif zeroshot.get(task.kind):
            by_model = _zeroshot_values(task, rows, zeroshot[task.kind], direction)
            values = [by_model[m] for m in rows.values()]
        else:
            raise ValueError(f"no {task.kind} records and no reason why: pass the records or say why they are unavailable")
        table[(group, "accuracy %")] = values
        table[(group, "Δ")] = [v - values[0] for v in values]
    paper = read_table_csv(paper_csv).set_index("ablation")
    for column, label in PAPER_COLUMNS.items():
        table[("paper", label)] = [float(paper.loc[row, column]) if row in paper.index else math.nan for row in rows]
    df = pd.DataFrame(table, index=pd.MultiIndex.from_tuples(list(rows.items()), names=["ablation", "model"]),
                      dtype=float)
    df.columns.names = ["group", "metric"]
    return df


def _p_value(full: dict, other: dict, bootstrap: Bootstrap) -> float:
    """Paired bootstrap p-value that the better-scoring of the two is better than the other."""
    if full is other:
        return math.nan
    a, b = np.asarray(full["segment_stats"], dtype=float), np.asarray(other["segment_stats"], dtype=float)
    if bleu_from_stats(b.sum(0)) > bleu_from_stats(a.sum(0)):
        a, b = b, a
    return paired_bootstrap(a, b, bleu_from_stats, bootstrap.n, bootstrap.seed)["p_value"]


def ablation_display(df: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Markdown cells: each value (a mean over seeds: "± sd") with its difference to the full model,
    "96.23 ± 0.30 (-0.41)", BLEU with † where the difference is significant; the paper's figures as
    they are."""
    cells: dict[tuple[str, str], list[str]] = {("", "model"): list(df.index.get_level_values("model"))}
    if ("", "n_seeds") in df.columns:
        cells[("", "runs")] = [str(int(n)) for n in df[("", "n_seeds")]]
    for group, metric in df.columns:
        if metric.endswith((" Δ", " p", " sd")) or metric in ("Δ", "n_seeds"):
            continue
        delta = next((df[c] for c in ((group, f"{metric} Δ"), (group, "Δ")) if c in df.columns), None)
        sd = df[(group, f"{metric} sd")] if (group, f"{metric} sd") in df.columns else None
        shown = []
        for i, value in enumerate(df[(group, metric)]):
            text = format_cell(value)
            if sd is not None and not pd.isna(sd.iloc[i]) and not pd.isna(value):
                text += f" ± {sd.iloc[i]:.2f}"
            if delta is not None and i and not pd.isna(delta.iloc[i]):
                text += f" ({delta.iloc[i]:+.2f})"
                p = df[(group, "BLEU p")].iloc[i] if metric == "BLEU" else math.nan
                text += SIGNIFICANT if p <= alpha else ""
            shown.append(text)
        cells[(group, metric)] = shown
    display = pd.DataFrame(cells, index=pd.Index(df.index.get_level_values("ablation"), name="ablation"))
    display.columns = [metric if not group else f"{group} {metric}" for group, metric in display.columns]
    return display


def ablation_footnotes(df: pd.DataFrame, score_records: Sequence[dict], comet_records: Sequence[dict],
                       unavailable: Mapping[str, str], split: str, bootstrap: Bootstrap) -> list[str]:
    q = _quality_records(score_records, comet_records, split)
    full, full_model = df.index[0]
    signatures = sorted({cell["score"]["bleu_signature"] for cell in q.cells.values()})
    not_in_paper = [label for (label, _), absent in zip(df.index, df["paper"].isna().all(axis=1)) if absent]
    runs = df[("", "n_seeds")]
    notes = [
        f"Every row is compared with the first, {full} ({full_model}): (±x) is the row minus the full model. "
        f"Quality on the {split} split of each direction (the paper's Table 6 used the validation sets).",
        f"runs: fine-tunings with different seeds (BASE, trained from scratch, once); each cell is their mean "
        f"{'± sample standard deviation' if runs.max() > 1 else '(one run)'}, Δ the difference of the means, "
        f"p and {SIGNIFICANT} compare the first runs."
        "BLEU: sacrebleu on detokenised output, signature " + ", ".join(f"`{s}`" for s in signatures) + f". "
        f"{SIGNIFICANT}: BLEU differs significantly from the full model's (paired bootstrap resampling, "
        f"p <= {bootstrap.alpha}; {bootstrap.n} resamples, seed {bootstrap.seed}); the CSV has each p-value.",
        *_comet_footnotes(q),
        "phenomena %: accuracy on the context-determined phenomena (as in Table 4); English marks none, "
        f"so {NA} into English.",
    ]
    for task in ZEROSHOT_TASKS:
        group = next(g for g, _ in df.columns if g.startswith(task.label))
        notes.append(f"{group}: {NA}, {unavailable[task.kind]}." if task.kind in unavailable else
                     f"{group}: {task.described}, from the `{task.kind}` records.")
    notes.append("paper: the MTCue paper's Table 6 (COMET x100 on the OpenSubtitles18 validation sets, zero-shot "
                 "accuracy on IWSLT22 (DE) and EAMT22), single full-scale runs, shown for orientation only"
                 + (f"; not in the paper: {', '.join(not_in_paper)}." if not_in_paper else "."))
    return notes


def write_ablation_table(*, rows: Mapping[str, str], score_records: Sequence[dict], csv: str | Path, md: str | Path,
                         comet_records: Sequence[dict] = (), formality_records: Sequence[dict] = (),
                         eamt22_records: Sequence[dict] = (), zeroshot_directions: Mapping[str, str] | None = None,
                         unavailable: Mapping[str, str] | None = None, split: str = "valid",
                         bootstrap: Bootstrap = BOOTSTRAP, runs: Runs | None = None,
                         seeds: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Table 6: numbers (with Δ and p columns) in the CSV, "value (Δ)" cells in the Markdown; with
    `runs`, the MLflow run of each quality direction's and each available zero-shot task's cells. The zero-shot
    columns' records: `formality_records` (IWSLT22) and `eamt22_records`."""
    zeroshot_directions, unavailable = zeroshot_directions or {}, unavailable or {}
    zeroshot = {"formality": formality_records, "eamt22": eamt22_records}
    df = ablation_table(rows, score_records, comet_records, zeroshot, zeroshot_directions, unavailable, split,
                        bootstrap=bootstrap, seeds=seeds)
    title = f"Ablations, study {study_names(score_records)} (cf. MTCue paper, Table 6)"
    footnotes = ablation_footnotes(df, score_records, comet_records, unavailable, split, bootstrap)
    tasks = {_zeroshot_group(t, zeroshot_directions.get(t.kind, "")): t for t in ZEROSHOT_TASKS}
    run_groups = {g: g for g in df.columns.get_level_values(0).unique() if g not in tasks and g not in ("paper", "")}
    run_groups |= {g: zeroshot_directions[t.kind] for g, t in tasks.items() if t.kind not in unavailable}
    display = ablation_display(df, bootstrap.alpha)
    rows_of = dict(zip(df.index.get_level_values("ablation"), df.index.get_level_values("model")))
    blocks = [runs.linked(Block("", display), rows_of)] if runs else []
    write_table(df, csv, md, title, footnotes, display, runs=runs, blocks=blocks, run_groups=run_groups)
    return df
