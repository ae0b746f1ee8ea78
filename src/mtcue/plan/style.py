"""Jeong et al.'s style control (style.smk, Table 5's supervised rows and the level sweep): its runs.
"""
from __future__ import annotations

import functools
from mtcue import layout
from mtcue.plan.experiments import check_directions, check_only
from mtcue.plan.registry import Experiment, Section, Targets, register
from mtcue.study import STYLE_TYPES, ConfigError


def style_models(cfg: dict) -> list[tuple[str, str]]:
    """(direction, model) pairs the style experiment trains and translates at every level."""
    exp = cfg["experiments"]["style"]
    return [(d, m) for d in exp["directions"] for m in exp["models"] if d in exp["only"].get(m, [d])]


def style_records(cfg: dict) -> list[str]:
    """The style records: each model's translations at every level, scored (Table 5's supervised rows)."""
    return [str(layout.record("style", d, m)) for d, m in style_models(cfg)]


def targets(cfg: dict) -> Targets:
    """The records, the level sweep's figure and, where the levels are formality scores, their agreement with
    IWSLT22's references per direction."""
    exp, runs = cfg["experiments"]["style"], style_models(cfg)
    scored = exp["levels_from"] == "address"
    return Targets(records=style_records(cfg),
                   figures=[layout.figure("style_levels", suffix) for suffix in ("csv", "svg")] if runs else [],
                   others=[layout.study_record("style_agreement", d) for d in exp["directions"]]
                   if scored and runs else [])


def check(cfg: dict) -> None:
    style = cfg["experiments"]["style"]
    wrong = [m for m in style["models"] if cfg["models"][m]["type"] not in STYLE_TYPES]
    if wrong:
        raise ConfigError(f"experiments.style.models: {wrong} are not style models ({', '.join(STYLE_TYPES)})")
    if style["models"] and not {1, 5} <= set(style["levels"]):
        raise ConfigError(f"experiments.style.levels: {style['levels']} must hold 1 and 5 (Table 5's rows)")
    unknown = [n for n in style["only"] if n not in style["models"]]
    if unknown:
        raise ConfigError(f"experiments.style.only: {unknown} are not in experiments.style.models")
    check_only(cfg, "style")
    check_directions(cfg, "style", style["directions"])


register(Experiment("style", "style control (Jeong et al.)", targets, trains=style_models,
                    names=lambda cfg: cfg["experiments"]["style"]["models"], check=check,
                    sections=(Section("mtcue.reporting.readme_systems:style_section", 90, headline=True),),
                    results={"style_levels": functools.partial(layout.figure, "style_levels", "csv")}))
