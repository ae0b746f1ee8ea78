"""Figure 4 (EAMT22 few-shot): mean attribute accuracy and BLEU against the number of supervised
(annotated) training lines, MTCUE against TAGGING, built from EAMT22 records only, with the paper's
anchors (section 4) beside ours."""
from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mtcue.evaluation.eamt22 import ATTRIBUTES
from mtcue.io import atomic_write_text
from mtcue.reporting.tables import PAPER_FIGURES, RunIds

PAPER_ANCHORS_CSV = PAPER_FIGURES / "mtcue_eamt22_anchors.csv"
COLUMNS = ["direction", "model", "setting", "per_combination", "samples", *ATTRIBUTES, "accuracy_mean", "bleu",
           "source", "note", "run_id"]


def _pct(value: float | None) -> float:
    return math.nan if value is None else 100 * value


def figure4_frame(records: Sequence[dict], points: Sequence[dict], run_ids: RunIds | None = None) -> pd.DataFrame:
    """One row per point (config.fewshot_points: direction, model, setting, per_combination, record) from
    its EAMT22 record, accuracies in %, with the MLflow run of the record's model (given `run_ids`); then
    the paper's anchors (source "paper") for the paper's pair."""
    by_key = {(r["direction"], r["model"]): r for r in records}
    rows = []
    for p in points:
        record = by_key.get((p["direction"], p["record"]))
        if record is None:
            raise ValueError(f"no EAMT22 record of {p['direction']}/{p['record']} (point {p['model']}, "
                             f"setting {p['setting']})")
        rows.append({"direction": p["direction"], "model": p["model"], "setting": p["setting"],
                     "per_combination": p["per_combination"], "samples": record["supervised_samples"],
                     **{a: _pct(record["attributes"][a]["accuracy"]) for a in ATTRIBUTES},
                     "accuracy_mean": _pct(record["accuracy_mean"]), "bleu": record["bleu"],
                     "source": "ours", "note": "",
                     "run_id": run_ids.runs.get(f"{p['direction']}/{p['record']}") if run_ids else None})
    paper = pd.read_csv(io.StringIO(PAPER_ANCHORS_CSV.read_text()))
    for a in paper.itertuples():
        rows.append({"direction": "en-pl", "model": a.model, "setting": a.setting, "per_combination": math.nan,
                     "samples": a.supervised_samples, **{attr: math.nan for attr in ATTRIBUTES},
                     "accuracy_mean": a.accuracy_mean, "bleu": a.bleu, "source": "paper",
                     "note": "lower bound" if a.relation == ">" else "", "run_id": None})
    return pd.DataFrame(rows, columns=COLUMNS)


def plot_figure4(frame: pd.DataFrame, png: str | Path) -> None:
    """Per direction, mean accuracy and BLEU against supervised lines (symmetric log scale: 0 is the
    zero-shot setting); the baseline as a horizontal line; paper anchors as open markers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ours = frame[frame["source"] == "ours"]
    directions = list(dict.fromkeys(ours["direction"]))
    fig, axes = plt.subplots(len(directions), 2, figsize=(10, 3.6 * len(directions)), squeeze=False)
    for row, direction in zip(axes, directions):
        here = ours[ours["direction"] == direction]
        paper = frame[(frame["source"] == "paper") & (frame["direction"] == direction)]
        for ax, metric, label in ((row[0], "accuracy_mean", "mean attribute accuracy (%)"), (row[1], "bleu", "BLEU")):
            for i, (model, points) in enumerate(here[here["setting"] != "baseline"].groupby("model", sort=False)):
                points = points.sort_values("samples")
                ax.plot(points["samples"], points[metric], marker="o", color=f"C{i}", label=model.upper())
                anchors = paper[(paper["model"] == model) & paper[metric].notna()]
                ax.scatter(anchors["samples"], anchors[metric], marker="^", facecolors="none", edgecolors=f"C{i}",
                           s=60, label=f"{model.upper()} (paper{', lower bounds' if (anchors['note'] != '').any() else ''})")
            for _, base in here[here["setting"] == "baseline"].iterrows():
                ax.axhline(base[metric], color="grey", linestyle="--", label=f"{base['model'].upper()} (no context)")
            base_paper = paper[(paper["setting"] == "baseline") & paper[metric].notna()]
            if len(base_paper):
                ax.axhline(base_paper[metric].iloc[0], color="grey", linestyle=":", label="no context (paper)")
            ax.set_xscale("symlog", linthresh=1)
            ax.set_xlabel("supervised (annotated) training lines")
            ax.set_ylabel(label)
            ax.set_title(f"EAMT22 {direction}: {label}")
            ax.grid(alpha=0.3)
        row[1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(png).with_name(f".{Path(png).name}.tmp.png")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    tmp.replace(png)


def write_figure4(records: Sequence[dict], points: Sequence[dict], csv: str | Path, png: str | Path,
                  run_ids: RunIds | None = None) -> pd.DataFrame:
    frame = figure4_frame(records, points, run_ids)
    atomic_write_text(csv, frame.to_csv(index=False, float_format="%.2f"))
    plot_figure4(frame, png)
    return frame
