# Table 6 (ablations): each row model is trained, translated and scored only in the ablation
# directions, on the split the paper used (experiments.ablation.split), each fine-tuned row once per
# seed (experiments.ablation.seeds); the zero-shot columns read the validation-split records of the
# formality and few-shot experiments where this config runs them, and are n/a with the reason otherwise.


rule table6_ablation:
    localrule: True
    input:
        score=ABLATION_SCORES,
        comet=ABLATION_COMETS,
        formality=zeroshot_records("formality"),
        eamt22=zeroshot_records("eamt22"),
        runs=MLFLOW_RUNS,
    output:
        csv="results/tables/table6_ablation.csv",
        md="results/tables/table6_ablation.md",
        html=report("results/tables/table6_ablation.html", caption="../report/table6_ablation.rst", category="Tables"),
    params:
        rows=json.dumps(ABLATION["rows"]),
        seeds=json.dumps(ABLATION_SEEDS),
        split=ABLATION["split"],
        zeroshot=" ".join(zeroshot_options(kind) for kind in ABLATION_ZEROSHOT),
        bootstrap=config["evaluation"]["bootstrap"],
    log:
        "results/logs/table6_ablation.log",
    benchmark:
        "results/benchmarks/tables/table6_ablation.tsv"
    shell:
        "mtcue table-ablation --rows {params.rows:q} --seeds {params.seeds:q} --split {params.split} "
        "--records {input.score} "
        "--comet-records {input.comet} --formality-records {input.formality} --eamt22-records {input.eamt22} "
        "{params.zeroshot} --bootstrap-samples {params.bootstrap[samples]} --alpha {params.bootstrap[alpha]} "
        "--run-ids {input.runs} --csv {output.csv} --md {output.md} 2> {log}"
