"""Model `caching_tokens` (the shortening paper's Caching Tokens): every token state of each context sentence,
as encoded by the shared encoder, is read by the decoder's context attention; no gradient past the
encoder for any context sentence. It does not aggregate, so the current sentence is not part of its
context (the authors' run leaves `use_current_context` off). Shared parts: shortening_base."""
from .shortening_base import keep_tokens, register_shortening

CachingTokensModel = register_shortening("caching_tokens", shorten=keep_tokens, current_as_context=False)
