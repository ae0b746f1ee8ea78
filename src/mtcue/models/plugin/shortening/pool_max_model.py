"""Model `pool_max` (Mąka et al.'s Max Pooling shortening): each encoded sentence is pooled in windows
of K = 2 (--shortening-groups) by the `pool_max` module of plugin/shortening/shorteners.py, followed by attention
back to the full sequence; the shortening learns from every context sentence, the encoder from none
(shortening.CONTEXT_GRADIENT). Shared parts: shortening_base."""
from .shortening_base import register_shortening

PoolMaxModel = register_shortening("pool_max")
