# Hoang et al. (2018): side information as discrete labels (genres, PG rating, country, decade), fed to
# NMT in Hoang et al.'s ways (si_* models, fine-tuned from BASE through the ordinary train rule and evaluated
# as every model, evaluate.smk); the output-layer model also translated without labels, the target-prefix model
# with the labels it predicts (test-time context, a step of its evaluation); the contrastive suites score every
# model of an en->xx direction (experiments/contrastive/rules.smk).
# One table: BLEU against the baseline, contrastive accuracy, TAGGING and MTCUE beside, Hoang et al.'s beside.


# The labels' vocabulary comes from the training split, as TAGGING's (the same `mtcue tags`, on the
# side-information columns).
rule side_labels:
    input:
        split_corpora,
    output:
        directory(layout.store_dir("labels", "{direction}")),
    params:
        columns=",".join(SIDE_COLUMNS),
        corpora=corpus_options,
        min_docs=config["context"]["tags_min_docs"],
    group: PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("side_labels", "{direction}"),
    benchmark:
        layout.benchmark("side_labels", "{direction}"),
    shell:
        "mtcue tags --direction {wildcards.direction:q} {params.corpora:q} --columns {params.columns:q} "
        "--min-docs {params.min_docs:q} --out {output:q} 2> {log:q}"
