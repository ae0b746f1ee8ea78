# Contrastive evaluation (docs/formats.md, section 8): the suites, written here. Every trained model of an en->xx
# direction force-decodes each candidate of each suite of its direction with the example's own context
# (`mtcue score-contrastive`, through mtcue.Translator; a step of the model's evaluation job, evaluate.smk); right
# only if the correct candidate scores strictly best. Suites: the synthetic corpus's own (formality, speaker/addressee gender, anaphoric
# pronouns 1-3 lines back), or on the paper's data ContraPro (EN-DE), Lopes et al. (EN-FR) and
# Voita et al. 2019's consistency sets (EN-RU).

# Which models score which suites: experiments/contrastive/plan.py (plan.experiments.suites).


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

