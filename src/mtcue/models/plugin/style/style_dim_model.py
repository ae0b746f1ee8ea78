"""Model `style_dim` (Jeong et al., Korean-English style control, approach 1, "encoder output
extension"): the encoder output gains one channel holding the sentence's continuous style value
(net_input["style"], task `style_translation --style-mode value`), and every head of every decoder
cross-attention (the attention that reads the encoder output) is one dimension wider: per head, query,
key and value gain a dimension (the decoder side's extra input is 0, the encoder side's is the style
value) and the output projection a column.

New weights (`style_*`): the new input column of the key and value projections (the style value into
the old dimensions), the new output row of the query, key and value projections (each head's new
dimension), the output projection's new column; truncated N(0, 0.25) (`--style-init normal`), new biases
zero. `--style-init zero` keeps the style-control paper's intent: the model computes exactly its parent's function
(tests/test_style.py) and every new weight learns that can. So only one factor of each product of two new
weights is zero: the new query row (its scores are new query x new key) and the output column (new value x
output column), with the columns into the old dimensions; the new key and value rows are drawn as at
normal init. Were both factors zero, each would pass the other an identically zero gradient and the new
head dimensions would never train: only the value column into the old dimensions would.

Three new weights never learn, at either init: the key column into the old dimensions, the new key row's
bias and its style-input column. The style value is the same at every source position, so what they add to
a key is the same for all of a query's keys and cancels in the softmax (as the parent's k_proj bias does);
the style-control paper's widened keys read the same constant channel, so the same holds there.

Where the style-control paper widens more (docs/deviations.md): it widens the whole decoder state (1024 ->
1040) and with it the layer norms, the feed-forward layers and the scaling of the attention scores (by the
new head width); a layer norm over the widened state (mean and variance over d + H values, H of them 0),
or the new scaling, changes the parent's outputs even at zero init. Here the decoder state keeps its width,
the norms their original width and the scores the parent's scaling, so the zero-init claim holds.
"""
from __future__ import annotations

import torch
from fairseq.incremental_decoding_utils import with_incremental_state
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerEncoder, base_architecture
from torch import Tensor, nn

from .style_model import StyleModel, init_new, style_defaults


@with_incremental_state
class StyleCrossAttention(nn.Module):
    """fairseq's encoder-decoder MultiheadAttention (same parameter names, so the parent's load) with one
    more dimension per head; `key` and `value` are the widened encoder output [S, B, d + 1]. In incremental
    decoding the keys and values are computed once and reordered with the beams, as fairseq's."""

    def __init__(self, parent, init: str):
        super().__init__()
        d, h = parent.embed_dim, parent.num_heads
        self.embed_dim, self.num_heads, self.head_dim = d, h, d // h
        self.scaling = self.head_dim ** -0.5  # the parent's (not the widened head's): exact at zero init
        self.dropout_module = parent.dropout_module
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = parent.q_proj, parent.k_proj, parent.v_proj, parent.out_proj
        self.style_q = nn.Linear(d, h)  # each head's new query dimension (the decoder's extra input is 0)
        self.style_k, self.style_v = nn.Linear(d + 1, h), nn.Linear(d + 1, h)  # new key / value dimension
        self.style_k_col, self.style_v_col = nn.Parameter(torch.empty(d)), nn.Parameter(torch.empty(d))
        self.style_out_col = nn.Parameter(torch.empty(d, h))  # each head's new value dimension -> output
        for linear in (self.style_q, self.style_k, self.style_v):
            # zero init: the new key and value rows are the nonzero factors (the module's docstring)
            init_new(linear.weight, init if linear is self.style_q else "normal")
            nn.init.zeros_(linear.bias)
        for param in (self.style_k_col, self.style_v_col, self.style_out_col):
            init_new(param, init)

    def reorder_incremental_state(self, incremental_state, new_order: Tensor):
        cached = self.get_incremental_state(incremental_state, "kv")
        if cached:
            cached = {name: t.index_select(0, new_order) for name, t in cached.items()}
            incremental_state = self.set_incremental_state(incremental_state, "kv", cached)
        return incremental_state

    def _heads(self, old: Tensor, new: Tensor) -> Tensor:
        """[L, B, d] and [L, B, H] -> [B, H, L, head_dim + 1]"""
        length, batch = old.shape[:2]
        old = old.view(length, batch, self.num_heads, self.head_dim)
        return torch.cat([old, new.unsqueeze(-1)], dim=-1).permute(1, 2, 0, 3)

    def forward(self, query, key, value=None, key_padding_mask=None, incremental_state=None, static_kv=True,
                need_weights=False, need_head_weights=False, attn_mask=None, **kwargs):
        q = self._heads(self.q_proj(query), self.style_q(query)) * self.scaling
        cached = self.get_incremental_state(incremental_state, "kv") if incremental_state is not None else None
        if cached:
            k, v = cached["k"], cached["v"]
        else:
            encoded, style = key[..., :-1], key[..., -1:]
            k = self._heads(self.k_proj(encoded) + style * self.style_k_col, self.style_k(key))
            v = self._heads(self.v_proj(encoded) + style * self.style_v_col, self.style_v(key))
            if incremental_state is not None:
                self.set_incremental_state(incremental_state, "kv", {"k": k, "v": v})
        scores = q @ k.transpose(-1, -2)  # [B, H, T, S]
        if key_padding_mask is not None:
            scores = scores.masked_fill(key_padding_mask[:, None, None, :].to(torch.bool), float("-inf"))
        weights = torch.softmax(scores.float(), dim=-1).type_as(scores)
        out = self.dropout_module(weights) @ v  # [B, H, T, head_dim + 1]
        length, batch = query.shape[:2]
        old = out[..., :-1].permute(2, 0, 1, 3).reshape(length, batch, self.embed_dim)
        x = self.out_proj(old) + out[..., -1].permute(2, 0, 1) @ self.style_out_col.t()
        if not (need_weights or need_head_weights):
            return x, None
        return x, weights.transpose(0, 1) if need_head_weights else weights.mean(dim=1)


class StyleDimEncoder(TransformerEncoder):
    def forward(self, src_tokens, src_lengths=None, style=None, return_all_hiddens: bool = False,
                token_embeddings=None):
        if style is None:
            raise ValueError("style_dim needs net_input['style']: use --task style_translation --style-mode value")
        out = super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)
        states = out["encoder_out"][0]
        channel = style.to(states.dtype).view(1, -1, 1).expand(states.shape[0], -1, 1)
        return {**out, "encoder_out": [torch.cat([states, channel], dim=-1)]}


@register_model("style_dim")
class StyleDimModel(StyleModel):
    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return StyleDimEncoder(args, src_dict, embed_tokens)

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        decoder = super().build_decoder(args, tgt_dict, embed_tokens)
        for layer in decoder.layers:
            layer.encoder_attn = StyleCrossAttention(layer.encoder_attn, args.style_init)
        return decoder

    def forward(self, src_tokens, src_lengths, prev_output_tokens, style=None, return_all_hiddens: bool = True,
                features_only: bool = False, alignment_layer=None, alignment_heads=None):
        encoder_out = self.encoder(src_tokens, src_lengths=src_lengths, style=style,
                                   return_all_hiddens=return_all_hiddens)
        return self.decoder(prev_output_tokens, encoder_out=encoder_out, features_only=features_only,
                            alignment_layer=alignment_layer, alignment_heads=alignment_heads,
                            src_lengths=src_lengths, return_all_hiddens=return_all_hiddens)


@register_model_architecture("style_dim", "style_dim")
def style_dim_architecture(args):
    base_architecture(args)
    style_defaults(args)
