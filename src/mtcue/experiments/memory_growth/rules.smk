# Mąka et al. (2024), Figure 4 (and a training step): measured on models built at the config's
# sizes with random weights, so it waits for no training; the plan (every measured model's spec, the batch,
# the beam) is a parameter, so a change to any of them measures again.

from mtcue.experiments.memory_growth.plan import MEMORY_GROWTH


rule memory_growth:
    output:
        csv=layout.figure("memory_growth", "csv"),
        svg=report(layout.figure("memory_growth", "svg"), caption="memory_growth.rst", category="Figures",
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
