# Context stores (docs/formats.md, section 2): each unique context string embedded once into a
# memory-mapped store with a per-sample index, one store per sentence encoder; TAGGING's tag
# store, whose vocabulary comes from the training split; the token store of the models that encode
# neighbouring sentences with the source encoder (VOITA-CONTEXT, CONCAT).

from mtcue.context.embed import is_random_encoder


# One embedding job per sentence encoder (and pooling) writes the store of every direction that
# reads it: a string several directions share (metadata, cues, English documents) is embedded once.
# The rule is generated per store, as its outputs (the directions reading it) depend on the config.
for _store, (_context, _directions) in vector_stores(config).items():

    rule:
        name:
            f"embed_{_store}"
        input:
            sorted({c for d in _directions for c in pair_corpora(pair_of(d))}),
            ancient(PRETRAINED_MANIFEST),  # its encoder (pretrained.smk); a re-fetch rebuilds no store
        output:
            [directory(layout.store_dir("vectors", d, _store)) for d in _directions],
        params:
            encoder=_context["encoder"],
            pooling=_context["pooling"],
            columns=",".join(store_columns(config)),
            stores=[a for d in _directions for a in ("--store", f"{d}={layout.store_dir('vectors', d, _store)}")],
            corpora=[a for p in sorted({pair_of(d) for d in _directions}) for s in SPLITS
                     for a in ("--corpus", f"{p}:{s}={layout.clean_corpus(p, s)}")],
            batch_size=config["context"]["batch_size"],
        threads: 1
        resources:
            # random vectors: no model to run
            **(on_cpu if is_random_encoder(_context["encoder"]) else on_gpu)(STEP["embed"]),
        # Embed early, beside the BASE trainings, so the contextual trainings can then run side by side.
        priority: 10
        log:
            layout.log("embed", _store),
        benchmark:
            layout.benchmark("embed", _store)
        shell:
            "OMP_NUM_THREADS={threads} mtcue embed {params.stores:q} {params.corpora:q} --columns {params.columns:q} "
            "--encoder {params.encoder:q} --pooling {params.pooling:q} --batch-size {params.batch_size:q} 2> {log:q}"


rule tags:
    input:
        split_corpora,
    output:
        directory(layout.store_dir("tags", "{direction}")),
    params:
        columns=",".join(store_columns(config)),
        corpora=corpus_options,
        min_docs=config["context"]["tags_min_docs"],
    group: PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("tags", "{direction}"),
    benchmark:
        layout.benchmark("tags", "{direction}"),
    shell:
        "mtcue tags --direction {wildcards.direction:q} {params.corpora:q} --columns {params.columns:q} "
        "--min-docs {params.min_docs:q} --out {output:q} 2> {log:q}"


rule token_store:
    input:
        split_corpora,
        spm=lambda w: layout.spm_model(w.direction),
        data=layout.bin_dir("{direction}"),
    output:
        directory(layout.store_dir("tokens", "{direction}")),
    params:
        corpora=lambda w, input: corpus_options(w, input[:len(SPLITS)]),
        previous=config["context"]["doc_slots"],
    group: PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("token_store", "{direction}"),
    benchmark:
        layout.benchmark("token_store", "{direction}"),
    shell:
        "mtcue token-store --direction {wildcards.direction:q} {params.corpora:q} --spm {input.spm:q} "
        "--data-bin {input.data:q} --previous {params.previous:q} --next --out {output:q} 2> {log:q}"
