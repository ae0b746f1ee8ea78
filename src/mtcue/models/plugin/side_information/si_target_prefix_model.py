"""Model `si_trg_prefix` (Hoang et al.: side information as a target prefix, after Johnson et al.'s
language tokens): the decoder reads and predicts the sample's labels before the translation,
<eos> l_1 .. l_S y_1 .. y_n, one slot per label column (S = the store's columns; a column without a label
holds the label NONE), so every sample's prefix has the same length and the translation's positions
are the same for every sample.

The labels are not target words: each is a learned embedding (`decoder.context_labels`, the table also
its output layer, tied as fairseq ties the target embeddings), and their loss, the cross-entropy of
each slot, is the auxiliary loss (criterion `label_smoothed_cross_entropy_mtl`, weight 1: Hoang et al.'s
labels are ordinary target tokens of the one loss). Decoding:
- si-trg-prefix-h: the sample's labels are given and forced as the prefix;
- si-trg-prefix-p: no labels given (`--random-context predict`: every id -1); the model predicts them
  greedily, slot by slot, then translates after them (Hoang et al.: a beam over labels and words alike).
Either way the generator emits only the translation: the prefix is never part of the output, so it is
removed before scoring by construction.

The decoder recomputes the whole prefix and history at each step (it is not incremental: the prefix
of S + 1 positions does not fit fairseq's one-token incremental step). Every BASE tensor loads.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerDecoder, TransformerEncoder
from torch import Tensor

from ..contextual_model import require_context
from .side_info import SideInfoModel, label_embedding, side_info_architecture

TO_PREDICT = -1  # a slot id of `--random-context predict`


class LabelSlotsEncoder(TransformerEncoder):
    """fairseq's encoder; its output also holds the prefix (`prefix_labels` [B, S]: a label id, NONE for a
    column without a label, TO_PREDICT where the decoder is to predict it)."""

    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        self.none = args.context_tags

    def forward(self, src_tokens, src_lengths=None, context=None, context_padding_mask=None,
                return_all_hiddens: bool = False, token_embeddings=None):
        require_context(context, context_padding_mask)
        out = super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)
        labels = torch.where(context_padding_mask, self.none, context)
        out["prefix_labels"] = [torch.where(context.eq(TO_PREDICT), TO_PREDICT, labels)]
        return out

    def reorder_encoder_out(self, encoder_out, new_order):
        out = super().reorder_encoder_out(encoder_out, new_order)
        out["prefix_labels"] = [encoder_out["prefix_labels"][0].index_select(0, new_order)]
        return out


class LabelPrefixDecoder(TransformerDecoder):
    def __init__(self, args, dictionary, embed_tokens, no_encoder_attn=False):
        super().__init__(args, dictionary, embed_tokens, no_encoder_attn=no_encoder_attn)
        self.context_labels = label_embedding(args.context_tags + 1, args.decoder_embed_dim)  # + NONE

    def sequence(self, prev_output_tokens: Tensor, labels: Tensor) -> tuple[Tensor, Tensor]:
        """(stand-in tokens [B, 1 + S + T - 1], embeddings before scaling) of <eos> l_1..l_S y_1..: a label's
        stand-in is unk (for positions and the padding mask)."""
        slots = labels.new_full(labels.shape, self.dictionary.unk())
        tokens = torch.cat([prev_output_tokens[:, :1], slots, prev_output_tokens[:, 1:]], dim=1)
        embedded = self.embed_tokens(prev_output_tokens)
        return tokens, torch.cat([embedded[:, :1], self.context_labels(labels), embedded[:, 1:]], dim=1)

    def states(self, prev_output_tokens: Tensor, labels: Tensor, encoder_out) -> Tensor:
        """The last layer's states [B, 1 + S + T - 1, d] over the prefixed sequence (causal)."""
        tokens, embedded = self.sequence(prev_output_tokens, labels)
        x = self.embed_scale * embedded
        if self.project_in_dim is not None:
            x = self.project_in_dim(x)
        if self.embed_positions is not None:
            x = x + self.embed_positions(tokens)
        if self.layernorm_embedding is not None:
            x = self.layernorm_embedding(x)
        x = self.dropout_module(x).transpose(0, 1)
        padding = tokens.eq(self.padding_idx)
        future = self.buffered_future_mask(x)
        enc, enc_mask = encoder_out["encoder_out"][0], encoder_out["encoder_padding_mask"][0]
        for layer in self.layers:
            x, _, _ = layer(x, enc, enc_mask, self_attn_mask=future, self_attn_padding_mask=padding)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        x = x.transpose(0, 1)
        return self.project_out_dim(x) if self.project_out_dim is not None else x

    def label_logits(self, states: Tensor) -> Tensor:
        return F.linear(states, self.context_labels.weight)

    @torch.no_grad()
    def predict_labels(self, labels: Tensor, encoder_out) -> None:
        """Fill the TO_PREDICT slots of `labels` in place, greedily slot by slot (a given slot is kept)."""
        start = encoder_out["encoder_out"][0].new_full((labels.size(0), 1), self.dictionary.eos(), dtype=torch.long)
        for s in range(labels.size(1)):
            guess = self.label_logits(self.states(start, labels[:, :s], encoder_out)[:, -1]).argmax(-1)
            labels[:, s] = torch.where(labels[:, s].eq(TO_PREDICT), guess, labels[:, s])

    def forward(self, prev_output_tokens, encoder_out=None, incremental_state=None, features_only: bool = False,
                full_context_alignment: bool = False, alignment_layer=None, alignment_heads=None,
                src_lengths=None, return_all_hiddens: bool = False):
        labels = encoder_out["prefix_labels"][0]
        if labels.eq(TO_PREDICT).any():
            self.predict_labels(labels, encoder_out)  # the encoder output keeps them for the later steps
        n = labels.size(1)
        states = self.states(prev_output_tokens, labels, encoder_out)
        # The states at <eos> .. l_{S-1} predict l_1 .. l_S; from l_S on, the translation.
        label_loss = F.cross_entropy(self.label_logits(states[:, :n]).flatten(0, 1), labels.flatten(), reduction="sum")
        x = states[:, n:]
        return (x if features_only else self.output_layer(x)), {"attn": [None], "inner_states": None,
                                                                 "auxiliary_loss": label_loss}


@register_model("si_trg_prefix")
class TargetPrefixModel(SideInfoModel):
    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return LabelSlotsEncoder(args, src_dict, embed_tokens)

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        return LabelPrefixDecoder(args, tgt_dict, embed_tokens,
                                  no_encoder_attn=getattr(args, "no_cross_attention", False))


register_model_architecture("si_trg_prefix", "si_trg_prefix")(side_info_architecture)
