"""Figure 4 (EAMT22 few-shot): mean attribute accuracy and BLEU against the number of supervised
(annotated) training lines, MTCUE against TAGGING, built from EAMT22 records only, with the paper's
anchors (section 4) beside ours. A point repeated with several seeds shows the mean over its runs and
their standard deviation; the first parent's difference to the second in each setting comes with a
paired-bootstrap confidence interval over the test lines."""
from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from mtcue.evaluation.eamt22 import ATTRIBUTES, accuracy_mean_from_stats
from mtcue.evaluation.score import paired_bootstrap_ci
from mtcue.io import atomic_write_text
from mtcue.paper import PAPER_FIGURES
from mtcue.reporting.kit import BOOTSTRAP, NA, Bootstrap, Runs, display_name, format_mean_sd, format_number
from mtcue.reporting.render import markdown_table
from mtcue.reporting.results import Run

PAPER_ANCHORS_CSV = PAPER_FIGURES / "mtcue_eamt22_anchors.csv"
# sd: of accuracy_mean over the point's runs; difference, ci_low, ci_high: accuracy_mean of this (first)
# parent minus that of `compared_with` in the same setting, with its paired-bootstrap interval.
COLUMNS = ["direction", "model", "setting", "per_combination", "samples", *ATTRIBUTES, "accuracy_mean", "sd",
           "n_seeds", "bleu", "bleu_sd", "compared_with", "difference", "ci_low", "ci_high", "source", "note",
           "run"]


def _pct(value: float | None) -> float:
    return math.nan if value is None else 100 * value


def _sd(values: Sequence[float]) -> float:
    """Sample standard deviation; NaN for one run."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def _runs(point: dict) -> list[str]:
    return list(point.get("records") or [point["record"]])


def _segment_stats(record: dict) -> np.ndarray:
    if "segment_stats" not in record:
        raise ValueError(f"EAMT22 record of {record['direction']}/{record['model']} has no per-line `segment_stats` "
                         "(written by `mtcue score-eamt22` since the confidence intervals): score it again")
    return np.asarray(record["segment_stats"], dtype=float)


def difference_ci(runs_a: Sequence[dict], runs_b: Sequence[dict], bootstrap: Bootstrap = BOOTSTRAP) -> dict:
    """accuracy_mean (%) of A's runs (their mean) minus B's, with its (1 - alpha) paired-bootstrap interval:
    the test lines are resampled once per resample for every run of both (runs side by side per line)."""
    a = np.hstack([_segment_stats(r) for r in runs_a])
    b = np.hstack([_segment_stats(r) for r in runs_b])
    if a.shape != b.shape:   # unequally many runs: repeat each side's blocks (their mean stays) to one width
        a, b = np.hstack([a] * len(runs_b)), np.hstack([b] * len(runs_a))
    ci = paired_bootstrap_ci(a, b, accuracy_mean_from_stats, bootstrap.n, bootstrap.seed, bootstrap.alpha)
    return {"difference": 100 * ci["difference"], "ci_low": 100 * ci["low"], "ci_high": 100 * ci["high"]}


def figure4_frame(records: Sequence[dict], points: Sequence[dict], run_names: Runs | None = None,
                  bootstrap: Bootstrap = BOOTSTRAP) -> pd.DataFrame:
    """One row per point (Fewshot.points: direction, model, setting, per_combination, `records`: the
    runs, one per seed) from its EAMT22 records, accuracies in % (the mean over the runs; `sd`, `bleu_sd`:
    their standard deviation), with the MLflow run of the first run's model (given `run_names`); the first
    parent's rows carry its difference to the second parent of the same setting (difference_ci); then the
    paper's anchors (source "paper") for the paper's pair."""
    by_key = {(r["direction"], r["model"]): r for r in records}
    for p in points:
        missing = [m for m in _runs(p) if (p["direction"], m) not in by_key]
        if missing:
            raise ValueError(f"no EAMT22 record of {p['direction']}/{missing[0]} (point {p['model']}, "
                             f"setting {p['setting']})")

    def runs_of(p: dict) -> list[dict]:
        return [by_key[(p["direction"], m)] for m in _runs(p)]

    parents = list(dict.fromkeys(p["model"] for p in points if p["setting"] != "baseline"))
    rows = []
    for p in points:
        runs = runs_of(p)
        accuracy = [_pct(r["accuracy_mean"]) for r in runs]
        row = {"direction": p["direction"], "model": p["model"], "setting": p["setting"],
               "per_combination": p["per_combination"], "samples": runs[0]["supervised_samples"],
               **{a: float(np.mean([_pct(r["attributes"][a]["accuracy"]) for r in runs])) for a in ATTRIBUTES},
               "accuracy_mean": float(np.mean(accuracy)), "sd": _sd(accuracy), "n_seeds": len(runs),
               "bleu": float(np.mean([r["bleu"] for r in runs])), "bleu_sd": _sd([r["bleu"] for r in runs]),
               "compared_with": "", "difference": math.nan, "ci_low": math.nan, "ci_high": math.nan,
               "source": "ours", "note": "",
               "run": run_names.name(p["direction"], p["record"]) if run_names else None}
        other = next((q for q in points if len(parents) > 1 and p["model"] == parents[0] and q["model"] == parents[1]
                      and (q["direction"], q["setting"]) == (p["direction"], p["setting"])), None)
        if other is not None:
            row |= {"compared_with": other["model"], **difference_ci(runs, runs_of(other), bootstrap)}
        rows.append(row)
    paper = pd.read_csv(io.StringIO(PAPER_ANCHORS_CSV.read_text()))
    for a in paper.itertuples():
        rows.append({"direction": "en-pl", "model": a.model, "setting": a.setting, "per_combination": math.nan,
                     "samples": a.supervised_samples, **{attr: math.nan for attr in ATTRIBUTES},
                     "accuracy_mean": a.accuracy_mean, "sd": math.nan, "n_seeds": 1, "bleu": a.bleu,
                     "bleu_sd": math.nan, "compared_with": "", "difference": math.nan, "ci_low": math.nan,
                     "ci_high": math.nan, "source": "paper", "note": "lower bound" if a.relation == ">" else "",
                     "run": None})
    return pd.DataFrame(rows, columns=COLUMNS)


# Paper anchors at a line count that two models share (both "above 99%" at 5.1M lines) are drawn apart: model
# i's is moved by DODGE ** (i - 0.5) along the log axis, so neither hides the other.
DODGE = 10 ** 0.35


def _paper_anchors(ax, anchors: pd.DataFrame, metric: str, i: int, shared: set) -> None:
    """Model i's paper anchors as open markers in its colour: a value the paper gives as a circle, a lower bound
    ("above 90%") as a triangle pointing up, labelled with its ">" value. `shared`: line counts (> 0) where
    another model has an anchor too."""
    x = anchors["samples"].where(~anchors["samples"].isin(shared), anchors["samples"] * DODGE ** (i - 0.5))
    for bound, marker, kind in ((False, "o", "paper"), (True, "^", "paper, lower bounds")):
        chosen = (anchors["note"] == "lower bound") == bound
        if chosen.any():
            ax.scatter(x[chosen], anchors.loc[chosen, metric], marker=marker, facecolors="none",
                       edgecolors=f"C{i}", s=60, label=f"{anchors['model'].iloc[0].upper()} ({kind})")
        if bound:
            for xb, yb in zip(x[chosen], anchors.loc[chosen, metric]):
                ax.annotate(f">{yb:g}", (xb, yb), textcoords="offset points", xytext=(0, -12 - 9 * i),
                            ha="center", fontsize=7, color=f"C{i}")


def figure4(frame: pd.DataFrame) -> Figure:
    """Per direction, mean accuracy and BLEU against supervised lines (symmetric log scale: 0 is the
    zero-shot setting); the baseline as a horizontal line; paper anchors as open markers (_paper_anchors). The paper's BLEU
    (OpenSubtitles, about 22-30) has an axis of its own on the right: on ours (about 75-90) it would squash
    our points into a sliver."""
    ours = frame[frame["source"] == "ours"]
    directions = list(dict.fromkeys(ours["direction"]))
    fig = Figure(figsize=(10, 4.6 * len(directions)))  # room for the accuracy legend below its panel
    axes = fig.subplots(len(directions), 2, squeeze=False)
    for row, direction in zip(axes, directions):
        here = ours[ours["direction"] == direction]
        paper = frame[(frame["source"] == "paper") & (frame["direction"] == direction)]
        for ax, metric, label in ((row[0], "accuracy_mean", "mean attribute accuracy (%)"), (row[1], "bleu", "BLEU")):
            paper_ax = ax
            if metric == "bleu" and paper[metric].notna().any():
                paper_ax = ax.twinx()
                paper_ax.set_ylabel("the paper's BLEU (open markers, dotted line)")
            counts = paper[paper[metric].notna() & (paper["samples"] > 0)].groupby("samples")["model"].nunique()
            shared = set(counts[counts > 1].index)
            for i, (model, points) in enumerate(here[here["setting"] != "baseline"].groupby("model", sort=False)):
                points = points.sort_values("samples")
                spread = points["sd" if metric == "accuracy_mean" else "bleu_sd"]
                ax.errorbar(points["samples"], points[metric], yerr=spread, marker="o", color=f"C{i}", capsize=3,
                            label=model.upper())
                _paper_anchors(paper_ax, paper[(paper["model"] == model) & paper[metric].notna()], metric, i, shared)
            for _, base in here[here["setting"] == "baseline"].iterrows():
                ax.axhline(base[metric], color="grey", linestyle="--", label=f"{base['model'].upper()} (no context)")
            base_paper = paper[(paper["setting"] == "baseline") & paper[metric].notna()]
            if len(base_paper):
                paper_ax.axhline(base_paper[metric].iloc[0], color="grey", linestyle=":", label="no context (paper)")
            ax.set_xscale("symlog", linthresh=1)
            # Half the linear stretch before 0, a third of a decade past the largest count: no marker cut at
            # an edge, and no negative ticks (symlog's autoscale margin reaches far below 0 and draws
            # -10^0 ... -10^5 there, on top of each other).
            ax.set_xlim(-0.5, max([1.0, *here["samples"], *paper["samples"]]) * 10 ** (1 / 3))
            ax.set_xlabel("supervised (annotated) training lines")
            ax.set_ylabel(label)
            ax.set_title(f"EAMT22 {direction}: {label}")
            ax.grid(alpha=0.3)
        # the BLEU panel's legend: our lines, then the paper's (on its own axis, paper_ax, where drawn)
        handles = row[1].get_legend_handles_labels()[0]
        if paper_ax is not row[1]:
            handles += paper_ax.get_legend_handles_labels()[0]
        row[1].legend(handles=handles, fontsize=7, loc="lower right")
        # what the triangles (lower bounds) and circles are, below the panel: inside, it hid points or anchors
        row[0].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.24), ncol=2)
    fig.tight_layout()
    return fig


def plot_figure4(frame: pd.DataFrame, png: str | Path) -> None:
    """figure4 as a PNG, written whole (a temporary file renamed)."""
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(png).with_name(f".{Path(png).name}.tmp.png")
    figure4(frame).savefig(tmp, dpi=120)
    tmp.replace(png)


def write_figure4(records: Sequence[dict], points: Sequence[dict], csv: str | Path, png: str | Path,
                  run_names: Runs | None = None, bootstrap: Bootstrap = BOOTSTRAP) -> pd.DataFrame:
    frame = figure4_frame(records, points, run_names, bootstrap)
    atomic_write_text(csv, frame.to_csv(index=False, float_format="%.2f"))
    plot_figure4(frame, png)
    return frame


def _eamt22_cell(records: Sequence[dict]) -> str:
    """Mean attribute accuracy / BLEU of a point's runs (their mean, ± sd over several)."""
    accuracy = [math.nan if r["accuracy_mean"] is None else 100 * r["accuracy_mean"] for r in records]
    bleu = [r["bleu"] for r in records]
    if len(records) == 1:
        return f"{format_number(accuracy[0], 1)} / {bleu[0]:.2f}"
    bleu_text = f"{np.mean(bleu):.2f} ± {np.std(bleu, ddof=1):.2f}"
    return f"{format_mean_sd(np.mean(accuracy), np.std(accuracy, ddof=1))} / {bleu_text}"


def fewshot_section(run: Run) -> list[str]:
    """Figure 4's points: per direction and parent, mean attribute accuracy / BLEU in each setting."""
    lines = []
    for direction in sorted({r["direction"] for r in run.eamt22}):
        records = [r for r in run.eamt22 if r["direction"] == direction]
        variants = [r for r in records if r["fewshot"]]
        if not variants:
            continue
        parents = list(dict.fromkeys(r["fewshot"]["parent"] for r in variants))
        settings = sorted({(r["supervised_samples"], r["fewshot"]["setting"]) for r in variants})
        display = pd.DataFrame(index=pd.Index([display_name(p) for p in parents], name="model"))
        by_model = {r["model"]: r for r in records}
        display["zero-shot"] = [_eamt22_cell([by_model[p]]) if p in by_model else NA for p in parents]
        for samples, setting in settings:
            of: dict[str, list[dict]] = {}
            for r in sorted(variants, key=lambda r: r["model"]):
                if r["fewshot"]["setting"] == setting:
                    of.setdefault(r["fewshot"]["parent"], []).append(r)
            display[f"{setting} ({samples} lines)"] = [_eamt22_cell(of[p]) if p in of else NA for p in parents]
        baselines = [r for r in records if not r["context_columns"]]
        baseline = "; ".join(f"{display_name(r['model'])} without context: {_eamt22_cell([r])}" for r in baselines)
        lines += [f"EAMT22 few-shot ({direction}; Figure 4 in `results/figures/figure4_eamt22_fewshot.png`): mean "
                  "attribute accuracy (%) / BLEU, zero-shot and fine-tuned with the attribute sentences of N "
                  "annotated training lines (mean ± sd over the seeds of a repeated fine-tuning)"
                  f"{'; ' + baseline if baseline else ''}:", "", *markdown_table(display), ""]
    return lines[:-1]
