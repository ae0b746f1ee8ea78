"""Model `pool_linear` (the seed's Linear Pooling shortening): each encoded sentence is pooled in windows
of K = 2 (--shortening-groups) by the `pool_linear` module of plugin/shortening.py, followed by attention
back to the full sequence; no gradient past the encoder for any context sentence. Shared parts:
shortening_base."""
from .shortening_base import register_shortening

PoolLinearModel = register_shortening("pool_linear", shortener="pool_linear", grad_sentences=0)
