"""Parameter counts of the fairseq models, built without any data.

`total` counts every parameter tensor once (tied embeddings once). `effective` leaves out
tensors that never receive a gradient (registered but unused), found by one forward/backward
pass on a dummy batch; this is how the reference notes count the authors' code, which registers
unused modules.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class ModelKind:
    arch: str            # fairseq architecture name
    uses_context: bool   # batches carry net_input["context"] (task contextual_translation)


# New model types (base_pm, tagging, novotney_cue) are one entry each once their fairseq code exists.
MODEL_KINDS = {
    "base": ModelKind("transformer", uses_context=False),
    "mtcue": ModelKind("mtcue", uses_context=True),
}


class DataFreeTask:
    """What build_model reads from a task, without data: dictionaries and the context store's shape."""

    def __init__(self, vocab_size: int, context_dim: int = 384, doc_columns: int = 6, n_columns: int = 12):
        from fairseq.data import Dictionary

        dictionary = Dictionary()
        for i in range(vocab_size - len(dictionary)):
            dictionary.add_symbol(f"w{i}")
        self.source_dictionary = self.target_dictionary = dictionary
        self.context_dim, self.doc_columns, self.n_columns = context_dim, doc_columns, n_columns


def build_model(model_name: str, arch_args: dict, task: DataFreeTask):
    """The fairseq model `model_name` with `arch_args` (fairseq argument names with underscores,
    e.g. {"encoder_layers": 6}) over the architecture's defaults; shared embeddings by default."""
    import mtcue.plugin  # noqa: F401  (registers mtcue)
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    arch = MODEL_KINDS[model_name].arch
    args = argparse.Namespace(arch=arch, **{"share_all_embeddings": True, **arch_args})
    ARCH_CONFIG_REGISTRY[arch](args)
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task)


def dummy_batch(model_name: str, task: DataFreeTask, batch_size: int = 2, length: int = 5) -> dict:
    """A net_input with every token and every context column present."""
    vocab = len(task.source_dictionary)
    tokens = torch.randint(task.source_dictionary.nspecial, vocab, (batch_size, length))
    batch = {"src_tokens": tokens, "src_lengths": torch.full((batch_size,), length),
             "prev_output_tokens": tokens.flip(1)}
    if MODEL_KINDS[model_name].uses_context:
        batch["context"] = torch.randn(batch_size, task.n_columns, task.context_dim)
        batch["context_padding_mask"] = torch.zeros(batch_size, task.n_columns, dtype=torch.bool)
    return batch


def count_parameters(model_name: str, arch_args: dict, vocab_size: int, context_dim: int, doc_columns: int,
                     n_columns: int) -> dict:
    """{"model", "total", "effective", "unused": [names], "by_module": {module: total}} for one model."""
    task = DataFreeTask(vocab_size, context_dim, doc_columns, n_columns)
    torch.manual_seed(0)
    model = build_model(model_name, arch_args, task)
    logits, _ = model(**dummy_batch(model_name, task))
    logits.float().sum().backward()
    named = list(model.named_parameters())  # tied tensors appear once, under their first name
    by_module: dict[str, int] = {}
    for name, p in named:
        module = "encoder.context_encoder" if name.startswith("encoder.context_encoder.") else (
            "decoder.context_attn" if ".context_attn." in name else
            "embeddings" if name.endswith("embed_tokens.weight") else name.split(".")[0])
        by_module[module] = by_module.get(module, 0) + p.numel()
    return {
        "model": model_name,
        "total": sum(p.numel() for _, p in named),
        "effective": sum(p.numel() for _, p in named if p.grad is not None),
        "unused": [name for name, p in named if p.grad is None],
        "by_module": by_module,
    }


def parse_arch_args(argv: list[str]) -> tuple[str, dict]:
    """(model type, arch_args) from a fairseq command line's --arch and model arguments, parsed the
    way fairseq parses them (unset arguments stay unset, so architecture defaults apply)."""
    import mtcue.plugin  # noqa: F401
    from fairseq.models import ARCH_MODEL_REGISTRY

    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS, allow_abbrev=False)
    parser.add_argument("--arch", required=True)
    arch = parser.parse_known_args(argv)[0].arch
    ARCH_MODEL_REGISTRY[arch].add_args(parser)
    args = vars(parser.parse_known_args(argv)[0])
    del args["arch"]
    model_name = next(name for name, kind in MODEL_KINDS.items() if kind.arch == arch)
    return model_name, args


def count_config(cfg: dict, vocab_size: int, context_dim: int = 384) -> dict:
    """count_parameters for every model of a pipeline config, from the same fairseq arguments that
    training uses. `context_dim`: the sentence encoder's width (MiniLM: 384)."""
    from mtcue import config as cfgmod
    from mtcue import fairseq_cli_args as fa

    columns = cfgmod.context_columns(cfg)
    doc_columns = cfg["context"]["doc_slots"] + 1
    counts = {}
    for name in cfg["models"]:
        model_name, arch_args = parse_arch_args(fa.arch_args(cfgmod.model_spec(cfg, name)))
        counts[name] = count_parameters(model_name, arch_args, vocab_size, context_dim, doc_columns, len(columns))
    return counts
