# The pretrained models the study names (its sentence encoders and COMET) are fetched once, where Snakemake
# runs (a cluster's login node, which has the network its compute nodes often lack), into one folder of the
# study; every job reads them only from there, with the Hugging Face hub switched off
# (docs/paper-scale.md, "Offline compute nodes"; mtcue.pretrained).

import os

from mtcue.context.embed import is_random_encoder


PRETRAINED = "results/pretrained"
PRETRAINED_MANIFEST = f"{PRETRAINED}/manifest.json"

# Every shell command of the study reads the pretrained models from the study's folder, offline (common.smk's
# shell_prefix: a prefix, not os.environ, so that Snakemake run in-process leaves no study's folder behind for
# the models loaded later in that process).
shell.prefix(shell_prefix({
    "MTCUE_PRETRAINED": os.path.abspath(PRETRAINED), "HF_HUB_CACHE": os.path.abspath(f"{PRETRAINED}/hub"),
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}))


# Its output is an input of every rule that loads a model (the embedding stores, comet_model), so a model
# that is neither in the folder nor to be had stops the study here, before any of them is queued. To fetch
# again (a model changed on the hub): snakemake --forcerun pretrained_models
rule pretrained_models:
    output:
        PRETRAINED_MANIFEST,
    params:
        folder=lambda w, output: os.path.dirname(output[0]),
        encoders=[a for e in sorted({c["encoder"] for c, _ in vector_stores(config).values()})
                  if not is_random_encoder(e) for a in ("--encoder", e)],
        # null leaves COMET out: no option at all (a None would reach the step as the name 'None')
        comet=[a for m in [config["evaluation"]["comet"]["model"]] if m is not None for a in ("--comet-model", m)],
        required=["--comet-required"] if config["evaluation"]["comet"]["required"] else [],
    localrule: True
    log:
        layout.log("pretrained_models"),
    benchmark:
        layout.benchmark("pretrained_models")
    # The fetch itself goes online: not through the warm server, whose hub client was imported offline.
    shell:
        "env -u HF_HUB_OFFLINE -u TRANSFORMERS_OFFLINE MTCUE_WARM=0 mtcue fetch-pretrained --folder {params.folder:q} "
        "{params.encoders:q} {params.comet:q} {params.required:q} 2> {log:q}"
