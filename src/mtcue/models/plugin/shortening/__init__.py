"""The sequence-shortening models (seed sequence_shortening_context_mt.txt) and their shorteners."""
