"""Table 5 (IWSLT22 zero-shot formality control) from formality records only. Rows: each model per kind
of prompt (`prompt_kind`: in_distribution, a content word of the prompt occurs in a training context;
unseen, none does; a model without context translates once and shows the same numbers in both). Per
direction: the formal and informal accuracy of the best prompt of that kind, chosen on the validation
split and reported on the test split, their average, each with its bootstrap interval (resampling the
test lines), and the mean over the kind's prompts (%); the paper's rows below. The CSV also holds every
prompt's test accuracy, in its kind's row. Supervised style-control models (Jeong et al.; records of
`score_style`) stand beside them, marked "(supervised)": their outputs at style levels 5 and 1."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from mtcue.evaluation.formality import ATTRIBUTES, KINDS
from mtcue.evaluation.score import bootstrap_interval, paired_bootstrap_ci
from mtcue.paper import PAPER_FIGURES
from mtcue.reporting.kit import BOOTSTRAP, NA, Bootstrap, Runs, display_name, read_table_csv, study_names, write_table
from mtcue.reporting.render import Block

PAPER_FORMALITY_CSV = PAPER_FIGURES / "mtcue_table5_iwslt22_formality.csv"
PAPER_METRICS = ("formal", "informal", "average")
INTERVALS = ("formal", "informal", "average")
METRICS = ("formal", "formal low", "formal high", "informal", "informal low", "informal high", "average",
           "average low", "average high", "formal mean", "informal mean")
SHOWN = ("formal", "informal", "average", "formal mean", "informal mean")


def _labels(record: dict, prompt_id: str | None) -> str | None:
    return next((p["labels"] for p in record["prompts"] if p["id"] == prompt_id and "labels" in p), None)


def chosen(record: dict, kind: str) -> dict[str, str | None]:
    """{attribute: the id of the output that stands for the record's model in `kind`}: the best prompt
    of that kind (chosen on valid), or the one output of a model without context."""
    if not record["prompts"] or not record["prompts"][0]["attribute"]:
        return dict.fromkeys(ATTRIBUTES, "none")
    if is_supervised(record):  # no prompt kinds: its level 5 and level 1 outputs in both rows
        return record["best_prompt"]
    return (record.get("by_kind") or {}).get(kind, {}).get("best_prompt") or dict.fromkeys(ATTRIBUTES)


def is_supervised(record: dict) -> bool:
    """A style-control model's record (evaluation.formality.score_style): trained on register labels."""
    return record.get("control") == "supervised"


def line_stats(record: dict, kind: str) -> np.ndarray | None:
    """[lines, 4]: per test line, (shown formal, judged) under the chosen formal output and (shown
    informal, judged) under the chosen informal output; None without per-line labels."""
    ids = chosen(record, kind)
    labels = {a: _labels(record, ids[a]) for a in ATTRIBUTES}
    if any(v is None for v in labels.values()):
        return None
    rows = [[f == "F", f in "FI", i == "I", i in "FI"]
            for f, i in zip(labels["formal"], labels["informal"]) if f != "-"]
    return np.asarray(rows, dtype=float)


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else float("nan")


SCORES = {"formal": lambda s: _ratio(s[0], s[1]), "informal": lambda s: _ratio(s[2], s[3]),
          "average": lambda s: (_ratio(s[0], s[1]) + _ratio(s[2], s[3])) / 2}


def intervals(record: dict, kind: str, bootstrap: Bootstrap = BOOTSTRAP) -> dict[str, tuple[float, float]]:
    """{formal, informal, average: (low, high)} (fractions): the (1 - alpha) bootstrap interval of the
    chosen outputs' accuracies over resamples of the test lines (the same resamples for every model)."""
    stats = line_stats(record, kind)
    if stats is None or not len(stats):
        return {m: (float("nan"), float("nan")) for m in INTERVALS}
    return {m: bootstrap_interval(stats, SCORES[m], bootstrap.n, bootstrap.seed, bootstrap.alpha) for m in INTERVALS}


def difference(a: dict, b: dict, kind: str, bootstrap: Bootstrap = BOOTSTRAP) -> dict | None:
    """Model a's average accuracy minus model b's (fractions), with its paired bootstrap interval (both
    models' lines resampled together); None without per-line labels."""
    sa, sb = line_stats(a, kind), line_stats(b, kind)
    if sa is None or sb is None or len(sa) != len(sb):
        return None
    return paired_bootstrap_ci(sa, sb, SCORES["average"], bootstrap.n, bootstrap.seed, bootstrap.alpha)


def _kind_values(record: dict, kind: str) -> dict[str, float | None]:
    """{formal, informal, average, formal mean, informal mean} of `kind` (fractions)."""
    if not record["prompts"] or not record["prompts"][0]["attribute"] or not record.get("by_kind"):
        # a model without context, or a record without kinds: its own best (and mean)
        return {"formal": record["formal"], "informal": record["informal"], "average": record["average"],
                "formal mean": record.get("formal_mean"), "informal mean": record.get("informal_mean")}
    summary = record["by_kind"][kind]
    f, i = summary["accuracy"]["formal"], summary["accuracy"]["informal"]
    return {"formal": f, "informal": i, "average": None if f is None or i is None else (f + i) / 2,
            "formal mean": summary["mean"]["formal"], "informal mean": summary["mean"]["informal"]}


def formality_table(records: Sequence[dict], models: Sequence[str], bootstrap: Bootstrap = BOOTSTRAP) -> pd.DataFrame:
    """Rows: (`models` as display names, in that order; prompt kind); columns (direction, metric),
    accuracies in %: METRICS, then `prompt <id>` for every prompt of the direction (in its kind's row)."""
    directions = sorted({r["direction"] for r in records})
    by_cell = {}
    for r in records:
        if (r["model"], r["direction"]) in by_cell:
            raise ValueError(f"two formality records for model {r['model']} and direction {r['direction']}")
        by_cell[(r["model"], r["direction"])] = r
    rows = {}
    for model in models:
        for kind in KINDS:
            row = {}
            for direction in directions:
                record = by_cell.get((model, direction))
                if record is None:
                    continue
                values = _kind_values(record, kind)
                spans = intervals(record, kind, bootstrap)
                for metric in METRICS:
                    base, _, end = metric.partition(" ")
                    value = spans[base][0 if end == "low" else 1] if end in ("low", "high") else values[metric]
                    row[(direction, metric)] = _percent(value)
                for prompt in record["prompts"]:
                    if prompt["attribute"] and prompt.get("kind", kind) == kind:
                        row[(direction, f"prompt {prompt['id']}")] = _percent(prompt["accuracy"])
            supervised = any(is_supervised(r) for (m, _d), r in by_cell.items() if m == model)
            rows[(display_name(model) + (" (supervised)" if supervised else ""), kind)] = row
    df = pd.DataFrame.from_dict(rows, orient="index")
    columns = [(d, m) for d in directions for m in METRICS] + sorted(c for c in df.columns if c[1] not in METRICS)
    df = df.reindex(columns=sorted(columns, key=lambda c: (directions.index(c[0]), columns.index(c))))
    df.columns = pd.MultiIndex.from_tuples(df.columns, names=["direction", "metric"])
    df.index = pd.MultiIndex.from_tuples(df.index, names=["model", "prompt_kind"])
    return df


def _percent(value: float | None) -> float:
    return float("nan") if value is None or (isinstance(value, float) and np.isnan(value)) else 100 * value


def _cell(d: pd.DataFrame, metric: str) -> list[str]:
    if metric not in INTERVALS:
        return [NA if pd.isna(v) else f"{v:.1f}" for v in d[metric]]
    return [NA if pd.isna(v) else f"{v:.1f} [{lo:.1f}, {hi:.1f}]" if not pd.isna(lo) else f"{v:.1f}"
            for v, lo, hi in zip(d[metric], d[f"{metric} low"], d[f"{metric} high"])]


def _display(df: pd.DataFrame, direction: str, kind: str) -> pd.DataFrame:
    d = df.xs(kind, level="prompt_kind")[direction]
    return pd.DataFrame({metric: _cell(d, metric) for metric in SHOWN}, index=d.index)


def _paper(direction: str) -> pd.DataFrame | None:
    paper = read_table_csv(PAPER_FORMALITY_CSV)
    paper = paper[paper["pair"] == direction]
    if paper.empty:
        return None
    rows = paper.assign(model=paper["model"] + " (" + paper["supervision"] + ")").set_index("model")
    shown = rows[list(PAPER_METRICS)].map(lambda v: f"{v:.1f}")
    return shown.reindex(columns=list(SHOWN), fill_value="")


def _prompts_note(records: Sequence[dict], direction: str, kind: str) -> str:
    best = [f"{display_name(r['model'])}: {chosen(r, kind)['formal']} / {chosen(r, kind)['informal']}"
            for r in records if r["direction"] == direction and r["prompts"] and r["prompts"][0]["attribute"]
            and not is_supervised(r)]
    where = {r.get("chosen_on") for r in records if r["direction"] == direction} - {None}
    return (f"Best {kind} prompt (formal / informal), chosen on the {' and '.join(sorted(where))} split: "
            + "; ".join(best) + ".") if best else ""


def kind_counts(records: Sequence[dict]) -> dict[str, dict[str, int]]:
    """{kind: {attribute: prompts of that kind}} over the records' prompts (each prompt once)."""
    seen = {(p["id"], p.get("kind"), p["attribute"]) for r in records for p in r["prompts"] if p["attribute"]}
    return {k: {a: sum(1 for _i, kind, att in seen if kind == k and att == a) for a in ATTRIBUTES} for k in KINDS}


def write_formality_table(records: Sequence[dict], models: Sequence[str], csv: str | Path, md: str | Path,
                          runs: Runs | None = None, bootstrap: Bootstrap = BOOTSTRAP) -> None:
    df = formality_table(records, models, bootstrap)
    prompts = {p["id"]: (p["text"], p.get("kind")) for r in records for p in r["prompts"]
               if p["attribute"] and not is_supervised(r)}
    blocks = [Block(f"{direction}, {kind} prompts", _display(df, direction, kind), _paper(direction),
                    "paper, Table 5 (its prompts: eight in-distribution, two generic)",
                    _prompts_note(records, direction, kind))
              for direction in df.columns.get_level_values(0).unique() for kind in KINDS]
    if runs:  # each block is one direction's
        blocks = [runs.linked(b, direction=b.heading.split(",")[0]) for b in blocks]
    test_sets = sorted({f"{r['direction']}: {r['lines']} lines of {r['test_set']}" for r in records})
    footnotes = [
        "formal / informal: the share of judged test outputs in the requested register (FORMAL / (FORMAL + "
        "INFORMAL), the official IWSLT22 rule; outputs with no or both registers' phrases are left out), with "
        "the prompt of that register and kind that scores best on the validation split; average: their mean; "
        f"[low, high]: {100 * (1 - bootstrap.alpha):.0f}% bootstrap interval over the test lines ({bootstrap.n} "
        f"resamples, seed {bootstrap.seed}; the same resamples for every model, so differences are paired); "
        "formal mean, informal mean: the mean test accuracy over the kind's prompts of that register (the CSV "
        "has each prompt's). A model without context translates once: its two accuracies are the two shares of "
        "one output, sum to 100 and stand in both kinds' rows.",
        "Kinds: in_distribution, a content word of the prompt occurs in a training context of the direction "
        "(a metadata value or previous line of its training corpus); unseen, none does (computed, not labelled).",
        "Prompts: " + "; ".join(f"{i} \"{t}\" ({k or 'kind n/a'})" for i, (t, k) in prompts.items()) + ".",
        "Test sets: " + "; ".join(test_sets) + ".",
    ]
    if any(is_supervised(r) for r in records):
        footnotes.append(
            "(supervised): Jeong et al.'s style-control models (style_token: a level token after the beginning of "
            "sentence; style_dim: a continuous style value on the encoder output), fine-tuned from BASE on the "
            "corpus's register labels mapped to levels 1..5; not zero-shot. formal: their output at level 5, "
            "informal: at level 1 (Jeong et al.'s extremes; style_dim's values +2 and -2); no prompt, nothing chosen, "
            "the same numbers in both kinds' rows. Every level: results/figures/style_levels.")
    write_table(df, csv, md, f"Table 5: IWSLT22 zero-shot formality | {study_names(records)}", footnotes,
                blocks=blocks, runs=runs)
