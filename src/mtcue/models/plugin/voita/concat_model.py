"""Model `concat` (the concatenation baseline of Voita et al., 2018, after Tiedemann and Scherrer,
2017): the context sentence and the current sentence form one source sequence, each token's
embedding plus a learned segment embedding (0 = context, 1 = current sentence); the target is the
current sentence only. The paper found a separator token alone > 1 BLEU worse than this.

The context is one slot of a token store (docs/formats.md section 2), `<s> context </s>` before the
source; positions run on over the whole sequence. With C slots (prev1,...,prevC, [B, C, L]; the shortening
paper's single-encoder rows at C = 2-3) the sentences stand in document order, farthest first, each
`<s> line </s>`; the padding between them is masked and takes no position (fairseq counts positions over
non-padding tokens). Every BASE tensor loads; `encoder.context_segments` is new.
"""
from __future__ import annotations

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerEncoder, base_architecture
from torch import nn

from ..contextual_model import TokenContextModel, contextual_defaults, require_context


class ConcatEncoder(TransformerEncoder):
    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        d = embed_tokens.embedding_dim
        # Drawn like the token embeddings: fairseq's sqrt(d) scale then applies to their sum.
        self.context_segments = nn.Embedding(2, d)
        nn.init.normal_(self.context_segments.weight, mean=0.0, std=d ** -0.5)

    def forward(self, src_tokens, src_lengths=None, context=None, context_padding_mask=None,
                return_all_hiddens: bool = False, token_embeddings=None):
        require_context(context, context_padding_mask)
        if context.dim() == 3:  # [B, C, L], nearest first -> one sequence in document order
            context = context.flip(1).flatten(1)
        tokens = torch.cat([context, src_tokens], dim=1)
        segments = torch.cat([torch.zeros_like(context), torch.ones_like(src_tokens)], dim=1)
        # The positional embeddings end at max_source_positions: a longer pair loses the context's beginning.
        tokens, segments = tokens[:, -self.max_source_positions:], segments[:, -self.max_source_positions:]
        embedded = self.embed_tokens(tokens) + self.context_segments(segments)
        return super().forward(tokens, None, return_all_hiddens, token_embeddings=embedded)


@register_model("concat")
class ConcatModel(TokenContextModel):
    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return ConcatEncoder(args, src_dict, embed_tokens)


@register_model_architecture("concat", "concat")
def concat_architecture(args):
    """Paper sizes: Transformer base."""
    base_architecture(args)
    contextual_defaults(args)
