# Validated configuration (defaults filled from the schema) and the study's target lists.
import json
import os
import shlex
import sys
from types import SimpleNamespace

from mtcue import config as cfg
from mtcue.data import sources
from mtcue.data.evalsets import iwslt22_files

# Steps run `mtcue ...` from the environment Snakemake itself runs in (e.g. .venv/bin).
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]

CONFIG_FILES = [str(f) for f in workflow.configfiles] or ["config/config.yaml"]
for config_file in workflow.configfiles:  # Snakemake keeps the last of a key written twice: refused here
    cfg.read_yaml(config_file)
config = cfg.validate(config, source=" + ".join(CONFIG_FILES))

STUDY = config["study"]
OPENSUBTITLES = config["corpus"]["source"] == "opensubtitles"  # the paper's data path (data.smk, download.smk)
DIRECTIONS = config["directions"]
PAIRS = cfg.pairs(config)
MODELS = list(cfg.all_models(config))  # the configured models and the few-shot variants
QUALITY_MODELS = cfg.experiment_models(config)["quality"]  # Tables 3 and 4
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


def model_spec(w):
    return cfg.model_spec(config, w.model, w.direction)


def spec(w):
    """The model spec as a JSON param: a changed spec reruns exactly that model and its dependants."""
    return json.dumps(model_spec(w), sort_keys=True)


def cfg_hash(w):
    from mtcue.records import config_hash

    return config_hash(model_spec(w))


def vector_stores(direction):
    """{store name: spec context} of the vector stores the models trained in `direction` read (an
    ablation's store only where the ablation runs)."""
    contexts = [cfg.model_spec(config, m, direction).get("context") for d, m in TRAINED if d == direction]
    return {cfg.store_name(c): c for c in contexts if c and "encoder" in c}


def study_vector_stores():
    """{store name: (spec context, the directions whose models read it)}."""
    stores = {}
    for direction in DIRECTIONS:
        for name, context in vector_stores(direction).items():
            stores.setdefault(name, (context, []))[1].append(direction)
    return stores


def clean_corpus(w, split):
    return f"results/clean/{cfg.pair_of(w.direction)}/{split}.jsonl"


def init_checkpoint(w):
    entry = cfg.model_entry(config, w.model)
    parent = entry.get("init_from")
    if parent:
        return {"init": f"results/models/{w.direction}/{parent}/checkpoint_best.pt"}
    outside = cfg.parent_checkpoint(entry, w.direction)  # a style model's pretrained parent
    return {"init": outside} if outside else {}


def context_store(w):
    """The store a model trains on: a vector store per encoder, TAGGING's tag store (a few-shot
    variant: its setting's masked copy, fewshot.smk), the token store (VOITA-CONTEXT, CONCAT), the
    side-information labels (the si_* models, sideinfo.smk) or the style store (style_token, style_dim); none
    for BASE."""
    entry = cfg.model_entry(config, w.model)
    if "fewshot" in entry:
        return {"store": f"results/fewshot/{w.direction}/{w.model}"}
    if entry["type"] in cfg.STYLE_TYPES:  # not context: a style level per line (style.smk)
        return {"store": f"results/style/{w.direction}"}
    kind = cfg.context_kind(entry)
    if kind == "vectors":
        return {"store": f"results/embed/{w.direction}/{cfg.store_name(model_spec(w)['context'])}"}
    if kind == "tokens":
        return {"store": f"results/tokens/{w.direction}"}
    if kind == "labels":
        return {"store": f"results/labels/{w.direction}"}
    return {"store": f"results/tags/{w.direction}"} if kind == "tags" else {}


def split_corpora(w):
    """The cleaned train, valid and test corpora of a direction's pair (a context store reads all three)."""
    return expand("results/clean/{pair}/{split}.jsonl", pair=cfg.pair_of(w.direction), split=SPLITS)


def corpus_options(w, input):
    return " ".join(f"--corpus {s}={p}" for s, p in zip(SPLITS, input))


def evaluation_records(kind):
    return expand(f"results/records/{kind}/{{direction}}/{{model}}.{{split}}.json",
                  direction=DIRECTIONS, model=QUALITY_MODELS, split=EVAL_SPLIT)


SCORE_RECORDS = evaluation_records("score")
# COMET is left out when evaluation.comet.model is null.
COMET_RECORDS = evaluation_records("comet") if config["evaluation"]["comet"]["model"] else []
TRAIN_RECORDS = expand("results/records/train/{direction}/{model}.json", direction=DIRECTIONS, model=QUALITY_MODELS)
TABLES = expand("results/tables/{table}.{ext}", table=["table1_data", "table3_models", "table4_quality", "phenomena"],
                ext=["csv", "md", "html"])
# The sequence-shortening seed's Figure 4 (figures.smk), where experiments.memory_growth names models.
MEMORY_GROWTH_PLAN = cfg.memory_growth_plan(config)
MEMORY_GROWTH = expand("results/figures/memory_growth.{ext}", ext=["csv", "svg"]) if MEMORY_GROWTH_PLAN else []
# Figures where there is something to draw: phenomena are labelled only from English, a gain
# needs a second model.
FIGURES = [
    "results/figures/training_curves.svg",
    *(["results/figures/phenomena_accuracy.svg"] if any(d.startswith("en-") for d in DIRECTIONS) else []),
    *(["results/figures/bleu_gain.svg"] if len(QUALITY_MODELS) > 1 else []),
    *MEMORY_GROWTH,
]
# Written by the MLflow sync: the run id of each (direction, model), which the tables name.
MLFLOW_RUNS = f"results/mlflow/{STUDY}.runs.json"
# Written after the tables and figures are logged into the study's MLflow run: the report's links to the UI.
MLFLOW_STUDY = f"results/mlflow/{STUDY}.html"
# The real evaluation sets of the configured pairs (the paper's data path only).
EVAL_SETS = sources.evalset_targets(config, PAIRS) if OPENSUBTITLES else []


# ---- the experiments beyond Tables 3-4 (fewshot.smk, formality.smk, ablation.smk) ----------------

FEWSHOT_MODELS = cfg.fewshot_models(config)
FEWSHOT_POINTS = cfg.fewshot_points(config)
EAMT22_RECORDS = sorted({f"results/records/eamt22/{p['direction']}/{m}.test.json" for p in FEWSHOT_POINTS
                         for m in p["records"]})
FIGURE4 = expand("results/figures/figure4_eamt22_fewshot.{ext}", ext=["csv", "png"]) if FEWSHOT_POINTS else []


def eamt22_store(w):
    """The full store of a model's kind (a few-shot variant reads its parent's: the test split keeps
    every line's attribute sentences)."""
    parent = FEWSHOT_MODELS.get(w.model, {}).get("fewshot", {}).get("parent", w.model)
    return context_store(SimpleNamespace(direction=w.direction, model=parent))


def eamt22_spec(w):
    """The model spec with the EAMT22 context columns (JSON)."""
    spec = model_spec(w)
    if "context" in spec:
        spec["context"]["columns"] = cfg.eamt22_columns(config, w.model)
    return json.dumps(spec, sort_keys=True)


def eamt22_set(split):
    """The paper's EAMT22 set of a split (valid: the official dev.json); None for the embedded default,
    whose own splits carry attribute sentences."""
    return f"results/eval/eamt22/en-pl/{split}.jsonl" if OPENSUBTITLES else None
# Pairs whose training lines are annotated with EAMT22's rules (the paper's data; data.smk).
EAMT22_PAIRS = sorted({cfg.pair_of(d) for d in config["experiments"]["fewshot"]["directions"]}) if OPENSUBTITLES else []


def eamt22_columns_option(w):
    columns = json.loads(eamt22_spec(w)).get("context", {}).get("columns")
    return f"--columns {','.join(columns)}" if columns else ""


def eamt22_inputs(w):
    """Hypotheses of the split (a model without context: its ordinary translation of that split) and a
    variant's store."""
    own = cfg.is_contextual(cfg.model_entry(config, w.model)) or OPENSUBTITLES
    hyps = f"results/hyps/{'eamt22/' if own else ''}{w.direction}/{w.model}.{w.split}.txt"
    return {"hyps": hyps, **({"fewshot": context_store(w)["store"]} if w.model in FEWSHOT_MODELS else {})}


FORMALITY_MODELS = cfg.experiment_models(config)["formality"]
PROMPTS = cfg.formality_prompts(config)
FORMALITY_RECORDS = expand("results/records/formality/{direction}/{model}.json",
                           direction=cfg.formality_directions(config), model=FORMALITY_MODELS)
# Jeong et al.'s style control (style.smk): supervised rows of Table 5 and the level sweep.
STYLE = config["experiments"]["style"]
STYLE_PAIRS = cfg.style_models(config)
STYLE_MODELS = list(dict.fromkeys(m for _d, m in STYLE_PAIRS))
STYLE_RECORDS = [f"results/records/style/{d}/{m}.json" for d, m in STYLE_PAIRS]
STYLE_FIGURE = ["results/figures/style_levels.csv", "results/figures/style_levels.svg"] if STYLE_PAIRS else []
TABLE5 = (expand("results/tables/table5_formality.{ext}", ext=["csv", "md", "html"])
          if FORMALITY_RECORDS or STYLE_RECORDS else [])


def formality_prompts(model):
    """{prompt id: text} a model is prompted with; {} for a model without context (translated once)."""
    return {p["id"]: p["text"] for p in PROMPTS} if cfg.is_contextual(cfg.model_entry(config, model)) else {}


def iwslt22_source(direction, folder="iwslt22"):
    """The English source of a direction's IWSLT22 test set (a file of the set's folder; `folder`
    iwslt22_valid: Table 5's validation set, in the same layout)."""
    pair = cfg.pair_of(direction)
    return f"results/eval/{folder}/{pair}/{iwslt22_files(pair)[0]}"


# Table 5 chooses each model's best prompt on a validation set: the embedded default's valid split
# (data.smk); the paper's configuration has none wired yet and chooses on the test set (the record says
# which, `chosen_on`). Table 6's IWSLT22 column reads the same validation translations, scored on their own
# (`formality_score_valid`), and needs no test-set translations of its rows.
FORMALITY_VALID = not OPENSUBTITLES


def formality_valid_hyps(w):
    """The prompts' validation translations, where Table 5's model has prompts and there is a validation set."""
    if FORMALITY_VALID and w.model in FORMALITY_MODELS and formality_prompts(w.model):
        return f"results/hyps/formality_valid/{w.direction}/{w.model}"
    return []


def formality_refs(w, folder):
    """The annotated references of an IWSLT22-layout folder, by their official names."""
    names = iwslt22_files(cfg.pair_of(w.direction))[3:]
    return " ".join(f"{register}={folder}/{name}" for register, name in zip(("formal", "informal"), names))


def formality_valid_args(w, input):
    """score-formality's validation options, or nothing."""
    if not input.valid_hyps:
        return ""
    hyps = " ".join(f"{p}={input.valid_hyps}/{p}.txt" for p in formality_prompts(w.model))
    return f"--valid-hyps {hyps} --valid-references {formality_refs(w, input.valid_refs)}"


def trained_model(w):
    """What `mtcue translate-prompts` reads of a trained model (translate_text.TrainedModel)."""
    files = {"checkpoint": f"results/models/{w.direction}/{w.model}/checkpoint_best.pt",
             "record": f"results/records/train/{w.direction}/{w.model}.json",
             "spm": f"results/spm/{cfg.pair_of(w.direction)}.model", "data": f"results/bin/{w.direction}"}
    kind = cfg.context_kind(cfg.model_entry(config, w.model))
    # A tag store of TAGGING's (also for a few-shot variant: the full store) or of the side-information labels.
    store = {"tags": f"results/tags/{w.direction}", "labels": f"results/labels/{w.direction}"}.get(kind)
    return {**files, **({"tags": store} if store else {})}


ABLATION = config["experiments"]["ablation"]
ABLATION_SEEDS = cfg.ablation_seeds(config)  # {row model: its runs, one per seed}
ABLATION_RUNS = cfg.ablation_runs(config)
ABLATION_SCORES = expand(
    "results/records/score/{direction}/{model}.{split}.json",
    direction=ABLATION["directions"], model=ABLATION_RUNS, split=ABLATION["split"],
)
ABLATION_COMETS = (
    expand("results/records/comet/{direction}/{model}.{split}.json", direction=ABLATION["directions"],
           model=ABLATION_RUNS, split=ABLATION["split"])
    if config["evaluation"]["comet"]["model"] else []
)
ABLATION_ZEROSHOT = cfg.ablation_zeroshot(config)
ABLATION_TABLES = (
    expand("results/tables/table6_ablation.{ext}", ext=["csv", "md", "html"])
    if ABLATION["directions"] and ABLATION["rows"] else []
)


# Table 6's zero-shot columns read the validation sets (the paper: "on the validation sets in all cases"):
# EAMT22's dev.json and IWSLT22's validation set (the demo: its valid split; the paper's configuration has
# no IWSLT22 validation set wired and reads the test set's records, docs/deviations.md).
FORMALITY_ZEROSHOT_SPLIT = ".valid" if FORMALITY_VALID else ""
ZEROSHOT_RECORD = {"eamt22": "results/records/eamt22/{direction}/{model}.valid.json",
                   "formality": f"results/records/formality/{{direction}}/{{model}}{FORMALITY_ZEROSHOT_SPLIT}.json"}


def zeroshot_records(kind):
    task = ABLATION_ZEROSHOT[kind]
    if task["unavailable"]:
        return []
    return expand(ZEROSHOT_RECORD[kind], direction=task["direction"], model=ABLATION_RUNS)


def zeroshot_options(kind):
    task = ABLATION_ZEROSHOT[kind]
    reason = f" --unavailable {kind}={shlex.quote(task['unavailable'])}" if task["unavailable"] else ""
    return f"--zeroshot-direction {kind}={task['direction']}{reason}"


# ---- Voita et al. 2018 (voita2018.smk): Tables 1 and 7 -------------------------------------------

VOITA2018 = config["experiments"]["voita2018"]
VOITA2018_PAIRS = cfg.voita2018_models(config)
VOITA2018_SCORES = sorted({f"results/records/score/{d}/{m}.{EVAL_SPLIT}.json" for d, m in VOITA2018_PAIRS})
VOITA2018_RANDOM = sorted({f"results/records/score_random_context/{d}/{m}.{EVAL_SPLIT}.json"
                           for d, m in VOITA2018_PAIRS if m in VOITA2018["random_test"]})
# Table 7: the previous-sentence VOITA-CONTEXT models of en->xx directions (the suite's pronouns are English).
VOITA2018_ATTENTION = sorted(
    f"results/records/attention/{d}/{m}.json" for d, m in VOITA2018_PAIRS
    if d.startswith("en-") and cfg.model_entry(config, m)["type"] == "voita_context"
    and cfg.model_entry(config, m).get("context_slot", "prev1") == "prev1"
)
VOITA2018_TABLE = expand("results/tables/voita2018.{ext}", ext=["csv", "md", "html"]) if VOITA2018_PAIRS else []


def synthetic_suite(direction):
    return f"results/eval/contrastive/{direction}/synthetic.jsonl"


def attention_unavailable():
    """Why Table 7 cannot be measured in this workflow ("" when it can): the synthetic contrastive suite
    (with its antecedents) comes from the demo's generator, through the contrastive rules (or is there)."""
    if OPENSUBTITLES:
        return "needs pronoun antecedents (the seed: CoreNLP on OpenSubtitles); only the synthetic suite has them"
    made = any(str(f).startswith("results/eval/contrastive/") for r in workflow.rules for f in r.output)
    there = all(os.path.exists(synthetic_suite(p.split("/")[3])) for p in VOITA2018_ATTENTION)
    return "" if made or there else "no rule in this workflow writes the synthetic contrastive suite"


def voita2018_attention_records(w):
    return [] if attention_unavailable() else VOITA2018_ATTENTION


# Context at test time only (its training spec says otherwise; the ContextDataset's --random-context):
# another test sentence's line or row, none at all, or labels to be predicted (si_trg_prefix).
TEST_CONTEXT = {"random_context": "shuffle", "no_context": "drop", "predicted_labels": "predict"}


def test_context_spec(w):
    """The model's spec with the test-time context `w.test_context` (JSON)."""
    spec = model_spec(w)
    spec["context"]["random"] = TEST_CONTEXT[w.test_context]
    return json.dumps(spec, sort_keys=True)


# ---- sequence shortening (shortening.smk): the seed's Tables 2-3 -------------------------------------

SHORTENING_RUNS = cfg.shortening_runs(config)
SHORTENING_SCORES = sorted({f"results/records/score/{d}/{m}.{EVAL_SPLIT}.json" for d, m in SHORTENING_RUNS})
SHORTENING_TABLE = expand("results/tables/shortening.{ext}", ext=["csv", "md", "html"]) if SHORTENING_RUNS else []


def shortening_contrastive(w):
    """The contrastive records of the runs: the direction's first suite (the synthetic one; on the paper's
    data ContraPro in en-de, Lopes et al. in en-fr), the seed's test set."""
    return sorted(f"results/records/contrastive/{d}/{m}.{CONTRASTIVE_SUITES[d][0]}.json"
                  for d, m in SHORTENING_RUNS if CONTRASTIVE_SUITES.get(d))


# ---- Hoang et al. 2018 (sideinfo.smk): Table 3 -------------------------------------------------
from mtcue.context.side_labels import SIDE_COLUMNS


SIDE_INFORMATION = config["experiments"]["side_information"]
SIDE_INFORMATION_PAIRS = cfg.side_information_models(config)
SIDE_INFORMATION_SCORES = sorted({f"results/records/score/{d}/{m}.{EVAL_SPLIT}.json"
                                  for d, m in SIDE_INFORMATION_PAIRS})
SIDE_INFORMATION_NO_CONTEXT = sorted({f"results/records/score_no_context/{d}/{m}.{EVAL_SPLIT}.json"
                                      for d, m in SIDE_INFORMATION_PAIRS if m in SIDE_INFORMATION["no_labels"]})
SIDE_INFORMATION_PREDICTED = sorted({f"results/records/score_predicted_labels/{d}/{m}.{EVAL_SPLIT}.json"
                                     for d, m in SIDE_INFORMATION_PAIRS
                                     if cfg.model_entry(config, m)["type"] == "si_trg_prefix"})
SIDE_INFORMATION_TABLE = (expand("results/tables/side_information.{ext}", ext=["csv", "md", "html"])
                          if SIDE_INFORMATION_PAIRS else [])


# ---- the MLflow mirror (report.smk): one run per trained model, with every record of that model ---

TRAINED = cfg.trained_models(config)

# Contrastive evaluation (contrastive.smk): the suites of each en->xx direction (the synthetic one, or on
# the paper's data the configured real ones), scored by every trained model of the direction but the
# repeats with other seeds (`seed_of`: Table 6's and Figure 4's spread), which would double the jobs, and
# the style-control models (scored at their neutral level they would say little about context).
CONTRASTIVE = config["evaluation"]["contrastive"]
CONTRASTIVE_SUITES = {d: CONTRASTIVE["suites"].get(d, []) if OPENSUBTITLES else ["synthetic"]
                      for d in DIRECTIONS if d.startswith("en-")}
CONTRASTIVE_RECORDS = [f"results/records/contrastive/{d}/{m}.{s}.json" for d, m in TRAINED
                       if "seed_of" not in cfg.model_entry(config, m) and m not in STYLE_MODELS
                       for s in CONTRASTIVE_SUITES.get(d, [])]

# Context usage (context_usage.smk): the same models on the evaluation split's references, but the few-shot
# variants (they read EAMT22's attribute sentences, which the split has not) and, of the models without
# context, all but BASE (its row is the 0 every such model gives).
CONTEXT_USAGE_RECORDS = [f"results/records/context_usage/{d}/{m}.{EVAL_SPLIT}.json" for d, m in TRAINED
                         if not {"seed_of", "fewshot"} & set(cfg.model_entry(config, m)) and m not in STYLE_MODELS
                         and (m == "base" or cfg.context_kind(cfg.model_entry(config, m)) is not None)]

SIDE_INFORMATION_CONTRASTIVE = [f"results/records/contrastive/{d}/{m}.{s}.json" for d, m in SIDE_INFORMATION_PAIRS
                                for s in CONTRASTIVE_SUITES.get(d, [])]

MODEL_RECORDS = sorted({
    *(f"results/records/train/{d}/{m}.json" for d, m in TRAINED),
    *SCORE_RECORDS, *COMET_RECORDS, *ABLATION_SCORES, *ABLATION_COMETS,
    *(f"results/records/score/{d}/{m}.{EVAL_SPLIT}.json" for d, m in cfg.voita2018_models(config)),
    *SHORTENING_SCORES,
    *SIDE_INFORMATION_SCORES,
    *FORMALITY_RECORDS, *EAMT22_RECORDS,
    *zeroshot_records("formality"), *zeroshot_records("eamt22"), *CONTRASTIVE_RECORDS, *STYLE_RECORDS,
    *CONTEXT_USAGE_RECORDS,
})
