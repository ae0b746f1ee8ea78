"""Voita et al. (2018), Table 1 (BLEU of the baseline, concatenation and the context-aware model with
the previous, the next or a random context sentence) and Table 7 (agreement of the context attention
with the antecedent of a pronoun, against first / last / random noun), ours beside Voita et al.'s."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mtcue.paper import PAPER_FIGURES
from mtcue.reporting.kit import NA, Runs, read_table_csv, study_names, write_table
from mtcue.reporting.render import Block, markdown_table
from mtcue.reporting.results import Run

PAPER_BLEU_CSV = PAPER_FIGURES / "voita2018_en_ru_bleu.csv"
PAPER_ATTENTION_CSV = PAPER_FIGURES / "voita2018_table7_attention.csv"
PAPER_ATTENTION6_CSV = PAPER_FIGURES / "voita2018_table6_attention.csv"
HEURISTICS = ("random", "first", "last", "attention")
RANDOM = "random"  # the row variant: the model evaluated with another sentence's context


def bleu_frame(rows: Sequence[dict], scores: Sequence[dict], random_scores: Sequence[dict]) -> pd.DataFrame:
    """`rows`: [{"label", "model", "variant": "" or "random"}] in table order -> BLEU [label x direction]."""
    cells = {}
    for kind, records in (("", scores), (RANDOM, random_scores)):
        for r in records:
            key = (r["model"], r["direction"], kind)
            if key in cells:
                what = " (random context)" if kind else ""
                raise ValueError(f"two score records for {r['model']} in {r['direction']}{what}")
            cells[key] = r["bleu"]
    directions = sorted({d for _, d, _ in cells})
    data = {row["label"]: {d: cells.get((row["model"], d, row["variant"]), float("nan")) for d in directions}
            for row in rows}
    return pd.DataFrame.from_dict(data, orient="index", columns=directions).rename_axis("system")


def attention_frame(records: Sequence[dict], table6: bool = False) -> pd.DataFrame:
    """Rows (direction, pronoun) with n and the agreement (%) of attention and the heuristics: Table 7's
    selection, or with `table6` Table 6's (every context line, the record's "table6")."""
    data = {}
    for r in records:
        selection = r.get("table6", {"pronouns": {}}) if table6 else r
        for pronoun, cell in selection["pronouns"].items():
            data[(r["direction"], pronoun)] = {"n": cell["n"], **{k: 100 * cell[k] for k in HEURISTICS}}
    df = pd.DataFrame.from_dict(data, orient="index", columns=["n", *HEURISTICS])
    if not df.empty:
        df.index = pd.MultiIndex.from_tuples(df.index, names=["direction", "pronoun"])
    return df



def _agreement_block(title: str, agreement: pd.DataFrame, paper: pd.DataFrame, caption: str) -> Block:
    """An attention-agreement table (rows: direction and pronoun), Voita et al.'s beside it."""
    shown = agreement.map(lambda v: f"{v:.1f}")
    shown["n"] = agreement["n"].map(lambda v: f"{v:.0f}")
    shown.index = [f"{d} {p}" for d, p in agreement.index]
    return Block(title, shown, paper[list(HEURISTICS)].map(lambda v: f"{v:.0f}"), caption)

def write_voita2018_table(rows: Sequence[dict], scores: Sequence[dict], random_scores: Sequence[dict],
                          attention: Sequence[dict], csv: str | Path, md: str | Path,
                          attention_unavailable: str = "", runs: Runs | None = None) -> None:
    """The CSV is long (docs/formats.md, section 7); with `runs`, each of our numbers names the MLflow run
    of its model in its direction."""
    bleu = bleu_frame(rows, scores, random_scores)
    paper_bleu = read_table_csv(PAPER_BLEU_CSV).set_index("model")["bleu"]
    agreement, agreement6 = attention_frame(attention), attention_frame(attention, table6=True)
    paper_attention = read_table_csv(PAPER_ATTENTION_CSV).set_index("pronoun")
    paper_attention6 = read_table_csv(PAPER_ATTENTION6_CSV).set_index("pronoun")
    model_of = {row["label"]: row["model"] for row in rows}
    long = [{"table": "bleu", "direction": d, "row": label, "metric": "bleu", "value": v, "model": model_of[label]}
            for label, values in bleu.iterrows() for d, v in values.items()]
    long += [{"table": "bleu", "direction": "paper en-ru", "row": label, "metric": "bleu", "value": v}
             for label, v in paper_bleu.items()]
    attention_model = {r["direction"]: r["model"] for r in attention}
    long += [{"table": "attention", "direction": d, "row": p, "metric": m, "value": v, "model": attention_model[d]}
             for (d, p), values in agreement.iterrows() for m, v in values.items()]
    long += [{"table": "attention", "direction": "paper en-ru", "row": p, "metric": m, "value": v}
             for p, values in paper_attention.iterrows() for m, v in values.items()]
    long += [{"table": "attention_any_nouns", "direction": d, "row": p, "metric": m, "value": v,
              "model": attention_model[d]} for (d, p), values in agreement6.iterrows() for m, v in values.items()]
    long += [{"table": "attention_any_nouns", "direction": "paper en-ru", "row": p, "metric": m, "value": v}
             for p, values in paper_attention6.iterrows() for m, v in values.items()]
    df = pd.DataFrame(long, columns=["table", "direction", "row", "metric", "value", "model"])
    if runs is not None:
        df["run"] = [runs.name(d, m) if isinstance(m, str) else None
                        for d, m in zip(df["direction"], df["model"])]
    df = df.set_index(["table", "direction", "row", "metric"])

    display = bleu.map(lambda v: NA if pd.isna(v) else f"{v:.2f}")
    display["paper (en-ru)"] = [f"{paper_bleu[label]:.2f}" if label in paper_bleu else NA for label in bleu.index]
    link = (lambda block, model_of: runs.linked(block, model_of)) if runs else (lambda block, _models: block)
    by_row = {f"{d} {p}": attention_model[d] for d, p in [*agreement.index, *agreement6.index]}
    blocks = [link(Block("Table 1: BLEU (test split)", display), model_of)]
    if not agreement.empty:
        blocks.append(link(_agreement_block("Table 7: attention agreement with the antecedent (%)", agreement,
                                            paper_attention, "paper, Table 7 (en-ru)"), by_row))
    else:
        blocks.append(Block("Table 7: attention agreement with the antecedent (%)",
                            pd.DataFrame({"": [attention_unavailable or (
                                "no pronoun example whose context line has more than one noun" if attention else
                                "no attention records")]}, index=[NA])))
    if not agreement6.empty:
        blocks.append(link(_agreement_block("Table 6: the same over every context line (one noun or more)",
                                            agreement6, paper_attention6, "paper, Table 6 (en-ru)"), by_row))
    footnotes = [
        "BLEU of each system on the study's test split (sacreBLEU); 'random context': the previous-sentence "
        "model translating with the context sentence of another test sentence (test time only).",
        "Table 7: pronoun examples of the synthetic contrastive suite whose antecedent is in the previous line "
        "and whose previous line has more than one noun; agreement: the context word with the most attention "
        "from the pronoun (last source layer's context attention, mean over heads; marker, </s> and "
        "punctuation excluded) lies in the antecedent span (the noun and the determiner or possessive directly "
        "before it, as Voita et al. count it); random = expected agreement of a random noun.",
        f"Study: {study_names([*scores, *random_scores, *attention]) or NA}. The paper's numbers: en-ru "
        "OpenSubtitles2018, CoreNLP antecedents.",
        *([runs.footnote()] if runs else []),
    ]
    write_table(df, csv, md, "Voita et al. (2018): context-aware Transformer", footnotes, blocks=blocks)


# The README's section: the attention tables' selections of pronouns
ATTENTION_SELECTIONS = {"attention": "context with more than one noun (Table 7)",
                        "attention_any_nouns": "every context (Table 6)"}


def voita2018_section(run: Run) -> list[str]:
    """Voita et al. (2018) Table 1 (BLEU) and the attention agreement, ours beside the paper's en-ru."""
    if run.voita2018 is None:
        return []
    bleu = run.voita2018[(run.voita2018["table"] == "bleu") & (run.voita2018["metric"] == "bleu")]
    if bleu.empty:
        return []
    table = bleu.pivot_table(index="row", columns="direction", values="value", aggfunc="first", sort=False)
    lines = ["Voita et al. (2018), Table 1 (`results/tables/voita2018.md`): test BLEU of the sentence-level "
             "baseline, the concatenation baseline and the context-aware model, ours beside the paper's en-ru:", "",
             *markdown_table(table.map(lambda v: NA if pd.isna(v) else f"{v:.2f}"))]
    attention = run.voita2018[run.voita2018["table"].isin(("attention", "attention_any_nouns"))
                              & (run.voita2018["row"] == "all")]
    if not attention.empty:
        shown = attention.pivot_table(index=["table", "direction"], columns="metric", values="value", aggfunc="first")
        shown = shown[[m for m in ("n", "attention", "random", "first", "last") if m in shown.columns]]
        shown.index = pd.Index([f"{d}, {ATTENTION_SELECTIONS[t]}" for t, d in shown.index], name="pronouns")
        lines += ["", "Attention agreement (%): how often the context token the source pronoun attends to most "
                  "lies in its antecedent, against random, first and last noun:", "",
                  *markdown_table(shown.map(lambda v: NA if pd.isna(v) else f"{v:.0f}" if v == int(v) else f"{v:.1f}"))]
    return lines
