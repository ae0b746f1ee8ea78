"""MTCue's context encoder (paper section 2.2): context vectors -> bias-free linear projection ->
+ slot positions for document columns -> times sqrt(d_model) -> dropout -> self-attention layers
with QK-norm. NOVOTNEY-CUE uses the same encoder (with QK-norm too, as in the authors' code).

The ablations of Table 6 switch its parts off: `--context-layers 0` (the projection goes straight
to the decoder), `--no-context-positions`, `--context-kind tags` (one learned embedding per
context string instead of projected sentence vectors) and `--no-qk-norm`."""
from __future__ import annotations

import copy
import math

import torch
from fairseq.modules import FairseqDropout, LayerNorm
from fairseq.modules.transformer_layer import TransformerEncoderLayerBase
from torch import Tensor, nn

from .qk_norm_attention import QKNormAttention, default_qk_scale
from .scaled_embedding import ScaledEmbedding


class QKNormEncoderLayer(TransformerEncoderLayerBase):
    """fairseq's encoder layer (residual, layer norm placement, FFN) with QK-norm self-attention."""

    def build_self_attention(self, embed_dim, cfg):
        return QKNormAttention(embed_dim, cfg.encoder.attention_heads, scale_init=cfg.qk_norm_scale_init,
                               dropout=cfg.attention_dropout)


def add_context_encoder_args(parser) -> None:
    # No defaults here: the architecture functions set them (fairseq's legacy convention).
    parser.add_argument("--context-layers", type=int, help="context encoder layers (paper: 6)")
    parser.add_argument("--context-attention-heads", type=int, help="context encoder attention heads")
    parser.add_argument("--context-ffn-embed-dim", type=int, help="context encoder FFN dimension")
    parser.add_argument("--context-doc-positions", type=int,
                        help="document slot positions (default: the document columns the data selects); a model "
                             "fine-tuned on fewer document columns than its parent read keeps the parent's")
    parser.add_argument("--no-context-positions", action="store_true",
                        help="add no slot positions to the document columns (ablation)")
    parser.add_argument("--qk-norm-scale-init", type=float,
                        help="initial QK-norm scale g; default log2(L^2-L) with L the number of context "
                             "columns (Henry et al., 2020); the authors' code used 8.41")
    parser.add_argument("--no-qk-norm", action="store_true",
                        help="standard scaled dot-product attention in the context encoder (ablation)")
    parser.add_argument("--context-kind", choices=["vectors", "tags"],
                        help="vectors: sentence embeddings through a linear projection (default); tags: one "
                             "learned embedding per context string from a tag store (the discrete ablation)")


def context_encoder_defaults(args) -> None:
    """Paper sizes: 6 layers, heads and FFN as the source encoder's; positions on; sentence vectors;
    QK-norm with the scale set from the data (set_qk_norm_scale)."""
    args.context_layers = getattr(args, "context_layers", 6)
    args.context_attention_heads = getattr(args, "context_attention_heads", args.encoder_attention_heads)
    args.context_ffn_embed_dim = getattr(args, "context_ffn_embed_dim", args.encoder_ffn_embed_dim)
    args.no_context_positions = getattr(args, "no_context_positions", False)
    args.context_kind = getattr(args, "context_kind", None) or "vectors"
    args.qk_norm_scale_init = getattr(args, "qk_norm_scale_init", None)
    args.no_qk_norm = getattr(args, "no_qk_norm", False)


def set_qk_norm_scale(args, n_columns: int) -> None:
    """The QK-norm scale's initial value from the data (Henry et al.'s log2(L^2 - L)) unless given."""
    if args.no_qk_norm and args.qk_norm_scale_init is not None:
        raise ValueError("--qk-norm-scale-init is set but --no-qk-norm switches QK-norm off")
    if args.qk_norm_scale_init is None and not args.no_qk_norm:
        args.qk_norm_scale_init = default_qk_scale(n_columns)


class ContextEncoder(nn.Module):
    """Encodes [B, S, input_dim] context vectors (or [B, S] tag ids when `n_tags` is given) into
    [S, B, d] states.

    Column j < doc_columns is document slot j (0 = the current sentence, 1.. = previous ones, most
    recent first) and gets the learned slot embedding POS(j); metadata and cue columns get none;
    `doc_positions` 0 leaves positions out altogether. Vectors are projected without a bias and the
    sum scaled by sqrt(d), as the authors' `lin_proj` and `embed_scale`: the paper's "abnormally
    large input values" that QK-norm answers come from that scale. (Tag embeddings are already
    scaled by ScaledEmbedding.) Context dropout is element-wise dropout on
    the embedded sequence, as in the authors' code. Layers follow the source encoder's pre/post-norm
    setting (cfg.encoder.normalize_before) and use QK-norm attention with initial scale
    `qk_norm_scale_init`, or fairseq's standard attention when that is None; with 0 layers the
    embedded sequence is the output.
    """

    def __init__(self, cfg, input_dim: int | None, doc_positions: int, layers: int, attention_heads: int,
                 ffn_embed_dim: int, context_dropout: float, qk_norm_scale_init: float | None,
                 n_tags: int | None = None):
        super().__init__()
        embed_dim = cfg.encoder.embed_dim
        self.project = self.embed_tags = None
        if n_tags:
            self.embed_tags = ScaledEmbedding(n_tags, embed_dim)
        else:
            self.project = nn.Linear(input_dim, embed_dim, bias=False)
            nn.init.xavier_uniform_(self.project.weight)
        self.embed_scale = math.sqrt(embed_dim)
        self.embed_positions = nn.Embedding(doc_positions, embed_dim) if doc_positions else None
        if self.embed_positions is not None:
            nn.init.normal_(self.embed_positions.weight, mean=0.0, std=embed_dim ** -0.5)
        self.doc_columns = doc_positions
        self.dropout_module = FairseqDropout(context_dropout, module_name=self.__class__.__name__)

        layer_cfg = copy.deepcopy(cfg)
        layer_cfg.encoder.attention_heads = attention_heads
        layer_cfg.encoder.ffn_embed_dim = ffn_embed_dim
        layer_cfg.qk_norm_scale_init = qk_norm_scale_init
        layer = TransformerEncoderLayerBase if qk_norm_scale_init is None else QKNormEncoderLayer
        self.layers = nn.ModuleList([layer(layer_cfg) for _ in range(layers)])
        self.layer_norm = LayerNorm(embed_dim) if cfg.encoder.normalize_before else None

    @classmethod
    def from_args(cls, cfg, args) -> "ContextEncoder":
        """Built from a model's fairseq args (context_* and QK-norm options) and its TransformerConfig."""
        tags = args.context_kind == "tags"
        return cls(cfg, input_dim=None if tags else args.context_input_dim, n_tags=args.context_tags if tags else None,
                   doc_positions=args.context_doc_positions, layers=args.context_layers,
                   attention_heads=args.context_attention_heads, ffn_embed_dim=args.context_ffn_embed_dim,
                   context_dropout=args.context_dropout,
                   qk_norm_scale_init=None if args.no_qk_norm else args.qk_norm_scale_init)

    def set_doc_columns(self, k: int):
        """Declare how many leading input columns are document slots (the task may select fewer
        than the model has positions for, e.g. none to switch document context off)."""
        available = 0 if self.embed_positions is None else self.embed_positions.num_embeddings
        if not 0 <= k <= available:
            raise ValueError(f"the data has {k} document columns but the model has {available} document positions")
        self.doc_columns = k

    def forward_embedding(self, context: Tensor) -> Tensor:
        """[B, S, input_dim] vectors (or [B, S] tag ids) -> embedded plus document slot positions, [B, S, d]:
        sqrt(d) * (W v + POS(j)) for vectors (the authors' order), embed_tags(id) + POS(j) for tags."""
        if self.embed_tags is not None:
            x = self.embed_tags(context)
        else:
            # Cast to the model's dtype: batches arrive as float32 even when the model runs in fp16.
            x = self.project(context.to(self.project.weight.dtype))
        k = self.doc_columns
        if k:
            x = torch.cat([x[:, :k] + self.embed_positions.weight[:k], x[:, k:]], dim=1)
        return x if self.embed_tags is not None else self.embed_scale * x

    def forward(self, context: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        """context [B, S, input_dim], padding_mask bool [B, S] (True = missing) -> ([S, B, d], mask)."""
        x = self.dropout_module(self.forward_embedding(context)).transpose(0, 1)
        # A sample without any context would softmax over nothing (NaN in standard attention): let
        # it attend to its padding; its states stay masked for every consumer.
        attend_mask = padding_mask & ~padding_mask.all(dim=1, keepdim=True)
        for layer in self.layers:
            x = layer(x, encoder_padding_mask=attend_mask)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        return x, padding_mask
