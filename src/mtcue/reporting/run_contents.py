"""What a model's MLflow run holds, from its records: params, metrics by step and tags (`wanted_of`), and when a
run logged before holds something the records contradict (`is_stale`). The sync (reporting/tracking.py) logs
what a run lacks and logs a stale run afresh; reporting/tracking.py's `sync_records` lists every param, metric
and tag.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from mlflow.entities import Metric, Run

from mtcue.study import pair_of

TAG = "mtcue."
ARTIFACTS_TAG, MODEL_TAG, KIND_TAG = f"{TAG}artifacts", f"{TAG}logged_model", f"{TAG}kind"


def _flatten(obj: object, prefix: str = "") -> dict[str, str]:
    if isinstance(obj, dict):
        out: dict[str, str] = {}
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix.removesuffix("."): obj if isinstance(obj, str) else json.dumps(obj)}


@dataclass
class Wanted:
    """What a run should hold: params, metrics as {key: {step: value}}, tags (a run holding a param,
    metric or mtcue.* tag not among them is stale), and its start and end (epoch ms; None: unknown,
    MLflow's default)."""

    params: dict[str, str]
    metrics: dict[str, dict[int, float]]
    tags: dict[str, str]
    start_ms: int | None = None
    end_ms: int | None = None


def _ms(iso: str | None) -> int | None:
    return None if iso is None else int(datetime.fromisoformat(iso).timestamp() * 1000)


# The fields of a formality record logged as metrics (fractions), each as formality_{field}.
FORMALITY_FIELDS = ("formal", "informal", "average", "formal_mean", "informal_mean")


def _evaluation(record: dict, params: dict[str, str], tags: dict[str, str]) -> dict[str, float | None]:
    """The step-0 metrics of an evaluation record; adds its params and tags."""
    kind, split = record["kind"], record.get("split")
    if kind == "score":
        tags[f"{TAG}bleu_signature"] = record["bleu_signature"]
        return {f"{split}_bleu": record["bleu"],
                **{f"{split}_acc_{p}": c["accuracy"] for p, c in record["phenomena"].items()}}
    if kind == "comet":
        params["comet_model"] = record["comet_model"]
        if record["comet"] is None:
            tags[f"{TAG}comet_unavailable"] = record["unavailable"]
        return {f"{split}_comet": record["comet"]}
    # The test split's (Table 5, Figure 4) keep their names; another split's (Table 6: valid) are prefixed with it.
    name = kind if split in (None, "test") else f"{split}_{kind}"
    if kind == "formality":  # a style-control model's also per style level (the sweep)
        return {**{f"{name}_{f}": record[f] for f in FORMALITY_FIELDS},
                **{f"{name}_level{e['level']}_formal": e["formal_accuracy"] for e in record.get("levels", [])},
                **{f"{name}_level{e['level']}_meaning_chrf": e["meaning_chrf"] for e in record.get("levels", [])}}
    if kind == "contrastive":
        suite = record["suite"]
        return {f"contrastive_{suite}": record["accuracy"],
                **{f"contrastive_{suite}_{value}": s["accuracy"]
                   for value, s in record["groups"].get("phenomenon", {}).items()}}
    if kind == "context_usage":  # CXMI (nats per token), overall and per phenomenon
        return {f"{split}_cxmi": record["cxmi"],
                **{f"{split}_cxmi_{p}": s["cxmi"] for p, s in record["phenomena"].items()}}
    return {f"{name}_bleu": record["bleu"], f"{name}_accuracy_mean": record["accuracy_mean"],
            f"{name}_supervised_samples": record["supervised_samples"],
            **{f"{name}_acc_{a}": c["accuracy"] for a, c in record["attributes"].items()}}


def wanted_of(records: list[dict], experiments: Sequence[str]) -> Wanted:
    train = next((r for r in records if r["kind"] == "train"), None)
    first = train or records[0]
    params = {**_flatten((train or {}).get("spec", {})), "config_hash": first["config_hash"]}
    tags = {
        f"{TAG}pair": pair_of(first["direction"]),
        f"{TAG}config_hash": first["config_hash"],
        f"{TAG}git_commit": first["git_commit"],
        **({f"{TAG}experiments": ",".join(experiments)} if experiments else {}),
    }
    wanted = Wanted(params, {}, tags)
    metrics, summary = wanted.metrics, {}
    if train:
        for e in train["epochs"]:
            for key in ("train_loss", "valid_loss", "wall_s"):
                metrics.setdefault(key, {})[int(e["epoch"])] = float(e[key])
        summary |= {"best_epoch": train["best_epoch"], "best_valid_loss": train["best_valid_loss"],
                    "params_total": train["params"]["total"],
                    "params_trainable": train["params"]["trainable"]}
        # The run spans the training, not the sync (records written before these fields lack them).
        wanted.start_ms, wanted.end_ms = _ms(train.get("started")), _ms(train.get("finished"))
        tags[f"{TAG}spec"] = json.dumps(train["spec"], sort_keys=True)
        if "model_path" in train:
            tags[f"{TAG}model_path"] = train["model_path"]
        if train["spec"].get("init_from"):
            tags[f"{TAG}init_from"] = train["spec"]["init_from"]
    for r in records:
        if r is not train:
            summary |= _evaluation(r, params, tags)
    # Unknown values (no judged sample, no validation, COMET unavailable) are left out: MLflow has no null.
    metrics |= {key: {0: float(v)} for key, v in summary.items() if v is not None}
    return wanted


def _same(a: float | None, b: float) -> bool:
    # A diverged training logs NaN losses; NaN != NaN must not make every sync stale.
    return a == b or (a is not None and math.isnan(a) and math.isnan(b))


def is_stale(run: Run, history: dict[str, list[Metric]], wanted: Wanted) -> bool:
    """True when the run holds a param, a metric point, a key or a start time that the records
    contradict: MLflow can take back neither a param nor a metric nor, here, a tag of ours."""
    if any(run.data.params.get(k, v) != v for k, v in wanted.params.items()):
        return True
    ours = {k for k in run.data.tags if k.startswith(TAG)}
    if set(run.data.params) - set(wanted.params) or set(run.data.metrics) - set(wanted.metrics) \
            or ours - set(wanted.tags):
        return True
    if wanted.start_ms is not None and run.info.start_time != wanted.start_ms:
        return True
    if run.data.tags.get(MODEL_TAG, wanted.tags.get(MODEL_TAG)) != wanted.tags.get(MODEL_TAG):
        return True  # another model was logged: a run's logged model cannot be replaced
    for key, points in history.items():
        steps = [p.step for p in points]
        if len(set(steps)) != len(steps) or not all(_same(wanted.metrics[key].get(p.step), p.value) for p in points):
            return True
    return False
