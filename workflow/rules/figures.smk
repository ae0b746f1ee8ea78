# Figures, drawn from records only: one rule per figure, whose name is also the file name and the
# `mtcue figure --kind`. Each is a result of the HTML report, captioned by workflow/report/<name>.rst.


rule training_curves:
    localrule: True
    input:
        TRAIN_RECORDS,
    output:
        report("results/figures/training_curves.svg", caption="../report/training_curves.rst", category="Figures"),
    log:
        "results/logs/figures/training_curves.log",
    benchmark:
        "results/benchmarks/figures/training_curves.tsv"
    shell:
        "mtcue figure --kind training_curves --records {input} --out {output} 2> {log}"


rule phenomena_accuracy:
    localrule: True
    input:
        SCORE_RECORDS,
    output:
        report("results/figures/phenomena_accuracy.svg", caption="../report/phenomena_accuracy.rst", category="Figures"),
    log:
        "results/logs/figures/phenomena_accuracy.log",
    benchmark:
        "results/benchmarks/figures/phenomena_accuracy.tsv"
    shell:
        "mtcue figure --kind phenomena_accuracy --records {input} --out {output} 2> {log}"


rule bleu_gain:
    localrule: True
    input:
        SCORE_RECORDS,
    output:
        report("results/figures/bleu_gain.svg", caption="../report/bleu_gain.rst", category="Figures"),
    log:
        "results/logs/figures/bleu_gain.log",
    benchmark:
        "results/benchmarks/figures/bleu_gain.tsv"
    shell:
        "mtcue figure --kind bleu_gain --records {input} --out {output} 2> {log}"
