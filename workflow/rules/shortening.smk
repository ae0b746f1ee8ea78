# Sequence shortening (Mąka et al. 2024, Tables 2-3): the shortening family's
# runs per context size ({model}_c{C}, plan.shortening's Shortening.models) train, translate and are scored
# (BLEU) through the ordinary rules and by the contrastive suites through contrastive.smk (every
# trained model of an en->xx direction); here the table of both and the paper's Figure 3 (how Latent Grouping
# and Selecting group the pieces of a sentence of the contrastive suite).


rule groupings:
    input:
        unpack(trained_model),
        suite=lambda w: str(
            layout.suite(w.direction, shortening.SHORTENING.groupings_suite(config, w.direction, w.model))
        ),
    output:
        layout.record("groupings", "{direction}", "{model}"),
    params:
        model_dir=MODEL_DIR,
        config_hash=cfg_hash,
        study=STUDY,
    threads: 1
    group: EVAL
    resources:
        **in_evaluation(evaluation_request("groupings")),
    log:
        layout.log("groupings", "{direction}.{model}"),
    benchmark:
        layout.benchmark("groupings", "{direction}.{model}")
    shell:
        "OMP_NUM_THREADS={threads} mtcue groupings --model-dir {params.model_dir:q} --model {wildcards.model:q} "
        "--suite {input.suite:q} --config-hash {params.config_hash:q} --study {params.study:q} "
        "--out {output:q} 2> {log:q}"


rule figure_groupings:
    localrule: True
    input:
        records=shortening.SHORTENING.inputs(config)["groupings"],
    output:
        csv=layout.figure("shortening_groupings", "csv"),
        svg=report(layout.figure("shortening_groupings", "svg"), caption="../report/shortening_groupings.rst",
                   category="Figures", labels={"name": "Mąka et al. (2024), Figure 3: groupings"}),
    log:
        layout.log("figures", "shortening_groupings"),
    benchmark:
        layout.benchmark("figures", "shortening_groupings")
    shell:
        "mtcue figure-groupings --records {input.records:q} --csv {output.csv:q} "
        "--svg {output.svg:q} 2> {log:q}"
