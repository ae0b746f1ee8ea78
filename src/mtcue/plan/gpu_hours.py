"""What a study's trainings cost on one A100-class GPU, before anyone runs them (docs/paper-scale.md).

Anchor: the paper's Table 3 (`paper_figures/mtcue_table3_models.csv`), GPU hours per epoch and epochs to the
best checkpoint of TAGGING, NOVOTNEY-CUE and MTCUE, fine-tuned on the paper's OpenSubtitles (its mean over
directions). Every other model's hours per epoch are MTCUE's scaled by `train_weights`, the weights one
training token passes through (the ~6 x weights FLOPs per token of a transformer), so an epoch over the same
corpus costs in proportion; `mtcue bench-train-cost` measured the same proportionality for the three anchored
models (docs/benchmarks.md: within 0.85-1.18 of one another, as their weights are). Epochs: early stopping
ends a run `patience` epochs after its best, so a run is expected to take Table 3's epochs to best (its type's,
else MTCUE's for a fine-tuning) plus patience, at most `max_epoch`; a model trained from scratch, for which
the paper gives no epochs, is counted at `max_epoch` (an upper bound). Translation, embedding and COMET are
not counted.

The calendar (`study_calendar`, `mtcue gpu-hours --gpus`) schedules those trainings on N GPUs, one GPU per
training, a training after its parent (init_from): the study's training wall time per GPU count, not counting
queue waits, evaluation or data preparation. With targets (`mtcue gpu-hours --target table4_quality`), the same
for the trainings those tables and figures need: their experiments' models and the parents those start from
(`plan.models.experiment_trainings`), what `snakemake <target>` trains.
"""
from __future__ import annotations

import csv
from statistics import mean

from mtcue.paper import PAPER_FIGURES
from mtcue.plan.models import experiment_trainings, model_entry, model_spec, trained_models
from mtcue.plan.registry import EXPERIMENTS
from mtcue.schedule import Job, critical_path, list_schedule
from mtcue.study import MODEL_TYPES, ConfigError

TABLE3 = PAPER_FIGURES / "mtcue_table3_models.csv"
TABLE3_TYPES = {"TAGGING": "tagging", "NOVOTNEY-CUE": "novotney_cue", "MTCUE": "mtcue"}
# A batch's forward and backward pass and Adam's step take at least this long on one A100 at the paper's model
# sizes, however few its tokens (kernel launches, the step over every weight): an assumption, not a measurement.
# It bounds the models trained in batches of a few sentences (`training.batch_size`: the style models' 16).
MIN_BATCH_S = 0.02
CALENDAR_GPUS = (8, 16, 32, 64)


def table3() -> dict[str, dict[str, float]]:
    """{model type: {"gpu_h_per_epoch", "epochs_to_best"}} of the paper's Table 3."""
    with open(TABLE3, newline="") as f:
        return {TABLE3_TYPES[row["model"]]: {"gpu_h_per_epoch": float(row["gpu_hour_per_epoch"]),
                                             "epochs_to_best": float(row["epochs_to_best"])}
                for row in csv.DictReader(f) if row["model"] in TABLE3_TYPES}


def paper_sentences() -> float:
    """The mean training sentence pairs of a direction in the paper's Table 1 (its GPU hours are that mean's)."""
    with open(PAPER_FIGURES / "mtcue_table1_data.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["field"] == "source_target_pairs")
    return mean(float(v.removesuffix("M")) * 1e6 for k, v in row.items() if k != "field")


def train_weights(spec: dict, vocab_size: int) -> int:
    """The weights one target token's training passes through (biases and norms left out): the source
    encoder (once more per token-context sentence), the decoder, the output projection; MTCUE's and
    NOVOTNEY-CUE's context encoder (over about a sentence's length of context positions) and the context
    attention in each decoder layer of a type that has one (MTCUE's, `ModelType.context_attention`)."""
    a, model_type = spec["arch"], MODEL_TYPES[spec["type"]]
    d = a["embed_dim"]
    layer = lambda ffn: 4 * d * d + 2 * d * ffn
    encoder = a["encoder_layers"] * layer(a["encoder_ffn_dim"])
    if model_type.context == "tokens":  # the (shared) source encoder runs once more over each context sentence
        encoder *= 1 + len(spec["context"]["slot"].split(","))
    total = encoder + a["decoder_layers"] * (layer(a["decoder_ffn_dim"]) + 4 * d * d) + d * vocab_size
    if model_type.context == "vectors":  # a context encoder
        total += a["context_layers"] * layer(a["context_ffn_dim"])
    if model_type.context_attention:
        total += a["decoder_layers"] * 4 * d * d
    return total


def training_cost(cfg: dict, model: str, direction: str, anchors: dict | None = None) -> dict:
    """One training: {"gpu_h_per_epoch", "source" (table3 or scaled), "epochs" (expected), "max_epoch",
    "gpu_h" (expected), "gpu_h_max"}."""
    anchors = anchors or table3()
    spec = model_spec(cfg, model, direction)
    vocab = cfg["spm"]["vocab_size"]
    if spec["type"] in anchors:
        per_epoch, source = anchors[spec["type"]]["gpu_h_per_epoch"], "table3"
    else:
        reference = model_spec(cfg, "mtcue", direction) if "mtcue" in cfg["models"] else None
        if reference is None:
            raise ValueError("gpu-hours: the config has no model `mtcue`, whose Table 3 cost scales the others")
        per_epoch = (anchors["mtcue"]["gpu_h_per_epoch"] * train_weights(spec, vocab)
                     / train_weights(reference, vocab))
        source = "scaled"
    training = spec["training"]
    if training.get("batch_size"):  # a batch of a few sentences costs its fixed time, not its tokens'
        per_epoch = max(per_epoch, paper_sentences() / training["batch_size"] * MIN_BATCH_S / 3600)
    best = anchors.get(spec["type"], anchors["mtcue"])["epochs_to_best"] if spec.get("init_from") else None
    epochs = training["max_epoch"] if best is None else min(training["max_epoch"], best + training["patience"])
    return {"gpu_h_per_epoch": per_epoch, "source": source, "epochs": epochs, "max_epoch": training["max_epoch"],
            "from_scratch": best is None, "gpu_h": per_epoch * epochs, "gpu_h_max": per_epoch * training["max_epoch"]}


def anchor_ratios(cfg: dict) -> dict[str, dict[str, float]]:
    """The cost ratios Table 3 gives (`paper`) beside those `train_weights` gives (`weights`), for the
    three anchored models in the config's first direction: how far the scaling is from the paper's."""
    anchors, vocab, d = table3(), cfg["spm"]["vocab_size"], cfg["directions"][0]
    weights = {kind: train_weights(model_spec(cfg, kind, d), vocab) for kind in anchors}
    pairs = {"mtcue/tagging": ("mtcue", "tagging"), "novotney_cue/mtcue": ("novotney_cue", "mtcue")}
    return {name: {"paper": anchors[a]["gpu_h_per_epoch"] / anchors[b]["gpu_h_per_epoch"],
                   "weights": weights[a] / weights[b]} for name, (a, b) in pairs.items()}


def study_gpu_hours(cfg: dict) -> dict:
    """Per experiment (the registry's order; those that train nothing have no row) its trainings (a (direction, model) several experiments read is in
    each), their expected and upper-bound GPU hours; `parents`, the trainings only others start from;
    `total`, every training once; `longest`, the single training dearest expected, `longest_max` at most."""
    anchors, trained = table3(), trained_models(cfg)
    cost = {key: training_cost(cfg, key[1], key[0], anchors) for key in trained}
    rows = []
    labels = {name: experiment.label for name, experiment in EXPERIMENTS.items()}
    for name, label in [*labels.items(), ("parents", "starting points only (no experiment's row)")]:
        keys = [k for k, experiments in trained.items() if (name in experiments if name != "parents" else not experiments)]
        if keys:
            rows.append({"experiment": name, "label": label, "trainings": len(keys),
                         "from_scratch": sum(cost[k]["from_scratch"] for k in keys),
                         "gpu_h": sum(cost[k]["gpu_h"] for k in keys), "gpu_h_max": sum(cost[k]["gpu_h_max"] for k in keys)})
    longest = {name: max(cost, key=lambda k: cost[k][name]) for name in ("gpu_h", "gpu_h_max")}
    return {"rows": rows, "total": {"trainings": len(cost), "from_scratch": sum(c["from_scratch"] for c in cost.values()),
                                    "gpu_h": sum(c["gpu_h"] for c in cost.values()),
                                    "gpu_h_max": sum(c["gpu_h_max"] for c in cost.values())},
            **{key: {"direction": longest[name][0], "model": longest[name][1], **cost[longest[name]]}
               for key, name in (("longest", "gpu_h"), ("longest_max", "gpu_h_max"))},
            "per_training": cost}


def gpu_hours_markdown(cfg: dict) -> str:
    """study_gpu_hours as the Markdown table docs/paper-scale.md shows."""
    hours = study_gpu_hours(cfg)
    lines = ["| experiment | trainings | of them from scratch | GPU-h, expected | GPU-h, at most (max_epoch) |",
             "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['label']} | {r['trainings']} | {r['from_scratch']} | {r['gpu_h']:,.0f} | {r['gpu_h_max']:,.0f} |"
              for r in hours["rows"]]
    t = hours["total"]
    lines.append(f"| **every training once** | **{t['trainings']}** | **{t['from_scratch']}** | **{t['gpu_h']:,.0f}** "
                 f"| **{t['gpu_h_max']:,.0f}** |")
    lines.append("")
    for key, what in (("longest", "expected"), ("longest_max", "at most")):
        one = hours[key]
        lines.append(f"- Dearest single training, {what}: {one['model']} ({one['direction']}), "
                     f"{one['gpu_h_per_epoch']:.2f} GPU-h per epoch, {one['gpu_h']:.1f} GPU-h expected "
                     f"({one['epochs']:g} epochs), {one['gpu_h_max']:.1f} at most ({one['max_epoch']} epochs).")
    return "\n".join(lines) + "\n"


def calendar(hours: dict[str, float], parents: dict[str, str], gpus: tuple[int, ...], jobs: int | None = None) -> dict:
    """Jobs ({name: GPU-h}, each after its parent: {name: parent}) on each GPU count, one GPU each, at most `jobs`
    at once: {"gpu_h", "critical_path_h", "chain" (names, in run order), "wall_h": {gpus: projected hours}}."""
    work = [Job(name, h, (parents[name],) if name in parents else ()) for name, h in hours.items()]
    path, chain = critical_path(work)
    return {"gpu_h": sum(hours.values()), "critical_path_h": path, "chain": chain,
            "wall_h": {g: list_schedule(work, min(g, jobs or g)) for g in gpus}}


def target_experiments(cfg: dict, targets: list[str]) -> list[str]:
    """The experiments whose tables or figures `targets` name: a file (results/tables/table4_quality.csv), its
    name without folder and suffix (table4_quality) or an experiment's name (ablation)."""
    named: dict[str, str] = {}
    for name, experiment in EXPERIMENTS.items():
        made = experiment.targets(cfg)
        for path in (*made.tables, *made.figures):
            named[path] = named[path.rsplit("/", 1)[-1].split(".")[0]] = name
        if made.tables or made.figures:
            named[name] = name
    unknown = [t for t in targets if t not in named]
    if unknown:
        choices = sorted(k for k in named if "/" not in k)
        raise ConfigError(f"--target {' '.join(unknown)}: no table or figure of this config's study is called so; "
                          f"one of {', '.join(choices)} (or a file of results/tables/ or results/figures/)")
    return list(dict.fromkeys(named[t] for t in targets))


def target_trainings(cfg: dict, targets: list[str]) -> list[tuple[str, str]]:
    """The (direction, model) trainings that building `targets` takes, parents included."""
    return sorted({key for name in target_experiments(cfg, targets) for key in experiment_trainings(cfg, name)})


def target_markdown(cfg: dict, targets: list[str]) -> str:
    """What building `targets` costs beside the whole study, as the Markdown table docs/paper-scale.md shows."""
    hours = study_gpu_hours(cfg)
    cost, keys = hours["per_training"], target_trainings(cfg, targets)
    own = {key for name in target_experiments(cfg, targets) for key in EXPERIMENTS[name].trains(cfg)}
    t = hours["total"]
    return "\n".join([
        "| what | trainings | of them starting points of others | GPU-h, expected | GPU-h, at most (max_epoch) |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| {', '.join(targets)} | {len(keys)} | {len([k for k in keys if k not in own])} "
        f"| {sum(cost[k]['gpu_h'] for k in keys):,.0f} | {sum(cost[k]['gpu_h_max'] for k in keys):,.0f} |",
        f"| the whole study | {t['trainings']} | | {t['gpu_h']:,.0f} | {t['gpu_h_max']:,.0f} |"]) + "\n"


def study_calendar(cfg: dict, gpus: tuple[int, ...] = CALENDAR_GPUS, evaluation: dict | None = None,
                   jobs: int | None = None, targets: list[str] | None = None) -> dict:
    """The calendar of every training of the study (of `targets`: the trainings they take), at its expected hours
    ("gpu_h") and at most ("gpu_h_max"); each training's evaluation after it where `evaluation` gives its hours
    ({(direction, model): GPU-h}); at most `jobs` at once (the SLURM profile's `jobs`)."""
    cost = study_gpu_hours(cfg)["per_training"]
    if targets:
        cost = {key: cost[key] for key in target_trainings(cfg, targets)}
    name = lambda direction, model: f"{model} ({direction})"
    parents = {name(d, m): name(d, model_entry(cfg, m)["init_from"]) for d, m in cost
               if model_entry(cfg, m).get("init_from")}
    evaluation = {key: h for key, h in (evaluation or {}).items() if key in cost}  # of the trainings scheduled
    evaluated = {f"evaluation of {name(d, m)}": h for (d, m), h in evaluation.items()}
    parents |= {f"evaluation of {name(d, m)}": name(d, m) for d, m in evaluation}
    return {column: calendar({**{name(d, m): c[column] for (d, m), c in cost.items()}, **evaluated}, parents, gpus,
                             jobs) for column in ("gpu_h", "gpu_h_max")}


def calendar_markdown(cfg: dict, gpus: tuple[int, ...] = CALENDAR_GPUS, evaluation: dict | None = None,
                      jobs: int | None = None, targets: list[str] | None = None) -> str:
    """study_calendar as the Markdown table docs/paper-scale.md shows."""
    cal = study_calendar(cfg, gpus, evaluation, jobs, targets)
    when = lambda h: f"{h / 24:,.1f} days ({h:,.0f} h)"
    busy = lambda c, g: f"{c['gpu_h'] / (g * c['wall_h'][g]):.0%}"
    expected, most = cal["gpu_h"], cal["gpu_h_max"]
    lines = ["| GPUs | wall time, expected | GPUs busy | wall time, at most (max_epoch) | GPUs busy |",
             "| ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {g} | {when(expected['wall_h'][g])} | {busy(expected, g)} | {when(most['wall_h'][g])} "
              f"| {busy(most, g)} |" for g in gpus]
    lines.append("")
    lines.append(f"- GPU-hours: {expected['gpu_h']:,.0f} expected, {most['gpu_h']:,.0f} at most, on one GPU per "
                 "training" + (f", its evaluation included ({sum(evaluation.values()):,.0f})." if evaluation else "."))
    if jobs:
        lines.append(f"- At most {jobs} jobs at once (the SLURM profile's `jobs`): "
                     + ", ".join(f"{g} GPUs run {min(g, jobs)}" for g in gpus) + ".")
    for c, what in ((expected, "expected"), (most, "at most")):
        lines.append(f"- Critical path, {what}: {when(c['critical_path_h'])}, {' -> '.join(c['chain'])}: "
                     "no number of GPUs finishes sooner.")
    return "\n".join(lines) + "\n"
