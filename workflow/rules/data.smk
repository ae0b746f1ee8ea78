# Corpus: the embedded default is a synthetic dialogue corpus (docs/formats.md, section 1),
# then cleaning with Moses normalisation and the paper's subtitle rules.


rule generate_corpus:
    output:
        "results/corpus/{pair}/{split}.jsonl",
    params:
        docs=lambda w: config["corpus"]["docs"][w.split],
        seed=config["corpus"]["seed"],
    log:
        "results/logs/generate_corpus/{pair}.{split}.log",
    shell:
        "mtcue generate --pair {wildcards.pair} --split {wildcards.split} --docs {params.docs} "
        "--seed {params.seed} --out {output} 2> {log}"


rule clean:
    input:
        "results/corpus/{pair}/{split}.jsonl",
    output:
        corpus="results/clean/{pair}/{split}.jsonl",
        stats="results/clean/{pair}/{split}.stats.json",
    params:
        max_chars=config["clean"]["max_chars"],
    log:
        "results/logs/clean/{pair}.{split}.log",
    shell:
        "mtcue clean --input {input} --output {output.corpus} --stats {output.stats} "
        "--max-chars {params.max_chars} 2> {log}"
