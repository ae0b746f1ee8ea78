"""Voita et al. (2018)'s experiment (their Tables 1 and 7): its rows and runs. The random-context translation and
the attention analysis are steps of each model's evaluation (plan/evaluation.py).
"""
from __future__ import annotations

import json

from mtcue import layout
from mtcue.plan.experiments import check_directions, check_only
from mtcue.plan.registry import TABLE_OUTPUTS, Experiment, Table, Targets, register
from mtcue.study import ConfigError, context_kind

def voita2018_rows(cfg: dict) -> list[dict]:
    """Voita et al. (2018) Table 1's rows in the experiment's order: {"label" (Voita et al.'s row name where
    the model is one of its systems), "model", "variant": "" or "random" (random context at test time)}."""
    exp = cfg["experiments"]["voita2018"]
    sentence = {"prev1": "previous sentence", "next1": "next sentence"}
    rows = []
    for model in exp["models"]:
        entry = cfg["models"][model]
        slot = sentence[entry.get("context_slot", "prev1")]
        label = {"base": "baseline (context-agnostic Transformer)", "concat": f"concatenation ({slot})",
                 "voita_context": f"context encoder ({slot})"}.get(entry["type"], model)
        rows.append({"label": label, "model": model, "variant": ""})
        if model in exp["random_test"]:
            rows.append({"label": "context encoder (random context)" if entry["type"] == "voita_context" else
                         f"{label}, random context", "model": model, "variant": "random"})
    labels = [r["label"] for r in rows]
    return [{**r, "label": f"{r['label']} [{r['model']}]"} if labels.count(r["label"]) > 1 else r for r in rows]


def voita2018_models(cfg: dict) -> list[tuple[str, str]]:
    """(direction, model) pairs the voita2018 experiment trains and scores."""
    exp = cfg["experiments"]["voita2018"]
    return [(d, m) for d in exp["directions"] for m in exp["models"] if d in exp["only"].get(m, [d])]


def attention_unavailable(cfg: dict) -> str:
    """Why Table 7 cannot be measured ("" when it can): its attention analysis needs each pronoun's antecedent,
    which only the synthetic corpus's contrastive suite marks (contrastive.smk writes it from the generator)."""
    if cfg["corpus"]["source"] != "synthetic":
        return "needs pronoun antecedents (Voita et al.: CoreNLP on OpenSubtitles); only the synthetic suite has them"
    return ""


def inputs(cfg: dict) -> dict[str, list[str]]:
    """The records of Tables 1 and 7: `scores`, `random` (random context at test time), `attention` (Table 7:
    the previous-sentence VOITA-CONTEXT models of en->xx directions, the suite's pronouns being English; none
    where `attention_unavailable`)."""
    exp, split, runs = cfg["experiments"]["voita2018"], cfg["evaluation"]["split"], voita2018_models(cfg)
    entry = cfg["models"]
    return {
        "scores": sorted({str(layout.record("score", d, m, split)) for d, m in runs}),
        "random": sorted({str(layout.record("score_random_context", d, m, split)) for d, m in runs
                          if m in exp["random_test"]}),
        "attention": [] if attention_unavailable(cfg) else sorted(
            str(layout.record("attention", d, m)) for d, m in runs
            if d.startswith("en-") and entry[m]["type"] == "voita_context"
            and entry[m].get("context_slot", "prev1") == "prev1"),
    }


def targets(cfg: dict) -> Targets:
    """The score records and the table."""
    return Targets(records=inputs(cfg)["scores"],
                   tables=layout.table_files("voita2018") if voita2018_models(cfg) else [])


def check(cfg: dict) -> None:
    voita = cfg["experiments"]["voita2018"]
    for key, names in (("random_test", voita["random_test"]), ("only", list(voita["only"]))):
        unknown = [n for n in names if n not in voita["models"]]
        if unknown:
            raise ConfigError(f"experiments.voita2018.{key}: {unknown} are not in experiments.voita2018.models")
    without = [n for n in voita["random_test"] if context_kind(cfg["models"][n]) is None]
    if without:
        raise ConfigError(f"experiments.voita2018.random_test: {without} read no context, so none can be random "
                          "at test time; name models that read context")
    check_only(cfg, "voita2018")
    check_directions(cfg, "voita2018", voita["directions"])


def table_params(cfg: dict) -> dict:
    """The table's rows and, where Table 7 cannot be measured, the option and its reason as two arguments."""
    unavailable = attention_unavailable(cfg)
    return {"rows": json.dumps(voita2018_rows(cfg)),
            "unavailable": ["--attention-unavailable", unavailable] if unavailable else []}


TABLE = Table(
    "voita2018", "Voita et al. (2018): Tables 1, 6 and 7",
    "mtcue table-voita2018 --rows {params.rows:q} --records {input.score:q} --random-records {input.random:q} "
    "--attention-records {input.attention:q} {params.unavailable:q} " + TABLE_OUTPUTS,
    lambda cfg: {"score": inputs(cfg)["scores"], "random": inputs(cfg)["random"],
                 "attention": inputs(cfg)["attention"]},
    table_params, rule="table_voita2018")

register(Experiment(
    "voita2018", "Voita et al. (2018)", targets, trains=voita2018_models, check=check, tables=(TABLE,),
    names=lambda cfg: list(dict.fromkeys(cfg["experiments"]["voita2018"]["models"]
                                         + cfg["experiments"]["voita2018"]["random_test"]))))
