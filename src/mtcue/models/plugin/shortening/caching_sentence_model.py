"""Model `caching_sentence` (the seed's Caching Sentence): each sentence (the current one included)
is kept as the mean of its token states over its true length; the context attention's output is
gated, lambda = sigmoid(Linear(h)) (seed, eq. 5); no gradient past the encoder for any context
sentence. Shared parts: shortening_base."""
from .shortening_base import register_shortening, true_mean

CachingSentenceModel = register_shortening("caching_sentence", shorten=true_mean, gated=True)
