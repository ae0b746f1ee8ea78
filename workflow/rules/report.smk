# Tables are assembled from score records only; MLflow mirrors the records from one process
# (concurrent writers would race on a fresh sqlite store).


rule table4_quality:
    input:
        SCORE_RECORDS,
    output:
        csv="results/tables/table4_quality.csv",
        md="results/tables/table4_quality.md",
    log:
        "results/logs/table4_quality.log",
    shell:
        "mtcue table --records {input} --csv {output.csv} --md {output.md} 2> {log}"


rule mlflow_sync:
    input:
        train=TRAIN_RECORDS,
        score=SCORE_RECORDS,
    output:
        MLFLOW_SYNC,
    params:
        uri=config["mlflow"]["tracking_uri"],
        study=STUDY,
    log:
        f"results/logs/mlflow_sync/{STUDY}.log",
    shell:
        "mtcue track --study {params.study} --uri {params.uri} --train-records {input.train} "
        "--score-records {input.score} --done {output} 2> {log}"
