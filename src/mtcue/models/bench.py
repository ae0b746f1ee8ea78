"""Benchmark of the Python API (issue 23): a model loaded once and translating in memory, against
fairseq-generate on the same binarised split (the study's translate step) and against the
`mtcue translate-text` command, which loads the model at every call."""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mtcue.config import generation_settings
from mtcue.corpus import read_corpus
from mtcue.layout import store_dir
from mtcue.study import store_name


def benchmark_translation(model_dir: str | Path, corpus: str | Path, split: str, calls: int = 3) -> dict:
    """Seconds and sentences/s of each way to translate `corpus` (the cleaned `split` the study binarised)
    with the model in `model_dir`, on this machine's CPU or GPU, one after the other in one process: the
    API's first call embeds the context strings (fairseq-generate reads the study's store), its second
    finds them cached."""
    from mtcue.models.translate import translate
    from mtcue.models.translator import Translator

    samples = list(read_corpus(corpus))
    generation = generation_settings({})
    start = time.perf_counter()
    translator = Translator.load(model_dir)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    api = translator.translate_samples(samples, generation)
    api_s = time.perf_counter() - start
    start = time.perf_counter()  # again: every context string is now in the translator's cache
    translator.translate_samples(samples, generation)
    api_cached_s = time.perf_counter() - start

    model = translator.model
    context = model.spec.get("context")
    store = None if context is None else model.tag_store or store_dir("vectors", model.direction, store_name(context),
                                                                      model.results)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        translate(model.spec, model.direction, model.data_bin, model.checkpoint, split, len(samples),
                  Path(tmp) / "hyps.txt", generation, store)
        generate_s = time.perf_counter() - start
        generated = (Path(tmp) / "hyps.txt").read_text(encoding="utf-8").splitlines()

    line = samples[0]["text"][model.direction.split("-")[0]] + "\n"
    start = time.perf_counter()
    for _ in range(calls):
        subprocess.run([str(Path(sys.executable).parent / "mtcue"), "translate-text", "--model-dir", str(model_dir)],
                       input=line, capture_output=True, text=True, check=True)
    command_s = (time.perf_counter() - start) / calls
    return {"model_dir": str(model_dir), "device": translator._fairseq.device, "sentences": len(samples),
            "load_s": round(load_s, 2), "api_s": round(api_s, 2), "api_sentences_per_s": round(len(samples) / api_s, 1),
            "api_cached_s": round(api_cached_s, 2), "api_cached_sentences_per_s": round(len(samples) / api_cached_s, 1),
            "generate_s": round(generate_s, 2), "generate_sentences_per_s": round(len(samples) / generate_s, 1),
            "api_equals_generate": api == generated, "command_s_per_call": round(command_s, 2),
            "command_calls": calls}
