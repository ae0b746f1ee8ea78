# Context embedding: each unique context string embedded once into a memory-mapped store
# with a per-sample index (docs/formats.md, section 2).


rule embed:
    input:
        lambda w: expand("results/clean/{pair}/{split}.jsonl", pair=cfg.pair_of(w.direction), split=SPLITS),
    output:
        directory("results/embed/{direction}"),
    params:
        encoder=lambda w: cfg.encoder_for(config, w.direction),
        columns=",".join(cfg.context_columns(config)),
        corpora=lambda w, input: " ".join(f"--corpus {s}={p}" for s, p in zip(SPLITS, input)),
        batch_size=config["context"]["batch_size"],
    threads: 1
    # Embed early, beside the BASE trainings, so the MTCue trainings can then run side by side.
    priority: 10
    log:
        "results/logs/embed/{direction}.log",
    benchmark:
        "results/benchmarks/embed/{direction}.tsv"
    shell:
        "OMP_NUM_THREADS={threads} mtcue embed --direction {wildcards.direction} {params.corpora} "
        "--columns {params.columns} --encoder {params.encoder} --batch-size {params.batch_size} "
        "--out {output} 2> {log}"
