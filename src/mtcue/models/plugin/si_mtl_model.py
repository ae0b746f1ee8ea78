"""Model `si_mtl` (Hoang et al., eqs. 5-8): BASE's translation model trained jointly with a multi-label
classifier of the side information on the mean source-encoder state,
p_s = sigmoid(W_s [1/|x| sum_i g'(x_i)] + b_s), with L = L_NMT + lambda L_MLC (criterion
`label_smoothed_cross_entropy_mtl`, --mtl-weight lambda). The translation itself never reads the labels
(p(y|x,e) ~ p(y|x)): no labels are needed, or used, at test time.

L_MLC (`label_loss`) is eq. 6 as Hoang et al. print it, the M gold labels' -log p_s, plus the absent
labels' -log(1 - p_s) averaged and weighted by M (eq. 6 alone a sigmoid classifier minimises by predicting
every label), summed over the batch's sentences as fairseq sums L_NMT over tokens: a sentence's loss has
the scale of eq. 6's M terms whatever the label vocabulary's size |V_s|, so Hoang et al.'s lambda grid
weighs it as theirs (a binary cross-entropy summed over V_s would be ~|V_s| / M times larger;
docs/deviations.md). New tensors: encoder.context_classifier (W_s, b_s); every BASE tensor loads.
"""
from __future__ import annotations

import torch.nn.functional as F
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerEncoder
from torch import Tensor, nn

from .side_info import SideInfoModel, multi_hot, side_info_architecture


class ClassifyingEncoder(TransformerEncoder):
    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        self.context_classifier = nn.Linear(args.encoder_embed_dim, args.context_tags)

    def forward(self, src_tokens, src_lengths=None, context=None, context_padding_mask=None,
                return_all_hiddens: bool = False, token_embeddings=None):
        """fairseq's encoder: the labels (which the generator hands every encoder) are not read."""
        return super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)

    def label_logits(self, encoder_out):
        """W_s (mean over the source's non-pad states) + b_s: [B, n_tags]."""
        states, mask = encoder_out["encoder_out"][0], encoder_out["encoder_padding_mask"][0]  # [T, B, d], [B, T]
        keep = (~mask).t().unsqueeze(-1).type_as(states)
        return self.context_classifier((states * keep).sum(0) / keep.sum(0))


def label_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """L_MLC summed over sentences: logits and 0/1 targets [B, |V_s|] (the unknown label left out). Per
    sentence with M gold labels of |V_s|: sum over gold -log p + M / (|V_s| - M) * sum over absent
    -log(1 - p); a sentence without labels adds 0, as in eq. 6."""
    terms = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    gold = targets.sum(1)
    absent = (targets.size(1) - gold).clamp(min=1)
    return ((terms * targets).sum(1) + gold / absent * (terms * (1 - targets)).sum(1)).sum()


@register_model("si_mtl")
class MultiTaskModel(SideInfoModel):
    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return ClassifyingEncoder(args, src_dict, embed_tokens)

    def forward(self, src_tokens, src_lengths, prev_output_tokens, context=None, context_padding_mask=None,
                return_all_hiddens: bool = True, features_only: bool = False, alignment_layer=None,
                alignment_heads=None):
        encoder_out = self.encoder(src_tokens, src_lengths=src_lengths, return_all_hiddens=return_all_hiddens)
        x, extra = self.decoder(prev_output_tokens, encoder_out=encoder_out, features_only=features_only,
                                alignment_layer=alignment_layer, alignment_heads=alignment_heads,
                                src_lengths=src_lengths, return_all_hiddens=return_all_hiddens)
        if context is not None:  # training and validation: the classifier's loss
            logits = self.encoder.label_logits(encoder_out)
            targets = multi_hot(context, context_padding_mask, logits.size(1))
            extra["auxiliary_loss"] = label_loss(logits[:, 1:], targets[:, 1:])
        return x, extra


register_model_architecture("si_mtl", "si_mtl")(side_info_architecture)
