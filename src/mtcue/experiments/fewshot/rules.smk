# EAMT22 few-shot attribute control (paper section 3.2, Figure 4). Each few-shot variant
# (experiments.fewshot.plan.Fewshot.models) fine-tunes its parent on a masked copy of the parent's store: the attribute
# sentences kept for N lines per attribute combination. Any model (the variants, their parents
# zero-shot, the ablations) is evaluated on a split with the attribute sentences as context (Figure 4: the
# test split, Table 6's zero-shot column: the validation split); each variant runs once per seed
# (experiments.fewshot.seeds); on the paper's data, on the official EAMT22 test set (dev.json for the
# validation split), the training lines annotated by EAMT22's rules (annotate_eamt22, data.smk). The EAMT22
# translations and scores are steps of each model's evaluation job (evaluate.smk); here the stores and Figure 4.

from mtcue.experiments.fewshot.plan import FEWSHOT


rule fewshot_store:
    input:
        store=lambda w: eamt22_store(w)["store"],
        train=lambda w: clean_corpus(w, "train"),
        valid=lambda w: clean_corpus(w, "valid"),
    output:
        directory(layout.store_dir("fewshot", "{direction}", "{model}")),
    wildcard_constraints:
        model="|".join(FEWSHOT_MODELS) or "^$",
    params:
        per_combination=lambda w: FEWSHOT_MODELS[w.model]["fewshot"]["samples"],
        seed=lambda w: model_spec(w)["seed"],  # a seeded run draws its own annotated lines
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("fewshot_store", "{direction}.{model}"),
    benchmark:
        layout.benchmark("fewshot_store", "{direction}.{model}")
    shell:
        "mtcue mask-store --store {input.store:q} --corpus train={input.train:q} --corpus valid={input.valid:q} "
        "--per-combination {params.per_combination:q} --seed {params.seed:q} --out {output:q} 2> {log:q}"


rule figure4:
    localrule: True
    input:
        records=FEWSHOT.records(config),
    output:
        csv=layout.figure("figure4_eamt22_fewshot", "csv"),
        png=report(layout.figure("figure4_eamt22_fewshot", "png"), caption="figure4.rst", category="Figures",
                   labels={"name": "Figure 4: EAMT22 few-shot"}),
    params:
        points=json.dumps(FEWSHOT.points(config)),
        bootstrap=config["evaluation"]["bootstrap"],
    log:
        layout.log("figure4"),
    benchmark:
        layout.benchmark("figure4")
    shell:
        "mtcue figure4 --records {input.records:q} --points {params.points:q} "
        "--csv {output.csv:q} --png {output.png:q} --bootstrap-samples {params.bootstrap[samples]:q} "
        "--alpha {params.bootstrap[alpha]:q} 2> {log:q}"
