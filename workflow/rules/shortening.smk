# Sequence shortening (seed sequence_shortening_context_mt.txt, Tables 2-3): the shortening family's
# runs per context size ({model}_c{C}, plan.shortening.shortening_models) train, translate and are scored
# (BLEU) through the ordinary rules and by the contrastive suites through contrastive.smk (every
# trained model of an en->xx direction); here only the table of both.


rule table_shortening:
    localrule: True
    input:
        score=SHORTENING["scores"],
        contrastive=shortening_contrastive,
        runs=MLFLOW_RUNS,
    output:
        csv="results/tables/shortening.csv",
        md="results/tables/shortening.md",
        html=report("results/tables/shortening.html", caption="../report/shortening.rst", category="Tables"),
    params:
        cells=json.dumps(shortening.shortening_table_cells(config)),
    log:
        "results/logs/table_shortening.log",
    benchmark:
        "results/benchmarks/tables/shortening.tsv"
    shell:
        "mtcue table-shortening --cells {params.cells:q} --records {input.score} "
        "--contrastive-records {input.contrastive} --run-ids {input.runs} --csv {output.csv} --md {output.md} 2> {log}"
