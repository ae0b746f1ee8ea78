"""Model `novotney_cue` (the paper's NOVOTNEY-CUE baseline, after Novotney et al., 2022's CUE
vectors): context vectors through a context encoder, averaged over the contexts a sample has into
one vector, which is prepended to the source encoder's output for fairseq's decoder.

The context encoder is MTCue's, QK-norm included: the authors' `novotney_cue` architecture sets
`qknorm` (the paper does not say); BASE initialises the rest.
"""
from __future__ import annotations

from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import base_architecture

from ..context_encoder import ContextEncoder, context_encoder_defaults
from ..contextual_model import (
    PrependedContextEncoder,
    VectorContextModel,
    contextual_defaults,
)


class NovotneyCueEncoder(PrependedContextEncoder):
    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        self.context_encoder = ContextEncoder.from_args(self.cfg, args)

    def encode_context(self, context, padding_mask):
        states, _ = self.context_encoder(context, padding_mask)        # [S, B, d]
        present = (~padding_mask).t().unsqueeze(-1).to(states)          # [S, B, 1]
        mean = (states * present).sum(0, keepdim=True) / present.sum(0, keepdim=True).clamp(min=1)
        # A sample without context has no vector to attend to.
        return mean, padding_mask.all(dim=1, keepdim=True)


@register_model("novotney_cue")
class NovotneyCueModel(VectorContextModel):
    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return NovotneyCueEncoder(args, src_dict, embed_tokens)


@register_model_architecture("novotney_cue", "novotney_cue")
def novotney_cue_architecture(args):
    """Paper sizes (Table 3): transformer base + a 6-layer context encoder."""
    base_architecture(args)
    context_encoder_defaults(args)
    contextual_defaults(args)
