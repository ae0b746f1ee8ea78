# IWSLT22 zero-shot formality control (paper Table 5, appendix D) on the official test set (the
# embedded default: its synthetic test split in the official layout, data.smk). Each contextual model
# translates the source file once per prompt, the prompt the only context (as the authors' script,
# --no-doc-context: not even the sentence itself as doc0); a model without context translates it once.
# Any model can be scored this way: Table 6 reads the ablation models'. The best prompt is chosen on a
# validation set, translated the same way: the embedded default's valid split (data.smk); the paper's
# configuration has none wired yet and chooses on the test set (the record says which, `chosen_on`).
FORMALITY_VALID = not OPENSUBTITLES


def formality_valid_hyps(w):
    """The prompts' validation translations, where the model has prompts and there is a validation set."""
    return f"results/hyps/formality_valid/{w.direction}/{w.model}" if FORMALITY_VALID and formality_prompts(w.model) \
        else []


rule formality_translate:
    input:
        unpack(trained_model),
        testset=lambda w: f"results/eval/iwslt22/{cfg.pair_of(w.direction)}",
    output:
        directory("results/hyps/formality/{direction}/{model}"),
    params:
        source=lambda w: iwslt22_source(w.direction),
        prompts=lambda w: json.dumps(formality_prompts(w.model)),
        generation=json.dumps(config["generation"]),
    threads: 1
    resources:
        gpu=1,
    log:
        "results/logs/formality_translate/{direction}.{model}.log",
    benchmark:
        "results/benchmarks/formality_translate/{direction}.{model}.tsv"
    shell:
        "mtcue translate-prompts --model-dir results/models/{wildcards.direction}/{wildcards.model} "
        "--source {params.source} --prompts {params.prompts:q} --generation {params.generation:q} "
        "--threads {threads} --out {output} 2> {log}"


use rule formality_translate as formality_translate_valid with:
    input:
        unpack(trained_model),
        testset=lambda w: f"results/eval/iwslt22_valid/{cfg.pair_of(w.direction)}",
    output:
        directory("results/hyps/formality_valid/{direction}/{model}"),
    params:
        source=lambda w: iwslt22_source(w.direction).replace("/iwslt22/", "/iwslt22_valid/", 1),
        prompts=lambda w: json.dumps(formality_prompts(w.model)),
        generation=json.dumps(config["generation"]),
    log:
        "results/logs/formality_translate_valid/{direction}.{model}.log",
    benchmark:
        "results/benchmarks/formality_translate_valid/{direction}.{model}.tsv"


def formality_refs(w, folder):
    """The annotated references of an IWSLT22-layout folder, by their official names."""
    return " ".join(f"{register}={folder}/{name}" for register, name in
                    zip(("formal", "informal"), iwslt22_files(cfg.pair_of(w.direction))[3:]))


rule formality_score:
    input:
        hyps="results/hyps/formality/{direction}/{model}",
        refs=lambda w: f"results/eval/iwslt22/{cfg.pair_of(w.direction)}",
        valid_hyps=formality_valid_hyps,
        valid_refs=lambda w: f"results/eval/iwslt22_valid/{cfg.pair_of(w.direction)}" if formality_valid_hyps(w) else [],
        train=lambda w: clean_corpus(w, "train"),  # each prompt's kind: its words vs the training contexts
    output:
        "results/records/formality/{direction}/{model}.json",
    params:
        hyps=lambda w, input: " ".join(f"{p}={input.hyps}/{p}.txt" for p in formality_prompts(w.model) or ["none"]),
        refs=lambda w, input: formality_refs(w, input.refs),
        # the validation split, where the best prompt is chosen (a model with prompts)
        valid=lambda w, input: (
            "--valid-hyps " + " ".join(f"{p}={input.valid_hyps}/{p}.txt" for p in formality_prompts(w.model))
            + " --valid-references " + formality_refs(w, input.valid_refs)) if input.valid_hyps else "",
        prompts=json.dumps(PROMPTS),
        config_hash=cfg_hash,
        study=STUDY,
    log:
        "results/logs/formality_score/{direction}.{model}.log",
    benchmark:
        "results/benchmarks/formality_score/{direction}.{model}.tsv"
    shell:
        "mtcue score-formality --hyps {params.hyps} --prompts {params.prompts:q} --references {params.refs} "
        "{params.valid} --train-corpus {input.train} --direction {wildcards.direction} --model {wildcards.model} --study {params.study} "
        "--config-hash {params.config_hash} --out {output} 2> {log}"


rule table5_formality:
    localrule: True
    input:
        records=FORMALITY_RECORDS,
        runs=MLFLOW_RUNS,
    output:
        csv="results/tables/table5_formality.csv",
        md="results/tables/table5_formality.md",
        html=report("results/tables/table5_formality.html", caption="../report/table5_formality.rst", category="Tables"),
    params:
        models=" ".join(FORMALITY_MODELS),
        bootstrap=config["evaluation"]["bootstrap"],
    log:
        "results/logs/table5_formality.log",
    benchmark:
        "results/benchmarks/tables/table5_formality.tsv"
    shell:
        "mtcue table-formality --records {input.records} --models {params.models} --run-ids {input.runs} "
        "--bootstrap-samples {params.bootstrap[samples]} --alpha {params.bootstrap[alpha]} "
        "--csv {output.csv} --md {output.md} 2> {log}"
