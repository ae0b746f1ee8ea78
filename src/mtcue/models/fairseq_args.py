"""fairseq command lines for a model spec (see `mtcue.plan.models.model_spec`).

The one place that knows how config keys map onto fairseq arguments, shared by training,
generation and parameter counting.
"""
from __future__ import annotations

from pathlib import Path

from mtcue.study import MODEL_TYPES, SHORTENING_TYPES, is_contextual

PLUGIN_DIR = str(Path(__file__).parent / "plugin")
FAIRSEQ_ARCH = {t: m.arch or t for t, m in MODEL_TYPES.items()}  # model type -> its fairseq architecture


def context_marker(model_type: str) -> bool:
    """Whether a model's token-store context sentences start with the `<s>` marker: Voita et al.'s
    models (VOITA-CONTEXT, CONCAT) mark them (their paper); the sequence-shortening family encodes a
    context sentence as `tokens </s>`, exactly as a current sentence (the authors' code), so that its
    cached states are the ones the sentence had as the current one."""
    return model_type not in SHORTENING_TYPES


def task_args(spec: dict, direction: str, data_bin: str | Path, context_dir: str | Path | None) -> list[str]:
    src, tgt = direction.split("-")
    # fairseq drops a last batch smaller than --required-batch-size-multiple (default 8),
    # silently losing test sentences (facebookresearch/fairseq#5036): keep every sentence.
    args = [str(data_bin), "--user-dir", PLUGIN_DIR, "--source-lang", src, "--target-lang", tgt,
            "--required-batch-size-multiple", "1"]
    if is_contextual(spec):
        if context_dir is None:
            raise ValueError(f"model '{spec['model']}' ({spec['type']}) needs a context embedding store")
        args += ["--task", "contextual_translation", "--context-dir", str(context_dir)]
        if spec["context"]["kind"] == "tokens":
            args += ["--context-slot", spec["context"]["slot"]]
            args += [] if context_marker(spec["type"]) else ["--no-context-marker"]
        else:
            args += ["--context-columns", ",".join(spec["context"]["columns"])]
        if spec["context"]["random"]:
            args += ["--random-context", spec["context"]["random"], "--random-context-seed", str(spec["seed"])]
    elif style_mode := MODEL_TYPES[spec["type"]].style_mode:
        args += ["--task", "style_translation", "--style-mode", style_mode]
        # the style store of training (generation gives the level itself: translator.Translator)
        args += ["--style-dir", str(context_dir)] if context_dir else []
    else:
        args += ["--task", "translation"]
    return args


def arch_args(spec: dict) -> list[str]:
    arch, model_type = spec["arch"], MODEL_TYPES[spec["type"]]
    args = ["--arch", FAIRSEQ_ARCH[spec["type"]], "--share-all-embeddings",
            "--encoder-embed-dim", arch["embed_dim"], "--decoder-embed-dim", arch["embed_dim"],
            "--encoder-attention-heads", arch["heads"], "--decoder-attention-heads", arch["heads"],
            "--encoder-layers", arch["encoder_layers"], "--encoder-ffn-embed-dim", arch["encoder_ffn_dim"],
            "--decoder-layers", arch["decoder_layers"], "--decoder-ffn-embed-dim", arch["decoder_ffn_dim"]]
    if spec["type"] in SHORTENING_TYPES:
        args += ["--context-sentences", arch["context_sentences"]]
        args += ["--shortening-groups", arch["shortening_groups"]] if "shortening_groups" in arch else []
    if model_type.context in ("vectors", "tags"):
        args += ["--context-dropout", arch["context_dropout"]]
    if "side_dim" in model_type.arch_keys:  # the output layer's side-information width (si_output_layer)
        args += ["--side-dim", arch["side_dim"]]
    if model_type.context == "vectors":  # models with a context encoder
        args += ["--context-layers", arch["context_layers"], "--context-attention-heads", arch["heads"],
                 "--context-ffn-embed-dim", arch["context_ffn_dim"], "--context-kind", spec["context"]["kind"]]
        args += [] if arch["context_positions"] else ["--no-context-positions"]
        if "context_doc_positions" in arch:  # few-shot variants (experiments.fewshot.plan.Fewshot.models)
            args += ["--context-doc-positions", arch["context_doc_positions"]]
        args += [] if arch["qk_norm"] else ["--no-qk-norm"]
        args += [] if arch["qk_norm_scale_init"] is None else ["--qk-norm-scale-init", arch["qk_norm_scale_init"]]
    if model_type.style_mode:
        args += ["--style-freeze", spec["style"]["freeze"], "--style-init", spec["style"]["init"]]
    return [str(a) for a in args]


def generation_args(generation: dict) -> list[str]:
    """Beam search settings (config `generation`) for fairseq-generate."""
    return [str(a) for a in ("--beam", generation["beam"], "--batch-size", generation["batch_size"],
                             "--max-len-a", generation["max_len_a"], "--max-len-b", generation["max_len_b"])]


def optimisation_args(spec: dict, use_cuda: bool, gpus: int = 1) -> list[str]:
    t = spec["training"]
    fp16 = use_cuda if t["fp16"] == "auto" else bool(t["fp16"])
    args = ["--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr", t["lr"],
            "--lr-scheduler", "inverse_sqrt", "--warmup-updates", t["warmup_updates"], "--warmup-init-lr", 1e-7,
            *criterion_args(spec), "--label-smoothing", t["label_smoothing"],
            "--clip-norm", t["clip_norm"], "--dropout", t["dropout"], "--weight-decay", t["weight_decay"],
            "--max-tokens", t["max_tokens"], "--update-freq", update_freq_per_gpu(spec, gpus),
            "--max-epoch", t["max_epoch"], "--patience", t["patience"], "--seed", spec["seed"]]
    args += ["--batch-size", t["batch_size"]] if t.get("batch_size") else []  # sentences (the style-control paper's 16)
    args += ["--fp16"] if fp16 else []
    args += [] if use_cuda else ["--cpu"]
    return [str(a) for a in args]


def criterion_args(spec: dict) -> list:
    """The type's criterion (`ModelType.criterion`): label-smoothed cross-entropy, or with an auxiliary loss of
    weight `--mtl-weight`, the config's lambda where the type has the `arch.mtl_weight` key (si_mtl's classifier,
    Hoang et al., eq. 8), else the type's own (si_trg_prefix's label prefix, 1)."""
    model_type = MODEL_TYPES[spec["type"]]
    weight = spec["arch"]["mtl_weight"] if "mtl_weight" in model_type.arch_keys else model_type.mtl_weight
    return ["--criterion", model_type.criterion, *([] if weight is None else ["--mtl-weight", weight])]


def update_freq_per_gpu(spec: dict, gpus: int) -> int:
    """Gradient accumulation per GPU that keeps the spec's batch per update (max_tokens x
    update_freq): each of `gpus` data-parallel processes contributes max_tokens per step."""
    update_freq = spec["training"]["update_freq"]
    if update_freq % gpus:
        raise ValueError(f"model '{spec['model']}': training.update_freq {update_freq} is not a multiple of {gpus} "
                         f"GPUs, so the batch per update would change; train on a number of GPUs that divides it")
    return update_freq // gpus


def distributed_args(gpus: int, port: int) -> list[str]:
    """fairseq's own data-parallel training on `gpus` GPUs of one node: it spawns one process per
    GPU (torch.distributed, NCCL), meeting at localhost:`port`. Naming the rendezvous keeps fairseq
    from inferring a multi-node setup from the SLURM job step's variables."""
    if gpus < 2:
        return []
    return ["--distributed-world-size", str(gpus), "--distributed-init-method", f"tcp://localhost:{port}"]


def checkpoint_args(save_dir: str | Path, save_interval_updates: int) -> list[str]:
    """checkpoint_last.pt at every epoch's end and every `save_interval_updates` updates (the
    plugin's `resume` module keeps the mid-epoch saves from validating); best by validation loss."""
    return ["--save-dir", str(save_dir), "--no-epoch-checkpoints", "--best-checkpoint-metric", "loss",
            "--save-interval-updates", str(save_interval_updates)]
