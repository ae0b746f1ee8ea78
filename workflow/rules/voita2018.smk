# Voita et al. (2018): the baseline, CONCAT and VOITA-CONTEXT (previous / next sentence) trained and
# scored (BLEU) in experiments.voita2018.directions through the ordinary train, translate and score
# rules; the previous-sentence model also translated with random context at test time; its context
# attention analysed on the synthetic contrastive suite (Table 7); one table of both.


rule attention_agreement:
    input:
        unpack(trained_model),
        suite=lambda w: synthetic_suite(w.direction),
    output:
        "results/records/attention/{direction}/{model}.json",
    params:
        model_dir="results/models/{direction}/{model}",
        config_hash=cfg_hash,
        study=STUDY,
    threads: 1
    group: EVAL
    resources:
        **STEP["decode"],
    log:
        "results/logs/attention/{direction}.{model}.log",
    benchmark:
        "results/benchmarks/attention/{direction}.{model}.tsv"
    shell:
        "OMP_NUM_THREADS={threads} mtcue attention-agreement --model-dir {params.model_dir} --model {wildcards.model} "
        "--suite {input.suite} --config-hash {params.config_hash} --study {params.study} --out {output} 2> {log}"


rule table_voita2018:
    localrule: True
    input:
        score=VOITA2018["scores"],
        random=VOITA2018["random"],
        attention=voita2018_attention_records,
        runs=MLFLOW_RUNS,
    output:
        csv="results/tables/voita2018.csv",
        md="results/tables/voita2018.md",
        html=report("results/tables/voita2018.html", caption="../report/voita2018.rst", category="Tables"),
    params:
        rows=json.dumps(voita2018.voita2018_rows(config)),
        # Snakemake's :q gives nothing for an empty string, so the option goes only with a reason.
        unavailable=lambda w: f"--attention-unavailable {shlex.quote(attention_unavailable())}"
        if attention_unavailable() else "",
    log:
        "results/logs/table_voita2018.log",
    benchmark:
        "results/benchmarks/tables/voita2018.tsv"
    shell:
        "mtcue table-voita2018 --rows {params.rows:q} --records {input.score} --random-records {input.random} "
        "--attention-records {input.attention} {params.unavailable} "
        "--run-ids {input.runs} --csv {output.csv} --md {output.md} 2> {log}"
