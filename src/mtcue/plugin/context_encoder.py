"""MTCue's context encoder (paper section 2.2): context vectors -> linear projection -> + slot
positions for document columns -> dropout -> self-attention layers with QK-norm."""
from __future__ import annotations

import copy

import torch
from fairseq.modules import FairseqDropout, LayerNorm
from fairseq.modules.transformer_layer import TransformerEncoderLayerBase
from torch import Tensor, nn

from .qk_norm_attention import QKNormAttention


class QKNormEncoderLayer(TransformerEncoderLayerBase):
    """fairseq's encoder layer (residual, layer norm placement, FFN) with QK-norm self-attention."""

    def build_self_attention(self, embed_dim, cfg):
        return QKNormAttention(embed_dim, cfg.encoder.attention_heads, scale_init=cfg.qk_norm_scale_init,
                               dropout=cfg.attention_dropout)


class ContextEncoder(nn.Module):
    """Encodes [B, S, input_dim] context vectors into [S, B, d] states.

    Column j < doc_columns is document slot j (0 = the current sentence, 1.. = previous ones, most
    recent first) and gets the learned slot embedding POS(j); metadata and cue columns get none.
    Context dropout is element-wise dropout on the embedded sequence, as in the authors' code.
    Layers follow the source encoder's pre/post-norm setting (cfg.encoder.normalize_before).
    """

    def __init__(self, cfg, input_dim: int, doc_positions: int, layers: int, attention_heads: int,
                 ffn_embed_dim: int, context_dropout: float, qk_norm_scale_init: float):
        super().__init__()
        embed_dim = cfg.encoder.embed_dim
        self.project = nn.Linear(input_dim, embed_dim)
        nn.init.xavier_uniform_(self.project.weight)
        nn.init.zeros_(self.project.bias)
        self.embed_positions = nn.Embedding(doc_positions, embed_dim) if doc_positions else None
        if self.embed_positions is not None:
            nn.init.normal_(self.embed_positions.weight, mean=0.0, std=embed_dim ** -0.5)
        self.doc_columns = doc_positions
        self.dropout_module = FairseqDropout(context_dropout, module_name=self.__class__.__name__)

        layer_cfg = copy.deepcopy(cfg)
        layer_cfg.encoder.attention_heads = attention_heads
        layer_cfg.encoder.ffn_embed_dim = ffn_embed_dim
        layer_cfg.qk_norm_scale_init = qk_norm_scale_init
        self.layers = nn.ModuleList([QKNormEncoderLayer(layer_cfg) for _ in range(layers)])
        self.layer_norm = LayerNorm(embed_dim) if cfg.encoder.normalize_before else None

    def set_doc_columns(self, k: int):
        """Declare how many leading input columns are document slots (the task may select fewer
        than the model has positions for, e.g. none to switch document context off)."""
        available = 0 if self.embed_positions is None else self.embed_positions.num_embeddings
        if not 0 <= k <= available:
            raise ValueError(f"the data has {k} document columns but the model has {available} document positions")
        self.doc_columns = k

    def forward_embedding(self, context: Tensor) -> Tensor:
        """[B, S, input_dim] -> projected vectors plus document slot positions, [B, S, d]."""
        # Cast to the model's dtype: batches arrive as float32 even when the model runs in fp16.
        x = self.project(context.to(self.project.weight.dtype))
        k = self.doc_columns
        if k:
            x = torch.cat([x[:, :k] + self.embed_positions.weight[:k], x[:, k:]], dim=1)
        return x

    def forward(self, context: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        """context [B, S, input_dim], padding_mask bool [B, S] (True = missing) -> ([S, B, d], mask)."""
        x = self.dropout_module(self.forward_embedding(context)).transpose(0, 1)
        for layer in self.layers:
            x = layer(x, encoder_padding_mask=padding_mask)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        return x, padding_mask
