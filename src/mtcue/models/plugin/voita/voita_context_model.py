"""Model `voita_context` (VOITA-CONTEXT; Voita et al., 2018, "Context-Aware Neural Machine
Translation Learns Anaphora Resolution"): a Transformer whose source encoder's last layer also
attends to a context encoder's output, the two attention results merged by a gate.

From the paper's equations and its layer count:
- the context encoder shares its first N-1 layers (and the embeddings) with the source encoder and
  has its own last layer;
- the source encoder's last layer: c_s = self-attention, c_c = attention to the context encoder's
  output, g = sigmoid(W [c_s; c_c] + b), c = g * c_s + (1 - g) * c_c, then residual, layer norm and
  the feed-forward block as in any Transformer layer;
- the context sentence starts with a marker token (here the dictionary's <s>, never on the source
  side, so BASE's embeddings fit) and ends with </s>.

The context is one slot of a token store (--context-slot prev1 or next1); every tensor of BASE
loads into the same-named tensor here, the new ones are `encoder.context_layer.*` and, in the last
layer, `context_attn.*` and `context_gate.*`.
"""
from __future__ import annotations

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerEncoder, base_architecture
from fairseq.modules import MultiheadAttention
from fairseq.modules.transformer_layer import TransformerEncoderLayer
from torch import Tensor, nn

from ..contextual_model import TokenContextModel, contextual_defaults, require_context


class GatedContextLayer(TransformerEncoderLayer):
    """A Transformer encoder layer (same parameter names) whose self-attention result is gated with
    an attention to the context states. `keep_attention`: keep the context attention weights of the
    last call, averaged over heads ([B, source length, context length]) in `context_attention`."""

    def __init__(self, args):
        super().__init__(args)
        d = args.encoder_embed_dim
        self.context_attn = MultiheadAttention(d, args.encoder_attention_heads, dropout=args.attention_dropout,
                                               encoder_decoder_attention=True)
        self.context_gate = nn.Linear(2 * d, d)
        self.keep_attention = False
        self.context_attention = None

    def gate(self, own: Tensor, context: Tensor) -> Tensor:
        g = torch.sigmoid(self.context_gate(torch.cat([own, context], dim=-1)))
        return g * own + (1 - g) * context

    def forward(self, x, encoder_padding_mask, context=None, context_padding_mask=None, attn_mask=None):
        residual = x
        if self.normalize_before:
            x = self.self_attn_layer_norm(x)
        own, _ = self.self_attn(query=x, key=x, value=x, key_padding_mask=encoder_padding_mask, need_weights=False)
        other, weights = self.context_attn(query=x, key=context, value=context, key_padding_mask=context_padding_mask,
                                           static_kv=True, need_weights=self.keep_attention)
        self.context_attention = weights
        x = self.dropout_module(self.gate(own, other))
        x = self.residual_connection(x, residual)
        if not self.normalize_before:
            x = self.self_attn_layer_norm(x)
        residual = x
        if self.normalize_before:
            x = self.final_layer_norm(x)
        x = self.fc2(self.activation_dropout_module(self.activation_fn(self.fc1(x))))
        x = self.residual_connection(self.dropout_module(x), residual)
        if not self.normalize_before:
            x = self.final_layer_norm(x)
        return x


class VoitaContextEncoder(TransformerEncoder):
    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        if args.encoder_layers < 2:
            raise ValueError("voita_context needs at least 2 encoder layers (all but the last are shared)")
        self.layers[-1] = GatedContextLayer(args)
        self.context_layer = TransformerEncoderLayer(args)

    def shared_layers(self, tokens: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Embeddings and the first N-1 layers: (states [T, B, d], padding mask [B, T], embeddings)."""
        mask = tokens.eq(self.padding_idx)
        x, embedded = self.forward_embedding(tokens)
        x = (x * (1 - mask.unsqueeze(-1).type_as(x))).transpose(0, 1)
        for layer in self.layers[:-1]:
            x = layer(x, encoder_padding_mask=mask)
        return x, mask, embedded

    def encode_context(self, context: Tensor) -> tuple[Tensor, Tensor]:
        x, mask, _ = self.shared_layers(context)
        x = self.context_layer(x, encoder_padding_mask=mask)
        return (self.layer_norm(x) if self.layer_norm is not None else x), mask

    def forward(self, src_tokens, src_lengths=None, context=None, context_padding_mask=None,
                return_all_hiddens: bool = False, token_embeddings=None):
        require_context(context, context_padding_mask)
        states, states_mask = self.encode_context(context)
        x, mask, embedded = self.shared_layers(src_tokens)
        x = self.layers[-1](x, mask, states, states_mask)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        return {"encoder_out": [x], "encoder_padding_mask": [mask], "encoder_embedding": [embedded],
                "encoder_states": [], "fc_results": [], "src_tokens": [],
                "src_lengths": [src_tokens.ne(self.padding_idx).sum(dim=1, dtype=torch.int32).reshape(-1, 1)]}


@register_model("voita_context")
class VoitaContextModel(TokenContextModel):
    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return VoitaContextEncoder(args, src_dict, embed_tokens)

    @torch.no_grad()
    def context_attention(self, src_tokens: Tensor, context: Tensor, context_padding_mask: Tensor) -> Tensor:
        """The last source layer's attention to the context tokens, averaged over heads: [B, source
        length, context length] (Voita et al.'s Tables 6-7 read it)."""
        layer = self.encoder.layers[-1]
        layer.keep_attention = True
        try:
            self.encoder(src_tokens, src_tokens.ne(self.encoder.padding_idx).sum(dim=1), context, context_padding_mask)
        finally:
            layer.keep_attention = False
        return layer.context_attention


@register_model_architecture("voita_context", "voita_context")
def voita_context_architecture(args):
    """Paper sizes: Transformer base (6 layers, d 512, FFN 2048, 8 heads)."""
    base_architecture(args)
    contextual_defaults(args)
