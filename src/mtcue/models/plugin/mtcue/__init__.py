"""MTCue and its contextual baselines (TAGGING, NOVOTNEY-CUE)."""
