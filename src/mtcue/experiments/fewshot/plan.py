"""The few-shot experiment (its rules.smk, the paper's Figure 4): the fine-tuned variants of each setting and
the points of the figure. `Fewshot` reads its config section by its key, so a variant (other parents, settings or
directions) is `Fewshot(key, label)` registered beside it, with its own schema section.
"""
from __future__ import annotations

import functools
from mtcue import layout
from mtcue.plan.experiments import Keyed, check_derived_names, check_directions, seed_runs, with_seeds
from mtcue.plan.registry import Experiment, Section, Targets, register
from mtcue.study import (CONTEXT_KIND, ConfigError, column_groups, columns_of, context_kind, fewshot_name,
                         is_contextual, pair_of, selected_columns)


class Fewshot(Keyed):
    """The few-shot experiment of config section experiments.{key}, `label` in the GPU-hour table."""

    def __init__(self, key: str = "fewshot", label: str = "Figure 4 (EAMT22 few-shot)"):
        super().__init__(key)
        self.label = label

    def setting(self, cfg: dict, parent: str, setting: str) -> str:
        """The model that stands for `parent` in `setting`: the parent itself in the zero-shot setting (0)."""
        return parent if self.config(cfg)["settings"][setting] == 0 else fewshot_name(parent, setting)

    def eamt22_columns(self, cfg: dict, entry: dict) -> list[str]:
        """The context a model (`entry`: its model entry) is given in the EAMT22 evaluation: the attribute sentences,
        plus the columns of experiments.{key}.context_columns that it already reads (a model is never shown a column
        kind it has no place for, e.g. document slots without positions)."""
        cues = column_groups(cfg)["cues"]
        own = set(columns_of(cfg, entry))
        return [c for c in selected_columns(cfg, self.config(cfg)["context_columns"]) if c in cues or c in own]

    def parents(self, cfg: dict) -> list[str]:
        """The configured models of Figure 4: the parents of the variants, and the baseline where there is one."""
        fewshot = self.config(cfg)
        return fewshot["models"] + ([fewshot["baseline"]] if fewshot["baseline"] else [])

    def models(self, cfg: dict) -> dict[str, dict]:
        """The few-shot variants, derived here only: {name: model entry}. Each fine-tunes its parent for the
        experiment's budget on the EAMT22 context; `fewshot` says which setting it is; each is repeated
        with experiments.{key}.seeds seeds (each run its own sample of annotated lines and training seed)."""
        fewshot = self.config(cfg)
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
                    "context_columns": self.eamt22_columns(cfg, entry),
                    "fewshot": {"parent": parent, "setting": setting, "samples": samples},
                }
        return with_seeds(cfg, self.key, out)

    def points(self, cfg: dict) -> list[dict]:
        """The points of Figure 4: per few-shot direction, each parent in each setting (`record`: the model
        whose EAMT22 record it is) and the non-contextual baseline (setting "baseline")."""
        fewshot = self.config(cfg)
        points = []
        for direction in fewshot["directions"]:
            for parent in fewshot["models"]:
                points += [{"direction": direction, "model": parent, "setting": setting, "per_combination": samples,
                            "record": self.setting(cfg, parent, setting)}
                           for setting, samples in fewshot["settings"].items()]
            if fewshot["baseline"]:
                points.append({"direction": direction, "model": fewshot["baseline"], "setting": "baseline",
                               "per_combination": 0, "record": fewshot["baseline"]})
        # Only the few-shot fine-tunings repeat: the zero-shot parent and the baseline are one run each.
        variants = self.models(cfg)
        return [{**p, "records": seed_runs(cfg, self.key, p["record"], variants[p["record"]])
                 if p["record"] in variants else [p["record"]]} for p in points]

    def eamt22_pairs(self, cfg: dict) -> list[str]:
        """The pairs whose training lines are annotated with EAMT22's rules (the paper's data only; data.smk)."""
        if cfg["corpus"]["source"] != "opensubtitles":
            return []
        return sorted({pair_of(d) for d in self.config(cfg)["directions"]})

    def records(self, cfg: dict) -> list[str]:
        """The EAMT22 test records of Figure 4's points."""
        return sorted({str(layout.record("eamt22", p["direction"], m, "test")) for p in self.points(cfg)
                       for m in p["records"]})

    def targets(self, cfg: dict) -> Targets:
        """The records of Figure 4's points and the figure."""
        return Targets(records=self.records(cfg),
                       figures=[layout.figure("figure4_eamt22_fewshot", suffix) for suffix in ("csv", "png")]
                       if self.points(cfg) else [])

    def trains(self, cfg: dict) -> list[tuple[str, str]]:
        return [(p["direction"], m) for p in self.points(cfg) for m in p["records"]]

    def check(self, cfg: dict) -> None:
        fewshot, key = self.config(cfg), f"experiments.{self.key}"
        check_directions(cfg, self.key, sorted(set(fewshot["directions"])))
        for name in fewshot["models"]:
            # the attribute sentences are store columns (cues): a token or label model would never see them
            if context_kind(cfg["models"][name]) not in ("vectors", "tags"):
                raise ConfigError(f"{key}.models: '{name}' reads no context columns; the few-shot "
                                  "settings fine-tune models reading the context store's columns, where the "
                                  "attribute sentences are (vectors or tags: the paper's MTCUE and TAGGING)")
        baseline = fewshot["baseline"]
        if baseline is not None and is_contextual(cfg["models"][baseline]):
            raise ConfigError(f"{key}.baseline: '{baseline}' is not a non-contextual model of this config")
        if cfg["corpus"]["source"] == "opensubtitles" and fewshot["directions"]:
            if fewshot["directions"] != ["en-pl"]:
                raise ConfigError(f"{key}.directions: {fewshot['directions']}; on OpenSubtitles the EAMT22 "
                                  "settings run in en-pl only (the annotation reads Polish, the test set is EN->PL)")
            if fewshot["detector"] != "polish":
                raise ConfigError(f"{key}.detector: '{fewshot['detector']}' reads the synthetic corpus's "
                                  "gold labels; OpenSubtitles output is judged by 'polish'")
        check_derived_names(cfg, self.models(cfg), f"few-shot variants ({key})")

    def experiment(self, **declared) -> Experiment:
        """The experiment to register; `declared`, its other Experiment fields (the README's sections)."""
        return Experiment(self.key, self.label, self.targets, names=self.parents, trains=self.trains,
                          derives=self.models, check=self.check, **declared)


FEWSHOT = Fewshot()

register(FEWSHOT.experiment(
    sections=(Section("mtcue.experiments.fewshot.figure:fewshot_section", 30, headline=True),),
    results={"figure4": functools.partial(layout.figure, "figure4_eamt22_fewshot", "csv")}))
