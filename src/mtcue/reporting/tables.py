"""Result tables assembled from records only, with the paper's figures beside them.

Table 4 (quality) is a DataFrame indexed by model display name with two-level columns
(group, metric): group is a direction or AVERAGE. Its columns are declared as Column specs
(new metrics are new specs); columns with per-segment statistics get the paper's marks, best
in bold and statistically indistinguishable results underlined. Table 3 (models) describes
each model's size and training time. Markdown goes through a display frame of strings, so
marks and "mean ± sd" cells are edits of that frame.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import pandas as pd

from mtcue.config import CONTEXT_KIND
from mtcue.evaluation.score import (
    ALL,
    CorpusScore,
    SegmentStats,
    bleu_from_stats,
    indistinguishable_from_best,
    mean_from_stats,
    mean_stats,
)
from mtcue.io import atomic_write_text, read_text

MODEL_ORDER = ("BASE", "BASE-PM", "TAGGING", "NOVOTNEY-CUE", "MTCUE")
AVERAGE = "avg"
NA = "n/a"
PAPER_FIGURES = resources.files("mtcue") / "paper_figures"
PAPER_QUALITY_CSV = PAPER_FIGURES / "mtcue_table4_quality.csv"
PAPER_MODELS_CSV = PAPER_FIGURES / "mtcue_table3_models.csv"
MARKUP = {"best": "**{}**", "tied": "<u>{}</u>", "": "{}"}


@dataclass(frozen=True)
class Bootstrap:
    """Paired bootstrap settings of the marks (written into the table's footnote)."""

    n: int = 1000
    seed: int = 12345
    alpha: float = 0.05


BOOTSTRAP = Bootstrap()


@dataclass(frozen=True)
class Column:
    """One metric shown per direction. `source` names the dict its value is read from: the
    "score" record, the "comet" record, or the "paper" CSV row. A column with `segments`
    (per-segment statistics of a record, None when it has none) is marked in each direction,
    with significance tested on `corpus_score` of resampled statistics."""

    label: str
    source: str
    value: Callable[[dict], float | None]
    segments: Callable[[dict], SegmentStats | None] | None = None
    corpus_score: CorpusScore = bleu_from_stats


def _phenomenon_pct(record: dict) -> float | None:
    acc = record["phenomena"].get(ALL, {}).get("accuracy")
    return None if acc is None else 100 * acc


def _comet_segments(record: dict) -> SegmentStats | None:
    return None if record.get("segment_scores") is None else mean_stats(record["segment_scores"])


QUALITY_COLUMNS = (
    Column("BLEU", "score", lambda r: r["bleu"], lambda r: r.get("segment_stats"), bleu_from_stats),
    Column("COMET", "comet", lambda r: r["comet"], _comet_segments, mean_from_stats),
    Column("phenomena %", "score", _phenomenon_pct),
    Column("paper BLEU", "paper", lambda r: r["bleu"]),
    Column("paper COMET", "paper", lambda r: r["comet"]),
)


@dataclass(frozen=True)
class PaperEncoder:
    """The context encoder the paper used for a model type, as `spec["context"]` would name it."""

    described: str
    pooling: str
    name_part: Callable[[str], str]  # direction -> lower-case part of the encoder's name


PAPER_ENCODERS = {
    "mtcue": PaperEncoder(
        "all-MiniLM-L12-v2 (en→xx) and paraphrase-multilingual-MiniLM-L12-v2 (xx→en), mean pooling", "mean",
        lambda d: "all-minilm-l12-v2" if d.startswith("en-") else "paraphrase-multilingual-minilm-l12-v2"),
    "novotney_cue": PaperEncoder("DistilBERT (CLS, 768-d)", "cls", lambda d: "distilbert"),
}
# Name parts of sentence encoders trained on many languages (xx→en context is not English).
MULTILINGUAL_MARKERS = ("multilingual", "labse", "xlm")


def display_name(model: str) -> str:
    """Config key to the paper's spelling: "base_pm" -> "BASE-PM", "mtcue" -> "MTCUE"."""
    return model.upper().replace("_", "-")


@dataclass(frozen=True)
class RunIds:
    """The MLflow run of each (direction, model) of a study, as the sync wrote them
    (results/mlflow/{study}.runs.json). MLflow chooses run ids itself, so only the sync knows
    them; tables read this plain file and never MLflow."""

    tracking_uri: str
    experiment: str
    runs: dict[str, str]  # "direction/model" -> run id

    @classmethod
    def read(cls, path: str | Path) -> RunIds:
        data = json.loads(read_text(path))
        return cls(data["tracking_uri"], data["experiment"], data["runs"])

    def of(self, name: str) -> dict[str, str]:
        """{direction: run id} of a table row (a display name: model keys are lower case, without hyphens)."""
        model = name.lower().replace("-", "_")
        return {key.split("/")[0]: run for key, run in self.runs.items() if key.split("/")[1] == model}

    def footnote(self) -> str:
        return (f"MLflow: experiment `{self.experiment}` at `{self.tracking_uri}`, one run per model and "
                "direction, named `{direction}/{model}`; the CSV's `run_id` columns give each cell's run id.")


def with_run_ids(df: pd.DataFrame, run_ids: RunIds) -> pd.DataFrame:
    """`df` with a (direction, "run_id") column per direction group, or, when its rows span every
    direction (Table 3), a "run_id" column listing `direction:id` for each."""
    out = df.copy()
    if isinstance(df.columns, pd.MultiIndex):
        for direction in dict.fromkeys(g for g in df.columns.get_level_values(0) if g != AVERAGE):
            out[(direction, "run_id")] = [run_ids.of(name).get(direction) for name in df.index]
    else:
        out["run_id"] = [" ".join(f"{d}:{run_ids.of(name)[d]}" for d in sorted(run_ids.of(name), key=_direction_key))
                         for name in df.index]
    return out


def _model_key(name: str) -> tuple[int, str]:
    return (MODEL_ORDER.index(name) if name in MODEL_ORDER else len(MODEL_ORDER), name)


def _direction_key(direction: str) -> tuple[bool, str]:
    # The paper's order: en->xx first, then xx->en, each by the other language.
    src, tgt = direction.split("-")
    return (src != "en", tgt if src == "en" else src)


def _read_csv(path: str | Path | Traversable) -> pd.DataFrame:
    with (Path(path) if isinstance(path, str) else path).open("r", encoding="utf-8") as f:
        return pd.read_csv(f)


def _by_cell(records: Iterable[dict], what: str) -> dict[tuple[str, str], dict]:
    """Records by (display name, direction); two for the same cell are an error."""
    cells: dict[tuple[str, str], dict] = {}
    for r in records:
        key = (display_name(r["model"]), r["direction"])
        if key in cells:
            raise ValueError(f"two {what} records for model {r['model']} and direction {r['direction']}")
        cells[key] = r
    return cells


@dataclass(frozen=True)
class _QualityRecords:
    models: list[str]
    directions: list[str]
    cells: dict[tuple[str, str], dict[str, dict | None]]  # (model, direction) -> source -> record

    def record(self, source: str, model: str, direction: str) -> dict | None:
        return self.cells.get((model, direction), {}).get(source)


def _quality_records(score_records: Iterable[dict], comet_records: Iterable[dict], split: str) -> _QualityRecords:
    scores = _by_cell((r for r in score_records if r["split"] == split), f"{split} score")
    if not scores:
        raise ValueError(f"no {split} score records to tabulate")
    comets = _by_cell((r for r in comet_records if r["split"] == split), f"{split} COMET")
    for (model, direction), c in comets.items():
        s = scores.get((model, direction))
        if s is None:
            raise ValueError(f"{split} COMET record of {model} {direction} has no score record")
        if c["hyp_sha256"] != s["hyp_sha256"]:
            raise ValueError(
                f"{model} {direction} {split}: the COMET record scored hypotheses with sha256 "
                f"{c['hyp_sha256']} but the score record {s['hyp_sha256']}; rescore the older one")
    return _QualityRecords(
        models=sorted({m for m, _ in scores}, key=_model_key),
        directions=sorted({d for _, d in scores}, key=_direction_key),
        cells={key: {"score": s, "comet": comets.get(key)} for key, s in scores.items()},
    )


def quality_table(
    score_records: Iterable[dict],
    comet_records: Iterable[dict] = (),
    paper_csv: str | Path | Traversable = PAPER_QUALITY_CSV,
    split: str = "test",
    columns: Sequence[Column] = QUALITY_COLUMNS,
) -> pd.DataFrame:
    """Models x (direction, metric) for the directions present in the score records of one
    split, plus an AVERAGE group (NaN where any direction is missing)."""
    q = _quality_records(score_records, comet_records, split)
    paper = _read_csv(paper_csv).set_index(["model", "direction"]).to_dict("index")

    def cell(col: Column, model: str, direction: str) -> float:
        source = paper.get((model, direction)) if col.source == "paper" else q.record(col.source, model, direction)
        value = None if source is None else col.value(source)
        return math.nan if value is None else float(value)

    df = pd.DataFrame(
        {(d, col.label): [cell(col, m, d) for m in q.models] for d in q.directions for col in columns},
        index=pd.Index(q.models, name="model"),
        dtype=float,
    )
    for col in columns:
        df[(AVERAGE, col.label)] = df.xs(col.label, axis=1, level=1).mean(axis=1, skipna=False)
    df.columns.names = ["group", "metric"]
    return df


def quality_marks(
    score_records: Iterable[dict],
    comet_records: Iterable[dict] = (),
    split: str = "test",
    columns: Sequence[Column] = QUALITY_COLUMNS,
    bootstrap: Bootstrap = BOOTSTRAP,
) -> pd.DataFrame:
    """"best", "tied" (statistically indistinguishable from the best: paired bootstrap of the
    best against it, p > alpha) or "" per model and (direction, metric) of each marked column."""
    q = _quality_records(score_records, comet_records, split)
    marked = [col for col in columns if col.segments is not None]
    marks = pd.DataFrame("", index=pd.Index(q.models, name="model"), columns=pd.MultiIndex.from_tuples(
        [(d, col.label) for d in q.directions for col in marked], names=["group", "metric"]))
    for d in q.directions:
        for col in marked:
            systems = {}
            for m in q.models:
                record = q.record(col.source, m, d)
                if record is None or col.value(record) is None:
                    continue
                stats = col.segments(record)
                if stats is None:
                    raise ValueError(f"{m} {d}: {col.label} without per-segment statistics, cannot test significance")
                systems[m] = stats
            if not systems:
                continue
            result = indistinguishable_from_best(systems, col.corpus_score, alpha=bootstrap.alpha,
                                                 n=bootstrap.n, seed=bootstrap.seed)
            marks.loc[result.best, (d, col.label)] = "best"
            for m in result.tied:
                marks.loc[m, (d, col.label)] = "tied"
    return marks


def _listing(names: Sequence[str], everything: int) -> str:
    return "all directions" if len(names) == everything else ", ".join(names)


def context_footnotes(train_records: Iterable[dict]) -> list[str]:
    """Where a vector-reading model's context encoder differs from the paper's, and where
    xx→en context (not English) went through an encoder that is not multilingual."""
    by_model: dict[str, list[dict]] = defaultdict(list)
    for r in train_records:
        if r["spec"]["type"] in PAPER_ENCODERS:
            by_model[display_name(r["model"])].append(r)
    notes = []
    for name in sorted(by_model, key=_model_key):
        records = sorted(by_model[name], key=lambda r: _direction_key(r["direction"]))
        paper = PAPER_ENCODERS[records[0]["spec"]["type"]]
        differs, english_only, unnamed = defaultdict(list), defaultdict(list), []
        for r in records:
            d, context = r["direction"], r["spec"].get("context") or {}
            encoder = context.get("encoder")
            if encoder is None:
                unnamed.append(d)
                continue
            if paper.name_part(d) not in encoder.lower() or context.get("pooling") != paper.pooling:
                differs[f"{encoder} vectors ({context.get('pooling')} pooling)"].append(d)
            if not d.startswith("en-") and not any(k in encoder.lower() for k in MULTILINGUAL_MARKERS):
                english_only[encoder].append(d)
        notes += [f"{name} read {used} in {_listing(ds, len(records))}; the paper used {paper.described}."
                  for used, ds in differs.items()]
        notes += [f"{name} embedded the non-English context of {', '.join(ds)} with {encoder}, "
                  "which is not a multilingual encoder." for encoder, ds in english_only.items()]
        if unnamed:
            notes.append(f"{name}: the training records of {_listing(unnamed, len(records))} "
                         "do not name the context encoder.")
    return notes


def _comet_footnotes(q: _QualityRecords) -> list[str]:
    scored = [c for c in (cell["comet"] for cell in q.cells.values()) if c is not None and c["comet"] is not None]
    comet_models = ", ".join(sorted({f"`{c['comet_model']}`" for c in scored}))
    notes = [f"COMET: model {comet_models}, system score x 100, on the same hypotheses as BLEU (sha256 "
             "checked); the paper used wmt20-comet-da."] if scored else []
    missing: dict[str, list[str]] = defaultdict(list)
    for (m, d), cell in sorted(q.cells.items(), key=lambda kv: (_direction_key(kv[0][1]), _model_key(kv[0][0]))):
        c = cell["comet"]
        if c is None:
            missing["no COMET record"].append(f"{m} {d}")
        elif c["comet"] is None:
            missing[f"`{c['comet_model']}`: {c['unavailable']}"].append(f"{m} {d}")
    notes += [f"COMET {NA} for {'all systems' if len(cells) == len(q.cells) else ', '.join(cells)}: {reason}"
              for reason, cells in missing.items()]
    return notes


def quality_footnotes(
    score_records: Iterable[dict],
    comet_records: Iterable[dict] = (),
    train_records: Iterable[dict] = (),
    split: str = "test",
    bootstrap: Bootstrap = BOOTSTRAP,
) -> list[str]:
    """What the quality table's columns and marks mean, from the records it is built from."""
    q = _quality_records(score_records, comet_records, split)
    signatures = sorted({cell["score"]["bleu_signature"] for cell in q.cells.values()})
    in_table = [r for key, r in _by_cell(train_records, "train").items() if key in q.cells]
    return [
        "BLEU: sacrebleu on detokenised output, signature " + ", ".join(f"`{s}`" for s in signatures) + ".",
        *_comet_footnotes(q),
        "phenomena %: accuracy on context-determined phenomena (formality, gender, ...), pooled "
        "over all labelled samples and phenomena: a translation is correct when it contains "
        "a marker word of the gold value and none of another value, incorrect in the opposite "
        "case, otherwise ignored; 100 * correct / (correct + incorrect).",
        "paper BLEU, paper COMET: the MTCue paper's Table 4 (OpenSubtitles18 test sets, models trained at "
        "full scale), shown for orientation only; it is not comparable to this run's data and scale.",
        f"**Bold**: the best BLEU or COMET of each direction; <u>underlined</u>: statistically "
        f"indistinguishable from it (paired bootstrap resampling of the best against each system, "
        f"p > {bootstrap.alpha}; {bootstrap.n} resamples, seed {bootstrap.seed}), as the paper marks "
        f"its Table 4. The {AVERAGE} and paper columns are not marked.",
        f"{AVERAGE}: mean over the directions shown; {NA} where a value is missing.",
        *context_footnotes(in_table),
    ]


def format_cell(value: float | str) -> str:
    if isinstance(value, str):
        return value
    return NA if pd.isna(value) else f"{value:.2f}"


def flat_columns(columns: pd.Index) -> list[str]:
    return [" ".join(c) if isinstance(c, tuple) else str(c) for c in columns]


def to_display(df: pd.DataFrame) -> pd.DataFrame:
    """Strings as they will appear in Markdown; edit these to add marks before rendering."""
    return df.map(format_cell)


def markdown_table(display: pd.DataFrame) -> list[str]:
    """The lines of a GitHub Markdown table (no tabulate dependency), index first, numbers right-aligned."""
    def row(cells: Iterable[object]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    lines = [row([display.index.name or "", *flat_columns(display.columns)]), row(["---", *["---:"] * display.shape[1]])]
    return lines + [row([name, *values]) for name, values in zip(display.index, display.itertuples(index=False))]


def render_markdown(display: pd.DataFrame, title: str, footnotes: Sequence[str]) -> str:
    """A titled Markdown table with its footnotes."""
    lines = [f"# {title}", "", *markdown_table(display), "", *[f"- {note}" for note in footnotes]]
    return "\n".join(lines) + "\n"


def write_table(
    df: pd.DataFrame, csv_path: str | Path, md_path: str | Path, title: str, footnotes: Sequence[str],
    display: pd.DataFrame | None = None, run_ids: RunIds | None = None,
) -> None:
    """CSV with the numbers (NaN as empty) and Markdown for people (`display`, by default
    `to_display(df)`), both written atomically; with `run_ids`, the CSV names each cell's MLflow run."""
    flat = df.copy() if run_ids is None else with_run_ids(df, run_ids)
    flat.columns = flat_columns(flat.columns)
    notes = [*footnotes, run_ids.footnote()] if run_ids else footnotes
    atomic_write_text(csv_path, flat.to_csv())
    atomic_write_text(md_path, render_markdown(to_display(df) if display is None else display, title, notes))


def _studies(records: Iterable[dict]) -> str:
    return ", ".join(sorted({r["study"] for r in records}))


def write_quality_table(
    score_records: Sequence[dict],
    csv_path: str | Path,
    md_path: str | Path,
    comet_records: Sequence[dict] = (),
    train_records: Sequence[dict] = (),
    split: str = "test",
    paper_csv: str | Path | Traversable = PAPER_QUALITY_CSV,
    bootstrap: Bootstrap = BOOTSTRAP,
    run_ids: RunIds | None = None,
) -> None:
    """Table 4 from the records: numbers with a "<metric> mark" column (best / tied / empty)
    after each marked metric in the CSV; bold and underlined cells in the Markdown."""
    df = quality_table(score_records, comet_records, paper_csv, split)
    marks = quality_marks(score_records, comet_records, split, bootstrap=bootstrap)
    display = to_display(df)
    for column in marks.columns:
        display[column] = [MARKUP[mark].format(text) for mark, text in zip(marks[column], display[column])]
    mark_columns = marks.rename(columns=lambda metric: f"{metric} mark", level=1)
    with_marks = pd.concat([df, mark_columns], axis=1)
    order = [c for g, m in df.columns for c in ((g, m), (g, f"{m} mark")) if c in with_marks.columns]
    title = f"Translation quality, study {_studies(score_records)} (cf. MTCue paper, Table 4)"
    footnotes = quality_footnotes(score_records, comet_records, train_records, split, bootstrap)
    write_table(with_marks[order], csv_path, md_path, title, footnotes, display, run_ids)


ARCH_COLUMNS = (  # Table 3 label, spec["arch"] key
    ("d_model", "embed_dim"), ("cxt layers", "context_layers"), ("src layers", "encoder_layers"),
    ("dec layers", "decoder_layers"), ("heads", "heads"), ("cxt FFN", "context_ffn_dim"),
    ("src FFN", "encoder_ffn_dim"), ("dec FFN", "decoder_ffn_dim"),
)
CONTEXT_ARCH_KEYS = ("context_layers", "context_ffn_dim")  # sizes of the context encoder
INTEGER_COLUMNS = ("directions", "paper params (M)", *(label for label, _ in ARCH_COLUMNS))
MEAN_SD_COLUMNS = ("s/epoch", "epochs to best", "paper GPU h/epoch", "paper epochs to best")


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
    for (name, _), r in _by_cell(train_records, "train").items():
        by_model[name].append(r)
    if not by_model:
        raise ValueError("no train records to tabulate")
    paper = _read_csv(paper_csv).set_index("model").to_dict("index")
    rows = {}
    for name in sorted(by_model, key=_model_key):
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
        "paper params: as the paper reports them.",
        "Architecture from each model's spec; cxt columns only for models with a context encoder "
        f"(types {', '.join(t for t, kind in CONTEXT_KIND.items() if kind == 'vectors')}).",
        f"s/epoch: wall-clock seconds per training epoch on this run's device ({devices}), averaged over each "
        "direction's epochs, then mean ± sample sd over directions; paper GPU h/epoch: A100 80GB GPU hours "
        f"per epoch. epochs to best: the epoch of the lowest validation loss, mean ± sd over directions. "
        f"sd is {NA} for a single direction.",
    ]
    init = sorted({(display_name(r["model"]), display_name(r["spec"]["init_from"]))
                   for r in records if r["spec"].get("init_from")}, key=lambda x: _model_key(x[0]))
    if init:
        notes.append(", ".join(f"{m} starts from {parent}" for m, parent in init) + "'s best checkpoint: its "
                     "s/epoch and epochs to best count only its own (fine-tuning) epochs.")
    return notes


def _mean_sd_cell(mean: str, sd: str) -> str:
    return NA if mean == NA else f"{mean} ± {sd}"


def write_models_table(train_records: Sequence[dict], csv_path: str | Path, md_path: str | Path,
                       paper_csv: str | Path | Traversable = PAPER_MODELS_CSV, run_ids: RunIds | None = None) -> None:
    """Table 3 from the training records: mean and sd in separate CSV columns, "mean ± sd" in Markdown."""
    df = models_table(train_records, paper_csv)
    display = to_display(df)
    for label in INTEGER_COLUMNS:
        display[label] = df[label].map(lambda v: NA if pd.isna(v) else f"{v:.0f}")
    for label in MEAN_SD_COLUMNS:
        display[label] = [_mean_sd_cell(m, s) for m, s in zip(display[label], display.pop(f"{label} sd"))]
    title = f"Model details, study {_studies(train_records)} (cf. MTCue paper, Table 3)"
    write_table(df, csv_path, md_path, title, models_footnotes(train_records), display, run_ids)


def phenomena_table(score_records: Iterable[dict], split: str = "test") -> pd.DataFrame:
    """Models x (direction, phenomenon): accuracy % and the number of judged translations."""
    rows: dict[str, dict[tuple[str, str], float]] = {}
    for r in score_records:
        if r["split"] != split:
            continue
        row = rows.setdefault(display_name(r["model"]), {})
        for name, counts in r["phenomena"].items():
            judged = counts["correct"] + counts["incorrect"]
            acc = counts["accuracy"]
            row[(r["direction"], f"{name} %")] = math.nan if acc is None else 100 * acc
            row[(r["direction"], f"{name} judged")] = judged
    if not rows:
        raise ValueError(f"no {split} score records to tabulate")
    df = pd.DataFrame.from_dict(rows, orient="index", dtype=float)
    df = df.loc[sorted(df.index, key=_model_key)]
    df = df[sorted(df.columns, key=lambda c: (_direction_key(c[0]), c[1]))]
    df.index.name = "model"
    df.columns.names = ["group", "metric"]
    return df


def write_phenomena_table(df: pd.DataFrame, score_records: Sequence[dict], csv_path: str | Path,
                          md_path: str | Path, run_ids: RunIds | None = None) -> None:
    studies = _studies(score_records)
    footnotes = [
        "Per phenomenon (formality of address, speaker/addressee gender, addressee number): "
        "100 * correct / (correct + incorrect) over the labelled test samples; `judged` counts "
        "the translations that contained a marker of exactly one side. `all` pools them "
        "(the quality table's phenomena column).",
    ]
    display = to_display(df)
    for column in df.columns:
        if column[1].endswith(" judged"):
            display[column] = df[column].map(lambda v: NA if pd.isna(v) else str(int(v)))
    write_table(df, csv_path, md_path, f"Context-determined phenomena, study {studies}", footnotes, display, run_ids)
