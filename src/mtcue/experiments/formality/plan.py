"""The IWSLT22 zero-shot formality experiment (Table 5): its directions and prompts. Its prompted translations
and their scores are steps of each model's evaluation (plan/evaluation.py). `Formality` reads its config section by
its key, so a variant (other models, directions or prompts) is `Formality(key, table, label)` registered beside it,
with its own schema section.
"""
from __future__ import annotations

import functools
from pathlib import Path

from mtcue import layout
from mtcue.plan.experiments import Keyed, bootstrap, check_directions
from mtcue.plan.models import model_entry
from mtcue.plan.quality import quality_models
from mtcue.plan.registry import (EXPERIMENTS, TABLE_OUTPUTS, Experiment, Option, Section, Step, Table, Targets,
                                 register)
from mtcue.study import ConfigError, is_contextual, pair_of

# The table's caption in the report (a variant's table shares it)
CAPTION = str(Path(__file__).with_name("table5_formality.rst"))

# `mtcue table-formality`, the step of every formality table
STEP = Step("table-formality", "Table 5 (IWSLT22 zero-shot formality) from formality records",
            "mtcue.experiments.formality.table:write_formality_table",
            (Option("--records", records="formality", required=True),
             Option("--models", nargs="+", required=True, help="row order (config names)")), bootstrap=True)


def chosen_on_valid(cfg: dict, direction: str) -> bool:
    """Whether Table 5 chooses each model's best prompt in `direction` on a validation set: the embedded
    default's valid split (data.smk); at paper scale IWSLT22's training data where the pair has some
    (evaluation_sets.iwslt22.valid_pairs: en-de), else (en-ru, a zero-shot pair in IWSLT22) the test set (the
    record says which, `chosen_on`). Table 6's IWSLT22 column reads the same validation translations, scored on
    their own (`formality_score_valid`), and needs no test-set translations of its rows."""
    return (cfg["corpus"]["source"] != "opensubtitles"
            or pair_of(direction) in cfg["evaluation_sets"]["iwslt22"]["valid_pairs"])


class Formality(Keyed):
    """The zero-shot formality test of config section experiments.{key}, in the table `table` labelled `label`,
    beside the supervised rows of the style experiment registered as `supervised`."""

    def __init__(self, key: str = "formality", table: str = "table5_formality", label: str = "Table 5",
                 supervised: str = "style"):
        super().__init__(key)
        self.table, self.label, self.supervised = table, label, supervised

    def models(self, cfg: dict) -> list[str]:
        """The models of the zero-shot test (by default the quality models)."""
        return self.config(cfg)["models"] or quality_models(cfg)

    def directions(self, cfg: dict) -> list[str]:
        """The directions of the IWSLT22 zero-shot test (null: the paper's en-de and en-ru, where run)."""
        chosen = self.config(cfg)["directions"]
        return [d for d in ("en-de", "en-ru") if d in cfg["directions"]] if chosen is None else chosen

    def prompts(self, cfg: dict) -> list[dict]:
        """The zero-shot prompts, each {"id" (f0.., i0..: file names), "attribute", "text"}."""
        return [{"id": f"{attribute[0]}{i}", "attribute": attribute, "text": text}
                for attribute in ("formal", "informal")
                for i, text in enumerate(self.config(cfg)["prompts"][attribute])]

    def prompts_of(self, cfg: dict, model: str) -> dict[str, str]:
        """{prompt id: text} a model is prompted with; {} for a model without context (translated once)."""
        if not is_contextual(model_entry(cfg, model)):
            return {}
        return {p["id"]: p["text"] for p in self.prompts(cfg)}

    def runs(self, cfg: dict) -> list[tuple[str, str]]:
        """(direction, model) pairs the zero-shot test translates and scores."""
        return [(d, m) for d in self.directions(cfg) for m in self.models(cfg)]

    def records(self, cfg: dict) -> list[str]:
        """The IWSLT22 formality records of the experiment's models."""
        return [str(layout.record("formality", d, m)) for d, m in self.runs(cfg)]

    def supervised_records(self, cfg: dict) -> list[str]:
        """The style experiment's records (style's rules.smk), the table's supervised rows beside the zero-shot ones."""
        return EXPERIMENTS[self.supervised].targets(cfg).records

    def table_records(self, cfg: dict) -> list[str]:
        """What the table reads: the zero-shot formality records and the supervised rows'."""
        return self.records(cfg) + self.supervised_records(cfg)

    def targets(self, cfg: dict) -> Targets:
        """The records and the table, which also has the style models' supervised rows (style's rules.smk)."""
        return Targets(records=self.records(cfg),
                       tables=layout.table_files(self.table) if self.table_records(cfg) else [])

    def valid_prompts(self, cfg: dict, direction: str, model: str) -> bool:
        """Whether the table translates the model's prompts on the validation set too (to choose the best): a model
        of the experiment with prompts, in a direction that chooses on a validation set (chosen_on_valid)."""
        return chosen_on_valid(cfg, direction) and model in self.models(cfg) and bool(self.prompts_of(cfg, model))

    def check(self, cfg: dict) -> None:
        check_directions(cfg, self.key, self.directions(cfg))
        official = cfg["evaluation_sets"]["iwslt22"]["pairs"]
        missing = [d for d in self.directions(cfg) if pair_of(d) not in official]
        if cfg["corpus"]["source"] == "opensubtitles" and missing:
            raise ConfigError(f"experiments.{self.key}.directions: {missing} have no official IWSLT22 test set "
                              f"(evaluation_sets.iwslt22.pairs: {official}); add their pairs there or leave them out")

    def table_params(self, cfg: dict) -> dict:
        """The table's models, the zero-shot ones and the style experiment's supervised ones, and the bootstrap."""
        supervised = [m for _d, m in EXPERIMENTS[self.supervised].trains(cfg)]
        return {"models": list(dict.fromkeys(self.models(cfg) + supervised)), **bootstrap(cfg)}

    def experiment(self, **declared) -> Experiment:
        """The experiment to register; `declared`, its other Experiment fields (the README's sections)."""
        table = Table(
            self.table, f"{self.label}: IWSLT22 zero-shot formality",
            "mtcue table-formality --records {input.records:q} --models {params.models:q} "
            "--bootstrap-samples {params.bootstrap[samples]:q} --alpha {params.bootstrap[alpha]:q} " + TABLE_OUTPUTS,
            lambda cfg: {"records": self.table_records(cfg)}, self.table_params, step=STEP, caption=CAPTION)
        return Experiment(self.key, f"{self.label} (IWSLT22 formality)", self.targets, trains=self.runs,
                          names=self.models, check=self.check, reads=self.supervised_records, tables=(table,),
                          **declared)


FORMALITY = Formality()

register(FORMALITY.experiment(
    sections=(Section("mtcue.reporting.readme_sections:formality_section", 20, bootstrap=True),),
    results={"table5": functools.partial(layout.table, "table5_formality", "csv")}))
