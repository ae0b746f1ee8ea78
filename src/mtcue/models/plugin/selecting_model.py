"""Model `selecting` (the seed's Latent Selecting shortening): the `selecting` module of
plugin/shortening.py (the grouping network normalised over tokens, K selected, --shortening-groups);
the gradient flows for the nearest context sentence only. Shared parts: shortening_base."""
from .shortening_base import register_shortening

SelectingModel = register_shortening("selecting", shortener="selecting", grad_sentences=1)
