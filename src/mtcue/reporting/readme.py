"""The README's results, rendered from the records of a run of the study, never copied by hand.

`mtcue readme-results --records results/records --readme README.md` (`make readme`) replaces
what lies between BEGIN and END in the README with condensed Tables 3 and 4, the phenomena and,
where the run has EAMT22 records, Figure 4's points, naming the run they come from (study, commit, seed). Records of further runs (other seeds, or
the same seed on another machine) add a table of the spread between runs. Where the run wrote Table 6's
and Figure 4's CSVs (results/tables, results/figures beside the records), each of their claims is
worded as its numbers allow (`verdict`): "reproduced" only where the difference exceeds its spread (the
standard deviation over seeds, and for Figure 4 also the paired-bootstrap interval), else "not settled
by the demo". The contrastive table (each model's difference from BASE with its paired interval), the
context-usage table (which systems read their context) and Voita et al. (2018)'s table, where the run
wrote them, add their condensed forms. The block's first line holds a checksum of the rest, so a hand edit shows
(tests/test_readme.py).
"""
from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mtcue.evaluation.formality import KINDS
from mtcue.io import atomic_write_text, read_text
from mtcue.records import load_records
from mtcue.reporting.formality import difference, formality_table, kind_counts
from mtcue.reporting.context_usage import NO_USE
from mtcue.reporting.contrastive import difference_text
from mtcue.reporting.layout import markdown_table
from mtcue.reporting.readme_systems import shortening_section, side_information_section, style_section
from mtcue.reporting.tables import (
    AVERAGE,
    BOOTSTRAP,
    MARKUP,
    NA,
    Bootstrap,
    display_name,
    model_key,
    models_table,
    quality_marks,
    quality_table,
)

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
STAMP = "<!-- rendered from records by `make readme` (mtcue readme-results); do not edit: sha256 {} -->"
_STAMP = re.compile(r"^<!-- rendered from records .* sha256 ([0-9a-f]{12}) -->\n")
MTCUE = "mtcue"


@dataclass(frozen=True)
class Run:
    """The records of one run of the study (a results/records folder)."""

    where: str
    scores: list[dict]
    comets: list[dict]
    trains: list[dict]
    eamt22: list[dict] = ()
    split: str = "test"
    formality: list[dict] = ()
    table6: pd.DataFrame | None = None    # results/tables/table6_ablation.csv
    figure4: pd.DataFrame | None = None   # results/figures/figure4_eamt22_fewshot.csv
    contrastive: pd.DataFrame | None = None  # results/tables/contrastive.csv
    voita2018: pd.DataFrame | None = None    # results/tables/voita2018.csv
    translating: frozenset[str] = frozenset()  # the models scored on the test split (Tables 4, Voita et al.'s)
    memory: pd.DataFrame | None = None       # results/figures/memory_growth.csv
    side_information: pd.DataFrame | None = None  # results/tables/side_information.csv
    table5: pd.DataFrame | None = None       # results/tables/table5_formality.csv (its supervised rows)
    style_levels: pd.DataFrame | None = None  # results/figures/style_levels.csv
    shortening: pd.DataFrame | None = None   # results/tables/shortening.csv
    context_usage: pd.DataFrame | None = None  # results/tables/context_usage.csv

    @classmethod
    def load(cls, records_dir: str | Path, split: str = "test") -> Run:
        """The records of Tables 3 and 4 (scored on `split`), Table 5 and Figure 4. The ablation models,
        scored on another split (Table 6), and the few-shot variants, which train but are not scored,
        stay out."""
        folder = Path(records_dir)
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: no records folder (run the study first)")
        scores, comets, trains, eamt22 = (load_records(folder, kind) for kind in ("score", "comet", "train", "eamt22"))
        scores, comets = ([r for r in records if r["split"] == split] for records in (scores, comets))
        translating = frozenset(r["model"] for r in scores)
        # Tables 3 and 4's models are scored in every direction; Voita et al.'s systems in some only (their table).
        directions = {m: {r["direction"] for r in scores if r["model"] == m} for m in {r["model"] for r in scores}}
        everywhere = max(map(len, directions.values()), default=0)
        scores, comets = ([r for r in records if len(directions.get(r["model"], ())) == everywhere]
                          for records in (scores, comets))
        scored = {(r["direction"], r["model"]) for r in scores}
        formality = [r for r in load_records(folder, "formality")   # Table 5's; Table 6 reads the validation set's
                     if (r["direction"], r["model"]) in scored and r.get("split", "test") == "test"]
        eamt22 = [r for r in eamt22 if r["split"] == "test"]   # Figure 4's; Table 6 reads the validation split's
        csvs = (folder.parent / "tables" / "table6_ablation.csv", folder.parent / "figures" / "figure4_eamt22_fewshot.csv",
                folder.parent / "tables" / "contrastive.csv", folder.parent / "tables" / "voita2018.csv")
        run = cls(str(folder), scores, comets, [r for r in trains if (r["direction"], r["model"]) in scored], eamt22,
                  split, formality, *map(_read_csv, csvs), translating,
                  *(_read_csv(folder.parent / f) for f in ("figures/memory_growth.csv", "tables/side_information.csv",
                                                           "tables/table5_formality.csv", "figures/style_levels.csv",
                                                           "tables/shortening.csv")),
                  context_usage=_read_csv(folder.parent / "tables" / "context_usage.csv"))
        if not run.scores or not run.trains:
            raise ValueError(f"{folder}: needs score records of the {split} split and train records")
        return run


    @property
    def seed(self) -> str:
        return ", ".join(sorted({str(r["spec"]["seed"]) for r in self.trains}))

    def describe(self) -> str:
        records = self.scores + self.comets + self.trains
        commits = ", ".join(f"`{c[:12]}{'-dirty' if c.endswith('-dirty') else ''}`"
                            for c in sorted({r["git_commit"] for r in records}))
        created = sorted(r["created"][:10] for r in records if "created" in r)
        dates = created[0] if created[0] == created[-1] else f"{created[0]} to {created[-1]}"
        return (f"study `{', '.join(sorted({r['study'] for r in records}))}`, commit {commits}, seed {self.seed}, "
                f"records of {dates}")


def _read_csv(path: Path) -> pd.DataFrame | None:
    return pd.read_csv(path) if path.is_file() else None


def _number(value: float, digits: int) -> str:
    return NA if pd.isna(value) else f"{value:.{digits}f}"


def _metric(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    return df.xs(metric, axis=1, level="metric")


def _labelled(df: pd.DataFrame) -> pd.DataFrame:
    """Phenomenon accuracy per direction with labels (English marks none), averaged over those."""
    out = _metric(df, "phenomena %").drop(columns=AVERAGE).dropna(axis=1, how="all")
    out[AVERAGE] = out.mean(axis=1, skipna=False)
    return out


def bleu_section(run: Run, bootstrap: Bootstrap) -> list[str]:
    df = quality_table(run.scores, run.comets, split=run.split)
    marks = quality_marks(run.scores, run.comets, run.split, bootstrap=bootstrap)
    bleu = _metric(df, "BLEU")
    display = bleu.map(lambda v: _number(v, 2))
    for direction in bleu.columns.drop(AVERAGE):
        display[direction] = [MARKUP[m].format(text) for m, text in zip(marks[(direction, "BLEU")], display[direction])]
    return [f"BLEU on the {run.split} split (**best**, <u>statistically indistinguishable from the best</u>: paired "
            f"bootstrap, {bootstrap.n} resamples, p > {bootstrap.alpha}); with COMET and the paper's figures in "
            "`results/tables/table4_quality.md`:", "", *markdown_table(display)]


def phenomena_section(run: Run) -> list[str]:
    accuracy = _labelled(quality_table(run.scores, run.comets, split=run.split))
    return ["Accuracy on the context-determined phenomena (%, pooled; directions into English have no labels), "
            "per phenomenon in `results/tables/phenomena.md`:", "",
            *markdown_table(accuracy.map(lambda v: _number(v, 1)))]


def _mean_sd(mean: float, sd: float) -> str:
    return NA if pd.isna(mean) else f"{mean:.1f} ± {_number(sd, 1)}"


def models_section(run: Run) -> list[str]:
    df = models_table(run.trains)
    fine_tuned = {display_name(r["model"]) for r in run.trains if r["spec"].get("init_from")}
    layers = df[["cxt layers", "src layers", "dec layers"]].map(lambda v: "-" if pd.isna(v) else f"{v:.0f}")
    display = pd.DataFrame({
        "params": [f"{1000 * p:.0f}k" if p < 1 else f"{p:.1f}M" for p in df["params (M)"]],
        "layers cxt/src/dec": layers.agg("/".join, axis=1),
        "s/epoch": [_mean_sd(m, s) for m, s in zip(df["s/epoch"], df["s/epoch sd"])],
        "epochs to best": [_mean_sd(m, s) + (" (fine-tuning)" if name in fine_tuned else "")
                           for name, m, s in zip(df.index, df["epochs to best"], df["epochs to best sd"])],
    }, index=df.index)
    devices = ", ".join(sorted({r.get("device", "unknown") for r in run.trains}))
    return [f"`results/tables/table3_models.md`, condensed (mean ± sd over directions; device {devices}):", "",
            *markdown_table(display)]


def _eamt22_cell(records: Sequence[dict]) -> str:
    """Mean attribute accuracy / BLEU of a point's runs (their mean, ± sd over several)."""
    accuracy = [math.nan if r["accuracy_mean"] is None else 100 * r["accuracy_mean"] for r in records]
    bleu = [r["bleu"] for r in records]
    if len(records) == 1:
        return f"{_number(accuracy[0], 1)} / {bleu[0]:.2f}"
    bleu_text = f"{np.mean(bleu):.2f} ± {np.std(bleu, ddof=1):.2f}"
    return f"{_mean_sd(np.mean(accuracy), np.std(accuracy, ddof=1))} / {bleu_text}"


def fewshot_section(run: Run) -> list[str]:
    """Figure 4's points: per direction and parent, mean attribute accuracy / BLEU in each setting."""
    lines = []
    for direction in sorted({r["direction"] for r in run.eamt22}):
        records = [r for r in run.eamt22 if r["direction"] == direction]
        variants = [r for r in records if r["fewshot"]]
        if not variants:
            continue
        parents = list(dict.fromkeys(r["fewshot"]["parent"] for r in variants))
        settings = sorted({(r["supervised_samples"], r["fewshot"]["setting"]) for r in variants})
        display = pd.DataFrame(index=pd.Index([display_name(p) for p in parents], name="model"))
        by_model = {r["model"]: r for r in records}
        display["zero-shot"] = [_eamt22_cell([by_model[p]]) if p in by_model else NA for p in parents]
        for samples, setting in settings:
            of: dict[str, list[dict]] = {}
            for r in sorted(variants, key=lambda r: r["model"]):
                if r["fewshot"]["setting"] == setting:
                    of.setdefault(r["fewshot"]["parent"], []).append(r)
            display[f"{setting} ({samples} lines)"] = [_eamt22_cell(of[p]) if p in of else NA for p in parents]
        baselines = [r for r in records if not r["context_columns"]]
        baseline = "; ".join(f"{display_name(r['model'])} without context: {_eamt22_cell([r])}" for r in baselines)
        lines += [f"EAMT22 few-shot ({direction}; Figure 4 in `results/figures/figure4_eamt22_fewshot.png`): mean "
                  "attribute accuracy (%) / BLEU, zero-shot and fine-tuned with the attribute sentences of N "
                  "annotated training lines (mean ± sd over the seeds of a repeated fine-tuning)"
                  f"{'; ' + baseline if baseline else ''}:", "", *markdown_table(display), ""]
    return lines[:-1]


def formality_section(run: Run, bootstrap: Bootstrap = BOOTSTRAP) -> list[str]:
    """Table 5: per direction and kind of prompt, each main model's best-prompt accuracies (chosen on
    valid, reported on test, with the average's bootstrap interval) and mean over prompts; then each
    claim (MTCUE against every other model) worded as its paired interval allows."""
    if not run.formality:
        return []
    models = sorted({r["model"] for r in run.formality}, key=lambda m: model_key(display_name(m)))
    table = formality_table(run.formality, models, bootstrap)
    display = pd.DataFrame({"prompts": table.index.get_level_values("prompt_kind")},
                           index=pd.Index(table.index.get_level_values("model"), name="model"))
    for direction in table.columns.get_level_values(0).unique():
        d = table[direction]
        display[f"{direction} formal / informal (avg [{100 * (1 - bootstrap.alpha):.0f}% CI])"] = [
            f"{_number(f, 1)} / {_number(i, 1)} ({_number(a, 1)} [{_number(lo, 1)}, {_number(hi, 1)}])"
            for f, i, a, lo, hi in zip(d["formal"], d["informal"], d["average"], d["average low"], d["average high"])]
        display[f"{direction} mean over prompts"] = [
            f"{_number(f, 1)} / {_number(i, 1)}" for f, i in zip(d["formal mean"], d["informal mean"])]
    counts = kind_counts(run.formality)
    chosen_on = sorted({r["chosen_on"] for r in run.formality if r.get("chosen_on")})
    sizes = "; ".join(f"{kind} {n['formal']} + {n['informal']}" for kind, n in counts.items())
    return [f"IWSLT22 zero-shot formality (Table 5 in `results/tables/table5_formality.md`): accuracy (%) in the "
            f"prompted register, per kind of prompt (formal + informal prompts: {sizes}), the best prompt of each "
            f"register chosen on the {' and '.join(chosen_on) or 'test'} split and reported on the test split, and "
            "the mean over the kind's prompts; a model without context translates once (its two shares sum to 100, "
            "the same in both kinds). in_distribution prompts share a content word with some training context "
            "(the demo's metadata ties genres to register by construction), so they can recall a training "
            "context; unseen prompts share none, so only they test zero-shot prompting:",
            "", *markdown_table(display), "", *formality_claims(run.formality, bootstrap)]


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
                         "full − row": f"{effect:+.2f}", "spread (sd)": _number(spread, 2),
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
                     "95% CI": f"[{row['ci_low']:+.2f}, {row['ci_high']:+.2f}]", "spread (sd)": _number(spread, 2),
                     "verdict": verdict(row["difference"], spread, (row["ci_low"], row["ci_high"]))})
    return pd.DataFrame(rows)


def claims_section(run: Run, bootstrap: Bootstrap) -> list[str]:
    lines = []
    if run.table6 is not None and len(run.table6) > 1:
        lines += ["Table 6's claims (`results/tables/table6_ablation.md`): each removed part lowers the score "
                  "(or, where the paper's row shows the opposite, raises it); per measure, full − row ± its spread "
                  "(the standard deviation over seeds of both means): reproduced only where the difference exceeds "
                  "the spread; the paper's columns are its COMET (beside our BLEU and phenomena) and formality:",
                  "", *markdown_table(ablation_claims_wide(ablation_claims(run.table6))), ""]
    if run.figure4 is not None and (run.figure4["compared_with"].fillna("") != "").any():
        lines += ["Figure 4's claim: MTCUE controls the EAMT22 attributes better than TAGGING (mean attribute "
                  f"accuracy, points): reproduced only where the difference exceeds the spread over seeds and its "
                  f"{100 * (1 - bootstrap.alpha):.0f}% paired-bootstrap interval ({bootstrap.n} resamples of the test "
                  "lines) excludes 0:", "", *markdown_table(fewshot_claims(run.figure4).set_index("direction")), ""]
    return lines[:-1]


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


def memory_section(run: Run) -> list[str]:
    """The memory-growth figure condensed: per model and phase, the peak at the fewest and the most context
    sentences measured and the mean growth per added sentence between them."""
    if run.memory is None or run.memory.empty:
        return []
    low, high = run.memory["context_sentences"].min(), run.memory["context_sentences"].max()
    peaks = run.memory.pivot_table(index="model", columns=["phase", "context_sentences"], values="peak_mib")
    models = sorted(peaks.index, key=lambda m: model_key(display_name(m)))
    display = pd.DataFrame(index=pd.Index([display_name(m) for m in models], name="model"))
    for phase in [p for p in ("decode", "train") if p in peaks.columns.get_level_values(0)]:
        first, last = peaks[(phase, low)].loc[models], peaks[(phase, high)].loc[models]
        display[f"{phase} c={low} / c={high} (MiB)"] = [f"{a:.1f} / {b:.1f}" for a, b in zip(first, last)]
        display[f"{phase} MiB per sentence"] = [f"{(b - a) / (high - low):+.2f}" for a, b in zip(first, last)]
    return ["Memory growth (the sequence-shortening seed's Figure 4, `results/figures/memory_growth.svg`): peak memory "
            "above the weights of beam-search decoding and of one training step (forward and backward), against the "
            "number of context sentences, models at the study's sizes on one fixed batch:", "",
            *markdown_table(display)]


def _spread(values: list[pd.DataFrame]) -> tuple[pd.Series, pd.Series]:
    """Per model: the range (max - min over runs) of each direction's value, mean and largest over
    the directions where every run has a value."""
    stacked = np.stack([v.to_numpy(dtype=float) for v in values])
    ranges = pd.DataFrame(stacked.max(axis=0) - stacked.min(axis=0), index=values[0].index)  # NaN if a run lacks it
    return ranges.mean(axis=1), ranges.max(axis=1)


def spread_section(runs: Sequence[Run]) -> list[str]:
    tables = [quality_table(r.scores, r.comets, split=r.split) for r in runs]
    models = sorted(set.intersection(*(set(t.index) for t in tables)), key=list(tables[0].index).index)
    bleu = [_metric(t, "BLEU").loc[models] for t in tables]
    accuracy = [_labelled(t).loc[models] for t in tables]
    display = pd.DataFrame(index=pd.Index(models, name="model"))
    for label, values, digits in (("BLEU", bleu, 2), ("phenomena %", accuracy, 1)):
        display[f"{label} {AVERAGE} per run"] = [" / ".join(_number(v.loc[m, AVERAGE], digits) for v in values)
                                                for m in models]
        mean, largest = _spread([v.drop(columns=AVERAGE) for v in values])
        display[f"{label} spread mean / max"] = [f"{_number(mean[m], digits)} / {_number(largest[m], digits)}"
                                                 for m in models]
    listing = "; ".join(f"run {i + 1}: {r.describe()}" for i, r in enumerate(runs))
    return [f"Spread between {len(runs)} runs ({listing}): each run's average over directions, and the range "
            "(max - min over runs) of each direction's value, averaged over the directions where every run has "
            "one, and the largest:", "", *markdown_table(display)]


def render(runs: Sequence[Run], bootstrap: Bootstrap = BOOTSTRAP) -> str:
    """The results block (stamp line, then Markdown) for the first run, with the spread over all."""
    first = runs[0]
    body = [f"From one run of the study: {first.describe()}.", "", *bleu_section(first, bootstrap), "",
            *phenomena_section(first), "", *models_section(first)]
    if formality := formality_section(first, bootstrap):
        body += ["", *formality]
    if fewshot := fewshot_section(first):
        body += ["", *fewshot]
    if claims := claims_section(first, bootstrap):
        body += ["", *claims]
    for section in (contrastive_section(first), context_usage_section(first), voita2018_section(first), side_information_section(first.side_information),
                    style_section(first.style_levels, first.table5), shortening_section(first.shortening),
                    memory_section(first)):
        if section:
            body += ["", *section]
    if len(runs) > 1:
        body += ["", *spread_section(runs)]
    text = "\n".join(body) + "\n"
    return STAMP.format(_checksum(text)) + "\n" + text


def _checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _bounds(readme: str, where: str) -> tuple[int, int]:
    if readme.count(BEGIN) != 1 or readme.count(END) != 1 or readme.index(BEGIN) > readme.index(END):
        raise ValueError(f"{where}: needs one {BEGIN} line and, after it, one {END} line around the results")
    return readme.index(BEGIN) + len(BEGIN) + 1, readme.index(END)


def block_of(readme: str, where: str = "README") -> str:
    start, end = _bounds(readme, where)
    return readme[start:end]


def hand_edit(block: str) -> str | None:
    """Why the block was not written by `render` as it stands, or None."""
    stamp = _STAMP.match(block)
    if stamp is None:
        return "it was not rendered from records (no stamp line)"
    if stamp.group(1) != _checksum(block[stamp.end():]):
        return "it was edited after it was rendered (checksum mismatch)"
    return None


def update_readme(readme_path: str | Path, runs: Sequence[Run], bootstrap: Bootstrap = BOOTSTRAP,
                  check: bool = False) -> bool:
    """Write the rendered block into the README; with `check`, only report whether it is current.
    Returns True when the README already held this block."""
    readme = read_text(readme_path)
    start, end = _bounds(readme, str(readme_path))
    block = render(runs, bootstrap)
    current = readme[start:end] == block
    if not check and not current:
        atomic_write_text(readme_path, readme[:start] + block + readme[end:])
    return current

