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
from mtcue.reporting.kit import NA, display_name, format_number
from mtcue.reporting.render import markdown_table
from mtcue.reporting.results import Run

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


# The README's section: the sweep's levels, and how Table 5 names a supervised row
LEVELS = (1, 2, 3, 4, 5)
SUPERVISED = " (supervised)"


def style_section(run: Run) -> list[str]:
    """Supervised style control: formal accuracy and meaning preservation (chrF) at each level of the sweep per
    direction and model, whether formality rises with the level, and the Table 5 average at the extremes
    (levels 5 and 1) with its interval."""
    levels, table5 = run.style_levels, run.table5
    if levels is None or levels.empty:
        return []
    sweep = levels.pivot_table(index=["direction", "model"], columns="level", values="formal_accuracy")
    meaning = levels.pivot_table(index=["direction", "model"], columns="level", values="meaning_chrf").reindex(sweep.index)
    display = pd.DataFrame(index=pd.Index([f"{d}, {display_name(m)}" for d, m in sweep.index], name="model"))
    for level in LEVELS:
        missing = pd.Series(index=sweep.index, dtype=float)
        display[f"level {level}"] = [f"{format_number(f, 1)} / {format_number(c, 1)}" for f, c in
                                     zip(sweep.get(level, missing), meaning.get(level, missing))]
    display["rises with the level"] = ["yes" if row.is_monotonic_increasing and row.notna().all() else "no"
                                       for _, row in sweep.iterrows()]
    if table5 is not None:
        supervised = table5[table5["model"].str.endswith(SUPERVISED)].drop_duplicates("model").set_index("model")

        def extremes(direction: str, model: str) -> str:
            name = display_name(model) + SUPERVISED
            if name not in supervised.index or f"{direction} average" not in supervised.columns:
                return NA
            row = supervised.loc[name]
            cell = lambda column: format_number(row[f"{direction} {column}"], 1)
            return (f"{cell('formal')} / {cell('informal')} "
                    f"({cell('average')} [{cell('average low')}, {cell('average high')}])")

        display["Table 5 formal / informal (avg [95% CI])"] = [extremes(d, m) for d, m in sweep.index]
    return ["Supervised style control (Jeong et al.'s Korean–English style-control paper; `results/figures/style_levels.svg`, rows "
            "\"(supervised)\" of Table 5): formal share (%) / meaning preservation (mean sentence chrF against the "
            "references, Jeong et al.'s Table 1 semantic score) of each model's output on Table 5's test set at each "
            "style level (1 informal ... 5 formal), and Table 5's accuracy at levels 5 and 1 beside MTCUE's zero-shot "
            "figures above; one run each:", "", *markdown_table(display)]
