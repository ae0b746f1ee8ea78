# Input and parameter functions of the rules, by the rule file that uses them (Snakemake's lint keeps
# functions out of rule files); common.smk holds the validated config, the targets and the helpers every
# stage uses.

# ---- cluster requests (every rule that runs on a cluster node) ------------------------------------

# What a job asks a cluster for (runtime, mem_mb; a training also its CPUs), from the study's own figures
# (plan/resources.py), and where it goes (the config's slurm keys): the SLURM profile names no rule. Local runs
# read only `threads` (the same as before). A trained model's evaluation is one cluster job (group EVAL: its
# components joined by the profile's group-components), on the GPU partition even for its CPU steps (a group
# job has one partition); a pair's preparation another (group PREPARE: one connected part of the DAG per
# pair), on the CPU partition.
STEP = {kind: plan_resources.step(config, kind) for kind in plan_resources.PAPER_STEPS}
SITE = plan_resources.site(config)
EVAL = "eval_{direction}_{model}"
PREPARE = "prepare"
_TRAINING_REQUESTS = {}
_EVALUATION_REQUESTS = {}


def on_gpu(request):
    """A GPU step: one GPU, the GPU partition. `gpu_step` (the profile's `resources: gpu_step: 1`, per job) runs
    the GPU steps of one evaluation job one after another, so that the job asks one GPU."""
    return {"gpu": 1, "gpu_step": 1, **request, **SITE["gpu"]}


def on_cpu(request):
    """A CPU-only job or preparation step: the CPU partition."""
    return {**request, **SITE["cpu"]}


def in_evaluation(request):
    """A CPU step of an evaluation job: the job's (GPU) partition."""
    return {**request, **SITE["gpu"]}


def evaluation_request(kind):
    """An evaluation step's runtime and mem_mb (plan_resources.evaluation's kinds), per model and direction."""

    def request(w):
        key = (kind, w.model, w.direction)
        if key not in _EVALUATION_REQUESTS:
            _EVALUATION_REQUESTS[key] = plan_resources.evaluation(config, kind, w.model, w.direction)
        return _EVALUATION_REQUESTS[key]

    return {"runtime": lambda w: request(w)["runtime"], "mem_mb": lambda w: request(w)["mem_mb"]}


def training_of(direction, model):
    """One training's {runtime, mem_mb, threads, jobs} (computed once per training)."""
    if (direction, model) not in _TRAINING_REQUESTS:
        _TRAINING_REQUESTS[direction, model] = plan_resources.training(config, model, direction)
    return _TRAINING_REQUESTS[direction, model]


def training_request(w):
    return training_of(w.direction, w.model)


def training_gpus():
    """The GPUs a training asks: 1, or what `--set-resources train:gpu=N` (or the profile's set-resources) gives.
    Read here because a rule's threads cannot read its resources, and its CPUs are per GPU."""
    train = workflow.resource_settings._parsed_overwrite_resources.get("train")
    return int(train.get("gpu").value or 1) if train else 1


def refuse_grouped_site_overrides():
    """A partition or account given to one member of a job group (`--set-resources translate=...`, slurm_partition
    or slurm_account) would differ from the group's others, and SLURM grants one job one partition: refused,
    naming the config keys that set it for every job."""
    overrides = workflow.resource_settings._parsed_overwrite_resources
    for step in workflow.rules:  # not named rule: Snakemake's lint reads that word and a colon as a rule here
        given = [k for k in ("slurm_partition", "slurm_account") if k in overrides.get(step.name, {})]
        # the rule's own group: Rule.group reads the executor, not known yet while the Snakefile is read
        if given and step._group:
            raise ValueError(
                f"--set-resources {step.name}:{given[0]}: rule {step.name} runs in the job group '{step._group}' with "
                "other rules, and a job has one partition and account. Set them in the config for every job "
                "instead: slurm.gpu_partition (GPU jobs and evaluation groups), slurm.cpu_partition (CPU jobs and "
                "preparation groups), slurm.account (docs/paper-scale.md, \"The cluster's own limits\")")


# A training longer than the site's longest job (slurm.max_minutes) runs as several jobs, each resuming from
# checkpoint_last.pt: the train rule's retries are the most jobs a training of the study needs, less one.
TRAIN_RETRIES = max((training_of(d, m)["jobs"] for d, m in TRAINED), default=1) - 1


# ---- translation with test-time context (evaluate.smk, voita2018.smk, sideinfo.smk) --------------

# Context at test time only (plan/evaluation.py): {setting: the ContextDataset's --random-context}.
TEST_CONTEXT = plan_evaluation.TEST_CONTEXT


def test_context_spec(w):
    """The model's spec with the test-time context `w.test_context` (JSON)."""
    spec = model_spec(w)
    spec["context"]["random"] = TEST_CONTEXT[w.test_context]
    return json.dumps(spec, sort_keys=True)


def store_option(w, input):
    return ["--context-dir", input.store] if "store" in input.keys() else []


# ---- training (train.smk) ------------------------------------------------------------------------

def init_checkpoint(w):
    entry = model_entry(config, w.model)
    parent = entry.get("init_from")
    if parent:
        return {"init": layout.checkpoint(w.direction, parent)}
    outside = parent_checkpoint(entry, w.direction)  # a style model's pretrained parent
    return {"init": outside} if outside else {}


# ---- IWSLT22 sets (data.smk) ---------------------------------------------------------------------

def iwslt22_inputs(split):
    """What an IWSLT22 set of `split` (test, valid) is made from: on the paper's data the official files of the
    pair (the validation set's: IWSLT22's training data), else the pair's cleaned split."""
    if not OPENSUBTITLES:
        return layout.clean_corpus("{pair}", split)
    name = "iwslt22" if split == "test" else "iwslt22_valid"
    return lambda w: [sources.local(s) for s in sources.evalset_sources(config, name, w.pair).values()]


# ---- EAMT22 few-shot (fewshot.smk) ---------------------------------------------------------------

def eamt22_store(w):
    """The full store of a model's kind (a few-shot variant reads its parent's: the test split keeps
    every line's attribute sentences)."""
    parent = FEWSHOT_MODELS.get(w.model, {}).get("fewshot", {}).get("parent", w.model)
    return context_store(w, parent)


def eamt22_spec(w):
    """The model spec with the EAMT22 context columns (JSON)."""
    spec = model_spec(w)
    if "context" in spec:
        spec["context"]["columns"] = fewshot.eamt22_columns(config, model_entry(config, w.model))
    return json.dumps(spec, sort_keys=True)


def eamt22_set(split):
    """The paper's EAMT22 set of a split (valid: the official dev.json); None for the embedded default,
    whose own splits carry attribute sentences."""
    return f"results/eval/eamt22/en-pl/{split}.jsonl" if OPENSUBTITLES else None


def eamt22_columns_option(w):
    columns = json.loads(eamt22_spec(w)).get("context", {}).get("columns")
    return ["--columns", ",".join(columns)] if columns else []


def eamt22_inputs(w):
    """Hypotheses of the split (a model without context: its ordinary translation of that split) and a
    variant's store."""
    own = is_contextual(model_entry(config, w.model)) or OPENSUBTITLES
    hyps = str(layout.hyps(w.direction, w.model, w.split, "eamt22" if own else None))
    return {"hyps": hyps, **({"fewshot": model_store(w.direction, w.model)} if w.model in FEWSHOT_MODELS else {})}


# ---- IWSLT22 formality (formality.smk) -----------------------------------------------------------

def formality_valid_hyps(w):
    """The prompts' validation translations, where Table 5's model has prompts and there is a validation set."""
    if formality.valid_prompts(config, w.direction, w.model):
        return str(layout.hyps_dir("formality_valid", w.direction, w.model))
    return []


def formality_valid_args(w, input):
    """score-formality's validation options, or nothing."""
    if not input.valid_hyps:
        return []
    hyps = [f"{p}={input.valid_hyps}/{p}.txt" for p in formality.prompts_of(config, w.model)]
    return ["--valid-hyps", *hyps, "--valid-references", *formality_refs(w, input.valid_refs)]


# ---- Voita et al. 2018 (voita2018.smk) -----------------------------------------------------------

def synthetic_suite(direction):
    return str(layout.suite(direction, "synthetic"))
