"""Model `selecting` (Mąka et al.'s Latent Selecting shortening): the `selecting` module of
plugin/shortening/shorteners.py (the grouping network normalised over tokens, K selected, --shortening-groups);
the gradient of the nearest context sentence reaches the shortening and the encoder, that of the
others neither (shortening.CONTEXT_GRADIENT). Shared parts: shortening_base."""
from .shortening_base import register_shortening

SelectingModel = register_shortening("selecting")
