"""The README's sections for the systems compared beside MTCue (issues 26 and 27): Hoang et al.'s side
information, supervised style control and sequence shortening, each condensed from its table's CSV
(docs/formats.md, section 7), a run's (`Run`) result of that name. Every function returns [] when its CSV is
absent, so a study without the system renders without the section."""
from __future__ import annotations

import pandas as pd

from mtcue.reporting.kit import NA, display_name
from mtcue.reporting.render import markdown_table
from mtcue.reporting.results import Run
from mtcue.experiments.side_information.table import CLAIMS

SIGNIFICANT = 0.05  # the side-information table's paired bootstrap: p <= this marks a row above/below BASE
LEVELS = (1, 2, 3, 4, 5)
SUPERVISED = " (supervised)"


def _value(v: float, digits: int) -> str:
    return NA if pd.isna(v) else f"{v:.{digits}f}"


def _per_direction(ours: pd.DataFrame, rows: list[str]):
    """(direction, its rows × metrics frame of values, in `rows` order) for each direction of a long CSV."""
    for direction in sorted(ours["direction"].unique()):
        yield direction, ours[ours["direction"] == direction].pivot_table(
            index="row", columns="metric", values="value", aggfunc="first").reindex(rows)


def side_information_section(run: Run) -> list[str]:
    """Hoang et al. Table 3 on our directions: BLEU with the significance mark against BASE, the contrastive
    accuracy where the direction has a suite, then each of Hoang et al.'s claims as our numbers decide it."""
    table = run.side_information
    if table is None or table.empty:
        return []
    ours = table[table["table"] == "bleu"]
    rows = list(dict.fromkeys(ours["row"]))
    display = pd.DataFrame(index=pd.Index(rows, name="system"))
    for direction, cell in _per_direction(ours, rows):
        better, worse = (cell.get(p, pd.Series(1.0, index=rows)).fillna(1.0) for p in ("p_better", "p_worse"))
        display[f"{direction} BLEU"] = [
            _value(cell.loc[r, "bleu"], 2) + ("+" if better[r] <= SIGNIFICANT else "−" if worse[r] <= SIGNIFICANT else "")
            for r in rows]
        for metric in (c for c in cell.columns if str(c).startswith("contrastive_")):
            display[f"{direction} {metric.removeprefix('contrastive_')} contrastive %"] = [
                _value(v, 1) for v in cell[metric]]
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


def style_section(run: Run) -> list[str]:
    """Supervised style control: formal accuracy and meaning preservation (chrF) at each level of the sweep per
    direction and model, whether formality rises with the level, and the Table 5 average at the extremes
    (levels 5 and 1) with its interval."""
    levels, table5 = run.style_levels, run.table5
    if levels is None or levels.empty:
        return []
    sweep = levels.pivot_table(index=["direction", "model"], columns="level", values="formal_accuracy")
    meaning = levels.pivot_table(index=["direction", "model"], columns="level", values="meaning_chrf").reindex(sweep.index)
    display = pd.DataFrame(index=pd.Index([f"{d}, {display_name(m)}" for d, m in sweep.index], name="model"))
    for level in LEVELS:
        missing = pd.Series(index=sweep.index, dtype=float)
        display[f"level {level}"] = [f"{_value(f, 1)} / {_value(c, 1)}" for f, c in
                                     zip(sweep.get(level, missing), meaning.get(level, missing))]
    display["rises with the level"] = ["yes" if row.is_monotonic_increasing and row.notna().all() else "no"
                                       for _, row in sweep.iterrows()]
    if table5 is not None:
        supervised = table5[table5["model"].str.endswith(SUPERVISED)].drop_duplicates("model").set_index("model")

        def extremes(direction: str, model: str) -> str:
            name = display_name(model) + SUPERVISED
            if name not in supervised.index or f"{direction} average" not in supervised.columns:
                return NA
            row = supervised.loc[name]
            return (f"{_value(row[f'{direction} formal'], 1)} / {_value(row[f'{direction} informal'], 1)} "
                    f"({_value(row[f'{direction} average'], 1)} [{_value(row[f'{direction} average low'], 1)}, "
                    f"{_value(row[f'{direction} average high'], 1)}])")

        display["Table 5 formal / informal (avg [95% CI])"] = [extremes(d, m) for d, m in sweep.index]
    return ["Supervised style control (Jeong et al.'s Korean–English style-control paper; `results/figures/style_levels.svg`, rows "
            "\"(supervised)\" of Table 5): formal share (%) / meaning preservation (mean sentence chrF against the "
            "references, Jeong et al.'s Table 1 semantic score) of each model's output on Table 5's test set at each "
            "style level (1 informal ... 5 formal), and Table 5's accuracy at levels 5 and 1 beside MTCUE's zero-shot "
            "figures above; one run each:", "", *markdown_table(display)]


def shortening_section(run: Run) -> list[str]:
    """The shortening paper's Tables 2-3 on our data: per system and context size, BLEU and the synthetic
    contrastive accuracy (all / pronouns, by the paper's per-token mean), and the pronouns by antecedent distance."""
    table = run.shortening
    if table is None or table.empty:
        return []
    ours = table[table["source"] == "this study"]
    rows = list(dict.fromkeys(ours["row"]))
    display = pd.DataFrame(index=pd.Index(rows, name="system"))
    for direction, cell in _per_direction(ours, rows):
        column = cell.get
        display[f"{direction} BLEU"] = [_value(v, 2) for v in column("BLEU", pd.Series(index=rows))]
        display[f"{direction} all / pronouns %"] = [
            f"{_value(a, 1)} / {_value(p, 1)}"
            for a, p in zip(column("accuracy", pd.Series(index=rows)), column("pronouns", pd.Series(index=rows)))]
        distances = sorted((c for c in cell.columns if str(c).startswith("d=")), key=lambda c: int(c[2:]))
        if distances:
            display[f"{direction} pronouns {'/'.join(distances)} %"] = [
                "/".join(_value(cell.loc[r, d], 0) for d in distances) for r in rows]
    return ["Sequence shortening (Mąka et al. (2024), Tables 2-3 in `results/tables/shortening.md`, its IWSLT17 "
            "numbers beside): test BLEU and synthetic contrastive accuracy (all phenomena / anaphoric pronouns, and "
            "the pronouns by antecedent distance; candidates judged by their per-token mean log-probability, the "
            "paper's measure) per system and number C of previous sentences read; one run each:",
            "", *markdown_table(display.fillna(NA))]
