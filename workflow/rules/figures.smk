# Figures, drawn from records only: one rule per figure, whose name is also the file name and the
# `mtcue figure --kind`. Each is a result of the HTML report, captioned by workflow/report/<name>.rst.


rule training_curves:
    localrule: True
    input:
        quality.inputs(config)["train"],
    output:
        report(layout.figure("training_curves", "svg"), caption="../report/training_curves.rst", category="Figures",
               labels={"name": "Training curves"}),
    log:
        layout.log("figures", "training_curves"),
    benchmark:
        layout.benchmark("figures", "training_curves")
    shell:
        "mtcue figure --kind training_curves --records {input:q} --out {output:q} 2> {log:q}"


rule phenomena_accuracy:
    localrule: True
    input:
        quality.inputs(config)["scores"],
    output:
        report(layout.figure("phenomena_accuracy", "svg"), caption="../report/phenomena_accuracy.rst",
               category="Figures", labels={"name": "Phenomena: accuracy per model"}),
    log:
        layout.log("figures", "phenomena_accuracy"),
    benchmark:
        layout.benchmark("figures", "phenomena_accuracy")
    shell:
        "mtcue figure --kind phenomena_accuracy --records {input:q} --out {output:q} 2> {log:q}"


rule bleu_gain:
    localrule: True
    input:
        quality.inputs(config)["scores"],
    output:
        report(layout.figure("bleu_gain", "svg"), caption="../report/bleu_gain.rst", category="Figures",
               labels={"name": "BLEU over BASE"}),
    log:
        layout.log("figures", "bleu_gain"),
    benchmark:
        layout.benchmark("figures", "bleu_gain")
    shell:
        "mtcue figure --kind bleu_gain --records {input:q} --out {output:q} 2> {log:q}"


# Mąka et al. (2024), Figure 4 (and a training step): measured on models built at the config's
# sizes with random weights, so it waits for no training; the plan (every measured model's spec, the batch,
# the beam) is a parameter, so a change to any of them measures again.
rule memory_growth:
    output:
        csv=layout.figure("memory_growth", "csv"),
        svg=report(layout.figure("memory_growth", "svg"), caption="../report/memory_growth.rst", category="Figures",
                   labels={"name": "Memory growth with context size (Mąka et al. (2024), Figure 4)"}),
    params:
        plan=json.dumps(MEMORY_GROWTH.plan(config), sort_keys=True),
    resources:
        **on_cpu(STEP["measure"]),
    log:
        layout.log("figures", "memory_growth"),
    benchmark:
        layout.benchmark("figures", "memory_growth")
    shell:
        "mtcue memory-growth --plan {params.plan:q} --csv {output.csv:q} --svg {output.svg:q} 2> {log:q}"
