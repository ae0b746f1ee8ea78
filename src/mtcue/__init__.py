"""MTCue reproducibility pipeline: data preparation, fairseq plugin, scoring and tables.

`from mtcue import Translator`: a trained model of the study, translating and scoring in memory
(mtcue.models.translator; imported on first use, as it loads torch and fairseq)."""


def __getattr__(name: str):
    if name == "Translator":
        from mtcue.models.translator import Translator

        return Translator
    raise AttributeError(f"module 'mtcue' has no attribute {name!r}")
