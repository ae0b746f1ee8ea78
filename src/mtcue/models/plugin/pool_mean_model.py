"""Model `pool_mean` (the seed's Mean Pooling shortening): each encoded sentence is pooled in windows
of K = 2 (--shortening-groups) by the `pool_mean` module of plugin/shortening.py, followed by attention
back to the full sequence; no gradient past the encoder for any context sentence. Shared parts:
shortening_base."""
from .shortening_base import register_shortening

PoolMeanModel = register_shortening("pool_mean", shortener="pool_mean", grad_sentences=0)
