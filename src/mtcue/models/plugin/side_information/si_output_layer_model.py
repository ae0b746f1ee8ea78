"""Model `si_output_layer` (Hoang et al., eq. 3): at every decoding step the logits get a bias from the
side information, softmax(W_o f_t + b_e + b_o) with b_e = W_e e and e = sum_m e_{w_m}, the sum of the
sample's label embeddings (H_s = --side-dim wide; W_e is |V_T| x H_s).

W_e starts at zero, so the fine-tuning starts from BASE's exact output and the bias grows only as far as
the labels help (Hoang et al., training from scratch, do not say; a random W_e would add noise to every
logit of the fine-tuned BASE). A sample without labels gets e = 0, hence no bias: decoding "without side
information" (Hoang et al.'s claim that MTL without labels beats it) is this model given no labels
(--random-context drop). New tensors: encoder.context_labels, encoder.context_bias; every BASE tensor loads.
"""
from __future__ import annotations

from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerDecoder, TransformerEncoder
from torch import nn

from ..contextual_model import require_context
from .side_info import SideInfoModel, label_embedding, side_info_architecture, summed_labels


class SideBiasEncoder(TransformerEncoder):
    """fairseq's encoder; its output also holds b_e [B, |V_T|] (`side_bias`), so beam search reorders it
    with the encoder states and the decoder reads it at every step."""

    def __init__(self, args, dictionary, embed_tokens, n_targets: int):
        super().__init__(args, dictionary, embed_tokens)
        self.context_labels = label_embedding(args.context_tags, args.side_dim)
        self.context_bias = nn.Linear(args.side_dim, n_targets, bias=False)  # W_e
        nn.init.zeros_(self.context_bias.weight)

    def side_bias(self, context, missing):
        return self.context_bias(summed_labels(self.context_labels, context, missing))

    def forward(self, src_tokens, src_lengths=None, context=None, context_padding_mask=None,
                return_all_hiddens: bool = False, token_embeddings=None):
        require_context(context, context_padding_mask)
        out = super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)
        out["side_bias"] = [self.side_bias(context, context_padding_mask)]
        return out

    def reorder_encoder_out(self, encoder_out, new_order):
        out = super().reorder_encoder_out(encoder_out, new_order)
        out["side_bias"] = [encoder_out["side_bias"][0].index_select(0, new_order)]
        return out


class SideBiasDecoder(TransformerDecoder):
    def forward(self, prev_output_tokens, encoder_out=None, incremental_state=None, features_only: bool = False,
                full_context_alignment: bool = False, alignment_layer=None, alignment_heads=None,
                src_lengths=None, return_all_hiddens: bool = False):
        x, extra = self.extract_features(prev_output_tokens, encoder_out=encoder_out,
                                         incremental_state=incremental_state,
                                         full_context_alignment=full_context_alignment,
                                         alignment_layer=alignment_layer, alignment_heads=alignment_heads)
        if not features_only:
            x = self.output_layer(x) + encoder_out["side_bias"][0].unsqueeze(1).type_as(x)
        return x, extra


@register_model("si_output_layer")
class OutputLayerModel(SideInfoModel):
    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--side-dim", type=int, metavar="H_S",
                            help="width of the label embeddings (Hoang et al.'s H_s)")

    @classmethod
    def build_model(cls, args, task):
        cls.n_targets = len(task.target_dictionary)
        return super().build_model(args, task)

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return SideBiasEncoder(args, src_dict, embed_tokens, cls.n_targets)

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        return SideBiasDecoder(args, tgt_dict, embed_tokens, no_encoder_attn=getattr(args, "no_cross_attention", False))


register_model_architecture("si_output_layer", "si_output_layer")(side_info_architecture)
