"""The paper's Table 4 (quality), from records only, with the paper's figures beside them (the table kit: `kit`;
Table 3 in `table3`, the phenomena table in `phenomena`).

Table 4 (quality) is a DataFrame indexed by model display name with two-level columns
(group, metric): group is a direction or AVERAGE. Its columns are declared as Column specs
(new metrics are new specs); columns with per-segment statistics get the paper's marks, best
in bold and statistically indistinguishable results underlined. Markdown goes through a display
frame of strings, so marks are edits of that frame.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path

import pandas as pd

from mtcue.evaluation.score import (
    ALL,
    SegmentStats,
    bleu_from_stats,
    indistinguishable_from_best,
    mean_from_stats,
    mean_stats,
)
from mtcue.paper import PAPER_FIGURES
from mtcue.records import RecordError
from mtcue.reporting.kit import (
    AVERAGE,
    BOOTSTRAP,
    MARKUP,
    NA,
    PAPER,
    Bootstrap,
    Column,
    Runs,
    by_cell,
    direction_key,
    display_name,
    model_key,
    read_table_csv,
    study_names,
    to_display,
    write_table,
)
from mtcue.reporting import phenomena, table1, table3
from mtcue.reporting.render import Block

PAPER_QUALITY_CSV = PAPER_FIGURES / "mtcue_table4_quality.csv"


def _phenomenon_pct(record: dict) -> float | None:
    acc = record["phenomena"].get(ALL, {}).get("accuracy")
    return None if acc is None else 100 * acc


def _comet_segments(record: dict) -> SegmentStats | None:
    return None if record.get("segment_scores") is None else mean_stats(record["segment_scores"])


PAPER_QUALITY_LABEL = "MTCue paper, Table 4"
# The paper's Table 4 prints BASE's average BLEU as 34.65, and its "+1.51 BLEU over BASE" (section 5) is MTCUE's
# printed 36.16 minus that; its eight directions of BASE average 34.55 (the table shows that average).
PAPER_PRINTED_BASE_BLEU_AVG = 34.65
QUALITY_COLUMNS = (
    Column("BLEU", "score", lambda r: r["bleu"], lambda r: r.get("segment_stats"), bleu_from_stats),
    Column("COMET", "comet", lambda r: r["comet"], _comet_segments, mean_from_stats),
    Column("phenomena %", "score", _phenomenon_pct, labelled_only=True),
    Column(PAPER.format("BLEU"), "paper", lambda r: r["bleu"]),
    Column(PAPER.format("COMET"), "paper", lambda r: r["comet"]),
)
# How Table 4's blocks are headed (the paper has no phenomenon accuracy in its Table 4).
QUALITY_HEADINGS = {"BLEU": "BLEU", "COMET": "COMET (x100)", "phenomena %": "Context-determined phenomena (accuracy %)"}


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
    "novotney_cue": PaperEncoder("DistilBERT (CLS, 768-d; a multilingual DistilBERT for xx→en)", "cls",
                                 lambda d: "distilbert" if d.startswith("en-") else "distilbert-base-multilingual"),
}
# Name parts of sentence encoders trained on many languages (xx→en context is not English).
MULTILINGUAL_MARKERS = ("multilingual", "labse", "xlm")


@dataclass(frozen=True)
class _QualityRecords:
    models: list[str]
    directions: list[str]
    cells: dict[tuple[str, str], dict[str, dict | None]]  # (model, direction) -> source -> record

    def record(self, source: str, model: str, direction: str) -> dict | None:
        return self.cells.get((model, direction), {}).get(source)


def _quality_records(score_records: Iterable[dict], comet_records: Iterable[dict], split: str) -> _QualityRecords:
    scores = by_cell((r for r in score_records if r["split"] == split), f"{split} score")
    if not scores:
        raise ValueError(f"no {split} score records to tabulate")
    comets = by_cell((r for r in comet_records if r["split"] == split), f"{split} COMET")
    for (model, direction), c in comets.items():
        s = scores.get((model, direction))
        if s is None:
            raise ValueError(f"{split} COMET record of {model} {direction} has no score record")
        if c["hyp_sha256"] != s["hyp_sha256"]:
            raise ValueError(
                f"{model} {direction} {split}: the COMET record scored hypotheses with sha256 "
                f"{c['hyp_sha256']} but the score record {s['hyp_sha256']}; rescore the older one")
    return _QualityRecords(
        models=sorted({m for m, _ in scores}, key=model_key),
        directions=sorted({d for _, d in scores}, key=direction_key),
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
    split, plus an AVERAGE group (NaN where any direction is missing; a `labelled_only` metric
    is averaged over the directions where some model has it)."""
    q = _quality_records(score_records, comet_records, split)
    paper = read_table_csv(paper_csv).set_index(["model", "direction"]).to_dict("index")

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
        values = df.xs(col.label, axis=1, level=1)
        if col.labelled_only:
            values = values.dropna(axis=1, how="all")
        df[(AVERAGE, col.label)] = values.mean(axis=1, skipna=False)
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
    for name in sorted(by_model, key=model_key):
        records = sorted(by_model[name], key=lambda r: direction_key(r["direction"]))
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
    for (m, d), cell in sorted(q.cells.items(), key=lambda kv: (direction_key(kv[0][1]), model_key(kv[0][0]))):
        c = cell["comet"]
        if c is None:
            missing["no COMET record"].append(f"{m} {d}")
        elif c["comet"] is None:
            missing[f"`{c['comet_model']}`: {c['unavailable']}"].append(f"{m} {d}")
    notes += [f"COMET {NA} for {'all systems' if len(cells) == len(q.cells) else ', '.join(cells)}: {reason}"
              for reason, cells in missing.items()]
    return notes


def paper_average_footnote(paper_csv: str | Path | Traversable = PAPER_QUALITY_CSV) -> str:
    """Where the paper's printed BASE average differs from its own rows' mean (shown in the paper's avg column)."""
    paper = read_table_csv(paper_csv).groupby("model")["bleu"].mean()
    base, mtcue = paper["BASE"], paper["MTCUE"]
    return (f"The paper prints BASE's average BLEU as {PAPER_PRINTED_BASE_BLEU_AVG:.2f}; its eight directions average "
            f"{base:.2f} (the {AVERAGE} of its rows here, with every direction shown), so its \"+1.51 BLEU over BASE\" for MTCUE ({mtcue:.2f}) is "
            f"{mtcue - PAPER_PRINTED_BASE_BLEU_AVG:+.2f} against the printed average and {mtcue - base:+.2f} against "
            "the directions' mean.")


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
    in_table = [r for key, r in by_cell(train_records, "train").items() if key in q.cells]
    labelled = any(_phenomenon_pct(cell["score"]) is not None for cell in q.cells.values())
    return [
        "BLEU: sacrebleu on detokenised output, signature " + ", ".join(f"`{s}`" for s in signatures) + ".",
        *_comet_footnotes(q),
        *(["phenomena %: accuracy on context-determined phenomena (formality, gender, ...), pooled "
           "over all labelled samples and phenomena: a translation is correct when it contains "
           "a marker word of the gold value and none of another value, incorrect in the opposite "
           "case, otherwise ignored; 100 * correct / (correct + incorrect)."] if labelled else []),
        f"{PAPER_QUALITY_LABEL} (the CSV's `paper BLEU`, `paper COMET` columns): OpenSubtitles18 test sets, "
        "models trained at full scale, shown for orientation only; it is not comparable to this run's data "
        "and scale. The paper reports no phenomenon accuracy in its Table 4.",
        paper_average_footnote(),
        f"**Bold**: the best BLEU or COMET of each direction; <u>underlined</u>: statistically "
        f"indistinguishable from it (paired bootstrap resampling of the best against each system, "
        f"p > {bootstrap.alpha}; {bootstrap.n} resamples, seed {bootstrap.seed}), as the paper marks "
        f"its Table 4. The {AVERAGE} column and the paper's rows are not marked.",
        f"{AVERAGE}: mean over the directions shown"
        + (" (phenomena: over the directions whose test set is labelled, en→xx)" if labelled else "")
        + f"; {NA} where a value is missing.",
        *context_footnotes(in_table),
    ]


def write_quality_table(
    score_records: Sequence[dict],
    csv_path: str | Path,
    md_path: str | Path,
    comet_records: Sequence[dict] = (),
    train_records: Sequence[dict] = (),
    split: str = "test",
    paper_csv: str | Path | Traversable = PAPER_QUALITY_CSV,
    bootstrap: Bootstrap = BOOTSTRAP,
    runs: Runs | None = None,
) -> None:
    """Table 4 from the records: numbers with a "<metric> mark" column (best / tied / empty)
    after each marked metric in the CSV; for people, one block per metric with bold and
    underlined cells and the paper's rows below."""
    df = quality_table(score_records, comet_records, paper_csv, split)
    marks = quality_marks(score_records, comet_records, split, bootstrap=bootstrap)
    display = to_display(df)
    for column in marks.columns:
        display[column] = [MARKUP[mark].format(text) for mark, text in zip(marks[column], display[column])]
    mark_columns = marks.rename(columns=lambda metric: f"{metric} mark", level=1)
    with_marks = pd.concat([df, mark_columns], axis=1)
    order = [c for g, m in df.columns for c in ((g, m), (g, f"{m} mark")) if c in with_marks.columns]
    title = f"Translation quality, study {study_names(score_records)} (cf. MTCue paper, Table 4)"
    footnotes = quality_footnotes(score_records, comet_records, train_records, split, bootstrap)
    write_table(with_marks[order], csv_path, md_path, title, footnotes, runs=runs,
                blocks=quality_blocks(df, display))


def quality_blocks(df: pd.DataFrame, display: pd.DataFrame, columns: Sequence[Column] = QUALITY_COLUMNS) -> list[Block]:
    """Table 4 as the paper lays it out: a block per metric, directions as columns, the paper's
    figures in rows below ours. A `labelled_only` metric shows only the directions that have it, and no
    block where none has it (the paper's data labels no phenomenon)."""
    labels = {col.label for col in columns}
    blocks = []
    for col in columns:
        if col.source == "paper":
            continue
        ours = display.xs(col.label, axis=1, level=1)
        if col.labelled_only:
            absent = [d for d in ours.columns if d != AVERAGE and df[(d, col.label)].isna().all()]
            if len(absent) == len(ours.columns) - (AVERAGE in ours.columns):
                continue
            ours = ours.drop(columns=absent)
            note = f"{', '.join(absent)}: the test set has no labels for these phenomena (English marks none)." \
                if absent else ""
        else:
            note = ""
        paper_label = PAPER.format(col.label)
        paper = display.xs(paper_label, axis=1, level=1)[ours.columns] if paper_label in labels else None
        blocks.append(Block(QUALITY_HEADINGS.get(col.label, col.label), ours, paper, PAPER_QUALITY_LABEL, note))
    return blocks


# What `mtcue table --kind` makes: the kind of its --records and its writer.
_RECORDS_OF_KIND = {"quality": "score", "phenomena": "score", "models": "train", "data": "data"}


def write_table_of_kind(*, kind: str, records: Sequence[dict], comet_records: Sequence[dict],
                        train_records: Sequence[dict], bootstrap: Bootstrap, runs: Runs, csv: str | Path,
                        md: str | Path) -> None:
    """`mtcue table`: Table 4 (`kind` quality), the phenomena table, Table 3 (models) or Table 1 (data), from
    `records` of the kind's record kind (plan.quality's step)."""
    wrong = sorted({r["kind"] for r in records} - {_RECORDS_OF_KIND[kind]})
    if wrong:
        raise RecordError(f"--kind {kind}: expected {_RECORDS_OF_KIND[kind]} records, found {', '.join(wrong)}")
    if kind == "models":
        table3.write_models_table(records, csv, md, runs=runs)
    elif kind == "data":
        table1.write_data_table(records, csv, md)
    elif kind == "quality":
        write_quality_table(records, csv, md, comet_records, train_records, bootstrap=bootstrap, runs=runs)
    else:
        phenomena.write_phenomena_table(phenomena.phenomena_table(records), records, csv, md, runs)
