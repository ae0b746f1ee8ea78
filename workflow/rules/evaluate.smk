# Translation of the evaluation split with beam search, then scoring into JSON records: BLEU and
# phenomena (score), COMET (comet).


rule translate:
    input:
        unpack(context_store),
        model=layout.checkpoint("{direction}", "{model}"),
        data=layout.bin_dir("{direction}"),
        corpus=lambda w: clean_corpus(w, w.split),
    output:
        layout.hyps("{direction}", "{model}", "{split}"),
    params:
        spec=spec,
        generation=json.dumps(config["generation"]),
        store=store_option,
    threads: 1
    group: EVAL
    resources:
        **on_gpu(evaluation_request("translate")),
    log:
        layout.log("translate", "{direction}.{model}.{split}"),
    benchmark:
        layout.benchmark("translate", "{direction}.{model}.{split}")
    shell:
        "mtcue translate --spec {params.spec:q} --direction {wildcards.direction:q} --data-bin {input.data:q} "
        "{params.store:q} --checkpoint {input.model:q} --split {wildcards.split:q} --corpus {input.corpus:q} "
        "--generation {params.generation:q} --threads {threads} --out {output:q} 2> {log:q}"


rule score:
    input:
        hyps=layout.hyps("{direction}", "{model}", "{split}"),
        corpus=lambda w: clean_corpus(w, w.split),
    output:
        layout.record("score", "{direction}", "{model}", "{split}"),
    params:
        config_hash=cfg_hash,
        study=STUDY,
    group: EVAL
    resources:
        **in_evaluation(STEP["score"]),
    log:
        layout.log("score", "{direction}.{model}.{split}"),
    benchmark:
        layout.benchmark("score", "{direction}.{model}.{split}"),
    shell:
        "mtcue score --hyps {input.hyps:q} --corpus {input.corpus:q} --direction {wildcards.direction:q} "
        "--model {wildcards.model:q} --split {wildcards.split:q} --study {params.study:q} "
        "--config-hash {params.config_hash:q} --out {output:q} 2> {log:q}"


# A model translated (and scored) with other context than its own at test time only (TEST_CONTEXT, inputs.smk):
# `random_context`, another test sentence's (Voita et al.'s Table 1 row, voita2018.smk), `no_context`, none at
# all, or `predicted_labels` (Hoang et al.'s "w/o side info" and target-prefix rows, sideinfo.smk).
use rule translate as translate_test_context with:
    output:
        layout.hyps("{direction}", "{model}", "{split}", "{test_context}"),
    wildcard_constraints:
        test_context="|".join(TEST_CONTEXT),
    params:
        spec=test_context_spec,
        generation=json.dumps(config["generation"]),
        store=store_option,
    log:
        layout.log("translate_{test_context}", "{direction}.{model}.{split}"),
    benchmark:
        layout.benchmark("translate_{test_context}", "{direction}.{model}.{split}")


use rule score as score_test_context with:
    input:
        hyps=layout.hyps("{direction}", "{model}", "{split}", "{test_context}"),
        corpus=lambda w: clean_corpus(w, w.split),
    output:
        layout.record("score_{test_context}", "{direction}", "{model}", "{split}"),
    wildcard_constraints:
        test_context="|".join(TEST_CONTEXT),
    log:
        layout.log("score_{test_context}", "{direction}.{model}.{split}"),
    benchmark:
        layout.benchmark("score_{test_context}", "{direction}.{model}.{split}")


# Whether the COMET model can be had is decided once, not by every COMET job (offline, each job
# used to spend ~12 s finding out); a missing model stops here when it is required. It runs
# where Snakemake runs (a cluster's login node usually has the network access a download needs).
# To look again (e.g. once online): snakemake --forcerun pretrained_models comet_model
rule comet_model:
    input:
        ancient(PRETRAINED_MANIFEST),  # the model, fetched (pretrained.smk)
    output:
        "results/comet/model.json",
    params:
        comet=config["evaluation"]["comet"],
        required=["--required"] if config["evaluation"]["comet"]["required"] else [],
    localrule: True
    log:
        layout.log("comet_model"),
    benchmark:
        layout.benchmark("comet_model")
    shell:
        "mtcue comet-model --comet-model {params.comet[model]:q} {params.required:q} --out {output:q} 2> {log:q}"


rule comet:
    input:
        hyps=layout.hyps("{direction}", "{model}", "{split}"),
        corpus=lambda w: clean_corpus(w, w.split),
        availability=rules.comet_model.output[0],
    output:
        layout.record("comet", "{direction}", "{model}", "{split}"),
    params:
        config_hash=cfg_hash,
        study=STUDY,
        comet=config["evaluation"]["comet"],
        required=["--required"] if config["evaluation"]["comet"]["required"] else [],
    threads: 1
    group: EVAL
    resources:
        **on_gpu(evaluation_request("comet")),
    log:
        layout.log("comet", "{direction}.{model}.{split}"),
    benchmark:
        layout.benchmark("comet", "{direction}.{model}.{split}")
    shell:
        "mtcue comet --hyps {input.hyps:q} --corpus {input.corpus:q} --direction {wildcards.direction:q} "
        "--model {wildcards.model:q} --split {wildcards.split:q} --study {params.study:q} "
        "--config-hash {params.config_hash:q} --comet-model {params.comet[model]:q} "
        "--batch-size {params.comet[batch_size]:q} {params.required:q} --availability {input.availability:q} "
        "--out {output:q} 2> {log:q}"
