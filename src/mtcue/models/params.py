"""Parameter counts of the fairseq models, built without any data.

`total` counts every parameter tensor once (tied embeddings once). `effective` leaves out
tensors that never receive a gradient (registered but unused), found by one forward/backward
pass on a dummy batch; this is how the reference notes count the authors' code, which registers
unused modules.
"""
from __future__ import annotations

import argparse

import torch

from mtcue.models.fairseq_args import FAIRSEQ_ARCH
from mtcue.study import MODEL_TYPES, store_kind


def torch_device(name: str | None, option: str = "--device") -> torch.device:
    """The device `name` (None: cuda where there is a GPU, else cpu); a name torch does not know, or cuda
    without a visible GPU, is an error naming `option` before any model is built."""
    if name is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ValueError(f"{option} {name}: not a torch device (cpu, cuda, cuda:N)") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{option} {name}: no GPU is visible to torch here; use {option} cpu")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise ValueError(f"{option} {name}: only {torch.cuda.device_count()} GPU(s) are visible here")
    return device


class DataFreeTask:
    """What build_model reads from a task, without data: dictionaries and the context store's shape
    (`context_kind` "vectors": `context_dim`-wide vectors; "tags": `n_tags` tag ids; "tokens": source
    token ids)."""

    def __init__(self, vocab_size: int, context_dim: int = 384, doc_columns: int = 6, n_columns: int = 12,
                 context_kind: str = "vectors", n_tags: int = 1000):
        from fairseq.data import Dictionary

        dictionary = Dictionary()
        for i in range(vocab_size - len(dictionary)):
            dictionary.add_symbol(f"w{i}")
        self.source_dictionary = self.target_dictionary = dictionary
        self.context_dim, self.doc_columns, self.n_columns = context_dim, doc_columns, n_columns
        self.context_kind, self.n_tags = context_kind, n_tags


def build_model(model_type: str, arch_args: dict, task: DataFreeTask):
    """The fairseq model of config type `model_type` with `arch_args` (fairseq argument names with
    underscores, e.g. {"encoder_layers": 6}) over the architecture's defaults; shared embeddings by
    default. A `task` of another context kind than the model reads is adjusted to it."""
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    import mtcue.models.plugin  # noqa: F401  (registers the contextual models)

    arch = FAIRSEQ_ARCH[model_type]
    task.context_kind = arch_args.get("context_kind") or store_kind(model_type) or task.context_kind
    if MODEL_TYPES[model_type].style_mode == "token" and getattr(task, "first_symbol", None) is None:
        from mtcue.models.plugin.style.style_task import add_style_symbols

        task.first_symbol = add_style_symbols(task.source_dictionary)  # shared with the target side
    args = argparse.Namespace(arch=arch, **{"share_all_embeddings": True, **arch_args})
    ARCH_CONFIG_REGISTRY[arch](args)
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task)


def dummy_batch(model_type: str, task: DataFreeTask, batch_size: int = 2, length: int = 5,
                context_sentences: int = 1) -> dict:
    """A net_input with every token and every context column present; a token model reading several
    context sentences gets [B, context_sentences, L]."""
    vocab = len(task.source_dictionary)
    tokens = torch.randint(task.source_dictionary.nspecial, vocab, (batch_size, length))
    batch = {"src_tokens": tokens, "src_lengths": torch.full((batch_size,), length),
             "prev_output_tokens": tokens.flip(1)}
    if MODEL_TYPES[model_type].style_mode == "value":  # the continuous style value of each sentence
        batch["style"] = torch.zeros(batch_size)
    kind = store_kind(model_type) and task.context_kind
    if kind == "vectors":
        batch["context"] = torch.randn(batch_size, task.n_columns, task.context_dim)
    elif kind == "tags":
        batch["context"] = torch.randint(0, task.n_tags, (batch_size, task.n_columns))
    elif kind == "tokens":  # a context sentence of the source vocabulary
        shape = (batch_size, length + 1) if context_sentences == 1 else (batch_size, context_sentences, length + 1)
        batch["context"] = torch.randint(task.source_dictionary.nspecial, vocab, shape)
        batch["context_padding_mask"] = torch.zeros(shape, dtype=torch.bool)
        return batch
    if kind:
        batch["context_padding_mask"] = torch.zeros(batch_size, task.n_columns, dtype=torch.bool)
    return batch


def count_parameters(model_type: str, arch_args: dict, vocab_size: int, context_dim: int, doc_columns: int,
                     n_columns: int, n_tags: int = 1000) -> dict:
    """{"model", "total", "effective", "unused": [names], "by_module": {module: total}} for one model."""
    task = DataFreeTask(vocab_size, context_dim, doc_columns, n_columns, n_tags=n_tags)
    torch.manual_seed(0)
    model = build_model(model_type, arch_args, task)
    for param in model.parameters():  # the architecture's use of each tensor, not a freezing option's
        param.requires_grad_(True)
    logits, _ = model(**dummy_batch(model_type, task, context_sentences=arch_args.get("context_sentences", 1)))
    logits.float().sum().backward()
    named = list(model.named_parameters())  # tied tensors appear once, under their first name
    by_module: dict[str, int] = {}
    for name, p in named:
        module = ".".join(name.split(".")[:2]) if name.startswith("encoder.context_") else (
            f"{name.split('.')[0]}.context_attn" if ".context_attn." in name or ".context_gate." in name else
            "embeddings" if name.endswith("embed_tokens.weight") else name.split(".")[0])
        by_module[module] = by_module.get(module, 0) + p.numel()
    return {
        "model": model_type,
        "total": sum(p.numel() for _, p in named),
        "effective": sum(p.numel() for _, p in named if p.grad is not None),
        "unused": [name for name, p in named if p.grad is None],
        "by_module": by_module,
    }


def parse_arch_args(argv: list[str]) -> tuple[str, dict]:
    """(model type, arch_args) from a fairseq command line's --arch and model arguments, parsed the
    way fairseq parses them (unset arguments stay unset, so architecture defaults apply)."""
    from fairseq.models import ARCH_MODEL_REGISTRY

    import mtcue.models.plugin  # noqa: F401

    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS, allow_abbrev=False)
    parser.add_argument("--arch", required=True)
    arch = parser.parse_known_args(argv)[0].arch
    ARCH_MODEL_REGISTRY[arch].add_args(parser)
    args = vars(parser.parse_known_args(argv)[0])
    del args["arch"]
    model_type = next(t for t, a in FAIRSEQ_ARCH.items() if a == arch)
    return model_type, args


# Widths of sentence encoders other than MiniLM's 384, for counting without data or downloads
# (training takes the width from the context store's manifest).
ENCODER_DIMS = {"distilbert-base-uncased": 768, "distilbert-base-cased": 768,
                "distilbert-base-multilingual-cased": 768}


def count_config(cfg: dict, vocab_size: int, n_tags: int = 1000) -> dict:
    """count_parameters for every model of a pipeline config (in its first direction), from the
    same fairseq arguments that training uses. `n_tags`: TAGGING's tag vocabulary size."""
    from mtcue.models import fairseq_args as fa
    from mtcue.plan.models import model_columns, model_spec

    counts = {}
    for name in cfg["models"]:
        spec = model_spec(cfg, name, cfg["directions"][0])
        encoder = spec.get("context", {}).get("encoder", "")
        columns = model_columns(cfg, name)
        model_type, arch_args = parse_arch_args(fa.arch_args(spec))
        counts[name] = count_parameters(model_type, arch_args, vocab_size, ENCODER_DIMS.get(encoder.rsplit("/", 1)[-1], 384),
                                        sum(c.startswith("doc") for c in columns), len(columns), n_tags)
    return counts
