"""The context-usage table from context_usage records only (CXMI, mtcue.evaluation.context_usage).

CSV, long: one row per (direction, model, group) with CXMI (nats per token), its bootstrap interval
(sentences resampled, from the record's per-sentence CXMI), n,
the two cross-entropies (overall row) and `reads_context`: whether the interval lies above 0 ("yes"),
below it ("yes, to its loss") or holds it ("no"). Group "all" is the whole split, "phenomenon=X" the
sentences labelled with X. Markdown/HTML: per direction, models x (CXMI overall, then per phenomenon).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mtcue.evaluation.context_usage import interval
from mtcue.io import atomic_write_text
from mtcue.reporting.kit import BOOTSTRAP, NA, Bootstrap, Runs, display_name, html_path, model_key
from mtcue.reporting.render import Block, Layout, markdown_table, render_html, render_markdown
from mtcue.reporting.results import Run

CSV_COLUMNS = ["direction", "model", "split", "group", "cxmi", "low", "high", "n", "reads_context",
               "cross_entropy_context", "cross_entropy_no_context", "without_context"]


READS, READS_TO_ITS_LOSS, NO_USE = "yes", "yes, to its loss", "no"


def reads_context(s: dict) -> str:
    """What a CXMI interval says: the model reads its context (above 0), reads it to its loss (below 0: the
    context moves its predictions away from the reference), or no use of it is shown (0 inside; a model
    without context: exactly 0)."""
    if s["low"] > 0:
        return READS
    if s["high"] < 0:
        return READS_TO_ITS_LOSS
    return NO_USE


def summaries(records: Sequence[dict], bootstrap: Bootstrap = BOOTSTRAP) -> dict[tuple, dict]:
    """(direction, model, split, group) -> {"cxmi", "n", "low", "high"}: group "all" or "phenomenon=X"."""
    out = {}
    for r in records:
        key = (r["direction"], r["model"], r["split"])
        if (*key, "all") in out:
            raise ValueError(f"two context_usage records for {' '.join(key)}")
        for group, phenomenon, s in [("all", None, r), *((f"phenomenon={p}", p, s) for p, s in r["phenomena"].items())]:
            low, high = interval(r, phenomenon, bootstrap.n, bootstrap.seed, bootstrap.alpha)
            out[(*key, group)] = {"cxmi": s["cxmi"], "n": s["n"], "low": low, "high": high}
    return out


def long_rows(records: Sequence[dict], runs: Runs | None = None, shown: dict[tuple, dict] | None = None
              ) -> pd.DataFrame:
    by_record = {(r["direction"], r["model"], r["split"]): r for r in records}
    rows = []
    for (*key, group), s in (shown or summaries(records)).items():
        r = by_record[tuple(key)]
        ce = r["cross_entropy"] if group == "all" else {}
        rows.append([*key, group, s["cxmi"], s["low"], s["high"], s["n"], reads_context(s), ce.get("context"),
                     ce.get("no_context"), r["without_context"]])
    df = pd.DataFrame(rows, columns=CSV_COLUMNS)
    if runs is not None:
        df["run"] = [runs.name(d, m) for d, m in zip(df["direction"], df["model"])]
    return df


def _cell(s: dict) -> str:
    return f"{s['cxmi']:+.4f} [{s['low']:+.4f}, {s['high']:+.4f}]"


def direction_block(records: Sequence[dict], direction: str, shown: dict[tuple, dict]) -> Block:
    mine = sorted((r for r in records if r["direction"] == direction), key=lambda r: model_key(r["model"]))
    phenomena = sorted({p for r in mine for p in r["phenomena"]})
    columns = ["CXMI", "reads its context", *(f"CXMI {p}" for p in phenomena)]
    cells = {}
    for r in mine:
        key = (direction, r["model"], r["split"])
        cells[display_name(r["model"])] = [_cell(shown[(*key, "all")]), reads_context(shown[(*key, "all")]),
                                           *(_cell(shown[(*key, f"phenomenon={p}")]) if p in r["phenomena"] else NA
                                             for p in phenomena)]
    display = pd.DataFrame.from_dict(cells, orient="index", columns=columns).rename_axis("model")
    return Block(direction, display)


def write_context_usage_table(records: Sequence[dict], csv: str | Path, md: str | Path,
                              runs: Runs | None = None, bootstrap: Bootstrap = BOOTSTRAP) -> None:
    if not records:
        raise ValueError("no context_usage records to tabulate")
    shown = summaries(records, bootstrap)
    without = sorted({r["without_context"] for r in records})
    layout = Layout(
        "Context usage: CXMI (nats per token), the reference's cross-entropy without the model's context minus with it",
        [runs.linked(direction_block(records, d, shown), direction=d) if runs else direction_block(records, d, shown)
         for d in sorted({r["direction"] for r in records})],
        ["CXMI as Fernandes et al. (2021) measure it (neulab/contextual-mt): the same model scores each reference of "
         f"the {', '.join(sorted({r['split'] for r in records}))} split with its context and without, a sentence's "
         "score being its mean log-probability per token; CXMI is the mean difference. In brackets the "
         f"{100 * (1 - bootstrap.alpha):.0f}% bootstrap interval ({bootstrap.n} resamples of the sentences); "
         "\"reads its context\": the interval excludes 0 (below it: to its loss, the context moving the model away "
         "from the reference). A model without context gives exactly 0.",
         "Unlike Fernandes et al.'s, our models are not trained without context: theirs draw each training "
         "sample's context size from 0..k (contextual-mt's --sample-context-size), so their pass without context "
         "is an input they were trained on; ours see an empty context only at a document's first line (where it "
         "has no metadata, for the models that read metadata), so part of a CXMI here can be the cost of an unfamiliar input rather than what the context "
         "tells (its measured size: docs/deviations.md, \"CXMI's pass without context\").",
         "Without context, a model reads: " + "; ".join(without) + ".",
         f"Study: {', '.join(sorted({r['study'] for r in records}))}.",
         *([runs.footnote()] if runs else [])])
    atomic_write_text(csv, long_rows(records, runs, shown).to_csv(index=False))
    atomic_write_text(md, render_markdown(layout))
    atomic_write_text(html_path(md), render_html(layout))


def context_usage_section(run: Run) -> list[str]:
    """Which systems read their context: CXMI per model and direction, with the verdict of its interval."""
    if run.context_usage is None:
        return []
    usage = run.context_usage[run.context_usage["group"] == "all"]
    if usage.empty:
        return []
    table = usage.assign(cell=[f"{c:+.4f} {r}" for c, r in zip(usage["cxmi"], usage["reads_context"])]).pivot_table(
        index="model", columns="direction", values="cell", aggfunc="first")
    models = sorted(table.index, key=lambda m: model_key(display_name(m)))
    display = table.loc[models].rename(index=display_name).rename_axis("model").fillna(NA)
    display.columns = [f"{d} CXMI" for d in display.columns]
    reading = sorted({display_name(m) for m in usage.loc[usage["reads_context"] != NO_USE, "model"]}, key=model_key)
    return ["Context usage (`results/tables/context_usage.md`): CXMI (Fernandes et al. 2021), the cross-entropy of the "
            "test references without the model's context minus with it (nats per token), and whether its 95% "
            "bootstrap interval excludes 0 (the model reads its context; below 0, to its loss). Systems that read "
            f"their context in at least one direction: {', '.join(reading) or 'none'}.", "", *markdown_table(display)]
