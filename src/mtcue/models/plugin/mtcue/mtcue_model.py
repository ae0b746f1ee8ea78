"""Model `mtcue` (Vincent et al., 2023): fairseq's transformer plus a context encoder whose states
the decoder attends to in parallel with the source.

State-dict keys of the source encoder, embeddings and decoder are exactly those of fairseq's
`transformer`, so a BASE checkpoint initialises them by key match (--pretrained-base). The new
modules live under `encoder.context_encoder.*` and `decoder.layers.N.encoder_attn.context_attn.*`.
"""
from __future__ import annotations

from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import (
    TransformerConfig,
    TransformerDecoder,
    TransformerEncoder,
    base_architecture,
)
from fairseq.modules.transformer_layer import TransformerDecoderLayerBase

from ..context_encoder import ContextEncoder, context_encoder_defaults
from ..contextual_model import VectorContextModel, contextual_defaults, require_context
from .parallel_attention import ParallelCrossAttention, SourceAndContext


class MTCueEncoder(TransformerEncoder):
    """The source encoder, unchanged, owning the context encoder; its output dict also carries
    `context_out` ([S, B, d]) and `context_padding_mask` ([B, S])."""

    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        self.context_encoder = ContextEncoder.from_args(self.cfg, args)

    def forward(self, src_tokens, src_lengths=None, context=None, context_padding_mask=None,
                return_all_hiddens: bool = False, token_embeddings=None):
        require_context(context, context_padding_mask)
        out = super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)
        context_out, context_padding_mask = self.context_encoder(context, context_padding_mask)
        out["context_out"] = [context_out]
        out["context_padding_mask"] = [context_padding_mask]
        return out

    def reorder_encoder_out(self, encoder_out, new_order):
        # Beam search expands and reorders the batch: the context must follow the source.
        out = super().reorder_encoder_out(encoder_out, new_order)
        out["context_out"] = [encoder_out["context_out"][0].index_select(1, new_order)]
        out["context_padding_mask"] = [encoder_out["context_padding_mask"][0].index_select(0, new_order)]
        return out


class MTCueDecoderLayer(TransformerDecoderLayerBase):
    """fairseq's decoder layer whose `encoder_attn` is a ParallelCrossAttention."""

    def build_encoder_attention(self, embed_dim, cfg):
        return ParallelCrossAttention(
            embed_dim, cfg.decoder.attention_heads, weight=cfg.parallel_attn_weight,
            kdim=cfg.encoder.embed_dim, vdim=cfg.encoder.embed_dim, dropout=cfg.attention_dropout,
            encoder_decoder_attention=True, q_noise=self.quant_noise, qn_block_size=self.quant_noise_block_size,
            xformers_att_config=cfg.encoder.xformers_att_config)


class MTCueDecoder(TransformerDecoder):
    def build_decoder_layer(self, args, no_encoder_attn=False):
        cfg = TransformerConfig.from_namespace(args)
        # Activation checkpointing would treat the (source, context) pairs as constants and cut the
        # gradient to both encoders; cross_self_attention would concatenate them as tensors.
        if cfg.checkpoint_activations or cfg.cross_self_attention:
            raise NotImplementedError("mtcue supports neither --checkpoint-activations nor --cross-self-attention")
        return MTCueDecoderLayer(cfg, no_encoder_attn)

    def extract_features(self, prev_output_tokens, encoder_out, incremental_state=None, **kwargs):
        paired = dict(encoder_out)
        paired["encoder_out"] = [SourceAndContext(encoder_out["encoder_out"][0], encoder_out["context_out"][0])]
        paired["encoder_padding_mask"] = [SourceAndContext(encoder_out["encoder_padding_mask"][0],
                                                           encoder_out["context_padding_mask"][0])]
        return super().extract_features(prev_output_tokens, paired, incremental_state, **kwargs)


@register_model("mtcue")
class MTCueModel(VectorContextModel):
    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--parallel-attn-weight", type=float,
                            help="the decoder combines its cross-attentions as w * (source + context); w=1 is "
                                 "the paper's equation (default), the authors' code used w=0.5")

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return MTCueEncoder(args, src_dict, embed_tokens)

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        return MTCueDecoder(args, tgt_dict, embed_tokens, no_encoder_attn=args.no_cross_attention)


@register_model_architecture("mtcue", "mtcue")
def mtcue_architecture(args):
    """Paper sizes (Table 3): transformer base (512/2048, 8 heads, 6+6 layers) + 6 context layers."""
    base_architecture(args)
    context_encoder_defaults(args)
    contextual_defaults(args)
    args.parallel_attn_weight = getattr(args, "parallel_attn_weight", 1.0)
