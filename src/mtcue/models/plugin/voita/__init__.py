"""Voita et al. (2018): the context-aware encoder (VOITA-CONTEXT) and concatenation (CONCAT)."""
