"""Voita et al. (2018)'s experiment (their Tables 1 and 7): its rows and runs; the random-context translation and
the attention analysis are steps of each model's evaluation (plan/evaluation.py). `Voita2018` reads
its config section by its key, so a variant (other models or directions) is `Voita2018(key, label)` registered
beside it, with its own schema section.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

from mtcue import layout
from mtcue.plan.experiments import Keyed, check_directions, check_only
from mtcue.plan.registry import SCORES, TABLE_OUTPUTS, Experiment, Option, Section, Step, Table, Targets, register
from mtcue.study import ConfigError, context_kind

# The table's caption in the report (a variant's table shares it)
CAPTION = str(Path(__file__).with_name("voita2018.rst"))

# `mtcue table-voita2018`, the step of Voita et al.'s table
STEP = Step("table-voita2018", "Voita et al. (2018) Tables 1 and 7: BLEU of the document-level systems and the "
            "context attention's agreement with pronoun antecedents, beside Voita et al.'s",
            "mtcue.experiments.voita2018.table:write_voita2018_table", (
                Option("--rows", json=True, required=True,
                       help='JSON [{"label", "model", "variant": "" or "random"}] (table order)'),
                SCORES,
                Option("--random-records", name="random_scores", records="score",
                       help="score records of random context at test time"),
                Option("--attention-records", name="attention", records="attention"),
                Option("--attention-unavailable", default="", help="why there are no attention records")))


def attention_unavailable(cfg: dict) -> str:
    """Why Table 7 cannot be measured ("" when it can): its attention analysis needs each pronoun's antecedent,
    which only the synthetic corpus's contrastive suite marks (contrastive's rules.smk writes it from the generator)."""
    if cfg["corpus"]["source"] != "synthetic":
        return "needs pronoun antecedents (Voita et al.: CoreNLP on OpenSubtitles); only the synthetic suite has them"
    return ""


class Voita2018(Keyed):
    """Voita et al.'s experiment of config section experiments.{key}: its table is named by the key and labelled
    `label`."""

    def __init__(self, key: str = "voita2018", label: str = "Voita et al. (2018)"):
        super().__init__(key)
        self.label = label

    def rows(self, cfg: dict) -> list[dict]:
        """Voita et al. (2018) Table 1's rows in the experiment's order: {"label" (Voita et al.'s row name where
        the model is one of its systems), "model", "variant": "" or "random" (random context at test time)}."""
        exp = self.config(cfg)
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

    def models(self, cfg: dict) -> list[tuple[str, str]]:
        """(direction, model) pairs the experiment trains and scores."""
        exp = self.config(cfg)
        return [(d, m) for d in exp["directions"] for m in exp["models"] if d in exp["only"].get(m, [d])]

    def names(self, cfg: dict) -> list[str]:
        exp = self.config(cfg)
        return list(dict.fromkeys(exp["models"] + exp["random_test"]))

    def inputs(self, cfg: dict) -> dict[str, list[str]]:
        """The records of Tables 1 and 7: `scores`, `random` (random context at test time), `attention` (Table 7:
        the previous-sentence VOITA-CONTEXT models of en->xx directions, the suite's pronouns being English; none
        where `attention_unavailable`)."""
        exp, split, runs = self.config(cfg), cfg["evaluation"]["split"], self.models(cfg)
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

    def targets(self, cfg: dict) -> Targets:
        """The score records and the table."""
        return Targets(records=self.inputs(cfg)["scores"],
                       tables=layout.table_files(self.key) if self.models(cfg) else [])

    def check(self, cfg: dict) -> None:
        voita = self.config(cfg)
        for key, names in (("random_test", voita["random_test"]), ("only", list(voita["only"]))):
            unknown = [n for n in names if n not in voita["models"]]
            if unknown:
                raise ConfigError(f"experiments.{self.key}.{key}: {unknown} are not in experiments.{self.key}.models")
        without = [n for n in voita["random_test"] if context_kind(cfg["models"][n]) is None]
        if without:
            raise ConfigError(f"experiments.{self.key}.random_test: {without} read no context, so none can be "
                              "random at test time; name models that read context")
        check_only(cfg, self.key)
        check_directions(cfg, self.key, voita["directions"])

    def table_params(self, cfg: dict) -> dict:
        """The table's rows and, where Table 7 cannot be measured, the option and its reason as two arguments."""
        unavailable = attention_unavailable(cfg)
        return {"rows": json.dumps(self.rows(cfg)),
                "unavailable": ["--attention-unavailable", unavailable] if unavailable else []}

    def table_inputs(self, cfg: dict) -> dict[str, list[str]]:
        inputs = self.inputs(cfg)
        return {"score": inputs["scores"], "random": inputs["random"], "attention": inputs["attention"]}

    def experiment(self, **declared) -> Experiment:
        """The experiment to register; `declared`, its other Experiment fields (the README's sections)."""
        table = Table(
            self.key, f"{self.label}: Tables 1, 6 and 7",
            "mtcue table-voita2018 --rows {params.rows:q} --records {input.score:q} --random-records {input.random:q} "
            "--attention-records {input.attention:q} {params.unavailable:q} " + TABLE_OUTPUTS,
            self.table_inputs, self.table_params, rule=f"table_{self.key}", step=STEP,
            caption=CAPTION)
        return Experiment(self.key, self.label, self.targets, trains=self.models, check=self.check,
                          tables=(table,), names=self.names, **declared)


VOITA2018 = Voita2018()

register(VOITA2018.experiment(
    sections=(Section("mtcue.experiments.voita2018.table:voita2018_section", 70, headline=True),),
    results={"voita2018": functools.partial(layout.table, "voita2018", "csv")}))
