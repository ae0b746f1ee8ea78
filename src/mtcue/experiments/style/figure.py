"""The style level sweep (Jeong et al.'s style-control models): formal accuracy and meaning preservation
of each model's output at each style level on Table 5's test set, from the supervised formality records
only (`levels`). Does formality rise monotonically with the level (for style_dim, the continuous value
level - 3), and what does it cost in meaning (Jeong et al.'s Table 1 reports both)? CSV and SVG.
"""
from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mtcue.io import atomic_write_text
from mtcue.reporting.kit import display_name

COLUMNS = ["direction", "model", "level", "formal_accuracy", "meaning_chrf"]


def style_levels_frame(records: Sequence[dict]) -> pd.DataFrame:
    """One row per (direction, model, level): the formal accuracy in % (FORMAL / (FORMAL + INFORMAL) of the
    output at that level; NaN where nothing was judged) and its meaning preservation, mean sentence chrF
    against the references (evaluation.formality.meaning_chrf). Records without `levels` are left out."""
    rows = [{"direction": r["direction"], "model": r["model"], "level": entry["level"],
             "formal_accuracy": float("nan") if entry["formal_accuracy"] is None else 100 * entry["formal_accuracy"],
             "meaning_chrf": entry["meaning_chrf"]}
            for r in records for entry in r.get("levels", [])]
    return pd.DataFrame(rows, columns=COLUMNS).sort_values(["direction", "model", "level"], kind="stable",
                                                           ignore_index=True)


def monotonic(frame: pd.DataFrame) -> dict[tuple[str, str], bool]:
    """{(direction, model): whether formal accuracy never falls from one level to the next}."""
    return {key: bool(group["formal_accuracy"].is_monotonic_increasing)
            for key, group in frame.groupby(["direction", "model"], sort=False)}


# The figure's rows: what each panel of a direction's column draws.
PANELS = (("formal_accuracy", "formal accuracy (%)"), ("meaning_chrf", "meaning preservation (chrF)"))


def plot(frame: pd.DataFrame):
    from matplotlib.figure import Figure

    directions = list(dict.fromkeys(frame["direction"]))
    models = list(dict.fromkeys(frame["model"]))
    colours = dict(zip(models, [f"C{i % 10}" for i in range(len(models))]))  # one colour per model in every panel
    fig = Figure(figsize=(4.5 * max(len(directions), 1), 7.6))
    axes = fig.subplots(len(PANELS), max(len(directions), 1), squeeze=False)
    for column, direction in enumerate(directions):
        mine = frame[frame["direction"] == direction]
        for row, (measure, label) in enumerate(PANELS):
            ax = axes[row][column]
            for model, group in mine.groupby("model", sort=False):
                ax.plot(group["level"], group[measure], marker="o", color=colours[model], label=display_name(model))
            ax.set_title(direction if row == 0 else "")
            ax.set_xlabel("style level (style_dim: value = level - 3)")
            ax.set_xticks(sorted(mine["level"].unique()))
            ax.set_ylim(-2, 102)
            ax.grid(alpha=0.3)
            if column == 0:
                ax.set_ylabel(label)
    handles = {h.get_label(): h for ax in axes[0] for h in ax.get_lines()}
    fig.legend(list(handles.values()), list(handles), fontsize=7, loc="lower center", ncol=min(len(handles), 3))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def write_style_levels(records: Sequence[dict], csv: str | Path, svg: str | Path) -> pd.DataFrame:
    frame = style_levels_frame(records)
    atomic_write_text(csv, frame.to_csv(index=False, float_format="%.2f"))
    buffer = io.StringIO()
    plot(frame).savefig(buffer, format="svg", metadata={"Date": None})
    atomic_write_text(svg, buffer.getvalue())
    return frame
