"""Translate plain sentences with free-text context, after training (commands over `mtcue.Translator`):

    mtcue translate-text --model-dir results/models/en-de/mtcue --cue "Formal conversation" < in.txt > out.txt
    mtcue translate-text --model-dir results/models/en-de/mtcue --context "Drama, Family, Romance" \
        --previous "Good evening, Mrs Smith." < in.txt > out.txt

The model folder is the one the study's train step writes (`results/models/{direction}/{model}/`);
everything else is found beside it in the same study (mtcue.models.translator.TrainedModel).

`mtcue translate-prompts` is the zero-shot protocol's form (Table 5): a file of sentences translated
once per prompt; `mtcue translate-levels` its supervised counterpart, a style-control model translating
them once per style level; `mtcue translate-corpus` translates a corpus-format file, each line with its own
context.
"""
from __future__ import annotations

from pathlib import Path

from mtcue.config import generation_settings
from mtcue.io import check_file_name, write_lines
from mtcue.models.fairseq_run import torch_threads
from mtcue.models.translator import Translator, check_sources, warn_other_language
from mtcue.outputs import atomic_directory


def translate_text(model_dir: str | Path, sources: list[str], contexts: list[str] = (), previous: list[str] = (),
                   generation: dict | None = None, threads: int = 1, cue: str | None = None) -> list[str]:
    """Translations of `sources`, each read with the same `previous` lines and `contexts`, or with `cue` as
    Table 5 reads a prompt (Translator.cued_samples)."""
    check_sources(sources)
    with torch_threads(threads):
        translator = Translator.load(model_dir)
        warn_other_language(sources, translator.direction)
        n = len(sources)  # the same lines for every sentence, given per sentence: never ambiguous
        if cue is not None:
            if contexts or previous:
                raise ValueError("--cue with --context or --previous: a cue is the model's whole context, as Table 5 "
                                 "gives its prompts; give one or the other")
            return translator.translate_samples(translator.cued_samples(sources, [cue] * n), generation, doc0=False)
        return translator.translate_samples(translator.samples(sources, [list(contexts)] * n, [list(previous)] * n),
                                            generation)


def _check_prompts(prompts) -> None:
    """Prompts are {id: text}; an id names a file of the output folder, so it may not leave it."""
    if not isinstance(prompts, dict) or not all(isinstance(t, str) and t.strip() for t in prompts.values()):
        raise ValueError('--prompts: give a JSON object {"prompt id": "prompt text", ...} with non-empty texts')
    for prompt_id in prompts:
        check_file_name(prompt_id, "--prompts: prompt id")


def translate_prompted(model_dir: str | Path, sources: list[str], prompts: dict[str, str], out_dir: str | Path,
                       generation: dict | None = None, threads: int = 1) -> dict[str, int]:
    """Zero-shot prompting (IWSLT22, paper appendix D): `out_dir/{prompt id}.txt`, the sources translated
    once per prompt ({id: text}) with the prompt as the only context (the authors' `--no-doc-context`:
    not even the sentence itself as doc0), in the model's prompt column (Translator.cued_samples);
    a model without context translates them once, into `none.txt`. The folder appears when complete.
    Returns {file stem: lines}."""
    check_sources(sources)
    _check_prompts(prompts)
    generation = generation_settings(generation or {})  # a misspelt key is reported before the model loads
    with atomic_directory(out_dir, "translate-prompts") as out, torch_threads(threads):
        translator = Translator.load(model_dir)
        columns = translator.context_columns
        if not columns:
            return {"none": write_lines(out / "none.txt", translator.translate_samples(translator.samples(sources),
                                                                                       generation))}
        if not prompts:
            raise ValueError(f"{model_dir}: a contextual model ({translator.model.spec['type']}) is prompted, but no "
                             "prompt was given")
        return {pid: write_lines(out / f"{pid}.txt", translator.translate_samples(
                    translator.cued_samples(sources, [text] * len(sources)), generation, doc0=False))
                for pid, text in prompts.items()}


def translate_levels(model_dir: str | Path, sources: list[str], levels: list[int], out_dir: str | Path,
                     generation: dict | None = None, threads: int = 1) -> dict[str, int]:
    """Supervised style control (Jeong et al.): `out_dir/level{N}.txt`, the sources translated by a
    style-control model at each level N of `levels` (1..5). The folder appears when complete."""
    check_sources(sources)
    if not levels or any(level not in range(1, 6) for level in levels):
        raise ValueError(f"--levels {levels}: give levels 1..5")
    generation = generation_settings(generation or {})  # a misspelt key is reported before the model loads
    with atomic_directory(out_dir, "translate-levels") as out, torch_threads(threads):
        translator = Translator.load(model_dir)
        if "style" not in translator.model.spec:
            raise ValueError(f"{model_dir}: a {translator.model.spec['type']} model has no style levels")
        samples = translator.samples(sources)
        return {f"level{n}": write_lines(out / f"level{n}.txt", translator.translate_samples(samples, generation,
                                                                                           style=n))
                for n in levels}


def translate_corpus(model_dir: str | Path, samples: list[dict], columns: list[str] | None = None,
                     generation: dict | None = None, threads: int = 1, source: str | Path = "the input") -> list[str]:
    """Translations of corpus-format samples (read from `source`), each with its own context; `columns`:
    context columns to read instead of the model's own."""
    generation = generation_settings(generation or {})  # a misspelt key is reported before the model loads
    with torch_threads(threads):
        return Translator.load(model_dir, columns=columns).translate_samples(samples, generation, source)
