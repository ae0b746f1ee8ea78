"""What Hoang et al.'s side-information models (si_*_model.py) share: they read a sample's bag of labels
from a tag store of side-information columns (context/side_labels.py; `net_input["context"]` [B, S] tag ids,
`context_padding_mask` True where the sample has no label in that column), start from BASE (every BASE
tensor loads; the new ones are named context_*), and sum or place label embeddings as each variant says.
"""
from __future__ import annotations

import torch
from fairseq.models.transformer import base_architecture
from torch import Tensor, nn

from ..contextual_model import ContextualModel, contextual_defaults, set_from_data


def label_embedding(n_tags: int, dim: int) -> nn.Embedding:
    """A label table on fairseq's token-embedding scale (std dim^-0.5; callers scale by sqrt(dim) where the
    labels stand beside tokens)."""
    table = nn.Embedding(n_tags, dim)
    nn.init.normal_(table.weight, mean=0.0, std=dim ** -0.5)
    return table


def summed_labels(table: nn.Embedding, labels: Tensor, missing: Tensor) -> Tensor:
    """Hoang et al.'s e = sum_m e_{w_m}: [B, S] ids, [B, S] mask -> [B, dim]; a sample without labels gets 0."""
    return (table(labels) * (~missing).unsqueeze(-1).type_as(table.weight)).sum(dim=1)


class SideInfoModel(ContextualModel):
    context_kind = "tags"

    @classmethod
    def set_context_sizes(cls, args, task):
        set_from_data(args, "context_tags", task.n_tags, "a label vocabulary of size")


def side_info_architecture(args):
    """The demo's and the paper's shapes come from the config (Hoang et al.: 2 encoder and decoder layers,
    d 512, dropout 0.1); fairseq's transformer base otherwise."""
    args.side_dim = getattr(args, "side_dim", 64)
    args.mtl_weight = getattr(args, "mtl_weight", 0.1)
    base_architecture(args)
    contextual_defaults(args)


def multi_hot(labels: Tensor, missing: Tensor, n_tags: int) -> Tensor:
    """[B, S] ids -> [B, n_tags] 0/1 targets of the multi-label classifier (missing columns and the unknown
    tag 0 are no label)."""
    hot = torch.zeros(labels.size(0), n_tags, dtype=torch.float, device=labels.device)
    hot.scatter_(1, torch.where(missing, 0, labels), 1.0)
    hot[:, 0] = 0.0
    return hot
