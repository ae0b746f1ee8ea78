"""Jeong et al.'s style control (its rules.smk, Table 5's supervised rows and the level sweep): its runs. `Style` reads
its config section by its key, so a variant (other models or directions) is `Style(key, label)` registered beside
it, with its own schema section.
"""
from __future__ import annotations

import functools
from mtcue import layout
from mtcue.plan.experiments import Keyed, check_directions, check_only
from mtcue.plan.registry import Experiment, Section, Targets, register
from mtcue.study import STYLE_TYPES, ConfigError


class Style(Keyed):
    """Jeong et al.'s style control of config section experiments.{key}, `label` in the GPU-hour table."""

    def __init__(self, key: str = "style", label: str = "style control (Jeong et al.)"):
        super().__init__(key)
        self.label = label

    def models(self, cfg: dict) -> list[tuple[str, str]]:
        """(direction, model) pairs the experiment trains and translates at every level."""
        exp = self.config(cfg)
        return [(d, m) for d in exp["directions"] for m in exp["models"] if d in exp["only"].get(m, [d])]

    def names(self, cfg: dict) -> list[str]:
        return self.config(cfg)["models"]

    def records(self, cfg: dict) -> list[str]:
        """The style records: each model's translations at every level, scored (Table 5's supervised rows)."""
        return [str(layout.record("style", d, m)) for d, m in self.models(cfg)]

    def targets(self, cfg: dict) -> Targets:
        """The records, the level sweep's figure and, where the levels are formality scores, their agreement with
        IWSLT22's references per direction."""
        exp, runs = self.config(cfg), self.models(cfg)
        scored = exp["levels_from"] == "address"
        return Targets(records=self.records(cfg),
                       figures=[layout.figure("style_levels", suffix) for suffix in ("csv", "svg")] if runs else [],
                       others=[layout.study_record("style_agreement", d) for d in exp["directions"]]
                       if scored and runs else [])

    def check(self, cfg: dict) -> None:
        style, key = self.config(cfg), f"experiments.{self.key}"
        wrong = [m for m in style["models"] if cfg["models"][m]["type"] not in STYLE_TYPES]
        if wrong:
            raise ConfigError(f"{key}.models: {wrong} are not style models ({', '.join(STYLE_TYPES)})")
        if style["models"] and not {1, 5} <= set(style["levels"]):
            raise ConfigError(f"{key}.levels: {style['levels']} must hold 1 and 5 (Table 5's rows)")
        unknown = [n for n in style["only"] if n not in style["models"]]
        if unknown:
            raise ConfigError(f"{key}.only: {unknown} are not in {key}.models")
        check_only(cfg, self.key)
        check_directions(cfg, self.key, style["directions"])

    def experiment(self, **declared) -> Experiment:
        """The experiment to register; `declared`, its other Experiment fields (the README's sections)."""
        return Experiment(self.key, self.label, self.targets, trains=self.models, names=self.names,
                          check=self.check, **declared)


STYLE = Style()

register(STYLE.experiment(
    sections=(Section("mtcue.experiments.style.figure:style_section", 90, headline=True),),
    results={"style_levels": functools.partial(layout.figure, "style_levels", "csv")}))
