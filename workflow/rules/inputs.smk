# Input and parameter functions of the rules, by the rule file that uses them (Snakemake's lint keeps
# functions out of rule files); common.smk holds the validated config, the targets and the helpers every
# stage uses.

# ---- cluster requests (every rule that runs on a cluster node) ------------------------------------

# What a job asks a cluster for (runtime, mem_mb; a training also its CPUs), from the study's own figures
# (plan/resources.py), and where it goes (the config's slurm keys): the SLURM profile names no rule. Local runs
# read only `threads` (the same as before). A trained model's evaluation is one job (evaluate.smk: `mtcue evaluate`,
# its steps one after another; group EVAL names its cluster job), on the GPU partition even for its CPU steps,
# asking its steps' summed runtime and their most memory; a pair's preparation another (group PREPARE: one
# connected part of the DAG per pair), on the CPU partition.
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


def evaluation_job_request(evaluation):
    """A trained model's evaluation job's runtime (its steps' summed) and mem_mb (their most), per model and
    direction (plan_resources.evaluation_job)."""

    def request(w):
        key = (w.model, w.direction)
        if key not in _EVALUATION_REQUESTS:
            _EVALUATION_REQUESTS[key] = plan_resources.evaluation_job(config, evaluation, w.model, w.direction)
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


# ---- translation with test-time context (a step of evaluate.smk) ---------------------------------

# Context at test time only (plan/evaluation.py): {setting: the ContextDataset's --random-context}.
TEST_CONTEXT = plan_evaluation.TEST_CONTEXT


def test_context_spec(w, setting):
    """The model's spec with the test-time context `setting` (TEST_CONTEXT; JSON)."""
    spec = model_spec(w)
    spec["context"]["random"] = TEST_CONTEXT[setting]
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


# ---- EAMT22 few-shot (experiments/fewshot/rules.smk) ---------------------------------------------------------------

def eamt22_store(w):
    """The full store of a model's kind (a few-shot variant reads its parent's: the test split keeps
    every line's attribute sentences)."""
    parent = FEWSHOT_MODELS.get(w.model, {}).get("fewshot", {}).get("parent", w.model)
    return context_store(w, parent)


def eamt22_spec(w):
    """The model spec with the EAMT22 context columns (JSON)."""
    spec = model_spec(w)
    if "context" in spec:
        spec["context"]["columns"] = FEWSHOT.eamt22_columns(config, model_entry(config, w.model))
    return json.dumps(spec, sort_keys=True)


def eamt22_set(split):
    """The paper's EAMT22 set of a split (valid: the official dev.json); None for the embedded default,
    whose own splits carry attribute sentences."""
    return f"results/eval/eamt22/en-pl/{split}.jsonl" if OPENSUBTITLES else None


def eamt22_columns_option(w):
    columns = json.loads(eamt22_spec(w)).get("context", {}).get("columns")
    return ["--columns", ",".join(columns)] if columns else []


def eamt22_inputs(w, split):
    """Hypotheses of the split (a model without context: its ordinary translation of that split) and a
    variant's store."""
    own = is_contextual(model_entry(config, w.model)) or OPENSUBTITLES
    hyps = str(layout.hyps(w.direction, w.model, split, "eamt22" if own else None))
    return {"hyps": hyps, **({"fewshot": model_store(w.direction, w.model)} if w.model in FEWSHOT_MODELS else {})}


# ---- IWSLT22 formality (steps of evaluate.smk) ---------------------------------------------------

def formality_valid_hyps(w):
    """The prompts' validation translations, where Table 5's model has prompts and there is a validation set."""
    if FORMALITY.valid_prompts(config, w.direction, w.model):
        return str(layout.hyps_dir("formality_valid", w.direction, w.model))
    return []


def formality_valid_args(w, valid_hyps, valid_refs):
    """score-formality's validation options, or nothing."""
    if not valid_hyps:
        return []
    hyps = [f"{p}={valid_hyps}/{p}.txt" for p in FORMALITY.prompts_of(config, w.model)]
    return ["--valid-hyps", *hyps, "--valid-references", *formality_refs(w, valid_refs)]


# ---- Voita et al. 2018 (a step of evaluate.smk) --------------------------------------------------

def synthetic_suite(direction):
    return str(layout.suite(direction, "synthetic"))


# ---- a trained model's evaluation, one job (evaluate.smk; plan/evaluation.py) ---------------------

# The steps of an evaluation: each task is the command line the step had as a rule of its own (`mtcue translate ...`,
# `mtcue score ...`), with the files it reads. The job reads every task's inputs that no earlier task writes.
COMET_REQUIRED = ["--required"] if config["evaluation"]["comet"]["required"] else []


def translation_task(w, setting, split):
    """(inputs, command line) of one translation of the model (plan.evaluation's (setting, split))."""
    d, m, generation = w.direction, w.model, json.dumps(config["generation"])
    out = str(plan_evaluation.translation_path((setting, split), d, m))
    if split is None:  # an evaluation set's folder of translations: a prompt (formality) or style level each
        folder = {"formality": "iwslt22", "formality_valid": "iwslt22_valid", "style": "iwslt22"}[setting]
        inputs = {**trained_model(w), "testset": str(layout.evalset(folder, pair_of(d)))}
        what = (["translate-levels", "--model-dir", str(layout.model_dir(d, m)), "--source", iwslt22_source(d),
                 "--levels", ",".join(map(str, STYLE.config(config)["levels"]))] if setting == "style" else
                ["translate-prompts", "--model-dir", str(layout.model_dir(d, m)), "--source", iwslt22_source(d, folder),
                 "--prompts", json.dumps(FORMALITY.prompts_of(config, m))])
        return inputs, [*what, "--generation", generation, "--threads", "1", "--out", out]
    if setting == "eamt22" and OPENSUBTITLES:  # the official EAMT22 set, each row with its attribute sentences
        inputs = {**trained_model(w), "test": eamt22_set(split)}
        return inputs, ["translate-corpus", "--model-dir", str(layout.model_dir(d, m)), "--corpus", eamt22_set(split),
                        *eamt22_columns_option(w), "--generation", generation, "--threads", "1", "--out", out]
    store = eamt22_store(w) if setting == "eamt22" else context_store(w)
    given = eamt22_spec(w) if setting == "eamt22" else test_context_spec(w, setting) if setting else spec(w)
    inputs = {**store, "model": str(layout.checkpoint(d, m)), "data": str(layout.bin_dir(d)),
              "corpus": str(clean_corpus(w, split))}
    return inputs, ["translate", "--spec", given, "--direction", d, "--data-bin", inputs["data"],
                    *(["--context-dir", str(store["store"])] if store else []), "--checkpoint", inputs["model"],
                    "--split", split, "--corpus", inputs["corpus"], "--generation", generation, "--threads", "1",
                    "--out", out]


def record_task(w, kind, of):
    """(inputs, command line) of one record of the model (plan.evaluation's (kind, of))."""
    d, m = w.direction, w.model
    out, provenance = str(layout.record(kind, d, m, of)), ["--study", STUDY, "--config-hash", cfg_hash(w)]
    model_dir = str(layout.model_dir(d, m))
    if kind in ("score", "comet") or kind.startswith("score_"):
        setting = kind[len("score_"):] if kind.startswith("score_") else None
        inputs = {"hyps": str(layout.hyps(d, m, of, setting)), "corpus": str(clean_corpus(w, of))}
        args = ["--hyps", inputs["hyps"], "--corpus", inputs["corpus"], "--direction", d, "--model", m, "--split", of,
                "--study", STUDY, "--config-hash", cfg_hash(w)]
        if kind != "comet":
            return inputs, ["score", *args, "--out", out]
        comet = config["evaluation"]["comet"]
        inputs["availability"] = rules.comet_model.output[0]
        return inputs, ["comet", *args, "--comet-model", comet["model"], "--batch-size", str(comet["batch_size"]),
                        *COMET_REQUIRED, "--availability", inputs["availability"], "--out", out]
    batch = str(config["evaluation"]["contrastive"]["batch_size"])
    if kind == "context_usage":
        inputs = {**trained_model(w), "corpus": str(clean_corpus(w, of))}
        return inputs, ["context-usage", "--model-dir", model_dir, "--corpus", inputs["corpus"], "--model", m,
                        "--split", of, "--batch-size", batch, "--threads", "1", *provenance[2:], *provenance[:2],
                        "--out", out]
    if kind == "contrastive":
        inputs = {**trained_model(w), "suite": str(layout.suite(d, of))}
        return inputs, ["score-contrastive", "--model-dir", model_dir, "--suite", inputs["suite"], "--model", m,
                        "--suite-name", of, "--batch-size", batch, "--threads", "1", *provenance[2:], *provenance[:2],
                        "--out", out]
    if kind in ("attention", "groupings"):
        suite = synthetic_suite(d) if kind == "attention" else str(
            layout.suite(d, SHORTENING.groupings_suite(config, d, m)))
        return {**trained_model(w), "suite": suite}, [
            "attention-agreement" if kind == "attention" else "groupings", "--model-dir", model_dir, "--model", m,
            "--suite", suite, *provenance[2:], *provenance[:2], "--out", out]
    if kind == "eamt22":
        inputs = {**eamt22_inputs(w, of), "corpus": eamt22_set(of) or str(clean_corpus(w, of))}
        fewshot_store = ["--fewshot-store", str(inputs["fewshot"])] if "fewshot" in inputs else []
        return inputs, ["score-eamt22", "--hyps", inputs["hyps"], "--corpus", inputs["corpus"], "--direction", d,
                        "--model", m, "--split", of, *provenance, "--detector",
                        FEWSHOT.config(config)["detector"], "--spec", eamt22_spec(w), *fewshot_store,
                        "--out", out]
    hyps_dir = str(layout.hyps_dir(plan_evaluation.FOLDER_TRANSLATIONS[kind, of], d, m))
    folder = "iwslt22_valid" if of == "valid" else "iwslt22"
    refs = str(layout.evalset(folder, pair_of(d)))
    common = ["--direction", d, "--model", m, *provenance, "--out", out]
    if kind == "style":
        levels = STYLE.config(config)["levels"]
        meaning = [f"{refs}/{n}" for n in iwslt22_files(pair_of(d))[1:3]]
        return {"hyps": hyps_dir, "refs": refs}, [
            "score-formality", "--style-levels", "--hyps", *(f"level{n}={hyps_dir}/level{n}.txt" for n in levels),
            "--references", *formality_refs(w, refs), "--meaning-references", *meaning, *common]
    # formality: Table 5 (test; its best prompt chosen on the validation translations) or Table 6's column (valid)
    inputs = {"hyps": hyps_dir, "refs": refs, "train": str(clean_corpus(w, "train"))}
    valid = []
    if of is None and formality_valid_hyps(w):
        inputs |= {"valid_hyps": formality_valid_hyps(w),
                   "valid_refs": str(layout.evalset("iwslt22_valid", pair_of(d)))}
        valid = formality_valid_args(w, inputs["valid_hyps"], inputs["valid_refs"])
    prompts = FORMALITY.prompts_of(config, m) or ["none"]
    return inputs, ["score-formality", "--hyps", *(f"{p}={hyps_dir}/{p}.txt" for p in prompts),
                    "--prompts", json.dumps(FORMALITY.prompts(config)), "--references",
                    *formality_refs(w, refs), *valid, "--train-corpus", inputs["train"], "--split", of or "test",
                    *common]


def evaluation_steps(evaluation):
    """The (inputs, command line) of each step of a profile's evaluation, translations first, given a job's
    wildcards."""
    return lambda w: [*(translation_task(w, *t) for t in evaluation.translations),
                      *(record_task(w, *r) for r in evaluation.records)]


def evaluation_inputs(evaluation):
    """What a profile's evaluation job reads: every step's inputs but the files the job writes itself."""
    steps = evaluation_steps(evaluation)

    def inputs(w):
        own = set(evaluation.outputs(w.direction, w.model))
        files = {}
        for i, (step_inputs, _) in enumerate(steps(w)):
            for name, path in step_inputs.items():
                if str(path) not in own:
                    files.setdefault(str(path), f"{name}{i}" if name in files.values() else name)
        return {name: path for path, name in files.items()}

    return inputs


def evaluation_tasks(evaluation):
    """The job's tasks for `mtcue evaluate --tasks` (JSON)."""
    steps = evaluation_steps(evaluation)
    return lambda w: json.dumps([argv for _, argv in steps(w)])
