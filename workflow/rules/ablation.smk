# Table 6 (ablations): each row model is trained, translated and scored only in the ablation
# directions, on the split the paper used (experiments.ablation.split), each fine-tuned row once per
# seed (experiments.ablation.seeds); the zero-shot columns read the validation-split records of the
# formality and few-shot experiments where this config runs them, and are n/a with the reason otherwise.


rule table6_ablation:
    localrule: True
    input:
        score=ABLATION["scores"],
        comet=ABLATION["comets"],
        formality=ablation.zeroshot_records(config, "formality"),
        eamt22=ablation.zeroshot_records(config, "eamt22"),
        runs=MLFLOW_RUNS,
    output:
        csv="results/tables/table6_ablation.csv",
        md="results/tables/table6_ablation.md",
        html=report("results/tables/table6_ablation.html", caption="../report/table6_ablation.rst", category="Tables"),
    params:
        rows=json.dumps(config["experiments"]["ablation"]["rows"]),
        seeds=json.dumps(ablation.ablation_seeds(config)),
        split=config["experiments"]["ablation"]["split"],
        zeroshot=" ".join(zeroshot_options(kind, task) for kind, task in ablation.ablation_zeroshot(config).items()),
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
