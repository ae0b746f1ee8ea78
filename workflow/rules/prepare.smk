# SentencePiece BPE per direction (joint over both sides) and fairseq binarisation.


rule spm_train:
    input:
        lambda w: clean_corpus(w, "train"),
    output:
        model=layout.spm_model("{direction}"),
        vocab="results/spm/{direction}.vocab",
    params:
        spm=config["spm"],
    group: PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("spm_train", "{direction}"),
    benchmark:
        layout.benchmark("spm_train", "{direction}")
    shell:
        "mtcue spm-train --corpus {input:q} --direction {wildcards.direction:q} --model-file {output.model:q} "
        "--vocab-size {params.spm[vocab_size]:q} --model-type {params.spm[model_type]:q} "
        "--character-coverage {params.spm[character_coverage]:q} 2> {log:q}"


rule spm_encode:
    input:
        model=layout.spm_model("{src}-{tgt}"),
        corpus=lambda w: f"results/clean/{pair_of(w.src + '-' + w.tgt)}/{w.split}.jsonl",
    output:
        "results/prepared/{src}-{tgt}/{split}.{src}",
        "results/prepared/{src}-{tgt}/{split}.{tgt}",
    group: PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("spm_encode", "{src}-{tgt}.{split}"),
    benchmark:
        layout.benchmark("spm_encode", "{src}-{tgt}.{split}"),
    shell:
        "mtcue spm-encode --model-file {input.model:q} --corpus {input.corpus:q} "
        "--direction {wildcards.src:q}-{wildcards.tgt:q} "
        "--out-prefix results/prepared/{wildcards.src:q}-{wildcards.tgt:q}/{wildcards.split:q} 2> {log:q}"


rule binarise:
    input:
        lambda w: expand("results/prepared/{direction}/{split}.{lang}", direction=w.direction,
                         split=SPLITS, lang=w.direction.split("-")),
    output:
        directory(layout.bin_dir("{direction}")),
    group: PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("binarise", "{direction}"),
    benchmark:
        layout.benchmark("binarise", "{direction}"),
    shell:
        "mtcue binarise --prepared results/prepared/{wildcards.direction:q} --direction {wildcards.direction:q} "
        "--dest {output:q} 2> {log:q}"
