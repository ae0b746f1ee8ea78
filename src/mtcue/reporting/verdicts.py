"""The statistical verdicts of the README's claims: each of Table 5's, Table 6's and Figure 4's claims is
worded as its numbers allow (`verdict`): "reproduced" only where the difference exceeds its spread (the
standard deviation over seeds, and for Figure 4 also the paired-bootstrap interval), else "not settled by
the demo".
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from mtcue.evaluation.formality import KINDS
from mtcue.experiments.formality.table import difference
from mtcue.reporting.kit import BOOTSTRAP, NA, Bootstrap, display_name, format_number, model_key


MTCUE = "mtcue"


def formality_claims(records: Sequence[dict], bootstrap: Bootstrap = BOOTSTRAP) -> list[str]:
    """Per direction and kind: MTCUE's average against each other model's, with the paired interval of
    the difference: "reproduced" only where the interval excludes 0 (for a contextual model, which the
    paper's Table 5 does not list, the same wording on our own comparison)."""
    lines = []
    level = f"{100 * (1 - bootstrap.alpha):.0f}%"
    for direction in sorted({r["direction"] for r in records}):
        of = {r["model"]: r for r in records if r["direction"] == direction}
        if MTCUE not in of:
            continue
        for kind in KINDS:
            parts = []
            for other in sorted(set(of) - {MTCUE}, key=lambda m: model_key(display_name(m))):
                gap = difference(of[MTCUE], of[other], kind, bootstrap)
                if gap is None or np.isnan(gap["low"]):
                    continue
                verdict = "reproduced" if gap["low"] > 0 else "not settled by the demo"
                # the paper's Table 5 compares MTCUE with the non-context baseline only
                source = "" if not of[other]["prompts"][0]["attribute"] else " (not in the paper's table)"
                parts.append(f"{display_name(other)}{source} {100 * gap['difference']:+.1f} "
                             f"[{100 * gap['low']:+.1f}, {100 * gap['high']:+.1f}] **{verdict}**")
            if parts:
                lines.append(f"- {direction}, {kind} prompts, MTCUE's average above (points, paired {level} interval): "
                             + "; ".join(parts) + ".")
    return lines


REPRODUCED, UNSETTLED, OPPOSITE = "reproduced", "not settled by the demo", "not reproduced: the opposite"


def verdict(effect: float, spread: float = math.nan, ci: tuple[float, float] | None = None) -> str:
    """How a claim stands on the demo's numbers. `effect`: the measured difference, signed so that the
    claim says it is positive; `spread`: its standard deviation over seeds (NaN: one run, none measured);
    `ci`: its confidence interval, signed likewise. Reproduced only where the effect exceeds the spread
    and the interval lies above 0; the opposite where both hold below 0; else not settled (so too
    with neither a spread nor an interval)."""
    if pd.isna(effect) or (pd.isna(spread) and ci is None):
        return UNSETTLED
    for sign, outcome in ((1, REPRODUCED), (-1, OPPOSITE)):
        beyond = pd.isna(spread) or sign * effect > spread
        outside = ci is None or (sign * ci[0] > 0 and sign * ci[1] > 0)
        if beyond and outside:
            return outcome
    return UNSETTLED


def _combined_sd(*sds: float) -> float:
    """The standard deviation of a difference of independent means; NaN when none was measured."""
    known = [sd for sd in sds if not pd.isna(sd)]
    return math.sqrt(sum(sd * sd for sd in known)) if known else math.nan


def _ablation_paper_column(measure: str) -> str:
    """The paper's Table 6 column beside one of ours: COMET for a quality column of a direction."""
    if measure.startswith("IWSLT22"):
        return "paper IWSLT22 formality"
    if measure.startswith("EAMT22"):
        return "paper EAMT22"
    return f"paper COMET {measure.split()[0]}"


def ablation_claims(table6: pd.DataFrame) -> pd.DataFrame:
    """Table 6's claims, one per row and measure (a CSV column with its " sd"): the full model minus the
    row, the spread (combined sd over seeds), the paper's full minus row (its COMET beside our quality
    columns), and the verdict. The claim is the paper's direction where the paper has the row and the
    measure differs, else that the part helps (full minus row > 0)."""
    full = table6.iloc[0]
    measures = [c for c in table6.columns if f"{c} sd" in table6.columns and table6[c].notna().any()]
    rows = []
    for _, row in table6.iloc[1:].iterrows():
        for measure in measures:
            if pd.isna(row[measure]) or pd.isna(full[measure]):
                continue
            effect = full[measure] - row[measure]
            spread = _combined_sd(full[f"{measure} sd"], row[f"{measure} sd"])
            paper_column = _ablation_paper_column(measure)
            paper = (full[paper_column] - row[paper_column]) if paper_column in table6.columns else math.nan
            sign = -1 if not pd.isna(paper) and paper < 0 else 1
            rows.append({"ablation": row["ablation"], "measure": measure, "runs": f"{int(row['n_seeds'])}",
                         "full − row": f"{effect:+.2f}", "spread (sd)": format_number(spread, 2),
                         "paper column": paper_column,
                         "paper full − row": NA if pd.isna(paper) else f"{paper:+.2f}",
                         "verdict": verdict(sign * effect, spread)})
    return pd.DataFrame(rows)


def ablation_claims_wide(claims: pd.DataFrame) -> pd.DataFrame:
    """ablation_claims, one row per ablation: each measure's "full − row ± spread: verdict", then the
    paper's full − row per paper column (one column where several of our measures share it)."""
    order = list(dict.fromkeys(claims["ablation"]))
    cells = claims.assign(cell=claims["full − row"] + " ± " + claims["spread (sd)"] + ": " + claims["verdict"])
    wide = cells.pivot(index="ablation", columns="measure", values="cell")[list(dict.fromkeys(claims["measure"]))]
    paper = cells.drop_duplicates(["ablation", "paper column"]).pivot(
        index="ablation", columns="paper column", values="paper full − row")[list(dict.fromkeys(claims["paper column"]))]
    runs = cells.drop_duplicates("ablation").set_index("ablation")["runs"]
    return pd.concat([runs, wide, paper.rename(columns=lambda c: f"{c} full − row")], axis=1).loc[order].fillna(NA)


def fewshot_claims(figure4: pd.DataFrame) -> pd.DataFrame:
    """Figure 4's claim, per direction and setting: the first parent (MTCUE) controls the attributes
    better than the second (TAGGING): its difference with the paired-bootstrap interval and the spread
    over seeds (combined sd), and the verdict."""
    ours = figure4[figure4["source"] == "ours"]
    compared = ours[ours["compared_with"].fillna("") != ""]
    by_point = ours.set_index(["direction", "model", "setting"])
    rows = []
    for _, row in compared.iterrows():
        other = by_point.loc[(row["direction"], row["compared_with"], row["setting"])]
        spread = _combined_sd(row["sd"], other["sd"])
        rows.append({"direction": row["direction"], "setting": str(row["setting"]),
                     "runs": f"{int(row['n_seeds'])}",
                     f"{row['model'].upper()} − {row['compared_with'].upper()}": f"{row['difference']:+.2f}",
                     "95% CI": f"[{row['ci_low']:+.2f}, {row['ci_high']:+.2f}]", "spread (sd)": format_number(spread, 2),
                     "verdict": verdict(row["difference"], spread, (row["ci_low"], row["ci_high"]))})
    return pd.DataFrame(rows)
