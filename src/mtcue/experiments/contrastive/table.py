"""The contrastive table from contrastive records only (docs/formats.md, sections 4, 7 and 8).

CSV, long: one row per (direction, model, suite, group) with accuracy (0-1), n and ties; group "all" is
the whole suite, "key=value" a group of it (phenomenon=pronoun, distance=2, set=deixis); for every model
but BASE its accuracy minus BASE's on the same examples (`vs_base`) and the paired-bootstrap interval of
that difference (`vs_base_low`, `vs_base_high`: examples resampled, both models' verdicts together, as
the quality table's BLEU); the shortening paper's published accuracies (ContraPro, Lopes et al.) are rows
with their source named. Markdown/HTML: per direction, models x suites in %, with each suite's phenomena
and distances, the difference from BASE and its interval in brackets, ties where there are any, and a note
for the sets that need target-side context.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mtcue.evaluation.contrastive import RULES
from mtcue.evaluation.score import mean_from_stats, mean_stats, paired_bootstrap_ci
from mtcue.io import atomic_write_text
from mtcue.paper import PAPER_FIGURES
from mtcue.reporting.kit import BOOTSTRAP, NA, Bootstrap, Runs, display_name, html_path, model_key, read_table_csv
from mtcue.reporting.render import Block, Layout, markdown_table, render_html, render_markdown
from mtcue.reporting.results import Run

PAPER_CONTRASTIVE_CSV = PAPER_FIGURES / "shortening_iwslt17_contrastive.csv"
PAPER_LABEL = "shortening paper (IWSLT17), contrastive accuracy"
PAPER_SUITES = {"en-de": "contrapro", "en-fr": "lopes"}  # the shortening paper's test sets by pair
SHOWN_GROUPS = ("phenomenon", "set", "distance")  # breakdowns with a column in the Markdown
CSV_COLUMNS = ["direction", "model", "suite", "group", "accuracy", "n", "ties", "vs_base", "vs_base_low",
               "vs_base_high", "source", "measure"]  # then run
# What decides a verdict (the CSV's `measure`): here the summed log-probability; the shortening paper's numbers
# the per-token mean (its authors score with fairseq's SequenceScorer, whose score is the mean over the target's
# tokens and </s>, and feed ContraPro's evaluate.py); its own table (experiments/shortening/table.py) shows ours so too.
SUM_MEASURE, MEAN_MEASURE = "summed log-probability", "per-token mean log-probability"
OURS = "this study"
BASELINE = "base"  # the model every other one is compared with, on the same examples

Difference = dict  # {"difference", "low", "high", ...}: paired_bootstrap_ci's, accuracies as fractions


def differences(records: Sequence[dict], bootstrap: Bootstrap = BOOTSTRAP) -> dict[tuple, Difference]:
    """(direction, model, suite, group) -> the model's accuracy minus BASE's on the same examples, with the
    paired-bootstrap interval (examples resampled; per-example verdicts by the summed score), for every
    model with a BASE record of its direction and suite; group as in the CSV ("all", "key=value")."""
    base = {(r["direction"], r["suite"]): r for r in records if r["model"] == BASELINE}
    out = {}
    for r in records:
        b = base.get((r["direction"], r["suite"]))
        if b is None or r["model"] == BASELINE:
            continue
        base_right = {e["id"]: e["right"] for e in b["examples"]}
        if set(base_right) != {e["id"] for e in r["examples"]}:
            raise ValueError(f"{r['direction']} {r['suite']}: {r['model']} and {BASELINE} were scored on different "
                             "examples; score both on the same suite file")
        members: dict[str, list[dict]] = {"all": r["examples"]}
        for e in r["examples"]:
            for key, value in e["group"].items():
                members.setdefault(f"{key}={value}", []).append(e)
        for group, examples in members.items():
            out[(r["direction"], r["model"], r["suite"], group)] = paired_bootstrap_ci(
                mean_stats([e["right"] for e in examples]), mean_stats([base_right[e["id"]] for e in examples]),
                mean_from_stats, bootstrap.n, bootstrap.seed, bootstrap.alpha)
    return out


def long_rows(records: Sequence[dict], runs: Runs | None = None,
              vs_base: dict[tuple, Difference] | None = None) -> pd.DataFrame:
    """The CSV's rows: ours, then the shortening paper's published ones; with `runs`, a `run` column (the
    MLflow run of the row's model in its direction; empty for the shortening paper's rows)."""
    vs_base = differences(records) if vs_base is None else vs_base
    rows, seen = [], set()

    def row(key: tuple, group: str, s: dict) -> list:
        d = vs_base.get((*key, group), {})
        return [*key, group, s["accuracy"], s["n"], s["ties"], d.get("difference"), d.get("low"), d.get("high"), OURS,
                SUM_MEASURE]

    for r in records:
        key = (r["direction"], r["model"], r["suite"])
        if key in seen:
            raise ValueError(f"two contrastive records for {' '.join(key)}")
        seen.add(key)
        rows.append(row(key, "all", r))
        for group, values in r["groups"].items():
            rows += [row(key, f"{group}={value}", s) for value, s in values.items()]
    paper = read_table_csv(PAPER_CONTRASTIVE_CSV)
    for p in paper.itertuples():
        if p.pair in PAPER_SUITES:
            rows.append([p.pair, f"{p.model} ({p.context_size} previous)" if p.context_size else p.model,
                         PAPER_SUITES[p.pair], "all", p.contrastive_accuracy / 100, None, None, None, None, None,
                         PAPER_LABEL, MEAN_MEASURE])
    df = pd.DataFrame(rows, columns=CSV_COLUMNS).astype({"n": "Int64", "ties": "Int64"})
    if runs is not None:
        df["run"] = [runs.name(d, m) if s == OURS else None
                        for d, m, s in zip(df["direction"], df["model"], df["source"])]
    return df


def _sort_value(value: str) -> tuple:
    return (1, value) if not value.lstrip(">").isdigit() else (0, int(value.lstrip(">")) + (">" in value), value)


def direction_block(records: Sequence[dict], direction: str, vs_base: dict[tuple, Difference] | None = None
                    ) -> Block:
    """Models x (suite, then its shown groups) for one direction, accuracies in %, each model's difference
    from BASE with its interval in brackets."""
    vs_base = vs_base or {}
    mine = [r for r in records if r["direction"] == direction]
    suites = sorted({r["suite"] for r in mine}, key=lambda s: (s != "synthetic", s))
    columns: list[str] = []
    for suite in suites:
        columns.append(suite)
        groups = {(g, v) for r in mine if r["suite"] == suite for g, vs in r["groups"].items() if g in SHOWN_GROUPS
                  for v in vs}
        columns += [f"{suite} {g}={v}" for g, v in sorted(groups, key=lambda gv: (SHOWN_GROUPS.index(gv[0]),
                                                                                  _sort_value(gv[1])))]
    cells: dict[str, dict[str, str]] = {}
    for r in sorted(mine, key=lambda r: model_key(r["model"])):
        row = cells.setdefault(display_name(r["model"]), dict.fromkeys(columns, NA))
        row[r["suite"]] = _cell(r, vs_base.get((direction, r["model"], r["suite"], "all")))
        for g, values in r["groups"].items():
            for v, s in values.items():
                if f"{r['suite']} {g}={v}" in row:
                    row[f"{r['suite']} {g}={v}"] = _cell(
                        s, vs_base.get((direction, r["model"], r["suite"], f"{g}={v}")))
    display = pd.DataFrame.from_dict(cells, orient="index", columns=columns).rename_axis("model")
    paper = _paper(direction)
    needs = sorted({r["suite"] for r in mine if r["needs_target_context"]})
    note = (f"{', '.join(needs)}: needs target-side context (the candidates differ where only the earlier "
            "target lines decide); a model reading source context only is not measured there." if needs else "")
    return Block(direction, display, paper, PAPER_LABEL if paper is not None else "", note)


def difference_text(d: Difference) -> str:
    """A difference from BASE and its interval, in points: "+12.5 [+3.8, +21.2]"."""
    return f"{100 * d['difference']:+.1f} [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}]"


def _cell(s: dict, d: Difference | None = None) -> str:
    if s["accuracy"] is None:
        return NA
    text = f"{100 * s['accuracy']:.1f}"
    if d is not None:
        text += f" ({difference_text(d)})"
    return f"{text} ({s['ties']} ties)" if s["ties"] else text


def _paper(direction: str) -> pd.DataFrame | None:
    if direction not in PAPER_SUITES:
        return None
    paper = read_table_csv(PAPER_CONTRASTIVE_CSV)
    paper = paper[paper["pair"] == direction]
    rows = {f"{p.model} ({p.context_size} prev.)" if p.context_size else p.model: f"{p.contrastive_accuracy:.2f}"
            for p in paper.itertuples()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=[PAPER_SUITES[direction]]).rename_axis("model")


def write_contrastive_table(records: Sequence[dict], csv: str | Path, md: str | Path,
                            runs: Runs | None = None, bootstrap: Bootstrap = BOOTSTRAP) -> None:
    if not records:
        raise ValueError("no contrastive records to tabulate")
    directions = sorted({r["direction"] for r in records})
    n = {r["suite"]: r["n"] for r in records}
    vs_base = differences(records, bootstrap)
    rules: dict[str, set[str]] = {}
    for r in records:
        rules.setdefault(r["rule"], set()).add(r["suite"])
    layout = Layout("Contrastive accuracy (%): the correct candidate scored best, by each suite's official rule",
                    [runs.linked(direction_block(records, d, vs_base), direction=d) if runs else
                     direction_block(records, d, vs_base) for d in directions],
                    ["Every candidate is force-decoded with the example's own context (identical candidates of an "
                     "example once, sharing the score), and each suite judged by its official scorer's rule: "
                     + "; ".join(f"{', '.join(sorted(ss))}: {RULES[rule]}" for rule, ss in rules.items())
                     + ". Ties (the correct candidate equal to the best other) are counted apart.",
                     "Ours: summed log-probabilities (the records also "
                     "hold the per-token mean's accuracy); the shortening paper's numbers beside are by the per-token "
                     "mean, its measure (the CSV's `measure`; `shortening.md` compares by it).",
                     f"In brackets: the model's accuracy minus {display_name(BASELINE)}'s on the same examples "
                     f"(points) and its {100 * (1 - bootstrap.alpha):.0f}% paired-bootstrap interval ({bootstrap.n} "
                     "resamples of the examples); a model differs from it beyond chance only where the interval excludes 0.",
                     "Examples per suite: " + ", ".join(f"{s} {k}" for s, k in sorted(n.items())) + ".",
                     f"Study: {', '.join(sorted({r['study'] for r in records}))}.",
                     *([runs.footnote()] if runs else [])])
    atomic_write_text(csv, long_rows(records, runs, vs_base).to_csv(index=False))
    atomic_write_text(md, render_markdown(layout))
    atomic_write_text(html_path(md), render_html(layout))


def contrastive_section(run: Run) -> list[str]:
    """The synthetic contrastive suites: accuracy overall and on the pronouns, per model and direction."""
    if run.contrastive is None:
        return []
    # The models that translate the test split; the ablation rows and few-shot variants are in the table, and
    # the systems with a section of their own (side information, shortening) show their accuracy there.
    own_section = set().union(*(set(t["model"].dropna()) for t in (run.side_information, run.shortening)
                                if t is not None and "model" in t))
    shared = {r["model"] for r in run.scores} | (set(run.voita2018["model"].dropna())
                                                if run.voita2018 is not None and "model" in run.voita2018 else set())
    shown = {m for m in run.translating if m not in own_section or m in shared}
    ours = run.contrastive[(run.contrastive["source"] == "this study") & (run.contrastive["suite"] == "synthetic")
                           & run.contrastive["model"].isin(shown)]
    if ours.empty:
        return []
    groups = {"all": "all", "phenomenon=pronoun": "pronoun"}
    ours = ours[ours["group"].isin(groups)]
    paired = "vs_base" in ours
    cells = ours.assign(cell=[f"{100 * r.accuracy:.1f}" + (
        f" ({difference_text({'difference': r.vs_base, 'low': r.vs_base_low, 'high': r.vs_base_high})})"
        if paired and not pd.isna(r.vs_base) else "") for r in ours.itertuples()])
    table = cells.pivot_table(index="model", columns=["direction", "group"], values="cell", aggfunc="first")
    models = sorted(table.index, key=lambda m: model_key(display_name(m)))
    display = pd.DataFrame(index=pd.Index([display_name(m) for m in models], name="model"))
    for direction in sorted({d for d, _ in table.columns}):
        display[f"{direction} all / pronoun"] = [
            " / ".join(str(table.get((direction, g), pd.Series(dtype=object)).get(m, NA)) for g in groups)
            .replace("nan", NA) for m in models]
    return ["Contrastive accuracy (%) on the synthetic suites (`results/tables/contrastive.md`, per phenomenon "
            "and antecedent distance): the correct translation must score strictly above every variant that "
            "differs in one context-dependent word; all phenomena / anaphoric pronouns"
            + (", each model's difference from BASE on the same examples in brackets with its 95% paired-bootstrap "
               "interval (a difference beyond chance only where it excludes 0)" if paired else "") + ":", "",
            *markdown_table(display.fillna(NA))]
