# Voita et al. (2018): the baseline, CONCAT and VOITA-CONTEXT (previous / next sentence) trained and
# scored (BLEU) in experiments.voita2018.directions through the ordinary train, translate and score
# rules; the previous-sentence model also translated with random context at test time; its context
# attention analysed on the synthetic contrastive suite (Table 7); one table of both.


rule attention_agreement:
    input:
        unpack(trained_model),
        suite=lambda w: synthetic_suite(w.direction),
    output:
        layout.record("attention", "{direction}", "{model}"),
    params:
        model_dir=MODEL_DIR,
        config_hash=cfg_hash,
        study=STUDY,
    threads: 1
    group: EVAL
    resources:
        **in_evaluation(evaluation_request("attention")),
    log:
        layout.log("attention", "{direction}.{model}"),
    benchmark:
        layout.benchmark("attention", "{direction}.{model}")
    shell:
        "OMP_NUM_THREADS={threads} mtcue attention-agreement --model-dir {params.model_dir:q} "
        "--model {wildcards.model:q} --suite {input.suite:q} --config-hash {params.config_hash:q} "
        "--study {params.study:q} --out {output:q} 2> {log:q}"
