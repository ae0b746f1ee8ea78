"""Model `grouping` (the seed's Latent Grouping shortening): the `grouping` module of
plugin/shortening.py (sparsemax over K groups, --shortening-groups) shortens each encoded sentence;
the gradient flows back through the encoder for the nearest two context sentences and stops
between encoder and shortening beyond them (the seed's setting). Shared parts: shortening_base."""
from .shortening_base import register_shortening

GroupingModel = register_shortening("grouping", shortener="grouping", grad_sentences=2)
