# Contrastive evaluation (docs/formats.md, section 8): every trained model of an en->xx direction
# force-decodes each candidate of each suite of its direction with the example's own context
# (`mtcue score-contrastive`, through mtcue.Translator); right only if the correct candidate scores
# strictly best. Suites: the synthetic corpus's own (formality, speaker/addressee gender, anaphoric
# pronouns 1-3 lines back), or on the paper's data ContraPro (EN-DE), Lopes et al. (EN-FR) and
# Voita et al. 2019's consistency sets (EN-RU).

# Which models score which suites: plan/contrastive.py (plan.experiments.suites).


rule contrastive_synthetic:
    output:
        layout.suite("{pair}", "synthetic"),
    params:
        docs=config["evaluation"]["contrastive"]["synthetic_docs"],
        per_phenomenon=config["evaluation"]["contrastive"]["synthetic_per_phenomenon"],
        seed=config["corpus"]["seed"],
    localrule: True  # a conversion of seconds
    log:
        layout.log("contrastive_synthetic", "{pair}"),
    benchmark:
        layout.benchmark("contrastive_synthetic", "{pair}")
    shell:
        "mtcue contrastive-suite --name synthetic --pair {wildcards.pair:q} --docs {params.docs:q} "
        "--per-phenomenon {params.per_phenomenon:q} --seed {params.seed:q} --out {output:q} 2> {log:q}"


rule contrastive_from_evalset:
    input:
        "results/eval/{evalset}/{pair}/test.jsonl",
    output:
        layout.suite("{pair}", "{evalset}"),
    wildcard_constraints:
        evalset="contrapro|lopes",
    localrule: True  # a conversion of seconds
    log:
        layout.log("contrastive_from_evalset", "{pair}.{evalset}"),
    benchmark:
        layout.benchmark("contrastive_from_evalset", "{pair}.{evalset}")
    shell:
        "mtcue contrastive-suite --name {wildcards.evalset:q} --input {input:q} --out {output:q} 2> {log:q}"


if OPENSUBTITLES:

    # Voita et al. 2019's official JSON, downloaded like the other evaluation sets, converted to suites.
    rule eval_voita2019:
        input:
            lambda w: sources.local(sources.evalset_sources(config, "voita2019", "en-ru")[f"voita2019_{w.vset}"]),
        output:
            layout.suite("en-ru", "voita2019_{vset}"),
        wildcard_constraints:
            vset="deixis|lex_cohesion|ellipsis_infl|ellipsis_vp",
        localrule: True  # a conversion of seconds
        log:
            layout.log("eval_voita2019", "{vset}"),
        benchmark:
            layout.benchmark("eval_voita2019", "{vset}")
        shell:
            "mtcue contrastive-suite --name voita2019_{wildcards.vset:q} --input {input:q} --out {output:q} 2> {log:q}"


rule score_contrastive:
    input:
        unpack(trained_model),
        suite=layout.suite("{direction}", "{suite}"),
    output:
        layout.record("contrastive", "{direction}", "{model}", "{suite}"),
    wildcard_constraints:
        suite=r"synthetic|contrapro|lopes|voita2019_[a-z_]+",
    params:
        model_dir=MODEL_DIR,
        batch_size=config["evaluation"]["contrastive"]["batch_size"],
        config_hash=cfg_hash,
        study=STUDY,
    threads: 1
    group: EVAL
    resources:
        **on_gpu(evaluation_request("contrastive")),
    log:
        layout.log("score_contrastive", "{direction}.{model}.{suite}"),
    benchmark:
        layout.benchmark("score_contrastive", "{direction}.{model}.{suite}")
    shell:
        "mtcue score-contrastive --model-dir {params.model_dir:q} --suite {input.suite:q} --model {wildcards.model:q} "
        "--suite-name {wildcards.suite:q} --batch-size {params.batch_size:q} --threads {threads} "
        "--config-hash {params.config_hash:q} --study {params.study:q} --out {output:q} 2> {log:q}"
