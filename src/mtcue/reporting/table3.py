"""The paper's Table 3 (models): each model's size, architecture and training time, from the training records
only, with the paper's figures beside them (the table kit: `kit`)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from importlib.resources.abc import Traversable
from pathlib import Path

import pandas as pd

from mtcue.paper import PAPER_FIGURES
from mtcue.reporting.kit import NA, Runs, by_cell, display_name, model_key, read_table_csv, study_names, write_table
from mtcue.reporting.render import Block
from mtcue.study import CONTEXT_KIND

PAPER_MODELS_CSV = PAPER_FIGURES / "mtcue_table3_models.csv"

ARCH_COLUMNS = (  # Table 3 label, spec["arch"] key
    ("d_model", "embed_dim"), ("cxt layers", "context_layers"), ("src layers", "encoder_layers"),
    ("dec layers", "decoder_layers"), ("heads", "heads"), ("cxt FFN", "context_ffn_dim"),
    ("src FFN", "encoder_ffn_dim"), ("dec FFN", "decoder_ffn_dim"),
)
CONTEXT_ARCH_KEYS = ("context_layers", "context_ffn_dim")  # sizes of the context encoder


def _mean_sd(values: Iterable[float | None]) -> tuple[float, float]:
    s = pd.Series([math.nan if v is None else v for v in values], dtype=float).dropna()
    return s.mean(), s.std()  # sample sd: NaN (shown n/a) for a single direction, not 0


def _one(records: Sequence[dict], get: Callable[[dict], object], what: str) -> object:
    values = {get(r) for r in records}
    if len(values) > 1:
        raise ValueError(f"model {records[0]['model']}: {what} differs between directions: {sorted(map(str, values))}")
    return values.pop()


def _millions(reported: object) -> float:
    # The paper writes sizes as "66M" (once "107 M").
    return math.nan if pd.isna(reported) else float(str(reported).replace("M", "").strip())


def models_table(train_records: Iterable[dict], paper_csv: str | Path | Traversable = PAPER_MODELS_CSV) -> pd.DataFrame:
    """Models x size, architecture and training time (paper Table 3), each a mean over the
    directions trained (with the sample sd of the time per epoch and of the epochs to best)."""
    by_model: dict[str, list[dict]] = defaultdict(list)
    for (name, _), r in by_cell(train_records, "train").items():
        by_model[name].append(r)
    if not by_model:
        raise ValueError("no train records to tabulate")
    paper = read_table_csv(paper_csv).set_index("model").to_dict("index")
    rows = {}
    for name in sorted(by_model, key=model_key):
        records, p = by_model[name], paper.get(name, {})
        has_context_encoder = CONTEXT_KIND.get(_one(records, lambda r: r["spec"]["type"], "type")) == "vectors"
        row: dict[str, object] = {
            "directions": len(records),
            "params (M)": sum(r["params"]["total"] for r in records) / len(records) / 1e6,
            "paper params (M)": _millions(p.get("params_reported")),
        }
        for label, key in ARCH_COLUMNS:
            shown = has_context_encoder or key not in CONTEXT_ARCH_KEYS
            row[label] = _one(records, lambda r: r["spec"]["arch"].get(key), key) if shown else None
        row["s/epoch"], row["s/epoch sd"] = _mean_sd(
            _mean_sd(e["wall_s"] for e in r["epochs"])[0] for r in records)
        row["epochs to best"], row["epochs to best sd"] = _mean_sd(r["best_epoch"] for r in records)
        row["device"] = ", ".join(sorted({r.get("device", "unknown") for r in records}))
        row["paper GPU h/epoch"] = p.get("gpu_hour_per_epoch")
        row["paper GPU h/epoch sd"] = p.get("gpu_hour_per_epoch_sd")
        row["paper epochs to best"] = p.get("epochs_to_best")
        row["paper epochs to best sd"] = p.get("epochs_to_best_sd")
        rows[name] = {k: math.nan if v is None else v for k, v in row.items()}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index.name = "model"
    return df


def models_footnotes(train_records: Iterable[dict]) -> list[str]:
    records = list(train_records)
    devices = ", ".join(sorted({r.get("device", "unknown") for r in records}))
    notes = [
        "params (M): total parameters in millions (tied tensors counted once), mean over the directions "
        "trained: the count depends on each direction's vocabulary (one joined dictionary per direction). "
        "The paper's: as it reports them.",
        "Architecture from each model's spec; cxt/src/dec: context encoder, source encoder, decoder, \"-\" "
        f"for models without a context encoder (types other than "
        f"{', '.join(t for t, kind in CONTEXT_KIND.items() if kind == 'vectors')}).",
        f"time per epoch: wall-clock seconds per training epoch on this run's device ({devices}), averaged "
        "over each direction's epochs, then mean ± sample sd over directions (the CSV's `s/epoch`); the "
        "paper's: A100 80GB GPU hours per epoch. epochs to best: the epoch of the lowest validation loss, "
        "mean ± sd over directions. No sd for a single direction.",
    ]
    init = sorted({(display_name(r["model"]), display_name(r["spec"]["init_from"]))
                   for r in records if r["spec"].get("init_from")}, key=lambda x: model_key(x[0]))
    if init:
        notes.append(", ".join(f"{m} starts from {parent}" for m, parent in init) + "'s best checkpoint: its "
                     "time per epoch and epochs to best count only its own (fine-tuning) epochs.")
    return notes


def _mean_sd_text(mean: object, sd: object, unit: str = "") -> str:
    """"mean ± sd unit"; the mean alone when there is no sd (one direction), n/a without a mean."""
    if pd.isna(mean):
        return NA
    text = f"{float(mean):.2f}" if pd.isna(sd) else f"{float(mean):.2f} ± {float(sd):.2f}"
    return f"{text} {unit}".rstrip()


def _count(value: object) -> str:
    return NA if pd.isna(value) else f"{float(value):.0f}"


def _millions_text(value: float) -> str:
    """Three significant digits at paper scale (86.4), two decimals for toy models (0.23)."""
    return NA if pd.isna(value) else f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _sizes(values: Iterable[object]) -> str:
    """Context/source/decoder sizes as the paper prints them, "-" where a model has no such part."""
    return "/".join("-" if pd.isna(v) else f"{float(v):.0f}" for v in values)


MODELS_HEADER = ("params (M)", "d_model", "layers cxt/src/dec", "heads", "FFN cxt/src/dec", "time per epoch",
                 "epochs to best", "directions")
PAPER_MODELS_LABEL = "MTCue paper, Table 3 (A100 80GB GPU hours per epoch; 8 directions)"


def models_blocks(df: pd.DataFrame, paper_csv: str | Path | Traversable = PAPER_MODELS_CSV) -> list[Block]:
    """Table 3 as the paper lays it out, the paper's rows below ours."""
    def frame(rows: dict[str, list[str]]) -> pd.DataFrame:
        return pd.DataFrame.from_dict(rows, orient="index", columns=list(MODELS_HEADER)).rename_axis("model")

    ours = frame({name: [
        _millions_text(r["params (M)"]), _count(r["d_model"]),
        _sizes(r[c] for c in ("cxt layers", "src layers", "dec layers")), _count(r["heads"]),
        _sizes(r[c] for c in ("cxt FFN", "src FFN", "dec FFN")),
        _mean_sd_text(r["s/epoch"], r["s/epoch sd"], "s"), _mean_sd_text(r["epochs to best"], r["epochs to best sd"]),
        _count(r["directions"]),
    ] for name, r in df.iterrows()})
    paper = read_table_csv(paper_csv).set_index("model")
    in_paper = frame({name: [
        f"{_millions(p['params_reported']):g}", _count(p["d_model"]),
        _sizes(p[c] for c in ("cxt_layers", "src_layers", "dec_layers")), _count(p["heads"]),
        _sizes(p[c] for c in ("cxt_ffn", "src_ffn", "dec_ffn")),
        _mean_sd_text(p["gpu_hour_per_epoch"], p["gpu_hour_per_epoch_sd"], "GPU h"),
        _mean_sd_text(p["epochs_to_best"], p["epochs_to_best_sd"]), "8",
    ] for name, p in paper.iterrows() if name in df.index})
    return [Block("", ours, in_paper if len(in_paper) else None, PAPER_MODELS_LABEL)]


def write_models_table(train_records: Sequence[dict], csv_path: str | Path, md_path: str | Path,
                       paper_csv: str | Path | Traversable = PAPER_MODELS_CSV, runs: Runs | None = None) -> None:
    """Table 3 from the training records: every number in the CSV (mean and sd in separate
    columns); for people, the paper's layout with its rows below ours."""
    df = models_table(train_records, paper_csv)
    title = f"Model details, study {study_names(train_records)} (cf. MTCue paper, Table 3)"
    write_table(df, csv_path, md_path, title, models_footnotes(train_records), runs=runs,
                blocks=models_blocks(df, paper_csv))


