"""Model `style_token` (Jeong et al., Korean-English style control, approach 2, "categorical token
fine-tuning"): BASE's transformer whose shared dictionary gains five level symbols <style1>..<style5>
(task `style_translation --style-mode token`); each target starts with its level's symbol right after the
beginning of sentence, and generation forces it. The parent's tensors load unchanged; its embedding matrix
gains the five new rows, initialised as fairseq initialises embeddings (N(0, d^-1/2)); Jeong et al. do
not say how they initialised them. They put the symbol after NLLB's target-language token, which our
bilingual models do not have."""
from __future__ import annotations

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import base_architecture

from .style_model import StyleModel, style_defaults

EMBEDDINGS = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "decoder.output_projection.weight")


@register_model("style_token")
class StyleTokenModel(StyleModel):
    @classmethod
    def build_model(cls, args, task):
        if getattr(task, "first_symbol", None) is None:
            raise ValueError("--arch style_token reads level symbols: use --task style_translation --style-mode token")
        return super().build_model(args, task)

    @classmethod
    def adapt_parent(cls, model, state):
        own = model.state_dict()
        out = dict(state)
        for key in EMBEDDINGS:
            if key in state and key in own and state[key].shape[0] < own[key].shape[0]:
                out[key] = torch.cat([state[key], own[key][state[key].shape[0]:].to(state[key].dtype)])
        return out


@register_model_architecture("style_token", "style_token")
def style_token_architecture(args):
    base_architecture(args)
    style_defaults(args)
