"""Model `pool_max` (the seed's Max Pooling shortening): each encoded sentence is pooled in windows
of K = 2 (--shortening-groups) by the `pool_max` module of plugin/shortening.py, followed by attention
back to the full sequence; no gradient past the encoder for any context sentence. Shared parts:
shortening_base."""
from .shortening_base import register_shortening

PoolMaxModel = register_shortening("pool_max", shortener="pool_max", grad_sentences=0)
