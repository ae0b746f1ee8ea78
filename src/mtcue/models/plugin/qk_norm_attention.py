"""Multi-head self-attention with query-key normalisation (Henry et al., 2020, "Query-Key
Normalization for Transformers"), used by the context encoder of MTCue and NOVOTNEY-CUE."""
from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F
from fairseq.modules import FairseqDropout
from torch import Tensor, nn


def default_qk_scale(max_length: int) -> float:
    """Henry et al.'s initial g = log2(L^2 - L), L = the longest sequence (here: context columns).

    Clamped to L >= 2 so that a single-column context still gets a finite value (g = 1).
    """
    length = max(int(max_length), 2)
    return math.log2(length * length - length)


class QKNormAttention(nn.Module):
    """scores = g * (Q_hat K_hat^T), with Q_hat and K_hat L2-normalised per head and g a learned scalar
    that replaces 1/sqrt(d_head). Same call signature and [T, B, C] layout as fairseq's
    MultiheadAttention, so fairseq's encoder layer can use it as its `self_attn`."""

    def __init__(self, embed_dim: int, num_heads: int, scale_init: float, dropout: float = 0.0):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim {embed_dim} is not divisible by {num_heads} heads")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.qk_scale = nn.Parameter(torch.tensor(float(scale_init)))
        self.dropout_module = FairseqDropout(dropout, module_name=self.__class__.__name__)
        for proj in (self.q_proj, self.k_proj, self.v_proj, self.out_proj):
            nn.init.xavier_uniform_(proj.weight)
            nn.init.zeros_(proj.bias)

    def _heads(self, x: Tensor) -> Tensor:
        """[T, B, C] -> [B, H, T, d]"""
        return x.view(x.size(0), x.size(1), self.num_heads, self.head_dim).permute(1, 2, 0, 3)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor] = None,
                need_weights: bool = False, attn_mask: Optional[Tensor] = None):
        """query [T, B, C], key/value [S, B, C], key_padding_mask bool [B, S] (True = padding),
        attn_mask additive [T, S]. Returns ([T, B, C], head-averaged weights [B, T, S] or None)."""
        tgt_len, bsz, _ = query.shape
        q, k, v = self._heads(self.q_proj(query)), self._heads(self.k_proj(key)), self._heads(self.v_proj(value))
        # Normalise in float32: fp16 cannot represent F.normalize's eps.
        q_hat = F.normalize(q.float(), dim=-1)
        k_hat = F.normalize(k.float(), dim=-1)
        scores = self.qk_scale.float() * q_hat @ k_hat.transpose(-1, -2)  # [B, H, T, S]
        if attn_mask is not None:
            scores = scores + attn_mask
        empty = None
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.bool()
            # A row whose keys are all padding would softmax over -inf only (NaN): leave it unmasked
            # here and zero its weights below, so it outputs out_proj(0) = the output bias.
            empty = key_padding_mask.all(dim=1)
            scores = scores.masked_fill((key_padding_mask & ~empty[:, None])[:, None, None, :], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if empty is not None:
            weights = weights.masked_fill(empty[:, None, None, None], 0.0)
        probs = self.dropout_module(weights).type_as(v)
        out = (probs @ v).permute(2, 0, 1, 3).reshape(tgt_len, bsz, self.embed_dim)
        return self.out_proj(out), (weights.mean(dim=1) if need_weights else None)
