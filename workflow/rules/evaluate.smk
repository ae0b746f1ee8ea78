# A trained model's evaluation is one job (`mtcue evaluate`: one process, which imports torch and fairseq once):
# its translations (each split it is scored on, test-time context, the IWSLT22 prompts and style levels, the EAMT22
# set), their scores into records (BLEU and phenomena, COMET, formality, EAMT22 and style scores), its context
# usage, contrastive scores, attention and groupings, each step the command line it has by hand (`mtcue translate
# ...`, `mtcue score ...`). What each model's evaluation writes is derived from the registered experiments'
# records (plan/evaluation.py); the models that write the same files share a profile, and each profile has a rule
# per direction here (a rule's outputs cannot depend on a wildcard's value), its models its wildcard constraint.


# Whether the COMET model can be had is decided once, not by every COMET job (offline, each job
# used to spend ~12 s finding out); a missing model stops here when it is required. It runs
# where Snakemake runs (a cluster's login node usually has the network access a download needs).
# To look again (e.g. once online): snakemake --forcerun pretrained_models comet_model
rule comet_model:
    input:
        ancient(PRETRAINED_MANIFEST),  # the model, fetched (pretrained.smk)
    output:
        "results/comet/model.json",
    params:
        comet=config["evaluation"]["comet"],
        required=["--required"] if config["evaluation"]["comet"]["required"] else [],
    localrule: True
    log:
        layout.log("comet_model"),
    benchmark:
        layout.benchmark("comet_model")
    shell:
        "mtcue comet-model --comet-model {params.comet[model]:q} {params.required:q} --out {output:q} 2> {log:q}"


for number, (evaluation, runs) in enumerate(plan_evaluation.profiles(config).items(), 1):
    # the attention and grouping analyses read their threads from OMP_NUM_THREADS (on one CPU thread)
    analyses = bool({kind for kind, _ in evaluation.records} & {"attention", "groupings"})
    for direction in sorted({d for d, _ in runs}):

        rule:
            name:
                f"evaluate_{number}_{direction.replace('-', '_')}"
            input:
                unpack(evaluation_inputs(evaluation)),
            output:
                *(directory(path) if path in evaluation.folders("{direction}", "{model}") else path
                  for path in evaluation.outputs("{direction}", "{model}")),
            wildcard_constraints:
                direction=direction,
                model="|".join(m for d, m in runs if d == direction),
            params:
                tasks=evaluation_tasks(evaluation),
            threads: 1
            group: EVAL  # the model's cluster job, named by its group (docs/paper-scale.md)
            resources:
                **on_gpu(evaluation_job_request(evaluation)),
            log:
                layout.log("evaluate", "{direction}.{model}"),
            benchmark:
                layout.benchmark("evaluate", "{direction}.{model}")
            shell:
                ("OMP_NUM_THREADS={threads} mtcue evaluate --tasks {params.tasks:q} 2> {log:q}" if analyses
                 else "mtcue evaluate --tasks {params.tasks:q} 2> {log:q}")
