# Validated configuration (defaults filled from the schema) and the study's targets, read from its plan
# (src/mtcue/plan/ and each experiment's src/mtcue/experiments/{name}/plan.py); the input functions of single rule
# files are in inputs.smk.
import json
import os
import shlex
import sys

from mtcue import config as cfg
from mtcue import layout
from mtcue.data import sources
from mtcue.data.evalsets import iwslt22_files
from mtcue.experiments import rule_files as experiment_rules
from mtcue.experiments.fewshot.plan import FEWSHOT
from mtcue.experiments.formality.plan import FORMALITY
from mtcue.experiments.shortening.plan import SHORTENING
from mtcue.experiments.style.plan import STYLE
from mtcue.plan import evaluation as plan_evaluation
from mtcue.plan import resources as plan_resources
from mtcue.plan import quality
from mtcue.plan.experiments import model_records, report_files, study_targets
from mtcue.plan.models import all_models, model_entry, trained_entries, trained_models, vector_stores
from mtcue.plan.models import model_spec as plan_spec
from mtcue.study import (SIDE_COLUMNS, STYLE_TYPES, context_kind, is_contextual, pair_of, parent_checkpoint, store_columns,
                         store_name)

CONFIG_FILES = [str(f) for f in workflow.configfiles] or ["config/config.yaml"]
for config_file in workflow.configfiles:  # Snakemake keeps the last of a key written twice: refused here
    cfg.read_yaml(config_file)
config = cfg.validate(config, source=" + ".join(CONFIG_FILES), checks=[sources.check_urls])

STUDY = config["study"]
OPENSUBTITLES = config["corpus"]["source"] == "opensubtitles"  # the paper's data path (data.smk, download.smk)
DIRECTIONS = config["directions"]
PAIRS = sorted({pair_of(d) for d in DIRECTIONS})
MODELS = list(all_models(config))  # the configured models and their derived runs (plan.models)
SPLITS = ["train", "valid", "test"]
EVAL_SPLIT = config["evaluation"]["split"]
MTCUE = "mtcue"


wildcard_constraints:
    pair=r"en-[a-z]{2}",
    direction=r"[a-z]{2}-[a-z]{2}",
    src=r"[a-z]{2}",
    tgt=r"[a-z]{2}",
    split="|".join(SPLITS),
    model="|".join(MODELS),
    store=r"[^/]+",


def shell_prefix(exports):
    """What every shell command of the study starts with (a local job and a cluster job alike: a SLURM job's
    Snakemake reads the workflow again): Snakemake's own prefix for bash (`shell.prefix` replaces it), the bin/ of
    the environment Snakemake runs in first on PATH, so that steps run its `mtcue` (`.venv/bin/snakemake`, the
    venv not activated), then `exports` ({name: value}). A prefix, not os.environ: Snakemake run in-process (a
    notebook, the tests) leaves its caller's environment as it was."""
    path = f"export PATH={shlex.quote(os.path.dirname(sys.executable))}:\"$PATH\";"
    variables = [f"export {name}={shlex.quote(value)};" for name, value in exports.items()]
    return " ".join(["set -euo pipefail;", path, *variables]) + " "


def table_outputs(table):
    """A table rule's outputs (`output: **table_outputs(...)`): the `Table`'s three files (layout.table_files), its
    HTML shown in the report's Tables as its label, captioned by its caption file."""
    csv, md, html = layout.table_files(table.name)
    return {"csv": csv, "md": md,
            "html": report(html, caption=table.caption, category="Tables", labels={"name": table.label})}


def model_spec(w):
    return plan_spec(config, w.model, w.direction)


def spec(w):
    """The model spec as a JSON param: a changed spec reruns exactly that model and its dependants."""
    return json.dumps(model_spec(w), sort_keys=True)


def cfg_hash(w):
    from mtcue.records import config_hash

    return config_hash(model_spec(w))


def clean_corpus(w, split):
    return layout.clean_corpus(pair_of(w.direction), split)


def model_store(direction, model):
    """The store a model trains on: a vector store per encoder, TAGGING's tag store (a few-shot
    variant: its setting's masked copy, experiments/fewshot/rules.smk), the token store (VOITA-CONTEXT, CONCAT), the
    side-information labels (the si_* models, experiments/side_information/rules.smk) or the style store (style_token, style_dim); None
    for BASE."""
    entry = model_entry(config, model)
    if "fewshot" in entry:
        return layout.store_dir("fewshot", direction, model)
    if entry["type"] in STYLE_TYPES:  # not context: a style level per line (experiments/style/rules.smk)
        return layout.store_dir("style", direction)
    kind = context_kind(entry)
    if kind == "vectors":
        return layout.store_dir(kind, direction, store_name(plan_spec(config, model, direction)["context"]))
    return layout.store_dir(kind, direction) if kind else None


def context_store(w, model=None):
    """The store of `model` (default: the rule's) as a named input, `store`; none for BASE."""
    store = model_store(w.direction, model or w.model)
    return {"store": store} if store else {}


def pair_corpora(pair):
    """The cleaned train, valid and test corpora of a pair (a context store reads all three)."""
    return [layout.clean_corpus(pair, split) for split in SPLITS]


def split_corpora(w):
    return pair_corpora(pair_of(w.direction))


def corpus_options(w, input):
    return [a for s, p in zip(SPLITS, input) for a in ("--corpus", f"{s}={p}")]



def trained_model(w):
    """What a step that loads a trained model reads of it (translator.TrainedModel); a few-shot variant
    reads the full tag store."""
    return layout.model_files(w.direction, w.model, context_kind(model_entry(config, w.model)))


def iwslt22_source(direction, folder="iwslt22"):
    """The English source of a direction's IWSLT22 test set (a file of the set's folder; `folder`
    iwslt22_valid: Table 5's validation set, in the same layout)."""
    pair = pair_of(direction)
    return str(layout.evalset(folder, pair) / iwslt22_files(pair)[0])


def formality_refs(w, folder):
    """The annotated references of an IWSLT22-layout folder, by their official names."""
    names = iwslt22_files(pair_of(w.direction))[3:]
    return [f"{register}={folder}/{name}" for register, name in zip(("formal", "informal"), names)]


# ---- the study's targets (src/mtcue/plan/: each experiment's module registers it in EXPERIMENTS) ------

# Written by the MLflow sync: the run id of each (direction, model), which the study's MLflow page reads.
MLFLOW_RUNS = str(layout.mlflow_runs(STUDY))
# Written after the tables and figures are logged into the study's MLflow run: the report's links to the UI, through
# which each table number links to its run.
MLFLOW_STUDY = str(layout.mlflow_page(STUDY))
# The MLflow UI those links go to (`make report MLFLOW_UI=...`; default: a server's own, else 127.0.0.1:5000).
MLFLOW_UI = os.environ.get("MTCUE_MLFLOW_UI", "")
# The real evaluation sets of the configured pairs (the paper's data path only).
EVAL_SETS = sources.evalset_targets(config, PAIRS) if OPENSUBTITLES else []
FEWSHOT_MODELS = FEWSHOT.models(config)  # the few-shot variants, which rules look up per job
# Every (direction, model) the study trains, with the experiments it serves (the MLflow mirror, context stores).
TRAINED = trained_models(config)


def all_targets():
    """What `all` builds: every experiment's tables, figures and other files (plan.experiments.study_targets),
    the MLflow sync's run ids, the study's MLflow page and the real evaluation sets."""
    return [*study_targets(config), MLFLOW_RUNS, MLFLOW_STUDY, *EVAL_SETS]
