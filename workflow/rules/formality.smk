# IWSLT22 zero-shot formality control (paper Table 5, appendix D) on the official test set (the
# embedded default: its synthetic test split in the official layout, data.smk). Each contextual model
# translates the source file once per prompt, the prompt the only context (as the authors' script,
# --no-doc-context: not even the sentence itself as doc0); a model without context translates it once.
# Any model can be scored this way: Table 6 reads the ablation models'. The best prompt is chosen on a
# validation set, translated the same way (plan/formality.py, chosen_on_valid).


rule formality_translate:
    input:
        unpack(trained_model),
        testset=lambda w: str(layout.evalset("iwslt22", pair_of(w.direction))),
    output:
        directory(layout.hyps_dir("formality", "{direction}", "{model}")),
    params:
        source=lambda w: iwslt22_source(w.direction),
        prompts=lambda w: json.dumps(formality.prompts_of(config, w.model)),
        generation=json.dumps(config["generation"]),
    threads: 1
    group: EVAL
    resources:
        **on_gpu(evaluation_request("translate")),
    log:
        layout.log("formality_translate", "{direction}.{model}"),
    benchmark:
        layout.benchmark("formality_translate", "{direction}.{model}")
    shell:
        "mtcue translate-prompts --model-dir results/models/{wildcards.direction:q}/{wildcards.model:q} "
        "--source {params.source:q} --prompts {params.prompts:q} --generation {params.generation:q} "
        "--threads {threads} --out {output:q} 2> {log:q}"


use rule formality_translate as formality_translate_valid with:
    input:
        unpack(trained_model),
        testset=lambda w: str(layout.evalset("iwslt22_valid", pair_of(w.direction))),
    output:
        directory(layout.hyps_dir("formality_valid", "{direction}", "{model}")),
    params:
        source=lambda w: iwslt22_source(w.direction, "iwslt22_valid"),
        prompts=lambda w: json.dumps(formality.prompts_of(config, w.model)),
        generation=json.dumps(config["generation"]),
    log:
        layout.log("formality_translate_valid", "{direction}.{model}"),
    benchmark:
        layout.benchmark("formality_translate_valid", "{direction}.{model}")


rule formality_score:
    input:
        hyps=layout.hyps_dir("formality", "{direction}", "{model}"),
        refs=lambda w: str(layout.evalset("iwslt22", pair_of(w.direction))),
        valid_hyps=formality_valid_hyps,
        valid_refs=lambda w: formality_valid_hyps(w) and str(layout.evalset("iwslt22_valid", pair_of(w.direction))),
        train=lambda w: clean_corpus(w, "train"),  # each prompt's kind: its words vs the training contexts
    output:
        layout.record("formality", "{direction}", "{model}"),
    params:
        hyps=lambda w, input: [f"{p}={input.hyps}/{p}.txt" for p in formality.prompts_of(config, w.model) or ["none"]],
        refs=lambda w, input: formality_refs(w, input.refs),
        valid=formality_valid_args,  # where the best prompt is chosen (a model with prompts)
        split="test",
        prompts=json.dumps(formality.formality_prompts(config)),
        config_hash=cfg_hash,
        study=STUDY,
    group: EVAL
    resources:
        **in_evaluation(STEP["score"]),
    log:
        layout.log("formality_score", "{direction}.{model}"),
    benchmark:
        layout.benchmark("formality_score", "{direction}.{model}")
    shell:
        "mtcue score-formality --hyps {params.hyps:q} --prompts {params.prompts:q} --references {params.refs:q} "
        "{params.valid:q} --train-corpus {input.train:q} --split {params.split:q} --direction {wildcards.direction:q} "
        "--model {wildcards.model:q} --study {params.study:q} --config-hash {params.config_hash:q} --out {output:q} "
        "2> {log:q}"


# Table 6's zero-shot column: the validation translations scored on their own (best prompt on the
# validation set, as the paper's "on the validation sets in all cases").
use rule formality_score as formality_score_valid with:
    input:
        hyps=layout.hyps_dir("formality_valid", "{direction}", "{model}"),
        refs=lambda w: str(layout.evalset("iwslt22_valid", pair_of(w.direction))),
        valid_hyps=[],
        valid_refs=[],
        train=lambda w: clean_corpus(w, "train"),
    output:
        layout.record("formality", "{direction}", "{model}", "valid"),
    params:
        split="valid",  # the other parameters are formality_score's
    log:
        layout.log("formality_score", "{direction}.{model}.valid"),
    benchmark:
        layout.benchmark("formality_score", "{direction}.{model}.valid")
