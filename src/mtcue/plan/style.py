"""Jeong et al.'s style control (style.smk, Table 5's supervised rows and the level sweep): its runs.
"""
from __future__ import annotations



def style_models(cfg: dict) -> list[tuple[str, str]]:
    """(direction, model) pairs the style experiment trains and translates at every level."""
    exp = cfg["experiments"]["style"]
    return [(d, m) for d in exp["directions"] for m in exp["models"] if d in exp["only"].get(m, [d])]


def targets(cfg: dict) -> dict[str, list[str]]:
    """The style records (`records`), the level sweep's figure (`figure`) and the models (`models`)."""
    runs = style_models(cfg)
    return {"records": [f"results/records/style/{d}/{m}.json" for d, m in runs],
            "figure": ["results/figures/style_levels.csv", "results/figures/style_levels.svg"] if runs else [],
            "models": list(dict.fromkeys(m for _d, m in runs))}
