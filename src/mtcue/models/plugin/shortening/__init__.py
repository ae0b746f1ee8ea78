"""The sequence-shortening models (Mąka et al., 2024) and their shorteners."""
