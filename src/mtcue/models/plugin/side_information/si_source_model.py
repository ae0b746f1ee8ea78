"""Models `si_src_prefix` and `si_src_suffix` (Hoang et al.: side information as a source prefix or
suffix, after Sennrich et al.'s side constraints): the sample's labels become tokens of the source
sequence, before the source sentence or after its </s>. Each label is a token of its own (a learned
embedding on the token scale, with the position it takes in the sequence), so the encoder's self-attention
and the decoder's cross-attention read it like any source token. The labels' table is new
(`encoder.context_labels`); every BASE tensor loads. A sample without a label in a column has no token
there (padding, as fairseq pads).
"""
from __future__ import annotations

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerEncoder
from torch import Tensor

from ..contextual_model import require_context
from .side_info import SideInfoModel, label_embedding, side_info_architecture


class LabelledSourceEncoder(TransformerEncoder):
    def __init__(self, args, dictionary, embed_tokens, suffix: bool):
        super().__init__(args, dictionary, embed_tokens)
        self.context_labels = label_embedding(args.context_tags, args.encoder_embed_dim)
        self.suffix = suffix

    def sequence(self, src_tokens: Tensor, context: Tensor, missing: Tensor) -> tuple[Tensor, Tensor]:
        """(stand-in tokens [B, S+T], embeddings [B, S+T, d] before scaling and positions) of labels and
        source in this variant's order; a label's stand-in is unk (pad where missing), for positions and mask."""
        labels = torch.where(missing, self.padding_idx, self.dictionary.unk())
        parts = [(labels, self.context_labels(context)), (src_tokens, self.embed_tokens(src_tokens))]
        if self.suffix:
            parts.reverse()
        return torch.cat([p[0] for p in parts], dim=1), torch.cat([p[1] for p in parts], dim=1)

    def forward(self, src_tokens, src_lengths=None, context=None, context_padding_mask=None,
                return_all_hiddens: bool = False, token_embeddings=None):
        require_context(context, context_padding_mask)
        tokens, embedded = self.sequence(src_tokens, context, context_padding_mask)
        mask = tokens.eq(self.padding_idx)
        x = self.embed_scale * embedded
        if self.embed_positions is not None:
            x = x + self.embed_positions(tokens)
        if self.layernorm_embedding is not None:
            x = self.layernorm_embedding(x)
        x = self.dropout_module(x)
        x = (x * (1 - mask.unsqueeze(-1).type_as(x))).transpose(0, 1)
        states = [x] if return_all_hiddens else []
        for layer in self.layers:
            x = layer(x, encoder_padding_mask=mask)
            if return_all_hiddens:
                states.append(x)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        return {"encoder_out": [x], "encoder_padding_mask": [mask], "encoder_embedding": [embedded],
                "encoder_states": states, "fc_results": [], "src_tokens": [],
                "src_lengths": [tokens.ne(self.padding_idx).sum(dim=1, dtype=torch.int32).reshape(-1, 1)]}


@register_model("si_src_prefix")
class SourcePrefixModel(SideInfoModel):
    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return LabelledSourceEncoder(args, src_dict, embed_tokens, suffix=False)


@register_model("si_src_suffix")
class SourceSuffixModel(SideInfoModel):
    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return LabelledSourceEncoder(args, src_dict, embed_tokens, suffix=True)


register_model_architecture("si_src_prefix", "si_src_prefix")(side_info_architecture)
register_model_architecture("si_src_suffix", "si_src_suffix")(side_info_architecture)
