# Corpus: the embedded default is a synthetic dialogue corpus (docs/formats.md, section 1); the
# paper's is extracted from OpenSubtitles v2018 with OMDb metadata and split by the public held-out
# lists (corpus.source: opensubtitles). Both are then cleaned with Moses normalisation and the
# paper's subtitle rules, and described in Table 1.
from mtcue.records import config_hash


if OPENSUBTITLES:

    rule extract_opensubtitles:
        input:
            lambda w: sources.opus_inputs(config, w.pair),
        output:
            corpus="results/extracted/{pair}/all.jsonl",
            films="results/extracted/{pair}/films.txt",
            stats="results/extracted/{pair}/stats.json",
        params:
            opus=sources.opus_dir(config),
            rules=config["corpus"]["opensubtitles"],
        threads: config["corpus"]["opensubtitles"]["workers"]
        resources:
            **on_cpu(STEP["prepare"]),
        log:
            layout.log("extract_opensubtitles", "{pair}"),
        benchmark:
            layout.benchmark("extract_opensubtitles", "{pair}")
        shell:
            "mtcue extract-opensubtitles --mirror {params.opus:q} --pair {wildcards.pair:q} --out {output.corpus:q} "
            "--films {output.films:q} --stats {output.stats:q} --min-overlap {params.rules[min_overlap]:q} "
            "--max-gap {params.rules[max_gap_s]:q} --workers {threads} 2> {log:q}"

    # One job for every film of every pair (shared answers, one throttle). The key is read from the
    # environment variable OMDB_API_KEY by the step itself: it is never part of a command line.
    rule omdb:
        input:
            expand("results/extracted/{pair}/films.txt", pair=PAIRS),
        output:
            metadata="results/metadata/omdb.jsonl",
            summary="results/metadata/omdb.summary.json",
        params:
            omdb=config["corpus"]["omdb"],
            cache="results/metadata/omdb_cache",
        localrule: True
        log:
            layout.log("omdb"),
        benchmark:
            layout.benchmark("omdb")
        shell:
            "mtcue omdb --ids {input:q} --cache {params.cache:q} --out {output.metadata:q} "
            "--summary {output.summary:q} --api-url {params.omdb[api_url]:q} "
            "--min-interval {params.omdb[min_interval_s]:q} --timeout {params.omdb[timeout_s]:q} 2> {log:q}"

    rule split_corpus:
        input:
            corpus="results/extracted/{pair}/all.jsonl",
            metadata="results/metadata/omdb.jsonl",
            heldout=lambda w: [sources.local(s) for s in sources.heldout_sources(config, w.pair)],
        output:
            expand("results/corpus/{{pair}}/{split}.jsonl", split=SPLITS),
            report="results/corpus/{pair}/splits.json",
        params:
            splits=config["corpus"]["splits"],
            seed=config["corpus"]["seed"],
        group: PREPARE
        resources:
            **on_cpu(STEP["prepare"]),
        log:
            layout.log("split_corpus", "{pair}"),
        benchmark:
            layout.benchmark("split_corpus", "{pair}")
        shell:
            "mtcue split-corpus --corpus {input.corpus:q} --metadata {input.metadata:q} --heldout {input.heldout:q} "
            "--out-dir results/corpus/{wildcards.pair:q} --valid-pairs {params.splits[valid_pairs]:q} "
            "--test-pairs {params.splits[test_pairs]:q} --seed {params.seed:q} --report {output.report:q} 2> {log:q}"

else:

    rule generate_corpus:
        output:
            "results/corpus/{pair}/{split}.jsonl",
        params:
            docs=lambda w: config["corpus"]["docs"][w.split],
            seed=config["corpus"]["seed"],
        group: PREPARE
        resources:
            **on_cpu(STEP["prepare"]),
        log:
            layout.log("generate_corpus", "{pair}.{split}"),
        benchmark:
            layout.benchmark("generate_corpus", "{pair}.{split}")
        shell:
            "mtcue generate --pair {wildcards.pair:q} --split {wildcards.split:q} --docs {params.docs:q} "
            "--seed {params.seed:q} --out {output:q} 2> {log:q}"


if FEWSHOT.eamt22_pairs(config):

    # EAMT22's attribute annotation (section 3.2): what each line's Polish shows, as EAMT22's context
    # sentences, for the few-shot settings.
    rule annotate_eamt22:
        input:
            "results/corpus/{pair}/{split}.jsonl",
        output:
            corpus="results/annotated/{pair}/{split}.jsonl",
            stats="results/annotated/{pair}/{split}.stats.json",
        wildcard_constraints:
            pair="|".join(FEWSHOT.eamt22_pairs(config)),
        group: PREPARE
        resources:
            **on_cpu(STEP["prepare"]),
        log:
            layout.log("annotate_eamt22", "{pair}.{split}"),
        benchmark:
            layout.benchmark("annotate_eamt22", "{pair}.{split}")
        shell:
            "mtcue annotate-eamt22 --input {input:q} --output {output.corpus:q} --stats {output.stats:q} 2> {log:q}"


rule clean:
    input:
        lambda w: f"results/{'annotated' if w.pair in FEWSHOT.eamt22_pairs(config) else 'corpus'}/{w.pair}/"
                  f"{w.split}.jsonl",
    output:
        corpus=layout.clean_corpus("{pair}", "{split}"),
        stats="results/clean/{pair}/{split}.stats.json",
    params:
        max_chars=config["clean"]["max_chars"],
    group: PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("clean", "{pair}.{split}"),
    benchmark:
        layout.benchmark("clean", "{pair}.{split}"),
    shell:
        "mtcue clean --input {input:q} --output {output.corpus:q} --stats {output.stats:q} "
        "--max-chars {params.max_chars:q} 2> {log:q}"


# Table 5's test set (eval_iwslt22) and validation set, where each model's best prompt is chosen (eval_iwslt22_valid;
# on the paper's data Table 6's zero-shot column too), in IWSLT22's official layout (contrastive references,
# [F]-annotated): on the paper's data IWSLT22's official files converted (the validation set: its training data,
# both domains; pairs without one, en-ru, choose on the test set: formality's plan), else the synthetic corpus's
# cleaned split in that layout, a step of its pair's preparation. Their inputs: iwslt22_inputs (inputs.smk).
rule eval_iwslt22:
    input:
        iwslt22_inputs("test"),
    output:
        directory(layout.evalset("iwslt22", "{pair}")),
    params:  # the synthetic set's (what the converted official files take is their inputs)
        **({} if OPENSUBTITLES else {"split": "test", "docs": config["corpus"]["docs"]["test"],
                                      "seed": config["corpus"]["seed"]}),
    group: None if OPENSUBTITLES else PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("eval_iwslt22", "{pair}"),
    benchmark:
        layout.benchmark("eval_iwslt22", "{pair}")
    shell:
        ("mtcue evalset --name iwslt22 --pair {wildcards.pair:q} --inputs {input:q} --out {output:q} 2> {log:q}"
         if OPENSUBTITLES else
         "mtcue iwslt22-synth --corpus {input:q} --pair {wildcards.pair:q} --split {params.split:q} "
         "--docs {params.docs:q} --seed {params.seed:q} --out {output:q} 2> {log:q}")


rule eval_iwslt22_valid:
    input:
        iwslt22_inputs("valid"),
    output:
        directory(layout.evalset("iwslt22_valid", "{pair}")),
    params:  # the synthetic set's (what the converted official files take is their inputs)
        **({} if OPENSUBTITLES else {"split": "valid", "docs": config["corpus"]["docs"]["valid"],
                                      "seed": config["corpus"]["seed"]}),
    wildcard_constraints:
        **({"pair": "|".join(config["evaluation_sets"]["iwslt22"]["valid_pairs"])} if OPENSUBTITLES else {}),
    group: None if OPENSUBTITLES else PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("eval_iwslt22_valid", "{pair}"),
    benchmark:
        layout.benchmark("eval_iwslt22_valid", "{pair}")
    shell:
        ("mtcue evalset --name iwslt22 --split valid --pair {wildcards.pair:q} --inputs {input:q} --out {output:q} "
         "2> {log:q}" if OPENSUBTITLES else
         "mtcue iwslt22-synth --corpus {input:q} --pair {wildcards.pair:q} --split {params.split:q} "
         "--docs {params.docs:q} --seed {params.seed:q} --out {output:q} 2> {log:q}")


# Table 1's figures for one pair, from the training data the models read.
rule corpus_stats:
    input:
        corpus=layout.clean_corpus("{pair}", "train"),
        omdb="results/metadata/omdb.summary.json" if OPENSUBTITLES else [],
    output:
        layout.study_record("data", "{pair}"),
    params:
        source=config["corpus"]["source"],
        config_hash=config_hash(config["corpus"]),
        study=STUDY,
        omdb=lambda w, input: ["--omdb-summary", input.omdb] if OPENSUBTITLES else [],
    group: PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("corpus_stats", "{pair}"),
    benchmark:
        layout.benchmark("corpus_stats", "{pair}")
    shell:
        "mtcue corpus-stats --corpus {input.corpus:q} --pair {wildcards.pair:q} --source {params.source:q} "
        "{params.omdb:q} --config-hash {params.config_hash:q} --study {params.study:q} --out {output:q} 2> {log:q}"


if OPENSUBTITLES:

    rule eval_eamt22:
        input:
            lambda w: sources.local(sources.evalset_sources(config, "eamt22", "en-pl")[w.split]),
        output:
            "results/eval/eamt22/en-pl/{split}.jsonl",
        resources:
            **on_cpu(STEP["prepare"]),
        log:
            layout.log("eval_eamt22", "{split}"),
        benchmark:
            layout.benchmark("eval_eamt22", "{split}")
        shell:
            "mtcue evalset --name eamt22 --pair en-pl --split {wildcards.split:q} --inputs {input:q} --out {output:q} "
            "2> {log:q}"

    rule eval_contrapro:
        input:
            json=sources.local(config["evaluation_sets"]["contrapro"]["json"]),
            documents=sources.local(config["evaluation_sets"]["contrapro"]["documents"]),
            metadata="results/metadata/omdb.jsonl",
        output:
            "results/eval/contrapro/en-de/test.jsonl",
        resources:
            **on_cpu(STEP["prepare"]),
        log:
            layout.log("eval_contrapro"),
        benchmark:
            layout.benchmark("eval_contrapro")
        shell:
            "mtcue evalset --name contrapro --pair en-de --inputs {input.json:q} {input.documents:q} "
            "--metadata {input.metadata:q} --out {output:q} 2> {log:q}"

    rule eval_lopes:
        input:
            [sources.local(s) for s in sources.evalset_sources(config, "lopes", "en-fr").values()],
        output:
            "results/eval/lopes/en-fr/test.jsonl",
        resources:
            **on_cpu(STEP["prepare"]),
        log:
            layout.log("eval_lopes"),
        benchmark:
            layout.benchmark("eval_lopes")
        shell:
            "mtcue evalset --name lopes --pair en-fr --inputs {input:q} --out {output:q} 2> {log:q}"
