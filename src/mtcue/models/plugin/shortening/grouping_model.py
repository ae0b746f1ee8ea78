"""Model `grouping` (Mąka et al.'s Latent Grouping shortening): the `grouping` module of
plugin/shortening/shorteners.py (sparsemax over K groups, --shortening-groups) shortens each encoded sentence;
the gradient of the nearest two context sentences reaches the shortening and the encoder, that of
the others neither (shortening.CONTEXT_GRADIENT, the authors' runs). Shared parts: shortening_base."""
from .shortening_base import register_shortening

GroupingModel = register_shortening("grouping")
