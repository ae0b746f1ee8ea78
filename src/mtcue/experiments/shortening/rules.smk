# Sequence shortening (Mąka et al. 2024, Tables 2-3): the shortening family's
# runs per context size ({model}_c{C}, Shortening.models) train through the ordinary rule and are
# translated, scored (BLEU), scored on the contrastive suites and, for Figure 3, their groupings measured (how
# Latent Grouping and Selecting group the pieces of a sentence of the contrastive suite) in each model's
# evaluation job (evaluate.smk); here the figure (the table is tables.smk's).

from mtcue.experiments.shortening.plan import SHORTENING


rule figure_groupings:
    localrule: True
    input:
        records=SHORTENING.inputs(config)["groupings"],
    output:
        csv=layout.figure("shortening_groupings", "csv"),
        svg=report(layout.figure("shortening_groupings", "svg"), caption="shortening_groupings.rst",
                   category="Figures", labels={"name": "Mąka et al. (2024), Figure 3: groupings"}),
    log:
        layout.log("figures", "shortening_groupings"),
    benchmark:
        layout.benchmark("figures", "shortening_groupings")
    shell:
        "mtcue figure-groupings --records {input.records:q} --csv {output.csv:q} "
        "--svg {output.svg:q} 2> {log:q}"
