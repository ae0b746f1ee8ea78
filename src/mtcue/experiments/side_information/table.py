"""Hoang et al. (2018), Table 3: BLEU of the ways of feeding side-information labels, each against the
baseline without side information (paired bootstrap), the synthetic contrastive suite's accuracy where the
direction has one (en->xx), TAGGING and MTCUE beside, Hoang et al.'s numbers beside ours, and Hoang et al.'s three
claims evaluated per direction (so that they can be read off the CSV)."""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mtcue.evaluation.score import paired_bootstrap
from mtcue.paper import PAPER_FIGURES
from mtcue.experiments.side_information.plan import grid_points
from mtcue.reporting.kit import (BOOTSTRAP, NA, Bootstrap, Runs, format_number, per_direction, read_table_csv,
                                study_names, write_table)
from mtcue.reporting.render import Block, markdown_table
from mtcue.reporting.results import Run

PAPER_CSV = PAPER_FIGURES / "sideinfo_hoang_bleu.csv"
NO_CONTEXT = "no_context"  # the row variant: the model decoded without any label
PREDICTED = "predicted_labels"  # the row variant: the target-prefix model predicting its labels
# Hoang et al.'s row of each of ours: (model type, variant) -> Hoang et al.'s method name.
PAPER_ROW = {("base", ""): "base", ("si_src_prefix", ""): "si-src-prefix", ("si_src_suffix", ""): "si-src-suffix",
             ("si_trg_prefix", PREDICTED): "si-trg-prefix-p", ("si_trg_prefix", ""): "si-trg-prefix-h",
             ("si_output_layer", ""): "output-layer", ("si_output_layer", NO_CONTEXT): "w/o side info",
             ("si_mtl", ""): "mtl"}
# Hoang et al.'s claims, each over the rows of one direction: (name, sentence).
CLAIMS = (
    ("output_layer_best",
     "output-layer has the highest BLEU of Hoang et al.'s systems (baseline, every variant; chosen points)"),
    ("mtl_above_output_layer_without_labels", "mtl (no labels at test) is above output-layer decoded without labels"),
    ("trg_prefix_h_not_above_base", "si-trg-prefix-h (labels given as target prefix) is no better than the baseline"),
)


def _cells(scores: Sequence[dict], no_context_scores: Sequence[dict],
           predicted_scores: Sequence[dict]) -> dict[tuple[str, str, str], dict]:
    cells = {}
    for variant, records in (("", scores), (NO_CONTEXT, no_context_scores), (PREDICTED, predicted_scores)):
        for r in records:
            key = (r["model"], r["direction"], variant)
            if key in cells:
                raise ValueError(f"two score records for {r['model']} in {r['direction']} ({variant or 'own labels'})")
            cells[key] = r
    return cells


def side_information_frame(rows: Sequence[dict], scores: Sequence[dict], no_context_scores: Sequence[dict],
                           predicted_scores: Sequence[dict], contrastive: Sequence[dict], baseline: str | None,
                           bootstrap: Bootstrap = BOOTSTRAP) -> pd.DataFrame:
    """Long frame (row label, direction, metric) -> value: bleu; p_better and p_worse, the paired bootstrap's
    p-values of the row above / below the baseline (p <= alpha: significant); contrastive_{suite}, the
    accuracy (%) on each contrastive suite of the direction.
    `rows`: [{"label", "model", "type", "variant"}] in table order."""
    cells = _cells(scores, no_context_scores, predicted_scores)
    accuracy: dict[tuple[str, str], dict[str, float]] = {}
    for r in contrastive:
        accuracy.setdefault((r["model"], r["direction"]), {})[f"contrastive_{r['suite']}"] = 100 * r["accuracy"]
    directions = sorted({d for _, d, _ in cells})
    out = []
    for row in rows:
        for d in directions:
            record = cells.get((row["model"], d, row["variant"]))
            if record is None:
                continue
            values = {"bleu": record["bleu"]}
            base = cells.get((baseline, d, ""))
            if base is not None and (row["model"], row["variant"]) != (baseline, ""):
                for metric, (a, b) in (("p_better", (record, base)), ("p_worse", (base, record))):
                    values[metric] = paired_bootstrap(a["segment_stats"], b["segment_stats"], n=bootstrap.n,
                                                      seed=bootstrap.seed)["p_value"]
            if not row["variant"]:
                values |= accuracy.get((row["model"], d), {})
            out += [{"table": "bleu", "direction": d, "row": row["label"], "metric": m, "value": v,
                     "model": row["model"], "variant": row["variant"]} for m, v in values.items()]
    return pd.DataFrame(out, columns=["table", "direction", "row", "metric", "value", "model", "variant"])


# How a type's grid point was chosen: the CSV's table "chosen", its metric (the value: the BLEU that chose it).
ONLY_POINT, ON_VALID, ON_TEST = "only_point", "validation_bleu", "test_bleu"
CHOSEN_BY = {ONLY_POINT: "its only grid point", ON_VALID: "best validation BLEU",
             ON_TEST: "best test BLEU (no validation scores: optimistic)"}


def chosen_points(rows: Sequence[dict], test_bleu: dict[str, float], valid_bleu: dict[str, float],
                  where: str = "") -> dict[tuple[str, str], tuple[str, str, float]]:
    """One direction: (type, variant) -> (the label of its chosen row, how it was chosen, the BLEU that chose
    it; NaN for an only point without a test score). A type's grid points
    are its models (rows of variant ""); Hoang et al. tune on the development set by BLEU, so the point is the
    model with the highest validation BLEU (`valid_bleu`, by model) when every point has one, else the highest
    test BLEU (`test_bleu`, by model: optimistic, and said so) when none has; a type with some points scored on
    validation and others not is refused (`where`: the direction, for the message). A type's other variants
    (decoded without or with predicted labels) follow its chosen model."""
    chosen = {}
    for kind, points in grid_points(rows).items():
        if len(points) == 1:
            chosen[kind] = (points[0], ONLY_POINT, test_bleu.get(points[0], math.nan))
        elif all(m in valid_bleu for m in points):
            best = max(points, key=valid_bleu.__getitem__)
            chosen[kind] = (best, ON_VALID, valid_bleu[best])
        elif any(m in valid_bleu for m in points):  # a partial grid would be chosen on another split, silently
            missing = ", ".join(m for m in points if m not in valid_bleu)
            raise ValueError(f"{kind}: no validation score record of grid point(s) {missing}{where} (the others "
                             "have one): pass every grid point's results/records/score/<direction>/<model>.valid.json "
                             "with --valid-records")
        elif any(m in test_bleu for m in points):
            best = max((m for m in points if m in test_bleu), key=test_bleu.__getitem__)
            chosen[kind] = (best, ON_TEST, test_bleu[best])
    return {(r["type"], r["variant"]): (r["label"], *chosen[r["type"]][1:]) for r in rows
            if r["type"] in chosen and r["model"] == chosen[r["type"]][0]}


def claim_checks(rows: Sequence[dict], long: pd.DataFrame, valid_scores: Sequence[dict] = ()) -> pd.DataFrame:
    """Per direction, whether each of Hoang et al.'s claims holds on our BLEU (1 / 0; NaN where a row it
    compares is missing), each (type, variant) by its chosen grid point (`chosen_points`; `valid_scores`:
    score records of the validation split); "best" is over the chosen points of Hoang et al.'s systems (the
    baseline and every si_* type). Also the table "chosen": each chosen row and how it was chosen."""
    bleu = long[long["metric"] == "bleu"].set_index(["direction", "row"])["value"]
    model_of = {r["label"]: r["model"] for r in rows if not r["variant"]}
    out = []
    for d in sorted(long["direction"].unique()):
        test = {model_of[label]: value for (direction, label), value in bleu.items()
                if direction == d and label in model_of}
        valid = {r["model"]: r["bleu"] for r in valid_scores if r["direction"] == d}
        chosen = chosen_points(rows, test, valid, f" in {d}")
        score = {key: bleu.get((d, label), math.nan) for key, (label, _, _) in chosen.items()}
        best = max((v for key, v in score.items() if key in PAPER_ROW and not math.isnan(v)), default=math.nan)
        holds = {
            "output_layer_best": _compare(score.get(("si_output_layer", ""), math.nan), best, operator.ge),
            "mtl_above_output_layer_without_labels": _compare(score.get(("si_mtl", ""), math.nan),
                                                              score.get(("si_output_layer", NO_CONTEXT), math.nan),
                                                              operator.gt),
            "trg_prefix_h_not_above_base": _compare(score.get(("si_trg_prefix", ""), math.nan),
                                                    score.get(("base", ""), math.nan), operator.le),
        }
        out += [{"table": "claims", "direction": d, "row": name, "metric": "holds", "value": holds[name],
                 "model": None, "variant": None} for name, _ in CLAIMS]
        out += [{"table": "chosen", "direction": d, "row": label, "metric": how, "value": value,
                 "model": model_of.get(label), "variant": variant}
                for (_, variant), (label, how, value) in chosen.items()]
    return pd.DataFrame(out, columns=long.columns)


def _compare(a: float, b: float, op) -> float:
    """1.0 or 0.0: whether op(a, b); NaN where either is missing."""
    return math.nan if math.isnan(a) or math.isnan(b) else float(op(a, b))


def _bleu_cell(values: pd.Series, alpha: float) -> str:
    if "bleu" not in values:
        return NA
    mark = ("+" if values.get("p_better", 1.0) <= alpha else "-" if values.get("p_worse", 1.0) <= alpha else "")
    return f"{values['bleu']:.2f}{mark}"


def write_side_information_table(rows: Sequence[dict], scores: Sequence[dict], no_context_scores: Sequence[dict],
                                 predicted_scores: Sequence[dict], contrastive: Sequence[dict], baseline: str | None,
                                 csv: str | Path, md: str | Path, runs: Runs | None = None,
                                 bootstrap: Bootstrap = BOOTSTRAP, valid_scores: Sequence[dict] = ()) -> None:
    """The CSV is long (docs/formats.md, section 7): tables bleu (metrics bleu, p_better, p_worse,
    contrastive_accuracy), paper (Hoang et al.'s BLEU), claims (holds: 1 / 0 / empty) and chosen (each type's compared
    grid point; metric: what chose it, CHOSEN_BY; `valid_scores` the validation split's score records; `baseline`
    empty or None where there is none)."""
    baseline = baseline or None
    not_valid = sorted({f"{r['model']} ({r['direction']}, split {r.get('split')})" for r in valid_scores
                        if r.get("split") != "valid"})
    if not_valid:  # a grid point chosen on test would be reported on test: optimistic
        raise ValueError(f"--valid-records: not of the validation split: {', '.join(not_valid)}")
    long = side_information_frame(rows, scores, no_context_scores, predicted_scores, contrastive, baseline, bootstrap)
    paper = read_table_csv(PAPER_CSV).set_index("method")
    paper_of = {r["label"]: PAPER_ROW.get((r["type"], r["variant"])) for r in rows}
    paper_rows = [{"table": "paper", "direction": column, "row": label, "metric": "bleu",
                  "value": paper.at[name, column], "model": None, "variant": None}
                 for label, name in paper_of.items() if name in paper.index for column in paper.columns]
    claims = claim_checks(rows, long, valid_scores)
    frames = (long, pd.DataFrame(paper_rows, columns=long.columns), claims)
    df = pd.concat([frame for frame in frames if not frame.empty], ignore_index=True)
    if runs is not None:
        df["run"] = [runs.name(d, m) if isinstance(m, str) else None
                        for d, m in zip(df["direction"], df["model"])]
    df = df.set_index(["table", "direction", "row", "metric"])

    directions = sorted(long["direction"].unique()) if not long.empty else []
    display = pd.DataFrame(index=[r["label"] for r in rows])
    for d in directions:
        sub = long[long["direction"] == d]
        per_row = {label: group.set_index("metric")["value"] for label, group in sub.groupby("row")}
        display[f"{d} BLEU"] = [_bleu_cell(per_row.get(label, pd.Series(dtype=float)), bootstrap.alpha)
                                for label in display.index]
        for metric in sorted(m for m in sub["metric"].unique() if m.startswith("contrastive_")):
            display[f"{d} {metric.removeprefix('contrastive_')} %"] = [
                f"{per_row[label][metric]:.1f}" if label in per_row and metric in per_row[label] else NA
                for label in display.index]
    for column in paper.columns:
        display[f"paper {column}"] = [f"{paper.at[paper_of[label], column]:.2f}" if paper_of[label] in paper.index
                                      and pd.notna(paper.at[paper_of[label], column]) else NA
                                      for label in display.index]
    display.index.name = "system"
    chosen = claims[claims["table"] == "chosen"]
    claims = claims[claims["table"] == "claims"]
    verdict = claims.pivot(index="row", columns="direction", values="value") if not claims.empty else pd.DataFrame()
    claim_display = pd.DataFrame({d: [NA if pd.isna(verdict.at[name, d]) else ("yes" if verdict.at[name, d] else "no")
                                      for name, _ in CLAIMS] for d in verdict.columns},
                                 index=[sentence for _, sentence in CLAIMS])
    claim_display.index.name = "Hoang et al.'s claim"
    chosen_display = pd.DataFrame({d: {row: CHOSEN_BY[how] for row, how in zip(part["row"], part["metric"])}
                                   for d, part in chosen.groupby("direction")})
    chosen_display.index.name = "row compared"
    table3 = Block("Table 3: BLEU (test split) and contrastive accuracy", display)
    blocks = [runs.linked(table3, {r["label"]: r["model"] for r in rows}) if runs else table3,
              Block("Hoang et al.'s claims on our numbers, each system by its chosen grid point", claim_display
                    if not claim_display.empty else pd.DataFrame({"": ["no scores"]}, index=[NA])),
              *([Block("The grid points compared, and what chose them", chosen_display.fillna(NA))]
                if not chosen_display.empty else [])]
    footnotes = [
        (f"BLEU of each system on the study's test split (sacreBLEU); + / -: significantly above / below the row "
        f"'{baseline}' (paired bootstrap, {bootstrap.n} resamples, p <= {bootstrap.alpha}). Labels per sample: "
        "genres, PG rating, country, decade of release (the study's metadata); the vocabulary from the training "
        "split. 'w/o side info': the output-layer model decoded with no labels (e = 0)."),
        ("<suite> %: accuracy on the direction's contrastive suite (mtcue score-contrastive; the demo: the synthetic "
        "suite's formality and pronoun examples), en->xx only."),
        ("Paper: Hoang et al., Table 3 (de-en: TED talks, personalised Europarl, PatTR-1/-2); a different corpus, "
        "Hoang et al.'s numbers are beside ours for the pattern, not the level."),
        ("si-trg-prefix-h / -p: one model whose decoder reads the labels before the translation, given and forced "
        "(-h) or predicted by the model (-p); the prefix is never part of the output."),
        ("Claims: each system (type) is represented by one grid point, the one with the best validation BLEU (as "
        "Hoang et al. tune H_s and lambda on development data) where every point of it has a validation score, "
        "else the best test BLEU (optimistic, said so); a system's other rows follow its chosen model."),
        f"Study: {study_names([*scores, *no_context_scores, *predicted_scores, *contrastive]) or NA}.",
        *([runs.footnote()] if runs else []),  # the CSV's run column names each cell's run
    ]
    write_table(df, csv, md, "Hoang et al. (2018): NMT with side information", footnotes, blocks=blocks)


# The README's section: p <= this marks a row significantly above/below BASE (the table's paired bootstrap)
SIGNIFICANT = 0.05


def side_information_section(run: Run) -> list[str]:
    """Hoang et al. Table 3 on our directions: BLEU with the significance mark against BASE, the contrastive
    accuracy where the direction has a suite, then each of Hoang et al.'s claims as our numbers decide it."""
    table = run.side_information
    if table is None or table.empty:
        return []
    ours = table[table["table"] == "bleu"]
    rows = list(dict.fromkeys(ours["row"]))
    display = pd.DataFrame(index=pd.Index(rows, name="system"))
    for direction, cell in per_direction(ours, rows):
        better, worse = (cell.get(p, pd.Series(1.0, index=rows)).fillna(1.0) for p in ("p_better", "p_worse"))
        display[f"{direction} BLEU"] = [
            format_number(cell.loc[r, "bleu"], 2)
            + ("+" if better[r] <= SIGNIFICANT else "−" if worse[r] <= SIGNIFICANT else "")
            for r in rows]
        for metric in (c for c in cell.columns if str(c).startswith("contrastive_")):
            display[f"{direction} {metric.removeprefix('contrastive_')} contrastive %"] = [
                format_number(v, 1) for v in cell[metric]]
    claims = table[(table["table"] == "claims") & (table["metric"] == "holds")]
    lines = ["Hoang et al. (2018), side information (Table 3 in `results/tables/side_information.md`, Hoang et al.'s "
             "numbers beside): test BLEU, + / − significantly above / below the baseline without side information "
             "(paired bootstrap, p ≤ 0.05); one run each:", "", *markdown_table(display), ""]
    for name, sentence in CLAIMS:
        verdicts = [f"{r['direction']} {'holds' if r['value'] == 1 else 'does not hold'}"
                    for _, r in claims[claims["row"] == name].iterrows() if not pd.isna(r["value"])]
        if verdicts:
            lines.append(f"- Hoang et al.'s claim \"{sentence}\": " + "; ".join(verdicts) + ".")
    return lines if lines[-1] else lines[:-1]
