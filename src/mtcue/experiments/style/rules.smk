# Jeong et al.'s style control (Korean-English): style_token and style_dim fine-tuned from their
# parent (BASE) through the ordinary train rule on the style store (a level per line from the corpus's
# register labels, or at paper scale each target's formality score, binned and flattened), then each
# translates Table 5's test set at every level of experiments.style.levels, scored by the official rule
# (supervised rows of Table 5) and by meaning preservation (chrF against the references, Jeong et al.'s
# Table 1), and drawn as the level sweep. The level translations and their scores are steps of each style model's
# evaluation job (evaluate.smk); here the store, the levels' agreement and the sweep.

from mtcue.experiments.style.plan import STYLE


rule style_store:
    input:
        split_corpora,
    output:
        directory(layout.store_dir("style", "{direction}")),
    params:
        corpora=lambda w, input: corpus_options(w, input),
        levels=(["--mapping", json.dumps(STYLE.config(config)["mapping"])]
                if STYLE.config(config)["levels_from"] == "labels"
                else ["--levels-from", "address", "--seed", config["seed"]]),
    group: PREPARE
    resources:
        **on_cpu(STEP["prepare"]),
    log:
        layout.log("style_store", "{direction}"),
    benchmark:
        layout.benchmark("style_store", "{direction}")
    shell:
        "mtcue style-levels --direction {wildcards.direction:q} {params.corpora:q} {params.levels:q} "
        "--out {output:q} 2> {log:q}"


# How the formality-score levels agree with IWSLT22's formal and informal references (levels_from: address).
rule style_agreement:
    input:
        lambda w: str(layout.evalset("iwslt22", pair_of(w.direction))),
    output:
        layout.study_record("style_agreement", "{direction}"),
    localrule: True
    log:
        layout.log("style_agreement", "{direction}"),
    benchmark:
        layout.benchmark("style_agreement", "{direction}")
    shell:
        "mtcue style-agreement --references {input:q} --direction {wildcards.direction:q} --out {output:q} 2> {log:q}"


rule style_levels:
    localrule: True
    input:
        STYLE.records(config),
    output:
        csv=layout.figure("style_levels", "csv"),
        svg=report(layout.figure("style_levels", "svg"), caption="style_levels.rst", category="Figures",
                   labels={"name": "Style levels (Jeong et al.)"}),
    log:
        layout.log("figures", "style_levels"),
    benchmark:
        layout.benchmark("figures", "style_levels")
    shell:
        "mtcue figure-style-levels --records {input:q} --csv {output.csv:q} --svg {output.svg:q} 2> {log:q}"
