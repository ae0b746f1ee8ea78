"""Parallel cross-attention (paper section 2.3; Libovicky et al., 2018): T' = w * (S' + C')."""
from __future__ import annotations

from typing import NamedTuple

from fairseq.modules import MultiheadAttention
from torch import Tensor


class SourceAndContext(NamedTuple):
    """Encoder states (or padding masks) of both encoders, handed through fairseq's decoder layer as
    its single `encoder_out` (or `encoder_padding_mask`) argument, which the stock layer only
    forwards to its `encoder_attn`."""
    source: Tensor
    context: Tensor


class ParallelCrossAttention(MultiheadAttention):
    """The decoder layer's `encoder_attn`: itself the source cross-attention (inherited parameters, so
    its state-dict keys are fairseq's `encoder_attn.*`), plus a standard cross-attention over the
    context states (`encoder_attn.context_attn.*`) on the same query. Returns w * (S' + C') and the
    source attention weights; the layer then applies its usual dropout, residual and layer norm.

    w = `weight`: 1.0 is the paper's equation, 0.5 what the authors' code did.
    """

    def __init__(self, embed_dim: int, num_heads: int, weight: float, **kwargs):
        super().__init__(embed_dim, num_heads, **kwargs)
        self.context_attn = MultiheadAttention(embed_dim, num_heads, **kwargs)
        self.weight = weight

    def forward(self, query: Tensor, key: SourceAndContext, value: SourceAndContext,
                key_padding_mask: SourceAndContext, incremental_state=None, **kwargs):
        source, attn = super().forward(query, key.source, value.source, key_padding_mask.source,
                                       incremental_state, **kwargs)
        mask = key_padding_mask.context
        # A sample without any context must contribute C' = 0, not the NaN of a softmax over nothing:
        # let its row attend (to states that are then ignored) and zero its output.
        has_context = ~mask.all(dim=1)
        context, _ = self.context_attn(query, key.context, value.context, key_padding_mask=mask & has_context[:, None],
                                       incremental_state=incremental_state, static_kv=True, need_weights=False)
        context = context * has_context[None, :, None].to(context)
        return self.weight * (source + context), attn
