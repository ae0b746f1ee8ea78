# Training with fairseq-train. Resumable checkpoints live in results/checkpoints/, outside
# the rule's outputs, so a failed or killed job resumes instead of starting over; a model
# initialised from another (MTCue from BASE) waits for that model's best checkpoint.


rule train:
    input:
        unpack(init_checkpoint),
        unpack(context_store),
        data=layout.bin_dir("{direction}"),
    output:
        model=layout.checkpoint("{direction}", "{model}"),
        record=layout.record("train", "{direction}", "{model}"),
    params:
        spec=spec,
        checkpoints=str(layout.resume_dir("{direction}", "{model}")),
        init=lambda w, input: ["--init-checkpoint", input.init] if "init" in input.keys() else [],
        store=store_option,
        study=STUDY,
    # Per GPU, the main process and its data loaders (if granted); the jobstep's one task runs every rank.
    threads: lambda w: training_request(w)["threads"] * training_gpus()
    # A training killed at the site's longest job (slurm.max_minutes) is resubmitted and resumes (inputs.smk).
    retries: TRAIN_RETRIES
    resources:
        gpu=1,  # more (--set-resources train:gpu=4, or the profile's set-resources): fairseq's data-parallel training
        tasks_per_gpu=0,  # one SLURM task for all GPUs (the plugin's default is a task per GPU)
        runtime=lambda w: training_request(w)["runtime"],
        mem_mb=lambda w: training_request(w)["mem_mb"],
        loader_workers=lambda w, threads: max(0, threads // training_gpus() - 1),  # a rank's CPUs but its process's
        **SITE["gpu"],
    log:
        layout.log("train", "{direction}.{model}"),
    benchmark:
        layout.benchmark("train", "{direction}.{model}")
    shell:
        "mtcue train --spec {params.spec:q} --direction {wildcards.direction:q} --data-bin {input.data:q} "
        "{params.store:q} {params.init:q} --checkpoint-dir {params.checkpoints:q} --out {output.model:q} "
        "--record {output.record:q} --study {params.study:q} --threads {threads} --workers {resources.loader_workers} "
        "--gpus {resources.gpu} 2> {log:q}"
