"""The sections of the README's results that are not one experiment's table or figure module's, each condensed
from one run's records and tables (`results.Run`): Tables 3 and 4 and the phenomena (the quality tables), Table 5
and the claims of Table 6 and Figure 4 (worded by `verdicts`, which reads Table 5's module), memory growth (whose
figure a models-stage step draws) and the spread between runs. The other sections are in their experiments'
folders (Figure 4, the contrastive suites, context usage, Voita et al., side information, style, shortening).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from mtcue.experiments.formality.table import formality_table, kind_counts
from mtcue.reporting.kit import (AVERAGE, BOOTSTRAP, MARKUP, Bootstrap, display_name, format_mean_sd, format_number,
                                model_key)
from mtcue.reporting.quality import quality_marks, quality_table
from mtcue.reporting.render import markdown_table
from mtcue.reporting.results import Run
from mtcue.reporting.table3 import models_table
from mtcue.reporting.verdicts import ablation_claims, ablation_claims_wide, fewshot_claims, formality_claims



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
    display = bleu.map(lambda v: format_number(v, 2))
    for direction in bleu.columns.drop(AVERAGE):
        display[direction] = [MARKUP[m].format(text) for m, text in zip(marks[(direction, "BLEU")], display[direction])]
    return [f"BLEU on the {run.split} split (**best**, <u>statistically indistinguishable from the best</u>: paired "
            f"bootstrap, {bootstrap.n} resamples, p > {bootstrap.alpha}); with COMET and the paper's figures in "
            "`results/tables/table4_quality.md`:", "", *markdown_table(display)]


def phenomena_section(run: Run) -> list[str]:
    accuracy = _labelled(quality_table(run.scores, run.comets, split=run.split))
    return ["Accuracy on the context-determined phenomena (%, pooled; directions into English have no labels), "
            "per phenomenon in `results/tables/phenomena.md`:", "",
            *markdown_table(accuracy.map(lambda v: format_number(v, 1)))]


def models_section(run: Run) -> list[str]:
    df = models_table(run.trains)
    fine_tuned = {display_name(r["model"]) for r in run.trains if r["spec"].get("init_from")}
    layers = df[["cxt layers", "src layers", "dec layers"]].map(lambda v: "-" if pd.isna(v) else f"{v:.0f}")
    display = pd.DataFrame({
        "params": [f"{1000 * p:.0f}k" if p < 1 else f"{p:.1f}M" for p in df["params (M)"]],
        "layers cxt/src/dec": layers.agg("/".join, axis=1),
        "s/epoch": [format_mean_sd(m, s) for m, s in zip(df["s/epoch"], df["s/epoch sd"])],
        "epochs to best": [format_mean_sd(m, s) + (" (fine-tuning)" if name in fine_tuned else "")
                           for name, m, s in zip(df.index, df["epochs to best"], df["epochs to best sd"])],
    }, index=df.index)
    devices = ", ".join(sorted({r.get("device", "unknown") for r in run.trains}))
    return [f"`results/tables/table3_models.md`, condensed (mean ± sd over directions; device {devices}):", "",
            *markdown_table(display)]


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
            f"{format_number(f, 1)} / {format_number(i, 1)} ({format_number(a, 1)} [{format_number(lo, 1)}, {format_number(hi, 1)}])"
            for f, i, a, lo, hi in zip(d["formal"], d["informal"], d["average"], d["average low"], d["average high"])]
        display[f"{direction} mean over prompts"] = [
            f"{format_number(f, 1)} / {format_number(i, 1)}" for f, i in zip(d["formal mean"], d["informal mean"])]
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
    return ["Memory growth (Mąka et al. 2024, Figure 4; `results/figures/memory_growth.svg`): peak memory "
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
        display[f"{label} {AVERAGE} per run"] = [" / ".join(format_number(v.loc[m, AVERAGE], digits) for v in values)
                                                for m in models]
        mean, largest = _spread([v.drop(columns=AVERAGE) for v in values])
        display[f"{label} spread mean / max"] = [f"{format_number(mean[m], digits)} / {format_number(largest[m], digits)}"
                                                 for m in models]
    listing = "; ".join(f"run {i + 1}: {r.describe()}" for i, r in enumerate(runs))
    return [f"Spread between {len(runs)} runs ({listing}): each run's average over directions, and the range "
            "(max - min over runs) of each direction's value, averaged over the directions where every run has "
            "one, and the largest:", "", *markdown_table(display)]
