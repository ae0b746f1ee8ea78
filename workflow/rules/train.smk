# Training with fairseq-train. Resumable checkpoints live in results/checkpoints/, outside
# the rule's outputs, so a failed or killed job resumes instead of starting over; a model
# initialised from another (MTCue from BASE) waits for that model's best checkpoint.


rule train:
    input:
        unpack(init_checkpoint),
        unpack(context_store),
        data="results/bin/{direction}",
    output:
        model="results/models/{direction}/{model}/checkpoint_best.pt",
        record="results/records/train/{direction}/{model}.json",
    params:
        spec=spec,
        checkpoints="results/checkpoints/{direction}/{model}",
        init=lambda w, input: ["--init-checkpoint", input.init] if "init" in input.keys() else [],
        store=store_option,
        study=STUDY,
    threads: lambda w: training_request(w)["threads"]  # the main process and its data loaders (if granted)
    resources:
        gpu=1,  # more (the profile's set-resources, or --set-resources train:gpu=4): fairseq's data-parallel training
        runtime=lambda w: training_request(w)["runtime"],
        mem_mb=lambda w: training_request(w)["mem_mb"],
        loader_workers=lambda w, threads: threads - 1,  # every CPU but the main process's
    log:
        "results/logs/train/{direction}.{model}.log",
    benchmark:
        "results/benchmarks/train/{direction}.{model}.tsv"
    shell:
        "mtcue train --spec {params.spec:q} --direction {wildcards.direction:q} --data-bin {input.data:q} "
        "{params.store:q} {params.init:q} --checkpoint-dir {params.checkpoints:q} --out {output.model:q} "
        "--record {output.record:q} --study {params.study:q} --threads {threads} --workers {resources.loader_workers} "
        "--gpus {resources.gpu} 2> {log:q}"
