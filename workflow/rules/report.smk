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
        **table_outputs("table3_models", "Table 3: models, sizes and training time"),
    log:
        layout.log("table3_models"),
    benchmark:
        layout.benchmark("tables", "table3_models"),
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
        **table_outputs("table4_quality", "Table 4: translation quality"),
    params:
        bootstrap=config["evaluation"]["bootstrap"],
    log:
        layout.log("table4_quality"),
    benchmark:
        layout.benchmark("tables", "table4_quality"),
    shell:
        "mtcue table --records {input.score:q} --comet-records {input.comet:q} --train-records {input.train:q} "
        "--bootstrap-samples {params.bootstrap[samples]:q} --alpha {params.bootstrap[alpha]:q} "
        "--csv {output.csv:q} --md {output.md:q} --html {output.html:q} 2> {log:q}"


rule phenomena:
    localrule: True
    input:
        score=quality.inputs(config)["scores"],
    output:
        **table_outputs("phenomena", "Phenomena: accuracy per phenomenon"),
    log:
        layout.log("phenomena"),
    benchmark:
        layout.benchmark("tables", "phenomena"),
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
        layout.log("mlflow_sync", STUDY),
    benchmark:
        layout.benchmark("mlflow_sync", STUDY),
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
        layout.log("mlflow_study", STUDY),
    benchmark:
        layout.benchmark("mlflow_study", STUDY),
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
        layout.log("bench_store", "{direction}"),
    benchmark:
        layout.benchmark("bench_store", "{direction}"),
    shell:
        "mtcue bench-store --store {input.store:q} --corpus {input.corpus:q} --direction {wildcards.direction:q} "
        "--batch-size 560 --batches 10 --train-record {input.record:q} > {output:q} 2> {log:q}"


rule table1_data:
    localrule: True
    input:
        expand(layout.study_record("data", "{pair}"), pair=PAIRS),
    output:
        **table_outputs("table1_data", "Table 1: the data"),
    log:
        layout.log("table1_data"),
    benchmark:
        layout.benchmark("table1_data")
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
        layout.log("critical_path"),
    benchmark:
        layout.benchmark("critical_path", "critical_path")
    shell:
        "mtcue critical-path --snakefile {params.snakefile:q} --configfile {params.configfiles:q} --study . "
        "--out {output:q} 2> {log:q}"
