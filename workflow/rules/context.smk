# Context stores (docs/formats.md, section 2): each unique context string embedded once into a
# memory-mapped store with a per-sample index, one store per sentence encoder; and TAGGING's tag
# store, whose vocabulary comes from the training split.


rule embed:
    input:
        split_corpora,
    output:
        directory("results/embed/{direction}/{store}"),
    params:
        encoder=lambda w: vector_stores(w.direction)[w.store]["encoder"],
        pooling=lambda w: vector_stores(w.direction)[w.store]["pooling"],
        columns=",".join(cfg.store_columns(config)),
        corpora=corpus_options,
        batch_size=config["context"]["batch_size"],
    threads: 1
    # Embed early, beside the BASE trainings, so the MTCue trainings can then run side by side.
    priority: 10
    log:
        "results/logs/embed/{direction}.{store}.log",
    benchmark:
        "results/benchmarks/embed/{direction}.{store}.tsv"
    shell:
        "OMP_NUM_THREADS={threads} mtcue embed --direction {wildcards.direction} {params.corpora} "
        "--columns {params.columns} --encoder {params.encoder} --pooling {params.pooling} "
        "--batch-size {params.batch_size} --out {output} 2> {log}"


rule tags:
    input:
        split_corpora,
    output:
        directory("results/tags/{direction}"),
    params:
        columns=",".join(cfg.store_columns(config)),
        corpora=corpus_options,
        min_docs=config["context"]["tags_min_docs"],
    log:
        "results/logs/tags/{direction}.log",
    benchmark:
        "results/benchmarks/tags/{direction}.tsv",
    shell:
        "mtcue tags --direction {wildcards.direction} {params.corpora} --columns {params.columns} "
        "--min-docs {params.min_docs} --out {output} 2> {log}"
