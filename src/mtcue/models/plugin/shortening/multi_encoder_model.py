"""Model `multi_encoder` (Mąka et al.'s Multi-encoder baseline): an unshared context encoder (BASE's
shape, sharing only the token embeddings) encodes each of the c previous sentences separately; the
decoder's one cross-attention reads their states concatenated with the current sentence's (nearest
context sentence next to the source). Gradient everywhere. Every BASE tensor loads; the new ones
are `encoder.context_encoder.*`."""
from __future__ import annotations

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerEncoder
from torch import Tensor

from ..contextual_model import PrependedContextEncoder
from .shortening_base import ShorteningModel, sentences_of, shortening_defaults


class MultiEncoder(PrependedContextEncoder):
    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        self.context_encoder = TransformerEncoder(args, dictionary, embed_tokens)

    def encode_context(self, context: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        context, _ = sentences_of(context, padding_mask)
        b, c, length = context.shape
        out = self.context_encoder(context.flip(1).transpose(0, 1).reshape(-1, length))  # farthest first
        h, mask = out["encoder_out"][0], out["encoder_padding_mask"][0]
        return (torch.cat([h[:, j * b:(j + 1) * b] for j in range(c)], dim=0),
                torch.cat([mask[j * b:(j + 1) * b] for j in range(c)], dim=1))


@register_model("multi_encoder")
class MultiEncoderModel(ShorteningModel):
    """The shortening models' options (--context-sentences), fairseq's decoder."""

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return MultiEncoder(args, src_dict, embed_tokens)

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        return super(ShorteningModel, cls).build_decoder(args, tgt_dict, embed_tokens)


register_model_architecture("multi_encoder", "multi_encoder")(shortening_defaults)
