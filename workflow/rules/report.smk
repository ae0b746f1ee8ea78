# Tables are assembled from their own experiment's records only: one table is one target that trains what it
# needs and nothing else (docs/reruns.md). Each number names its MLflow run by name, `{direction}/{model}` in the
# study's experiment, and its HTML links it through the study's MLflow page (mlflow_study, after the sync), where
# run ids and the UI's address are resolved. MLflow mirrors the records from one rule at the end; concurrent syncs
# (a second snakemake, a sync by hand) take turns on a lock (src/mtcue/reporting/tracking.py).
# Each table writes its numbers (CSV), Markdown and an HTML rendering of the Markdown, a result
# of the HTML report captioned by its `Table.caption` (docs/results-and-tracking.md, "Tables, figures and the report").


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
