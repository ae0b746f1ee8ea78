"""The few-shot experiment (fewshot.smk, the paper's Figure 4): the fine-tuned variants of each setting and
the points of the figure.
"""
from __future__ import annotations

from mtcue.plan.experiments import seed_runs, with_seeds
from mtcue.study import CONTEXT_KIND, column_groups, columns_of, fewshot_name, selected_columns


def fewshot_setting(cfg: dict, parent: str, setting: str) -> str:
    """The model that stands for `parent` in `setting`: the parent itself in the zero-shot setting (0)."""
    return parent if cfg["experiments"]["fewshot"]["settings"][setting] == 0 else fewshot_name(parent, setting)


def eamt22_columns(cfg: dict, entry: dict) -> list[str]:
    """The context a model (`entry`: its model entry) is given in the EAMT22 evaluation: the attribute sentences, plus the columns of
    experiments.fewshot.context_columns that it already reads (a model is never shown a column kind it has
    no place for, e.g. document slots without positions)."""
    cues = column_groups(cfg)["cues"]
    own = set(columns_of(cfg, entry))
    return [c for c in selected_columns(cfg, cfg["experiments"]["fewshot"]["context_columns"])
            if c in cues or c in own]


def fewshot_models(cfg: dict) -> dict[str, dict]:
    """The few-shot variants, derived here only: {name: model entry}. Each fine-tunes its parent for the
    experiment's budget on the EAMT22 context; `fewshot` says which setting it is; each is repeated
    with experiments.fewshot.seeds seeds (each run its own sample of annotated lines and training seed)."""
    fewshot = cfg["experiments"]["fewshot"]
    out = {}
    for parent in fewshot["models"]:
        entry = cfg["models"][parent]
        arch = dict(entry["arch"])
        if CONTEXT_KIND[entry["type"]] == "vectors":
            # Keep the parent's document positions although fewer document columns are read.
            arch["context_doc_positions"] = sum(c.startswith("doc") for c in columns_of(cfg, entry))
        for setting, samples in fewshot["settings"].items():
            if samples == 0:
                continue
            out[fewshot_name(parent, setting)] = {
                **{k: v for k, v in entry.items() if k in ("context_encoder", "context_encoder_per_direction",
                                                           "context_pooling", "context_kind", "random_context")},
                "type": entry["type"], "init_from": parent, "arch": arch,
                "training": {**entry["training"], **fewshot["training"]},
                "context_columns": eamt22_columns(cfg, entry),
                "fewshot": {"parent": parent, "setting": setting, "samples": samples},
            }
    return with_seeds(cfg, "fewshot", out)


def fewshot_points(cfg: dict) -> list[dict]:
    """The points of Figure 4: per few-shot direction, each parent in each setting (`record`: the model
    whose EAMT22 record it is) and the non-contextual baseline (setting "baseline")."""
    fewshot = cfg["experiments"]["fewshot"]
    points = []
    for direction in fewshot["directions"]:
        for parent in fewshot["models"]:
            points += [{"direction": direction, "model": parent, "setting": setting, "per_combination": samples,
                        "record": fewshot_setting(cfg, parent, setting)}
                       for setting, samples in fewshot["settings"].items()]
        if fewshot["baseline"]:
            points.append({"direction": direction, "model": fewshot["baseline"], "setting": "baseline",
                           "per_combination": 0, "record": fewshot["baseline"]})
    # Only the few-shot fine-tunings repeat: the zero-shot parent and the baseline are one run each.
    variants = fewshot_models(cfg)
    return [{**p, "records": seed_runs(cfg, "fewshot", p["record"], variants[p["record"]]) if p["record"] in variants
             else [p["record"]]} for p in points]


def targets(cfg: dict) -> dict[str, list[str]]:
    """The EAMT22 test records of Figure 4's points (`records`) and the figure (`figure`)."""
    points = fewshot_points(cfg)
    return {"records": sorted({f"results/records/eamt22/{p['direction']}/{m}.test.json" for p in points
                               for m in p["records"]}),
            "figure": [f"results/figures/figure4_eamt22_fewshot.{ext}" for ext in ("csv", "png")] if points else []}
