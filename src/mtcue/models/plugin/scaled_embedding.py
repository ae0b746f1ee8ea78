"""One learned embedding per discrete context value (a tag id of TAGGING's tag store)."""
from __future__ import annotations

import math

from torch import Tensor, nn


class ScaledEmbedding(nn.Embedding):
    """Embeds ids as fairseq embeds tokens: weights drawn with std d^-0.5, looked-up vectors
    scaled by sqrt(d). The states have unit variance beside the layer-normalised source states,
    and the parameters sit on the scale that Adam's step suits: unit-variance parameters barely
    moved from their random start (TAGGING, +2.6 to +3.8 phenomena points)."""

    def __init__(self, num_embeddings: int, embedding_dim: int):
        super().__init__(num_embeddings, embedding_dim)
        nn.init.normal_(self.weight, mean=0.0, std=embedding_dim ** -0.5)
        self.scale = math.sqrt(embedding_dim)

    def forward(self, ids: Tensor) -> Tensor:
        return self.scale * super().forward(ids)
