"""What the context-reading models (mtcue, tagging, novotney_cue) share: command-line options for
context dropout and initialisation, sizes taken from the task's context store, initialisation
from a trained non-contextual model of the same shape, and a forward pass that hands the batch's
context to the encoder.

`PrependedContextEncoder` is the source encoder of the two baselines whose decoder is fairseq's
own: their context states are prepended to the source states, so the decoder's one
cross-attention reads both (TAGGING, NOVOTNEY-CUE; MTCue attends to them in parallel instead).
"""
from __future__ import annotations

from typing import Optional

import torch
from fairseq.models import ARCH_CONFIG_REGISTRY
from fairseq.models.transformer import TransformerEncoder, TransformerModel
from torch import Tensor

from .context_encoder import add_context_encoder_args, set_qk_norm_scale
from .pretrained import load_pretrained_base


def contextual_defaults(args) -> None:
    """Defaults of the shared options, for the architecture functions."""
    args.context_dropout = getattr(args, "context_dropout", 0.25)
    args.pretrained_base = getattr(args, "pretrained_base", None)
    args.pretrained_report = getattr(args, "pretrained_report", None)


def set_from_data(args, name: str, value, what: str) -> None:
    """Record a size that comes from the data in args (hence in checkpoints, so a model loaded for
    generation keeps its shapes); a model built earlier must agree with the data it is given."""
    current = getattr(args, name, None)
    if current is None:
        setattr(args, name, value)
    elif current != value:
        raise ValueError(f"the model was built for {what} {current}, the context store has {value}")


class ContextualModel(TransformerModel):
    context_kind = "vectors"  # the store kind the model reads (docs/formats.md, section 2)

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--context-dropout", type=float,
                            help="element-wise dropout on the embedded context sequence (paper: 0.25)")
        parser.add_argument("--pretrained-base", metavar="CKPT",
                            help="initialise every non-context tensor from this checkpoint of a fairseq "
                                 "transformer of the same shape (BASE, BASE-PM); fails unless all of them load")
        parser.add_argument("--pretrained-report", metavar="JSON", help="write the --pretrained-base report here")

    @classmethod
    def reads(cls, args) -> str:
        """The store kind this model, as configured by `args`, reads."""
        return cls.context_kind

    @classmethod
    def set_context_sizes(cls, args, task) -> None:
        """Copy the sizes the model takes from the store (task) into args."""
        raise NotImplementedError

    @classmethod
    def build_model(cls, args, task):
        ARCH_CONFIG_REGISTRY[args.arch](args)
        kind, wanted = getattr(task, "context_kind", None), cls.reads(args)
        if kind != wanted:
            where = (f"--context-dir {task.store.dir} is a '{kind}' store" if hasattr(task, "store") else
                     "use --task contextual_translation with --context-dir")
            raise ValueError(f"--arch {args.arch} reads a '{wanted}' context store: {where}")
        cls.set_context_sizes(args, task)
        model = super().build_model(args, task)
        if args.pretrained_base and not getattr(task, "building_from_checkpoint", False):
            # In fairseq-train this runs before the trainer restores checkpoint_last.pt, which then
            # overwrites every tensor: resuming is unaffected. Generation skips it (from_checkpoint).
            load_pretrained_base(model, args.pretrained_base, args.pretrained_report)
        return model

    def forward(self, src_tokens, src_lengths, prev_output_tokens, context, context_padding_mask,
                return_all_hiddens: bool = True, features_only: bool = False,
                alignment_layer: Optional[int] = None, alignment_heads: Optional[int] = None):
        encoder_out = self.encoder(src_tokens, src_lengths=src_lengths, context=context,
                                   context_padding_mask=context_padding_mask, return_all_hiddens=return_all_hiddens)
        return self.decoder(prev_output_tokens, encoder_out=encoder_out, features_only=features_only,
                            alignment_layer=alignment_layer, alignment_heads=alignment_heads,
                            src_lengths=src_lengths, return_all_hiddens=return_all_hiddens)


class TokenContextModel(ContextualModel):
    """A model that reads neighbouring source lines as token ids (the token store, CONCAT and
    VOITA-CONTEXT): its context shares the source vocabulary, so the store sets no size."""

    context_kind = "tokens"

    @classmethod
    def set_context_sizes(cls, args, task):
        pass


class VectorContextModel(ContextualModel):
    """A model whose encoder owns a `context_encoder` (ContextEncoder) over sentence-embedding
    vectors, or over tag ids with `--context-kind tags`."""

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        add_context_encoder_args(parser)

    @classmethod
    def reads(cls, args):
        return args.context_kind

    @classmethod
    def set_context_sizes(cls, args, task):
        if args.context_kind == "tags":
            set_from_data(args, "context_tags", task.n_tags, "a tag vocabulary of size")
        else:
            set_from_data(args, "context_input_dim", task.context_dim, "context vectors of width")
        # The task may select fewer document columns than the model has positions for.
        if getattr(args, "context_doc_positions", None) is None:
            args.context_doc_positions = 0 if args.no_context_positions else task.doc_columns
        set_qk_norm_scale(args, task.n_columns)

    @classmethod
    def build_model(cls, args, task):
        model = super().build_model(args, task)
        model.encoder.context_encoder.set_doc_columns(0 if args.no_context_positions else task.doc_columns)
        return model


def require_context(context, context_padding_mask) -> None:
    if context is None or context_padding_mask is None:
        raise ValueError("this model needs net_input['context'] and ['context_padding_mask']: "
                         "use --task contextual_translation")


class PrependedContextEncoder(TransformerEncoder):
    """fairseq's source encoder; its `encoder_out` is [context states; source states] with the
    matching padding mask. Subclasses implement `encode_context`."""

    def encode_context(self, context: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        """The batch's context ([B, S, ...], mask [B, S]) -> states [S', B, d] and their mask [B, S']."""
        raise NotImplementedError

    def forward(self, src_tokens, src_lengths=None, context=None, context_padding_mask=None,
                return_all_hiddens: bool = False, token_embeddings=None):
        require_context(context, context_padding_mask)
        out = super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)
        source = out["encoder_out"][0]
        states, mask = self.encode_context(context, context_padding_mask)
        out["encoder_out"] = [torch.cat([states.to(source.dtype), source], dim=0)]
        out["encoder_padding_mask"] = [torch.cat([mask, out["encoder_padding_mask"][0]], dim=1)]
        return out
