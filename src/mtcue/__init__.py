"""MTCue reproducibility pipeline: data preparation, fairseq plugin, scoring and tables."""
