"""The shortening paper's Figure 3: a heat map per Latent Grouping / Selecting model of the weight of each piece
of one sentence in each of its K groups (evaluation.groupings), from the groupings records; CSV and SVG."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mtcue.io import atomic_write_text
from mtcue.plots import grid, save_svg
from mtcue.reporting.kit import Runs, display_name

COLUMNS = ["direction", "model", "run", "sentence", "piece_index", "piece", "group", "weight"]


def groupings_frame(records: Sequence[dict], runs: Runs) -> pd.DataFrame:
    """One row per (record, piece, group): the piece's weight in the group; `run` the name of the model's MLflow run."""
    rows = [{"direction": r["direction"], "model": r["model"], "run": runs.name(r["direction"], r["model"]),
             "sentence": r["sentence"], "piece_index": i, "piece": piece, "group": k + 1, "weight": weight}
            for r in records for i, (piece, row) in enumerate(zip(r["pieces"], r["weights"], strict=True))
            for k, weight in enumerate(row)]
    return pd.DataFrame(rows, columns=COLUMNS)


def plot(records: Sequence[dict]):
    """A panel per record: groups down, the sentence's pieces across, darker = more weight (as the paper's
    Figure 3); the title says how many of the K groups hold any weight."""
    fig, axes = grid(len(records), ncols=1, extra_height=0.2)
    fig.set_size_inches(max(6.0, 0.45 * max(len(r["pieces"]) for r in records)), 2.6 * len(records) + 0.2)
    for ax, r in zip(axes, records):
        weights = [list(column) for column in zip(*r["weights"])]  # [K][pieces]
        image = ax.imshow(weights, cmap="Greys", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_xticks(range(len(r["pieces"])), [p.replace("\u2581", "_") for p in r["pieces"]], rotation=60,
                      fontsize=7, ha="right")
        ax.set_yticks(range(r["groups"]), [str(k + 1) for k in range(r["groups"])], fontsize=7)
        ax.set_ylabel("group")
        ax.set_title(f"{r['direction']}, {display_name(r['model'])}: {r['used']} of {r['groups']} groups used",
                     fontsize=9)
        fig.colorbar(image, ax=ax, fraction=0.03)
    fig.tight_layout()
    return fig


def write_groupings(records: Sequence[dict], runs: Runs, csv: str | Path, svg: str | Path) -> pd.DataFrame:
    if not records:
        raise ValueError("no groupings records: nothing for the shortening paper's Figure 3 to draw")
    frame = groupings_frame(records, runs)
    atomic_write_text(csv, frame.to_csv(index=False, float_format="%.6f"))
    save_svg(plot(records), svg)
    return frame
