"""The IWSLT22 zero-shot formality experiment (Table 5): its directions and prompts. Its prompted translations
and their scores are steps of each model's evaluation (plan/evaluation.py).
"""
from __future__ import annotations

import functools
from mtcue import layout
from mtcue.plan.experiments import bootstrap, check_directions
from mtcue.plan.models import model_entry
from mtcue.plan.quality import quality_models
from mtcue.plan.registry import (EXPERIMENTS, TABLE_OUTPUTS, Experiment, Option, Section, Step, Table, Targets,
                                 register)
from mtcue.study import ConfigError, is_contextual, pair_of


def formality_models(cfg: dict) -> list[str]:
    """The models of the zero-shot test (by default the quality models)."""
    return cfg["experiments"]["formality"]["models"] or quality_models(cfg)


def formality_directions(cfg: dict) -> list[str]:
    """The directions of the IWSLT22 zero-shot test (null: the paper's en-de and en-ru, where run)."""
    chosen = cfg["experiments"]["formality"]["directions"]
    return [d for d in ("en-de", "en-ru") if d in cfg["directions"]] if chosen is None else chosen


def formality_prompts(cfg: dict) -> list[dict]:
    """The zero-shot prompts, each {"id" (f0.., i0..: file names), "attribute", "text"}."""
    return [{"id": f"{attribute[0]}{i}", "attribute": attribute, "text": text}
            for attribute in ("formal", "informal")
            for i, text in enumerate(cfg["experiments"]["formality"]["prompts"][attribute])]


def prompts_of(cfg: dict, model: str) -> dict[str, str]:
    """{prompt id: text} a model is prompted with; {} for a model without context (translated once)."""
    if not is_contextual(model_entry(cfg, model)):
        return {}
    return {p["id"]: p["text"] for p in formality_prompts(cfg)}


def formality_runs(cfg: dict) -> list[tuple[str, str]]:
    """(direction, model) pairs the zero-shot test translates and scores."""
    return [(d, m) for d in formality_directions(cfg) for m in formality_models(cfg)]


def formality_records(cfg: dict) -> list[str]:
    """The IWSLT22 formality records of the experiment's models."""
    return [str(layout.record("formality", d, m)) for d, m in formality_runs(cfg)]


def supervised_records(cfg: dict) -> list[str]:
    """The style experiment's records (style.smk), Table 5's supervised rows beside the zero-shot ones."""
    return EXPERIMENTS["style"].targets(cfg).records


def table_records(cfg: dict) -> list[str]:
    """What Table 5 reads: the zero-shot formality records and the supervised rows'."""
    return formality_records(cfg) + supervised_records(cfg)


def targets(cfg: dict) -> Targets:
    """The records and Table 5, which also has the style models' supervised rows (style.smk)."""
    records = formality_records(cfg)
    return Targets(records=records, tables=layout.table_files("table5_formality") if table_records(cfg) else [])


def chosen_on_valid(cfg: dict, direction: str) -> bool:
    """Whether Table 5 chooses each model's best prompt in `direction` on a validation set: the embedded
    default's valid split (data.smk); at paper scale IWSLT22's training data where the pair has some
    (evaluation_sets.iwslt22.valid_pairs: en-de), else (en-ru, a zero-shot pair in IWSLT22) the test set (the
    record says which, `chosen_on`). Table 6's IWSLT22 column reads the same validation translations, scored on
    their own (`formality_score_valid`), and needs no test-set translations of its rows."""
    return (cfg["corpus"]["source"] != "opensubtitles"
            or pair_of(direction) in cfg["evaluation_sets"]["iwslt22"]["valid_pairs"])


def valid_prompts(cfg: dict, direction: str, model: str) -> bool:
    """Whether Table 5 translates the model's prompts on the validation set too (to choose the best): a model of
    the experiment with prompts, in a direction that chooses on a validation set (chosen_on_valid)."""
    return chosen_on_valid(cfg, direction) and model in formality_models(cfg) and bool(prompts_of(cfg, model))


def check(cfg: dict) -> None:
    check_directions(cfg, "formality", formality_directions(cfg))
    official = cfg["evaluation_sets"]["iwslt22"]["pairs"]
    missing = [d for d in formality_directions(cfg) if pair_of(d) not in official]
    if cfg["corpus"]["source"] == "opensubtitles" and missing:
        raise ConfigError(f"experiments.formality.directions: {missing} have no official IWSLT22 test set "
                          f"(evaluation_sets.iwslt22.pairs: {official}); add their pairs there or leave them out")


def table_params(cfg: dict) -> dict:
    """Table 5's models, the zero-shot ones and the style experiment's supervised ones, and the bootstrap."""
    supervised = [m for _d, m in EXPERIMENTS["style"].trains(cfg)]
    return {"models": list(dict.fromkeys(formality_models(cfg) + supervised)), **bootstrap(cfg)}


TABLE = Table(
    "table5_formality", "Table 5: IWSLT22 zero-shot formality",
    "mtcue table-formality --records {input.records:q} --models {params.models:q} "
    "--bootstrap-samples {params.bootstrap[samples]:q} --alpha {params.bootstrap[alpha]:q} " + TABLE_OUTPUTS,
    lambda cfg: {"records": table_records(cfg)}, table_params,
    step=Step("table-formality", "Table 5 (IWSLT22 zero-shot formality) from formality records",
              "mtcue.reporting.formality:write_formality_table",
              (Option("--records", records="formality", required=True),
               Option("--models", nargs="+", required=True, help="row order (config names)")), bootstrap=True))

register(Experiment("formality", "Table 5 (IWSLT22 formality)", targets, trains=formality_runs,
                    names=formality_models, check=check, reads=supervised_records, tables=(TABLE,),
                    sections=(Section("mtcue.reporting.readme_sections:formality_section", 20, bootstrap=True),),
                    results={"table5": functools.partial(layout.table, "table5_formality", "csv")}))
