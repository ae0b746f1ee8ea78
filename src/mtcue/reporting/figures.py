"""Figures built from records only, where a reader would rather look than read (SVG, matplotlib).

Each figure is a function of records returning a matplotlib Figure; FIGURES maps its name (the
rule name, file name and `mtcue figure --kind`) to it. Lines and bars carry their model's
display name as label (and lines their curve: "MTCUE valid"), so tests read the plotted data back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mtcue.evaluation.score import ALL
from mtcue.plots import PANEL, grid, model_colours, model_legend
from mtcue.reporting.kit import MODEL_ORDER, PAPER, by_cell, direction_key, display_name, model_key
from mtcue.reporting.phenomena import phenomena_table
from mtcue.reporting.quality import PAPER_QUALITY_CSV, PAPER_QUALITY_LABEL, quality_table

def training_curves(train_records: Iterable[dict]) -> Figure:
    """Train (dashed) and valid (solid) loss per epoch, a panel per direction, a line per model;
    the best epoch is a larger dot. A model initialised from another (MTCue from BASE) continues
    from its parent's best epoch, so the x axis counts all epochs that led to a checkpoint."""
    cells = by_cell(train_records, "train")
    if not cells:
        raise ValueError("no train records to plot")
    by_direction: dict[str, dict[str, dict]] = defaultdict(dict)
    for (name, direction), r in cells.items():
        by_direction[direction][name] = r
    directions = sorted(by_direction, key=direction_key)
    names = sorted({n for n, _ in cells}, key=model_key)
    colours = model_colours(names)
    fig, axes = grid(len(directions))
    for ax, direction in zip(axes, directions):
        records = by_direction[direction]
        for name in sorted(records, key=model_key):
            r = records[name]
            parent = records.get(display_name(r["spec"].get("init_from") or ""))
            offset = parent["best_epoch"] if parent else 0
            x = [e["epoch"] + offset for e in r["epochs"]]
            ax.plot(x, [e["train_loss"] for e in r["epochs"]], ls="--", lw=1, color=colours[name], alpha=0.7,
                    label=f"{name} train")
            ax.plot(x, [e["valid_loss"] for e in r["epochs"]], ls="-", lw=1.5, marker=".", ms=3, color=colours[name],
                    label=f"{name} valid")
            ax.plot([r["best_epoch"] + offset], [r["best_valid_loss"]], "o", ms=6, color=colours[name],
                    label=f"{name} best")
        ax.set_title(direction)
        ax.set_xlabel("epoch")
        ax.set_ylabel("loss (bits per token)")
        ax.grid(alpha=0.3)
    legend = model_legend(fig, colours, names, [Line2D([], [], color="k", ls="--", lw=1, label="train"),
                                                Line2D([], [], color="k", ls="-", lw=1.5, label="valid"),
                                                Line2D([], [], color="k", ls="", marker="o", label="best valid")])
    fig.tight_layout(rect=(0, legend, 1, 1))
    return fig


def _grouped_bars(ax, table: pd.DataFrame, colours: dict[str, str]) -> None:
    """Bars of `table` (models x groups): a group per column, a bar per model (NaN: no bar)."""
    width = 0.8 / max(1, len(table.index))
    for i, name in enumerate(table.index):
        xs = [j + (i - (len(table.index) - 1) / 2) * width for j in range(len(table.columns))]
        ax.bar(xs, table.loc[name].to_numpy(dtype=float), width, color=colours[name], label=name)
    ax.set_xticks(range(len(table.columns)), list(table.columns))
    ax.grid(axis="y", alpha=0.3)


def phenomena_accuracy(score_records: Iterable[dict], split: str = "test") -> Figure:
    """Accuracy on the context-determined phenomena, a panel per phenomenon (pooled first), a bar
    per model in each direction where any model was judged on it."""
    df = phenomena_table(score_records, split)
    names = sorted({m.removesuffix(" %") for _, m in df.columns if m.endswith(" %")}, key=lambda n: (n != ALL, n))
    panels = []
    for name in names:
        judged = df.xs(f"{name} judged", axis=1, level=1)
        shown = [d for d in judged.columns if judged[d].fillna(0).gt(0).any()]
        if shown:
            panels.append((name, df.xs(f"{name} %", axis=1, level=1)[shown]))
    if not panels:
        raise ValueError(f"no {split} score record judged any phenomenon (only into-English directions?)")
    colours = model_colours(df.index)
    fig, axes = grid(len(panels), ncols=3)
    for ax, (name, accuracy) in zip(axes, panels):
        _grouped_bars(ax, accuracy, colours)
        ax.set_ylim(0, 100)
        ax.set_title("all phenomena, pooled" if name == ALL else name.replace("_", " "))
        ax.set_ylabel("accuracy %")
    fig.tight_layout(rect=(0, model_legend(fig, colours, list(df.index)), 1, 1))
    return fig


def bleu_gain(score_records: Iterable[dict], paper_csv=PAPER_QUALITY_CSV, split: str = "test") -> Figure:
    """BLEU of each model minus that of the first baseline present (BASE), per direction: this
    run beside the paper's Table 4 on the same directions. Scales differ (toy synthetic data vs
    OpenSubtitles at full scale); the comparison is of signs and order."""
    df = quality_table(score_records, (), paper_csv, split)
    reference = next((m for m in MODEL_ORDER if m in df.index), df.index[0])
    others = [m for m in df.index if m != reference]
    if not others:
        raise ValueError(f"only {reference} in the {split} score records: no gain to plot")
    colours = model_colours(df.index)
    fig = Figure(figsize=(2 * max(PANEL[0], 1.1 * len(df.columns.levels[0])), PANEL[1] + 0.8))
    axes = fig.subplots(1, 2)
    for ax, label, title in ((axes[0], "BLEU", "this run"), (axes[1], PAPER.format("BLEU"), PAPER_QUALITY_LABEL)):
        bleu = df.xs(label, axis=1, level=1)
        _grouped_bars(ax, bleu.loc[others].sub(bleu.loc[reference], axis=1), colours)
        ax.axhline(0, color="k", lw=0.8)
        ax.set_title(title)
        ax.set_ylabel(f"BLEU gain over {reference}")
    fig.tight_layout(rect=(0, model_legend(fig, colours, others), 1, 1))
    return fig


FIGURES: dict[str, Callable[..., Figure]] = {
    "training_curves": training_curves, "phenomena_accuracy": phenomena_accuracy, "bleu_gain": bleu_gain,
}
# The records each figure reads (`mtcue figure --records`).
RECORD_KIND = {"training_curves": "train", "phenomena_accuracy": "score", "bleu_gain": "score"}
