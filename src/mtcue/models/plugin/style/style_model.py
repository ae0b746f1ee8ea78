"""What the two style-control models share (Jeong et al., Korean-English; task `style_translation`):
fine-tuning from a parent fairseq transformer (`--pretrained-base`: BASE, or a pretrained checkpoint of
the same shape at paper scale), Jeong et al.'s freezing options and the init of the new weights."""
from __future__ import annotations

import torch
from fairseq.models.transformer import TransformerModel

from ..pretrained import load_pretrained_base

FREEZE = ("none", "encoder", "encoder_decoder")
INIT = ("zero", "normal")


def init_new(tensor: torch.Tensor, how: str) -> None:
    """Jeong et al.'s init of a new weight: zero, or N(0, 0.25) truncated to [-0.5, 0.5] (read as standard
    deviation 0.25; their notation does not say whether 0.25 is the variance)."""
    with torch.no_grad():
        if how == "zero":
            tensor.zero_()
        else:
            torch.nn.init.trunc_normal_(tensor, std=0.25, a=-0.5, b=0.5)


class StyleModel(TransformerModel):
    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--pretrained-base", metavar="CKPT",
                            help="the parent: a checkpoint of a fairseq transformer of the same shape")
        parser.add_argument("--pretrained-report", metavar="JSON", help="write the --pretrained-base report here")
        parser.add_argument("--style-freeze", choices=FREEZE,
                            help="parent weights kept fixed: none, the encoder, or encoder and decoder (then only "
                                 "the shared embeddings and the new style weights train)")
        parser.add_argument("--style-init", choices=INIT, help="new weights: zero or truncated N(0, 0.25)")

    @classmethod
    def adapt_parent(cls, model, state: dict) -> dict:
        """The parent's state made to fit `model` (default: as it is)."""
        return state

    @classmethod
    def build_model(cls, args, task):
        model = super().build_model(args, task)
        if args.pretrained_base and not getattr(task, "building_from_checkpoint", False):
            load_pretrained_base(model, args.pretrained_base, args.pretrained_report, new_prefixes=("style_",),
                                 adapt=lambda state: cls.adapt_parent(model, state))
        freeze(model, args.style_freeze)
        return model


def freeze(model: torch.nn.Module, what: str) -> None:
    """Fix the parent's weights of the named parts; the shared embeddings and every style_* weight train."""
    parts = {"none": (), "encoder": ("encoder.",), "encoder_decoder": ("encoder.", "decoder.")}[what]
    for name, param in model.named_parameters():
        trains = "embed_tokens" in name or "output_projection" in name or "style_" in name
        param.requires_grad_(trains or not name.startswith(parts))


def style_defaults(args) -> None:
    args.pretrained_base = getattr(args, "pretrained_base", None)
    args.pretrained_report = getattr(args, "pretrained_report", None)
    args.style_freeze = getattr(args, "style_freeze", None) or "none"
    args.style_init = getattr(args, "style_init", None) or "zero"
