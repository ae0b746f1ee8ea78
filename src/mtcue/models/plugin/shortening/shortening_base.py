"""What the sequence-shortening models share (Mąka et al., 2024, "Sequence Shortening for Context-Aware
Machine Translation", section 4; its authors' code Pawel-M/shortening-context-mt):

- one encoder (BASE's) encodes the current sentence and each of the c previous sentences of the
  token store separately (`--context-slot prev1,...,prevc`; context [B, c, L], nearest first);
- each encoded sentence is shortened (`context_shorten`: the model's own; identity for Caching
  Tokens); for the aggregating models (every one but Caching Tokens) the current sentence's
  shortened form joins the context (section 5: "For all the aggregating models, the current sentence
  is also used as context"; the authors' Caching Tokens run leaves `--use-current-context` off);
- a learned segment embedding per sentence (row 0 = the current sentence, j = the j-th previous) is
  added to its context states: as the authors' code, a table of max-source-positions + 1 rows
  indexed by the sentence (Table 5 counts it), so a model trained with C sentences also reads more
  (the shortening paper's memory curve runs the C = 3 models on up to 8). The learned positions of shortened
  tokens are the shortening module's (plugin/shortening/shorteners.py); cached tokens keep the encoder's;
- every decoder layer runs self-attention -> cross-attention -> context attention -> FFN (serial,
  each with residual and post layer norm as the rest of BASE); Caching Sentence's runs the cross- and
  the context attention in parallel on the self-attention's output and adds the two branches (section
  5: "Caching Sentence yields the highest performance when parallel cross- and context-attention
  decoder is used with the gate on the context branch"), its `context_gate` scaling the context
  branch by lambda = sigmoid(Linear(h)) where the authors' code does: h after the branch's residual and
  layer norm (their `contextual_decoder.py`; eq. 5 writes the gate on the attention's output);
- gradient: the encoder states of the nearest `context_grad_sentences` context sentences keep
  their gradient, the others are encoded without it (the shortening paper's StopGradLayer between encoder and
  shortening; no encoder activations are kept for them, as in the cached decoding this stands for);
  the shortening module learns from the nearest `context_shortening_grad_sentences` (None: all), as
  the authors' runs (shortening.CONTEXT_GRADIENT). The current sentence always keeps its gradient.

Every BASE tensor loads into the same-named tensor (`--pretrained-base`); the new ones all have a
`context_` name part (pretrained.is_context_key). A model with c context sentences is built with
`--context-sentences c` (config: the model entry's `context_sentences`).
"""
from __future__ import annotations

from typing import Callable, Optional

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import TransformerDecoder, TransformerEncoder, base_architecture
from fairseq.modules import LayerNorm, MultiheadAttention
from fairseq.modules.transformer_layer import TransformerDecoderLayer
from torch import Tensor, nn

from ..contextual_model import TokenContextModel, contextual_defaults, require_context


def sentences_of(context: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
    """A single-slot batch ([B, L]) as one context sentence: [B, 1, L]; [B, c, L] as it is."""
    if context.dim() == 2:
        return context.unsqueeze(1), padding_mask.unsqueeze(1)
    return context, padding_mask


def true_mean(h: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
    """Caching Sentence: h [T, B, C] -> the mean over each sentence's own tokens [1, B, C] (the
    authors' code divides by the padded length), mask [B, 1] (never padding: a sentence has >= 1 token)."""
    keep = (~padding_mask).transpose(0, 1).unsqueeze(-1).type_as(h)  # [T, B, 1]
    mean = (h * keep).sum(0, keepdim=True) / keep.sum(0, keepdim=True).clamp(min=1)
    return mean, padding_mask.new_zeros(padding_mask.size(0), 1)


def keep_tokens(h: Tensor, padding_mask: Tensor) -> tuple[Tensor, Tensor]:
    """Caching Tokens: every token state is kept."""
    return h, padding_mask


class ShorteningEncoder(TransformerEncoder):
    """BASE's encoder; its output also carries `context_out` [S, B, C] and `context_padding_mask`
    [B, S]: the shortened current sentence (`current_as_context`) followed by the shortened context
    sentences, nearest first; segment 0 is the current sentence's, j the j-th previous one's."""

    def __init__(self, args, dictionary, embed_tokens, shorten: Callable[[Tensor, Tensor], tuple[Tensor, Tensor]],
                 current_as_context: bool = True):
        super().__init__(args, dictionary, embed_tokens)
        self.current_as_context = current_as_context
        d = embed_tokens.embedding_dim
        self.context_grad_sentences = args.context_grad_sentences
        self.context_shortening_grad_sentences = args.context_shortening_grad_sentences
        self.context_shorten = shorten
        self.context_segments = nn.Embedding(args.max_source_positions + 1, d)
        nn.init.normal_(self.context_segments.weight, mean=0.0, std=d ** -0.5)

    def encode(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        out = super().forward(tokens, None)
        return out["encoder_out"][0], out["encoder_padding_mask"][0]

    def encode_context(self, context: Tensor) -> list[tuple[Tensor, Tensor]]:
        """Each context sentence's encoder states [L, B, C] and mask [B, L], nearest first; those past the
        nearest `context_grad_sentences` without gradient. One encoder call per group of sentences."""
        b, c, length = context.shape
        states = []
        for start, stop, grad in ((0, min(self.context_grad_sentences, c), True),
                                  (min(self.context_grad_sentences, c), c, False)):
            if start == stop:
                continue
            with torch.set_grad_enabled(grad and torch.is_grad_enabled()):
                h, mask = self.encode(context[:, start:stop].transpose(0, 1).reshape(-1, length))
            states += [(h[:, j * b:(j + 1) * b], mask[j * b:(j + 1) * b]) for j in range(stop - start)]
        return states

    def forward(self, src_tokens, src_lengths=None, context=None, context_padding_mask=None,
                return_all_hiddens: bool = False, token_embeddings=None):
        require_context(context, context_padding_mask)
        context, _ = sentences_of(context, context_padding_mask)
        if context.size(1) >= self.context_segments.num_embeddings:
            raise ValueError(f"{context.size(1)} context sentences: the model has segments for at most "
                             f"{self.context_segments.num_embeddings - 1}")
        out = super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)
        states = self.encode_context(context)
        if isinstance(self.context_shorten, nn.Module):  # plugin/shortening/shorteners.py's gradient plan
            from .shorteners import shorten_context

            shortened = shorten_context(self.context_shorten, [h for h, _ in states], [m for _, m in states],
                                        self.context_grad_sentences, self.context_shortening_grad_sentences)
        else:
            shortened = [self.context_shorten(h, mask) for h, mask in states]
        if self.current_as_context:
            shortened = [self.context_shorten(out["encoder_out"][0], out["encoder_padding_mask"][0]), *shortened]
        first = 0 if self.current_as_context else 1
        parts, masks = [], []
        for segment, (g, g_mask) in enumerate(shortened, start=first):
            parts.append(g + self.context_segments.weight[segment].to(g.dtype))
            masks.append(g_mask)
        out["context_out"] = [torch.cat(parts, dim=0)]
        out["context_padding_mask"] = [torch.cat(masks, dim=1)]
        return out

    def reorder_encoder_out(self, encoder_out, new_order):
        reordered = super().reorder_encoder_out(encoder_out, new_order)
        reordered["context_out"] = [encoder_out["context_out"][0].index_select(1, new_order)]
        reordered["context_padding_mask"] = [encoder_out["context_padding_mask"][0].index_select(0, new_order)]
        return reordered


class ContextDecoderLayer(TransformerDecoderLayer):
    """fairseq's post-norm decoder layer (same parameter names) with a context attention block
    c = LN(q + Dropout(Attn(q, context))), gated c <- sigmoid(Linear(c)) * c with `gate` (the authors'
    code): serial, q the cross-attention block's output and c the FFN's input; `parallel`, q the
    self-attention block's output and the FFN's input the cross-attention block's output + c. The
    decoder sets `context`/`context_mask` before each call."""

    def __init__(self, args, gate: bool, parallel: bool = False):
        super().__init__(args)
        if self.normalize_before or self.cross_self_attention:
            raise ValueError("the shortening models' decoder layer is post-norm without cross-self-attention")
        d = args.decoder_embed_dim
        self.context_attn = MultiheadAttention(d, args.decoder_attention_heads, kdim=d, vdim=d,
                                               dropout=args.attention_dropout, encoder_decoder_attention=True)
        self.context_attn_layer_norm = LayerNorm(d)
        self.context_gate = nn.Linear(d, 1) if gate else None
        self.context_parallel = parallel
        self.context: Optional[Tensor] = None
        self.context_mask: Optional[Tensor] = None

    def forward(self, x, encoder_out=None, encoder_padding_mask=None, incremental_state=None,
                prev_self_attn_state=None, prev_attn_state=None, self_attn_mask=None, self_attn_padding_mask=None,
                need_attn: bool = False, need_head_weights: bool = False):
        residual = x
        x, _ = self.self_attn(query=x, key=x, value=x, key_padding_mask=self_attn_padding_mask,
                              incremental_state=incremental_state, need_weights=False, attn_mask=self_attn_mask)
        x = self.self_attn_layer_norm(self.residual_connection(self.dropout_module(x), residual))
        after_self = x
        residual = x
        x, attn = self.encoder_attn(query=x, key=encoder_out, value=encoder_out, key_padding_mask=encoder_padding_mask,
                                    incremental_state=incremental_state, static_kv=True,
                                    need_weights=need_attn or need_head_weights, need_head_weights=need_head_weights)
        x = self.encoder_attn_layer_norm(self.residual_connection(self.dropout_module(x), residual))
        residual = after_self if self.context_parallel else x
        h, _ = self.context_attn(query=residual, key=self.context, value=self.context,
                                 key_padding_mask=self.context_mask, incremental_state=incremental_state,
                                 static_kv=True, need_weights=False)
        h = self.context_attn_layer_norm(self.residual_connection(self.dropout_module(h), residual))
        if self.context_gate is not None:
            h = torch.sigmoid(self.context_gate(h)) * h
        x = x + h if self.context_parallel else h
        residual = x
        x = self.fc2(self.activation_dropout_module(self.activation_fn(self.fc1(x))))
        x = self.final_layer_norm(self.residual_connection(self.dropout_module(x), residual))
        return x, attn, None


class ContextDecoder(TransformerDecoder):
    def __init__(self, args, dictionary, embed_tokens, no_encoder_attn=False):
        # read by build_decoder_layer, called by super().__init__
        self.context_gated, self.context_parallel = args.context_gate, args.context_parallel
        super().__init__(args, dictionary, embed_tokens, no_encoder_attn)

    def build_decoder_layer(self, args, no_encoder_attn=False):
        return ContextDecoderLayer(args, gate=self.context_gated, parallel=self.context_parallel)

    def extract_features_scriptable(self, prev_output_tokens, encoder_out, incremental_state=None,
                                    full_context_alignment: bool = False, alignment_layer=None, alignment_heads=None):
        for layer in self.layers:
            layer.context, layer.context_mask = encoder_out["context_out"][0], encoder_out["context_padding_mask"][0]
        return super().extract_features_scriptable(prev_output_tokens, encoder_out, incremental_state,
                                                   full_context_alignment, alignment_layer, alignment_heads)


class ShorteningModel(TokenContextModel):
    """Subclasses (one plugin file each, `register_shortening`) set how a sentence is shortened, the
    gradient rule and the gate."""

    gated = False
    parallel = False  # cross- and context attention side by side (Caching Sentence)
    current_as_context = True  # the current sentence joins the context (the aggregating models)
    grad_sentences = 0  # the nearest context sentences whose gradient reaches the encoder
    shortening_grad_sentences = None  # ... the shortening module (None: all)

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--context-sentences", type=int, metavar="C",
                            help="previous sentences read as context in training (the task's --context-slot "
                                 "prev1,...,prevC); the model reads as many as a batch gives")
        parser.add_argument("--shortening-groups", type=int, metavar="K",
                            help="pooling window (pool_*), groups (Latent Grouping) or selected tokens (Latent "
                                 "Selecting); required by those (config: arch.shortening_groups, its default the "
                                 "schema's)")

    @classmethod
    def build_shortener(cls, args) -> Callable[[Tensor, Tensor], tuple[Tensor, Tensor]]:
        raise NotImplementedError

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        args.context_grad_sentences, args.context_gate = cls.grad_sentences, cls.gated
        args.context_parallel = cls.parallel
        args.context_shortening_grad_sentences = cls.shortening_grad_sentences
        return ShorteningEncoder(args, src_dict, embed_tokens, cls.build_shortener(args), cls.current_as_context)

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        return ContextDecoder(args, tgt_dict, embed_tokens)


def shortening_defaults(args) -> None:
    base_architecture(args)
    contextual_defaults(args)
    args.context_sentences = getattr(args, "context_sentences", None) or 1
    args.shortening_groups = getattr(args, "shortening_groups", None)


def register_shortening(name: str, shorten=None, gated: bool = False, parallel: bool = False,
                        current_as_context: bool = True):
    """Register model and architecture `name`: a ShorteningModel whose sentences are shortened by the
    function `shorten` (no gradient to the encoder from any context sentence), or else by plugin/
    shortening.py's module `name` under its gradient plan (CONTEXT_GRADIENT), built per model."""
    from .shorteners import CONTEXT_GRADIENT, build_shortener

    grad, shortening_grad = (0, None) if shorten is not None else CONTEXT_GRADIENT[name]

    def shortener(cls, args):
        if shorten is not None:
            return shorten
        if args.shortening_groups is None:  # the default is the config schema's alone (mtcue.config)
            raise ValueError(f"model {name}: give --shortening-groups K (config: models.*.arch.shortening_groups)")
        return build_shortener(name, args.encoder_embed_dim, args.encoder_attention_heads, args.attention_dropout,
                               args.shortening_groups)

    model = type(f"{name.title().replace('_', '')}Model", (ShorteningModel,),
                 {"gated": gated, "parallel": parallel, "current_as_context": current_as_context,
                  "grad_sentences": grad,
                  "shortening_grad_sentences": shortening_grad,
                  "build_shortener": classmethod(shortener)})
    register_model(name)(model)
    register_model_architecture(name, name)(shortening_defaults)
    return model
