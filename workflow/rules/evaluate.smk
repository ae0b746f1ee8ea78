# Translation of the evaluation split with beam search, then scoring into a JSON record.


rule translate:
    input:
        unpack(context_store),
        model="results/models/{direction}/{model}/checkpoint_best.pt",
        data="results/bin/{direction}",
        corpus=lambda w: clean_corpus(w, w.split),
    output:
        "results/hyps/{direction}/{model}.{split}.txt",
    params:
        spec=lambda w: spec(w.model),
        generation=json.dumps(config["generation"]),
        store=lambda w, input: f"--context-dir {input.store}" if "store" in input.keys() else "",
    threads: 1
    resources:
        gpu=1,
    log:
        "results/logs/translate/{direction}.{model}.{split}.log",
    benchmark:
        "results/benchmarks/translate/{direction}.{model}.{split}.tsv"
    shell:
        "mtcue translate --spec {params.spec:q} --direction {wildcards.direction} --data-bin {input.data} "
        "{params.store} --checkpoint {input.model} --split {wildcards.split} --corpus {input.corpus} "
        "--generation {params.generation:q} --threads {threads} --out {output} 2> {log}"


rule score:
    input:
        hyps="results/hyps/{direction}/{model}.{split}.txt",
        corpus=lambda w: clean_corpus(w, w.split),
    output:
        "results/records/score/{direction}/{model}.{split}.json",
    params:
        config_hash=lambda w: cfg_hash(w.model),
        study=STUDY,
    log:
        "results/logs/score/{direction}.{model}.{split}.log",
    shell:
        "mtcue score --hyps {input.hyps} --corpus {input.corpus} --direction {wildcards.direction} "
        "--model {wildcards.model} --split {wildcards.split} --study {params.study} "
        "--config-hash {params.config_hash} --out {output} 2> {log}"
