"""Model `tagging` (the paper's TAGGING baseline; Schioppa et al., 2021; Vincent et al., 2022b): one
learned embedding per context value, prepended to the source encoder's output.

Tag ids come from a tag store (`mtcue tags`: vocabulary built once from the training data, id 0 =
unknown value), so every split and every later input maps a string to the same tag. The shape is
BASE-PM's (10 encoder layers, encoder FFN 4096), whose checkpoint initialises everything but the tags.

The store's vocabulary covers every column, but a model learns only the tags of the columns (and rows)
it trains on: the others keep their random initial embeddings. The model therefore remembers which tags
it was trained on (`context_known_tags`, saved with it) and reads any other tag as the unknown tag, as
the paper's TAGGING does with a value it has never seen (e.g. attribute sentences given zero-shot).
"""
from __future__ import annotations

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import base_architecture
from fairseq.modules import FairseqDropout

from mtcue.context.tags import UNKNOWN_TAG, tags_in

from ..contextual_model import (
    ContextualModel,
    PrependedContextEncoder,
    contextual_defaults,
    set_from_data,
)
from ..scaled_embedding import ScaledEmbedding


class TaggingEncoder(PrependedContextEncoder):
    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        self.context_tags = ScaledEmbedding(args.context_tags, args.encoder_embed_dim)
        self.context_dropout = FairseqDropout(args.context_dropout, module_name=self.__class__.__name__)
        known = torch.zeros(args.context_tags, dtype=torch.bool)
        known[UNKNOWN_TAG] = True
        self.register_buffer("context_known_tags", known)

    def learn_tags(self, tags) -> None:
        """Mark `tags` (ids present in this model's training data) as trained, besides those already known
        (a TAGGING parent's, loaded with its weights)."""
        self.context_known_tags[torch.as_tensor(tags, dtype=torch.long)] = True

    def encode_context(self, context, padding_mask):
        context = torch.where(self.context_known_tags[context], context, UNKNOWN_TAG)
        return self.context_dropout(self.context_tags(context)).transpose(0, 1), padding_mask

    def upgrade_state_dict_named(self, state_dict, name):
        # A checkpoint from before the record of trained tags trusted every tag.
        state_dict.setdefault(f"{name}.context_known_tags", torch.ones_like(self.context_known_tags))
        return super().upgrade_state_dict_named(state_dict, name)


@register_model("tagging")
class TaggingModel(ContextualModel):
    context_kind = "tags"

    @classmethod
    def set_context_sizes(cls, args, task):
        set_from_data(args, "context_tags", task.n_tags, "a tag vocabulary of size")

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return TaggingEncoder(args, src_dict, embed_tokens)

    @classmethod
    def build_model(cls, args, task):
        model = super().build_model(args, task)  # a TAGGING parent's checkpoint brings the tags it knows
        store = getattr(task, "store", None)
        if getattr(task, "building_from_checkpoint", False):
            pass  # the checkpoint holds the tags it was trained on
        elif store is None:
            model.encoder.context_known_tags.fill_(True)  # built without data (parameter counts): every tag
        else:
            model.encoder.learn_tags(tags_in(store.index("train"), task.column_ids))
        return model


@register_model_architecture("tagging", "tagging")
def tagging_architecture(args):
    """Paper sizes (Table 3): BASE-PM, i.e. transformer base with 10 encoder layers of FFN 4096."""
    args.encoder_layers = getattr(args, "encoder_layers", 10)
    args.encoder_ffn_embed_dim = getattr(args, "encoder_ffn_embed_dim", 4096)
    # base_architecture would give the decoder the encoder's FFN width.
    args.decoder_ffn_embed_dim = getattr(args, "decoder_ffn_embed_dim", 2048)
    base_architecture(args)
    contextual_defaults(args)
