# Table 6 (ablations): each row model is trained, translated and scored only in the ablation
# directions, on the split the paper used (experiments.ablation.split), each fine-tuned row once per
# seed (experiments.ablation.seeds); the zero-shot columns read the validation-split records of the
# formality and few-shot experiments where this config runs them, and are n/a with the reason otherwise.


rule table6_ablation:
    localrule: True
    input:
        score=ablation.inputs(config)["scores"],
        comet=ablation.inputs(config)["comets"],
        formality=ablation.inputs(config)["formality"],
        eamt22=ablation.inputs(config)["eamt22"],
    output:
        **table_outputs("table6_ablation", "Table 6: ablations"),
    params:
        rows=json.dumps(config["experiments"]["ablation"]["rows"]),
        seeds=json.dumps(ablation.ablation_seeds(config)),
        split=config["experiments"]["ablation"]["split"],
        zeroshot=[a for kind, task in ablation.ablation_zeroshot(config).items() for a in zeroshot_options(kind, task)],
        bootstrap=config["evaluation"]["bootstrap"],
    log:
        layout.log("table6_ablation"),
    benchmark:
        layout.benchmark("tables", "table6_ablation")
    shell:
        "mtcue table-ablation --rows {params.rows:q} --seeds {params.seeds:q} --split {params.split:q} "
        "--records {input.score:q} "
        "--comet-records {input.comet:q} --formality-records {input.formality:q} --eamt22-records {input.eamt22:q} "
        "{params.zeroshot:q} --bootstrap-samples {params.bootstrap[samples]:q} --alpha {params.bootstrap[alpha]:q} "
        "--csv {output.csv:q} --md {output.md:q} --html {output.html:q} 2> {log:q}"
