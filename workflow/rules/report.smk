# Tables are assembled from their own experiment's records only: one table is one target that trains what it
# needs and nothing else (docs/reruns.md). Each number names its MLflow run by name, `{direction}/{model}` in the
# study's experiment, and its HTML links it through the study's MLflow page (mlflow_study, after the sync), where
# run ids and the UI's address are resolved. MLflow mirrors the records from one rule at the end; concurrent syncs
# (a second snakemake, a sync by hand) take turns on a lock (src/mtcue/reporting/tracking.py).
# Each table writes its numbers (CSV), Markdown and an HTML rendering of the Markdown, a result
# of the HTML report captioned by workflow/report/<table>.rst (docs/results-and-tracking.md, "Tables, figures and the report").


rule table3_models:
    localrule: True
    input:
        train=quality.inputs(config)["train"],
    output:
        csv="results/tables/table3_models.csv",
        md="results/tables/table3_models.md",
        html=report("results/tables/table3_models.html", caption="../report/table3_models.rst", category="Tables",
                    labels={"name": "Table 3: models, sizes and training time"}),
    log:
        "results/logs/table3_models.log",
    benchmark:
        "results/benchmarks/tables/table3_models.tsv",
    shell:
        "mtcue table --kind models --records {input.train:q} --csv {output.csv:q} "
        "--md {output.md:q} --html {output.html:q} 2> {log:q}"


rule table4_quality:
    localrule: True
    input:
        score=quality.inputs(config)["scores"],
        comet=quality.inputs(config)["comets"],
        train=quality.inputs(config)["train"],
    output:
        csv="results/tables/table4_quality.csv",
        md="results/tables/table4_quality.md",
        html=report("results/tables/table4_quality.html", caption="../report/table4_quality.rst", category="Tables",
                    labels={"name": "Table 4: translation quality"}),
    params:
        bootstrap=config["evaluation"]["bootstrap"],
    log:
        "results/logs/table4_quality.log",
    benchmark:
        "results/benchmarks/tables/table4_quality.tsv",
    shell:
        "mtcue table --records {input.score:q} --comet-records {input.comet:q} --train-records {input.train:q} "
        "--bootstrap-samples {params.bootstrap[samples]:q} --alpha {params.bootstrap[alpha]:q} "
        "--csv {output.csv:q} --md {output.md:q} --html {output.html:q} 2> {log:q}"


rule phenomena:
    localrule: True
    input:
        score=quality.inputs(config)["scores"],
    output:
        csv="results/tables/phenomena.csv",
        md="results/tables/phenomena.md",
        html=report("results/tables/phenomena.html", caption="../report/phenomena.rst", category="Tables",
                    labels={"name": "Phenomena: accuracy per phenomenon"}),
    log:
        "results/logs/phenomena.log",
    benchmark:
        "results/benchmarks/tables/phenomena.tsv",
    shell:
        "mtcue table --kind phenomena --records {input.score:q} --csv {output.csv:q} "
        "--md {output.md:q} --html {output.html:q} 2> {log:q}"


rule mlflow_sync:
    localrule: True
    input:
        model_records(config),
    output:
        MLFLOW_RUNS,
    params:
        uri=config["mlflow"]["tracking_uri"],
        study=STUDY,
        experiments=json.dumps({f"{d}/{m}": experiments for (d, m), experiments in TRAINED.items()}),
        copy_models=["--copy-models"] if config["mlflow"]["copy_models"] else [],
    log:
        f"results/logs/mlflow_sync/{STUDY}.log",
    benchmark:
        f"results/benchmarks/mlflow_sync/{STUDY}.tsv",
    shell:
        "mtcue track --study {params.study:q} --uri {params.uri:q} --records {input:q} "
        "--experiments {params.experiments:q} --artifacts {params.copy_models:q} --run-ids {output:q} 2> {log:q}"


# Every table and figure of the study as an artifact of its study run (one place to browse them in the
# MLflow UI), and the report's page of links to the UI: every experiment's tables and figures.
rule mlflow_study:
    localrule: True
    input:
        runs=MLFLOW_RUNS,
        files=report_files(config),
    output:
        report(MLFLOW_STUDY, caption="../report/mlflow.rst", category="MLflow", labels={"name": "The study's runs"}),
    params:
        ui=MLFLOW_UI,  # a changed address rebuilds this page only
    log:
        f"results/logs/mlflow_study/{STUDY}.log",
    benchmark:
        f"results/benchmarks/mlflow_study/{STUDY}.tsv",
    shell:
        "mtcue track-study --run-ids {input.runs:q} --files {input.files:q} --ui={params.ui:q} --html {output:q} "
        "2> {log:q}"


# Not part of `all`: the embedding store against a dense matrix and on-the-fly embedding
# (paper appendix A). `snakemake --cores 2 results/benchmarks/store/en-de.json`
rule bench_store:
    input:
        store=lambda w: model_store(w.direction, MTCUE),
        corpus=lambda w: clean_corpus(w, "train"),
        record=lambda w: layout.train_record(w.direction, MTCUE),
    output:
        "results/benchmarks/store/{direction}.json",
    log:
        "results/logs/bench_store/{direction}.log",
    benchmark:
        "results/benchmarks/bench_store/{direction}.tsv",
    shell:
        "mtcue bench-store --store {input.store:q} --corpus {input.corpus:q} --direction {wildcards.direction:q} "
        "--batch-size 560 --batches 10 --train-record {input.record:q} > {output:q} 2> {log:q}"


rule table1_data:
    localrule: True
    input:
        expand("results/records/data/{pair}.json", pair=PAIRS),
    output:
        csv="results/tables/table1_data.csv",
        md="results/tables/table1_data.md",
        html=report("results/tables/table1_data.html", caption="../report/table1_data.rst", category="Tables",
                    labels={"name": "Table 1: the data"}),
    log:
        "results/logs/table1_data.log",
    benchmark:
        "results/benchmarks/table1_data.tsv"
    shell:
        "mtcue table --kind data --records {input:q} --csv {output.csv:q} --md {output.md:q} --html {output.html:q} "
        "2> {log:q}"


# Not part of `all`: how the study's job times would spread over more cores (docs/benchmarks.md, "The demo
# on more cores"), a question about the machine, not a result of the study; in `all` it would rerun after
# every change. After a study: `snakemake --cores 1 results/benchmarks/critical_path.json`. Its input is
# every target of `all` (rule `all` is defined after this file is read, hence the function), so it runs
# after the last job whose benchmark file it reads.
rule critical_path:
    localrule: True
    input:
        lambda w: list(rules.all.input),
    output:
        "results/benchmarks/critical_path.json",
    params:
        snakefile=workflow.main_snakefile,
        configfiles=CONFIG_FILES,
    log:
        "results/logs/critical_path.log",
    benchmark:
        "results/benchmarks/critical_path/critical_path.tsv"
    shell:
        "mtcue critical-path --snakefile {params.snakefile:q} --configfile {params.configfiles:q} --study . "
        "--out {output:q} 2> {log:q}"
