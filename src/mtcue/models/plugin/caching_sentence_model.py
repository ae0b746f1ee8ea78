"""Model `caching_sentence` (the shortening paper's Caching Sentence): each sentence (the current one
included) is kept as the mean of its token states over its true length; the decoder runs its cross- and
context attention in parallel, the context branch gated, lambda = sigmoid(Linear(h)) (section 5, eq. 5;
placed as the authors' code places it: shortening_base.ContextDecoderLayer); no gradient past the
encoder for any context sentence. Shared parts: shortening_base."""
from .shortening_base import register_shortening, true_mean

CachingSentenceModel = register_shortening("caching_sentence", shorten=true_mean, gated=True, parallel=True)
