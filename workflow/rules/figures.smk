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
