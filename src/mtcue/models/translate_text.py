"""Translate plain sentences with free-text context, after training:

    mtcue translate-text --model-dir results/models/en-de/mtcue --context "Formal conversation" \
        --previous "Good evening, Mrs Smith." < in.txt > out.txt

The model folder is the one the study's train step writes (`results/models/{direction}/{model}/`);
everything else is found beside it in the same study: the training record (the model spec: type,
context columns, sentence encoder), the pair's SentencePiece model and the binarised data's
dictionaries, and for TAGGING its tag vocabulary. The input goes through the pipeline's own steps
(SentencePiece, fairseq binarisation with the model's dictionaries, a context store written the way
the embed or tags step writes one, fairseq-generate), so a sentence with the same context translates
as it does in the study.

Context: `previous` are the preceding lines, most recent first (doc1, doc2, ...); `contexts` are any
other strings (metadata such as "Drama, Family, Romance", cues such as "Formal conversation"), put in
the metadata columns the model reads (then its cue columns), in order: MTCUE and NOVOTNEY-CUE give
those columns no position, so which column a string lands in does not matter to them.

`mtcue translate-prompts` is the zero-shot protocol's form (Table 5): a file of sentences translated
once per prompt, the input prepared once.
"""
from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mtcue.config import generation_settings, langs_of
from mtcue.corpus import META_FIELDS
from mtcue.io import atomic_directory, check_file_name, scratch_directory, write_lines
from mtcue.models.checkpoints import check_belongs

log = logging.getLogger(__name__)
SPLIT = "test"


@dataclass(frozen=True)
class TrainedModel:
    direction: str
    checkpoint: Path
    spec: dict
    spm_model: Path
    data_bin: Path
    tag_store: Path | None
    max_source_tokens: int  # the longest source the model reads, in SentencePiece pieces

    @classmethod
    def find(cls, model_dir: str | Path) -> TrainedModel:
        """The files of a model trained by the study, from its folder; a clear error for what is missing
        or does not belong together."""
        folder = Path(model_dir).resolve()
        checkpoint = folder / "checkpoint_best.pt"
        if not checkpoint.is_file():
            raise FileNotFoundError(f"{folder}: no checkpoint_best.pt: not a trained model's folder "
                                    "(results/models/{direction}/{model}/, written by the train step)")
        direction, model, results = folder.parent.name, folder.name, folder.parents[2]
        record = results / "records" / "train" / direction / f"{model}.json"
        if not record.is_file():
            raise FileNotFoundError(f"{record}: the training record of {direction}/{model} is missing (it names "
                                    "the model's context); rerun the train step")
        spec = json.loads(record.read_text(encoding="utf-8"))["spec"]
        needed = {"SentencePiece model": results / "spm" / f"{direction}.model",
                  "binarised data": results / "bin" / direction}
        tag_store = results / "tags" / direction if spec.get("context", {}).get("kind") == "tags" else None
        if tag_store is not None:
            needed["tag store"] = tag_store
        for what, path in needed.items():
            if not path.exists():
                raise FileNotFoundError(f"{path}: the {what} of {direction} is missing; the model folder must sit "
                                        "in the study that trained it")
        max_positions = check_belongs(checkpoint, direction, needed["binarised data"])
        return cls(direction, checkpoint, spec, needed["SentencePiece model"], needed["binarised data"], tag_store,
                   max_positions)

    def reading(self, columns: list[str]) -> TrainedModel:
        """The model given other context columns than it trained on (the EAMT22 test: the attribute
        sentences, which a zero-shot model never saw), as the study's eamt22_translate gives them."""
        if "context" not in self.spec:
            raise ValueError(f"a model without context ({self.spec['type']}) cannot read context columns {columns}")
        unknown = [c for c in columns if c not in META_FIELDS and not re.fullmatch(r"doc\d+|cue[1-9]\d*", c)]
        if unknown:
            raise ValueError(f"--columns: unknown context column {unknown[0]!r}; a column is doc0, doc1, ... (the "
                             f"document), cue1, cue2, ... or one of the metadata fields {', '.join(META_FIELDS)}")
        return replace(self, spec={**self.spec, "context": {**self.spec["context"], "columns": list(columns)}})


def _check_sources(sources: list[str]) -> None:
    if not sources:
        raise ValueError("no input to translate: give one sentence per line")
    blank = [n for n, s in enumerate(sources, 1) if not s.strip()]
    if blank:
        raise ValueError(f"input line {blank[0]} is empty ({len(blank)} empty lines in all): give one sentence per "
                         "line, none empty")


def samples_for(sources: list[str], contexts: list[str], previous: list[str], direction: str,
                columns: list[str]) -> list[dict]:
    """Corpus-format samples (docs/formats.md, section 1): each source with the same context."""
    src, tgt = langs_of(direction)
    slots = [c for c in columns if not c.startswith("doc")]  # metadata, then cue columns (store order)
    if len(contexts) > len(slots):
        raise ValueError(f"{len(contexts)} contexts given, but the model reads {len(slots)} context strings "
                         f"besides its document ({', '.join(slots) or 'none'})")
    lines_read = len([c for c in columns if c.startswith("doc")]) - 1
    if len(previous) > max(lines_read, 0):
        raise ValueError(f"{len(previous)} previous lines given, but the model reads at most {max(lines_read, 0)}")
    meta = {field: None for field in META_FIELDS} | {c: t for c, t in zip(slots, contexts) if not c.startswith("cue")}
    cues = [t for c, t in zip(slots, contexts) if c.startswith("cue")]
    return [{"id": f"{direction}.input.{i:06d}", "doc_id": "input", "text": {src: s, tgt: s},
             "previous": {src: list(previous), tgt: []}, "meta": meta, "cues": cues}
            for i, s in enumerate(sources)]


def _truncate(prefix: Path, direction: str, max_tokens: int) -> None:
    """Cut input lines the model cannot read whole (fairseq would refuse the whole batch) to their first
    `max_tokens` pieces, with a warning naming each line."""
    for lang in langs_of(direction):
        path = Path(f"{prefix}.{lang}")
        lines = path.read_text(encoding="utf-8").splitlines()
        long = [n for n, line in enumerate(lines) if len(line.split()) > max_tokens]
        for n in long:
            if lang == direction.split("-")[0]:
                log.warning("input line %d has %d pieces, more than the model reads (%d): only its first %d are "
                            "translated", n + 1, len(lines[n].split()), max_tokens, max_tokens)
            lines[n] = " ".join(lines[n].split()[:max_tokens])
        if long:
            write_lines(path, lines)


def _binarise(model: TrainedModel, prefix: Path, dest: Path) -> None:
    """The input as the `test` split, with the model's own dictionaries (the target side is a
    placeholder copy of the source: fairseq-generate needs one, the hypotheses do not read it)."""
    src, tgt = langs_of(model.direction)
    subprocess.run([sys.executable, "-m", "fairseq_cli.preprocess", "--source-lang", src, "--target-lang", tgt,
                    "--testpref", str(prefix), "--destdir", str(dest), "--srcdict", str(model.data_bin / f"dict.{src}.txt"),
                    "--tgtdict", str(model.data_bin / f"dict.{tgt}.txt"), "--workers", "1"],
                   check=True, stdout=subprocess.DEVNULL)


def _context_store(model: TrainedModel, corpus: Path, dest: Path) -> Path:
    """A store of the input, as the embed (vectors) or tags step writes one."""
    from mtcue.context.embed import build_stores
    from mtcue.context.store import ContextStore
    from mtcue.context.tags import VOCAB_FILE, tag_index
    from mtcue.corpus import read_corpus

    context = model.spec["context"]
    if model.tag_store is None:
        build_stores({model.direction: {SPLIT: corpus}}, {model.direction: dest}, context["columns"],
                     context["encoder"], pooling=context.get("pooling", "mean"))
        return dest
    trained = ContextStore(model.tag_store)
    vocab = json.loads((model.tag_store / VOCAB_FILE).read_text(encoding="utf-8"))
    index = tag_index(list(read_corpus(corpus)), langs_of(model.direction)[0], trained.columns, vocab)
    dest.mkdir()
    (dest / VOCAB_FILE).write_text(json.dumps(vocab), encoding="utf-8")
    np.save(dest / f"{SPLIT}.index.npy", index)
    (dest / "manifest.json").write_text(json.dumps({**trained.manifest, "splits": {SPLIT: len(index)}}))
    return dest


def translate_text(model_dir: str | Path, sources: list[str], contexts: list[str] = (), previous: list[str] = (),
                   generation: dict | None = None, threads: int = 1) -> list[str]:
    """Translations of `sources`, each read with the same `previous` lines and `contexts`."""
    _check_sources(sources)
    model = TrainedModel.find(model_dir)
    context = model.spec.get("context")
    if context is None and (contexts or previous):
        raise ValueError(f"{model_dir}: a model without context ({model.spec['type']}) cannot read --context or "
                         "--previous")
    samples = samples_for(sources, list(contexts), list(previous), model.direction,
                          context["columns"] if context else [])
    return translate_samples(model, samples, generation, threads)


def translate_samples(model: TrainedModel, samples: list[dict], generation: dict | None = None,
                      threads: int = 1, source: str | Path = "the input") -> list[str]:
    """Translations of corpus-format samples (read from `source`), each with its own context, through the
    pipeline's steps."""
    src, tgt = langs_of(model.direction)
    for n, sample in enumerate(samples, 1):
        if src not in sample["text"]:
            raise ValueError(f"{source}:{n}: the sample has no '{src}' text (languages: {', '.join(sample['text'])}): "
                             f"a {model.direction} model translates a corpus of its own language pair")
    # a source-only file gets the placeholder target that translate_text gives its input
    samples = [s if tgt in s["text"] else {**s, "text": {**s["text"], tgt: s["text"][src]}} for s in samples]
    with _prepared(model, samples) as (tmp, store):
        _generate(model, tmp, store, len(samples), tmp / "hyps.txt", generation, threads)
        return (tmp / "hyps.txt").read_text(encoding="utf-8").splitlines()


def _check_prompts(prompts) -> None:
    """Prompts are {id: text}; an id names a file of the output folder, so it may not leave it."""
    if not isinstance(prompts, dict) or not all(isinstance(t, str) and t.strip() for t in prompts.values()):
        raise ValueError('--prompts: give a JSON object {"prompt id": "prompt text", ...} with non-empty texts')
    for prompt_id in prompts:
        check_file_name(prompt_id, "--prompts: prompt id")


def translate_prompted(model_dir: str | Path, sources: list[str], prompts: dict[str, str], out_dir: str | Path,
                       generation: dict | None = None, threads: int = 1) -> dict[str, int]:
    """Zero-shot prompting (IWSLT22, paper appendix D): `out_dir/{prompt id}.txt`, the sources translated
    once per prompt ({id: text}) with the sentence itself (doc0) and the prompt as the only context; a
    model without context translates them once, into `none.txt`. The folder appears when complete.
    Returns {file stem: lines}."""
    from mtcue.context.prompted import build_prompted_stores, prompt_column

    _check_sources(sources)
    _check_prompts(prompts)
    model = TrainedModel.find(model_dir)
    context = model.spec.get("context")
    if context is not None and not prompts:
        raise ValueError(f"{model_dir}: a contextual model ({model.spec['type']}) is prompted, but no prompt was given")
    samples = samples_for(sources, [], [], model.direction, context["columns"] if context else [])
    with atomic_directory(out_dir) as out, _prepared(model, samples) as (tmp, store):
        if store is None:
            return {"none": _generate(model, tmp, None, len(samples), out / "none.txt", generation, threads)}
        build_prompted_stores(store, prompts, prompt_column(context["columns"]), tmp / "prompts")
        return {pid: _generate(model, tmp, tmp / "prompts" / pid, len(samples), out / f"{pid}.txt", generation, threads)
                for pid in prompts}


@contextmanager
def _prepared(model: TrainedModel, samples: list[dict]) -> Iterator[tuple[Path, Path | None]]:
    """A temporary folder with the samples binarised as the `test` split (`bin/`) and, for a contextual
    model, their context store: what the study's spm_encode, binarise and embed/tags steps write."""
    from mtcue.data.prepare import encode_split

    with scratch_directory("mtcue-translate-") as tmp:
        corpus = tmp / f"{SPLIT}.jsonl"
        write_lines(corpus, (json.dumps(s, ensure_ascii=False) for s in samples))
        encode_split(model.spm_model, corpus, model.direction, tmp / SPLIT)
        _truncate(tmp / SPLIT, model.direction, model.max_source_tokens - 1)  # and </s>
        _binarise(model, tmp / SPLIT, tmp / "bin")
        yield tmp, _context_store(model, corpus, tmp / "store") if "context" in model.spec else None


def _generate(model: TrainedModel, tmp: Path, store: Path | None, n_samples: int, out: Path,
              generation: dict | None, threads: int) -> int:
    from mtcue.models.translate import translate

    return translate(model.spec, model.direction, tmp / "bin", model.checkpoint, SPLIT, n_samples, out,
                     generation_settings(generation or {}), store, threads)
