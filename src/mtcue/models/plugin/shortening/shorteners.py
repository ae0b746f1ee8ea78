"""Sequence shortening of one sentence's encoder states (Mąka et al., 2024, "Sequence Shortening for
Context-aware Machine Translation", sections 3.2 and 4), for the caching models of issue 27.

A shortener turns H [T, B, C] into a shorter G̃ [K', B, C]: pooling over windows of K neighbouring
tokens (mean, max, or a linear map of the K concatenated states; K' = ceil(T/K)), Latent Grouping
(c_i = sparsemax(FFN(h_i)) over K groups, g̃_k = Σ_i c_ik h_i) or Latent Selecting (the same network,
sparsemax over the tokens); K' = K for the latent ones. G̃ then attends back to the full sequence:
G = LN(G̃ + Attn(G̃, H, H)), padding of H masked. As the authors' code (`--shortening-group-learned-pos`,
which their Table 5 counts), learned positions 1..K' of the shortened sequence are then added to its
real (non-padding) positions; `positions=False` leaves them out.

Padding is True in the masks, and a shortened position is padding only when all of what it reads is:
its whole window (pooling) or the whole sentence (grouping, selecting).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from entmax import sparsemax
from fairseq.modules import LayerNorm, MultiheadAttention
from torch import Tensor, nn

# fairseq's DEFAULT_MAX_SOURCE_POSITIONS: the authors size the pooling position table by it.
MAX_SOURCE_POSITIONS = 1024


def _zero_padding(h: Tensor, padding_mask: Tensor) -> Tensor:
    """Padded states may hold anything (fairseq does not zero them): they must not reach G̃."""
    return h.masked_fill(padding_mask.t()[..., None], 0.0)


class Shortener(nn.Module):
    """Shortening (`_shorten`) followed by the attention back to the full sequence and positions."""

    def __init__(self, embed_dim: int, heads: int, dropout: float, positions: int | None):
        super().__init__()
        # `dropout` is on the attention weights (the authors pass --attention-dropout here).
        self.attn = MultiheadAttention(embed_dim, heads, dropout=dropout, encoder_decoder_attention=True)
        self.layer_norm = LayerNorm(embed_dim)
        self.embed_positions = None
        if positions:
            # Row 0 is the padding position, as fairseq's LearnedPositionalEmbedding (and its count).
            self.embed_positions = nn.Embedding(positions + 1, embed_dim, padding_idx=0)
            nn.init.normal_(self.embed_positions.weight, mean=0.0, std=embed_dim ** -0.5)
            nn.init.zeros_(self.embed_positions.weight[0])

    def _shorten(self, h: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        """`shorten` of states whose padding is already zeroed."""
        raise NotImplementedError

    def shorten(self, h: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        """G̃ [K', B, C] and its padding mask [B, K'] from H [T, B, C] and its mask [B, T] (before the
        attention back to H)."""
        return self._shorten(_zero_padding(h, padding_mask.bool()), padding_mask.bool())

    def forward(self, h: Tensor, padding_mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """h [T, B, C], padding_mask bool [B, T] (True = padding; None = none) ->
        (G [K', B, C], its padding mask bool [B, K'])."""
        if padding_mask is None:
            padding_mask = h.new_zeros(h.shape[1], h.shape[0], dtype=torch.bool)
        padding_mask = padding_mask.bool()
        h = _zero_padding(h, padding_mask)
        g, g_mask = self._shorten(h, padding_mask)
        # A sentence that is all padding would softmax over -inf only (NaN): leave its keys unmasked;
        # all of its shortened positions are padding anyway.
        empty = padding_mask.all(dim=1, keepdim=True)
        attn, _ = self.attn(query=g, key=h, value=h, key_padding_mask=padding_mask & ~empty, need_weights=False)
        g = self.layer_norm(g + attn)
        if self.embed_positions is not None:
            real = (~g_mask).long()
            g = g + self.embed_positions(real.cumsum(dim=1) * real).transpose(0, 1)
        return g, g_mask


class Pooling(Shortener):
    """Pooling over non-overlapping windows of `groups` (= K) neighbouring tokens.

    Windows are laid over the real tokens from the first one, so left- and right-padded batches give
    the same result; a window that reaches past the sentence's end pools its real tokens only (mean
    over them, max over them; linear pooling sees zeros in the missing slots)."""

    mode: str

    def __init__(self, embed_dim: int, heads: int, dropout: float, groups: int, positions: bool = True,
                 max_positions: int = MAX_SOURCE_POSITIONS):
        if groups < 1:
            raise ValueError(f"pooling window must be >= 1, got {groups}")
        super().__init__(embed_dim, heads, dropout, max_positions if positions else None)
        self.window = groups
        self.max_positions = max_positions
        self.linear = nn.Linear(groups * embed_dim, embed_dim) if self.mode == "linear" else None

    def windows(self, h: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        """[T, B, C] -> windows [T', K, B, C] (padding zeroed) and which slots are real [T', K, B]."""
        length, bsz, dim = h.shape
        # Real tokens to the front, in order (a stable sort of the mask); a no-op for right padding.
        order = torch.sort(padding_mask.to(torch.uint8), dim=1, stable=True).indices
        padding_mask = padding_mask.gather(1, order)
        h = h.gather(0, order.t()[..., None].expand(length, bsz, dim))
        n = math.ceil(length / self.window)
        extra = n * self.window - length
        h = F.pad(h, (0, 0, 0, 0, 0, extra))
        real = ~F.pad(padding_mask, (0, extra), value=True).t()
        return h.view(n, self.window, bsz, dim), real.view(n, self.window, bsz)

    def _shorten(self, h: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        windows, real = self.windows(h, padding_mask)
        n, k, bsz, dim = windows.shape
        if n > self.max_positions:
            raise ValueError(f"{h.shape[0]} tokens pool to {n} positions, more than max_positions={self.max_positions}")
        counts = real.sum(dim=1)  # [T', B]
        if self.mode == "mean":
            g = windows.sum(dim=1) / counts.clamp(min=1)[..., None].to(windows.dtype)
        elif self.mode == "max":
            g = windows.masked_fill(~real[..., None], torch.finfo(windows.dtype).min).amax(dim=1)
            g = g.masked_fill((counts == 0)[..., None], 0.0)
        else:
            g = self.linear(windows.permute(0, 2, 1, 3).reshape(n, bsz, k * dim))
        return g, (counts == 0).t()


class MeanPooling(Pooling):
    mode = "mean"


class MaxPooling(Pooling):
    mode = "max"


class LinearPooling(Pooling):
    """Nawrot et al.'s (2022) linear pooling: Linear(K·C -> C) of the window's concatenated states."""
    mode = "linear"


class LatentGrouping(Shortener):
    """Each token is categorised into the K = `groups` groups, c_i = sparsemax(FFN(h_i)) (sums to 1 over
    groups); g̃_k = Σ_i c_ik h_i. The FFN has one hidden layer (`hidden` units, ReLU as the authors'
    code for relu models)."""

    def __init__(self, embed_dim: int, heads: int, dropout: float, groups: int, positions: bool = True,
                 hidden: int = 512):
        if groups < 1:
            raise ValueError(f"number of groups must be >= 1, got {groups}")
        super().__init__(embed_dim, heads, dropout, groups if positions else None)
        self.groups = groups
        self.categorise_net = nn.Sequential(nn.Linear(embed_dim, hidden), nn.ReLU(), nn.Linear(hidden, groups))

    def categorise(self, h: Tensor, padding_mask: Tensor) -> Tensor:
        """c [T, B, K]: each real token's row sums to 1 over the groups; padding rows are 0."""
        return sparsemax(self.categorise_net(h), dim=-1).masked_fill(padding_mask.t()[..., None], 0.0)

    def _shorten(self, h: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
        c = self.categorise(h, padding_mask)
        g = torch.einsum("tbk,tbc->kbc", c, h)
        return g, padding_mask.all(dim=1, keepdim=True).expand(-1, self.groups)


class LatentSelecting(LatentGrouping):
    """Latent Grouping's network with the sparsemax over the tokens: each group selects tokens
    (c[:, b, k] sums to 1 over the real tokens), so a token may be in no group at all."""

    def categorise(self, h: Tensor, padding_mask: Tensor) -> Tensor:
        """c [T, B, K]: each group's column sums to 1 over the sentence's real tokens; padding is 0."""
        logits = self.categorise_net(h)
        pad = padding_mask.t()[..., None]
        # Sparsemax gives exactly 0 to a logit more than 1 below the largest: padding gets the largest
        # real logit - 2, which unlike -inf (NaN in sparsemax's sums) stays finite in any dtype.
        top = logits.masked_fill(pad, float("-inf")).amax(dim=0, keepdim=True)
        top = top.masked_fill(torch.isinf(top), 0.0).detach()  # all-padding sentences: any finite value
        return sparsemax(torch.where(pad, top - 2.0, logits), dim=0).masked_fill(pad, 0.0)


SHORTENERS: dict[str, type] = {
    "pool_mean": MeanPooling,
    "pool_max": MaxPooling,
    "pool_linear": LinearPooling,
    "grouping": LatentGrouping,
    "selecting": LatentSelecting,
}

# Which context sentences' gradient each shortening model lets through, as the authors' README runs
# (`--shortening-propagate-context-encoder-gradient`, `--shortening-propagate-context-size-gradient`):
# (encoder, shortening) = the nearest n context sentences whose gradient reaches the shared encoder /
# the shortener (None: all of them). The current sentence always passes its gradient.
CONTEXT_GRADIENT: dict[str, tuple[int, int | None]] = {
    "pool_mean": (0, None),
    "pool_max": (0, None),
    "pool_linear": (0, None),
    "grouping": (2, 2),
    "selecting": (1, 1),
}


def build_shortener(name: str, embed_dim: int, heads: int, dropout: float, groups: int, *,
                    hidden: int = 512, positions: bool = True,
                    max_positions: int = MAX_SOURCE_POSITIONS) -> Shortener:
    """A shortener by model name. `groups` is K: the pooling window (paper: 2) or the number of latent
    groups (paper: grouping 9 en-de / 11 en-fr, selecting 10 / 11). `hidden`: the categorising FFN's
    hidden units (latent ones; paper 512); `max_positions`: the pooling position table's size
    (fairseq's max source positions, as the authors)."""
    if name not in SHORTENERS:
        raise ValueError(f"unknown shortener {name!r}; expected one of {sorted(SHORTENERS)}")
    cls = SHORTENERS[name]
    extra = {"hidden": hidden} if issubclass(cls, LatentGrouping) else {"max_positions": max_positions}
    return cls(embed_dim, heads, dropout, groups, positions=positions, **extra)


def detach_beyond(states: Sequence[Tensor], nearest: int | None) -> list[Tensor]:
    """`states` of the context sentences, nearest first: those beyond the nearest `nearest` detached
    (None: none detached; 0: all)."""
    return [s if nearest is None or i < nearest else s.detach() for i, s in enumerate(states)]


def shorten_context(shortener: Shortener, states: Sequence[Tensor], masks: Sequence[Tensor],
                    encoder_nearest: int, shortening_nearest: int | None) -> list[tuple[Tensor, Tensor]]:
    """Shorten each context sentence's encoder states (nearest first) under a gradient plan: the
    encoder gets gradient from the nearest `encoder_nearest`, the shortener from the nearest
    `shortening_nearest` (None: all). Beyond the shortener's, it runs without a graph: the same
    gradients as the authors' zeroed-gradient layer, without keeping activations in memory."""
    out = []
    for i, (h, mask) in enumerate(zip(detach_beyond(states, encoder_nearest), masks)):
        if shortening_nearest is not None and i >= shortening_nearest:
            with torch.no_grad():
                out.append(shortener(h, mask))
        else:
            out.append(shortener(h, mask))
    return out
