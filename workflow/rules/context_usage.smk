# Context usage (CXMI, Fernandes et al. 2021): every trained model of the study but the repeats with
# other seeds and the style-control models (as contrastive.smk) scores the evaluation split's references
# twice, with its context and without (`mtcue context-usage`, through mtcue.Translator's forced
# decoding); BASE, which reads none, is the row of exactly 0. One table says which systems read theirs.

# Which models: plan/context_usage.py.


rule context_usage:
    input:
        unpack(trained_model),
        corpus=lambda w: clean_corpus(w, w.split),
    output:
        layout.record("context_usage", "{direction}", "{model}", "{split}"),
    params:
        model_dir=MODEL_DIR,
        batch_size=config["evaluation"]["contrastive"]["batch_size"],
        config_hash=cfg_hash,
        study=STUDY,
    threads: 1
    group: EVAL
    resources:
        **on_gpu(evaluation_request("context")),
    log:
        layout.log("context_usage", "{direction}.{model}.{split}"),
    benchmark:
        layout.benchmark("context_usage", "{direction}.{model}.{split}")
    shell:
        "mtcue context-usage --model-dir {params.model_dir:q} --corpus {input.corpus:q} --model {wildcards.model:q} "
        "--split {wildcards.split:q} --batch-size {params.batch_size:q} --threads {threads} "
        "--config-hash {params.config_hash:q} --study {params.study:q} --out {output:q} 2> {log:q}"
