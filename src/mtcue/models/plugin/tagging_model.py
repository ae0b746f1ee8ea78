"""Model `tagging` (the paper's TAGGING baseline; Schioppa et al., 2021; Vincent et al., 2022b): one
learned embedding per context value, prepended to the source encoder's output.

Tag ids come from a tag store (`mtcue tags`: vocabulary built once from the training data, id 0 =
unknown value), so every split and every later input maps a string to the same tag. The shape is
BASE-PM's (10 encoder layers, encoder FFN 4096), whose checkpoint initialises everything but the tags.
"""
from __future__ import annotations

import math

from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import base_architecture
from fairseq.modules import FairseqDropout
from torch import nn

from .contextual_model import (
    ContextualModel,
    PrependedContextEncoder,
    contextual_defaults,
    set_from_data,
)


class TaggingEncoder(PrependedContextEncoder):
    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        # Tags are embedded as fairseq embeds tokens (std d^-0.5, scaled by sqrt(d)): unit-variance
        # states beside the layer-normalised source states, with parameters on the scale that
        # Adam's step suits. Unit-variance parameters barely moved from their random start.
        self.context_tags = nn.Embedding(args.context_tags, args.encoder_embed_dim)
        nn.init.normal_(self.context_tags.weight, mean=0.0, std=args.encoder_embed_dim ** -0.5)
        self.tag_scale = math.sqrt(args.encoder_embed_dim)
        self.context_dropout = FairseqDropout(args.context_dropout, module_name=self.__class__.__name__)

    def encode_context(self, context, padding_mask):
        return self.context_dropout(self.tag_scale * self.context_tags(context)).transpose(0, 1), padding_mask


@register_model("tagging")
class TaggingModel(ContextualModel):
    context_kind = "tags"

    @classmethod
    def set_context_sizes(cls, args, task):
        set_from_data(args, "context_tags", task.n_tags, "a tag vocabulary of size")

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return TaggingEncoder(args, src_dict, embed_tokens)


@register_model_architecture("tagging", "tagging")
def tagging_architecture(args):
    """Paper sizes (Table 3): BASE-PM, i.e. transformer base with 10 encoder layers of FFN 4096."""
    args.encoder_layers = getattr(args, "encoder_layers", 10)
    args.encoder_ffn_embed_dim = getattr(args, "encoder_ffn_embed_dim", 4096)
    # base_architecture would give the decoder the encoder's FFN width.
    args.decoder_ffn_embed_dim = getattr(args, "decoder_ffn_embed_dim", 2048)
    base_architecture(args)
    contextual_defaults(args)
