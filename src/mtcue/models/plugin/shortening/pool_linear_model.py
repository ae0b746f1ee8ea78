"""Model `pool_linear` (Mąka et al.'s Linear Pooling shortening): each encoded sentence is pooled in windows
of K = 2 (--shortening-groups) by the `pool_linear` module of plugin/shortening/shorteners.py, followed by attention
back to the full sequence; the shortening learns from every context sentence, the encoder from none
(shortening.CONTEXT_GRADIENT). Shared parts: shortening_base."""
from .shortening_base import register_shortening

PoolLinearModel = register_shortening("pool_linear")
