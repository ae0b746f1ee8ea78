# IWSLT22 zero-shot formality control (paper Table 5, appendix D). Each contextual model translates
# the test split once per prompt, the prompt being the only context beside the sentence itself (a
# prompted store per prompt, built from the model's own store); a model without context is scored on
# its ordinary test translation. Any model can be scored this way: Table 6 reads the ablation models'.
rule prompt_stores:
    input:
        lambda w: context_store(w)["store"],
    output:
        directory("results/formality/{direction}/{model}/prompts"),
    params:
        prompts=json.dumps({p["id"]: p["text"] for p in PROMPTS}),
        column=lambda w: prompt_column(cfg.model_columns(config, w.model)),
    log:
        "results/logs/prompt_stores/{direction}.{model}.log",
    benchmark:
        "results/benchmarks/prompt_stores/{direction}.{model}.tsv"
    shell:
        "mtcue prompt-stores --store {input} --prompts {params.prompts:q} --column {params.column} "
        "--out {output} 2> {log}"


rule formality_translate:
    input:
        prompts="results/formality/{direction}/{model}/prompts",
        model="results/models/{direction}/{model}/checkpoint_best.pt",
        data="results/bin/{direction}",
        corpus=lambda w: clean_corpus(w, "test"),
    output:
        "results/hyps/formality/{direction}/{model}/{prompt}.txt",
    params:
        spec=lambda w: json.dumps(model_spec(w), sort_keys=True),
        generation=json.dumps(config["generation"]),
    threads: 1
    resources:
        gpu=1,
    log:
        "results/logs/formality_translate/{direction}.{model}.{prompt}.log",
    benchmark:
        "results/benchmarks/formality_translate/{direction}.{model}.{prompt}.tsv"
    shell:
        "mtcue translate --spec {params.spec:q} --direction {wildcards.direction} --data-bin {input.data} "
        "--context-dir {input.prompts}/{wildcards.prompt} --checkpoint {input.model} --split test "
        "--corpus {input.corpus} --generation {params.generation:q} --threads {threads} --out {output} 2> {log}"


rule formality_score:
    input:
        unpack(formality_hyps),
        refs=lambda w: f"results/eval/iwslt22/{cfg.pair_of(w.direction)}",
    output:
        "results/records/formality/{direction}/{model}.json",
    params:
        hyps=lambda w, input: " ".join(f"{k}={v}" for k, v in input.items() if k != "refs"),
        # The annotated references, by their official names.
        refs=lambda w, input: " ".join(f"{register}={input.refs}/{name}" for register, name in
                                       zip(("formal", "informal"), iwslt22_files(cfg.pair_of(w.direction))[3:])),
        prompts=json.dumps(PROMPTS),
        config_hash=cfg_hash,
        study=STUDY,
    log:
        "results/logs/formality_score/{direction}.{model}.log",
    benchmark:
        "results/benchmarks/formality_score/{direction}.{model}.tsv"
    shell:
        "mtcue score-formality --hyps {params.hyps} --prompts {params.prompts:q} --references {params.refs} "
        "--direction {wildcards.direction} --model {wildcards.model} --study {params.study} "
        "--config-hash {params.config_hash} --out {output} 2> {log}"


rule table5_formality:
    localrule: True
    input:
        FORMALITY_RECORDS,
    output:
        csv="results/tables/table5_formality.csv",
        md="results/tables/table5_formality.md",
        html=report("results/tables/table5_formality.html", caption="../report/table5_formality.rst", category="Tables"),
    params:
        models=" ".join(FORMALITY_MODELS),
    log:
        "results/logs/table5_formality.log",
    benchmark:
        "results/benchmarks/tables/table5_formality.tsv"
    shell:
        "mtcue table-formality --records {input} --models {params.models} --csv {output.csv} --md {output.md} 2> {log}"
