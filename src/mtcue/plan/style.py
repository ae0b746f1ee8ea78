"""Jeong et al.'s style control (style.smk, Table 5's supervised rows and the level sweep): its runs.
"""
from __future__ import annotations



def style_models(cfg: dict) -> list[tuple[str, str]]:
    """(direction, model) pairs the style experiment trains and translates at every level."""
    exp = cfg["experiments"]["style"]
    return [(d, m) for d in exp["directions"] for m in exp["models"] if d in exp["only"].get(m, [d])]


def targets(cfg: dict) -> dict[str, list[str]]:
    """The style records (`records`), the level sweep's figure (`figure`), the models (`models`) and, where
    the levels are formality scores, their agreement with IWSLT22's references per direction (`agreement`)."""
    exp, runs = cfg["experiments"]["style"], style_models(cfg)
    scored = exp["levels_from"] == "address"
    return {"records": [f"results/records/style/{d}/{m}.json" for d, m in runs],
            "agreement": [f"results/records/style_agreement/{d}.json" for d in exp["directions"]] if scored and runs
            else [],
            "figure": ["results/figures/style_levels.csv", "results/figures/style_levels.svg"] if runs else [],
            "models": list(dict.fromkeys(m for _d, m in runs))}
