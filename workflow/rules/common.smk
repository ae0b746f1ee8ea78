# Validated configuration (defaults filled from the schema) and the study's target lists.
import json
import os
import sys

from mtcue import config as cfg

# Steps run `mtcue ...` from the environment Snakemake itself runs in (e.g. .venv/bin).
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]

config = cfg.validate(config, source="Snakemake config")

STUDY = config["study"]
DIRECTIONS = config["directions"]
PAIRS = cfg.pairs(config)
MODELS = list(config["models"])
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


def spec(model):
    """The model spec as a JSON param: a changed spec reruns exactly that model and its dependants."""
    return json.dumps(cfg.model_spec(config, model), sort_keys=True)


def cfg_hash(model):
    from mtcue.records import config_hash

    return config_hash(cfg.model_spec(config, model))


def is_contextual(model):
    return cfg.is_contextual(config["models"][model])


def clean_corpus(w, split):
    return f"results/clean/{cfg.pair_of(w.direction)}/{split}.jsonl"


def init_checkpoint(w):
    parent = config["models"][w.model].get("init_from")
    return {"init": f"results/models/{w.direction}/{parent}/checkpoint_best.pt"} if parent else {}


def context_store(w):
    return {"store": f"results/embed/{w.direction}"} if is_contextual(w.model) else {}


SCORE_RECORDS = expand(
    "results/records/score/{direction}/{model}.{split}.json",
    direction=DIRECTIONS, model=MODELS, split=EVAL_SPLIT,
)
TRAIN_RECORDS = expand("results/records/train/{direction}/{model}.json", direction=DIRECTIONS, model=MODELS)
TABLES = expand("results/tables/{table}.{ext}", table=["table4_quality", "phenomena"], ext=["csv", "md"])
MLFLOW_SYNC = f"results/mlflow/{STUDY}.synced"
