"""`mtcue.Translator`: a trained model of the study, loaded once, translating and scoring in memory.

    from mtcue import Translator
    t = Translator.load("results/models/en-de/mtcue")
    t.translate(["Are you ready?"], context="Formal conversation", previous="Good evening, Mrs Smith.")
    t.score("Are you ready?", ["Sind Sie bereit?", "Bist du bereit?"], context="Formal conversation")

It reads what the study's steps read (the training record's model spec, the direction's SentencePiece
model, the binarised data's dictionaries, the sentence encoder or tag vocabulary of the model's context)
and does what they do, without files: SentencePiece pieces become dictionary ids as fairseq-preprocess
makes them, context strings become vectors with the store's encoder (each unique string embedded once,
then cached) or tag ids with the trained vocabulary, and beam search runs in batches ordered by length
as fairseq-generate orders them. So a sentence with the same context translates as in the study
(tests/test_pipeline.py compares the study's hypotheses). `mtcue translate-text`, `translate-prompts`
and `translate-corpus` are thin layers over it.

Context: `cue` (a register or any other cue, "Formal conversation") is read as Table 5's zero-shot
protocol reads its prompts (context.prompted): the cue is the whole context, in the model's prompt
column, without even the sentence itself (doc0). `context` strings (metadata such as "Drama, Family,
Romance") fill the model's metadata columns, then its cue columns, in order; `previous` lines are its
document slots doc1, doc2, ... (most recent first). Either is a string or a list of strings for every
sentence (even a list as long as the sentences: then with a warning), or a list with one list per
sentence; strings go by position, so a dict is refused. A sentence reads a cue or context, not both.

Quiet: the API prints nothing but what it is asked for. fairseq's modules configure the root logger
when imported (INFO lines on stdout) and log INFO lines on every call; the calls keep the root logger
as the user left it and hold fairseq's (and MLflow's) loggers at WARNING and library warnings back
while they run (`_quiet`). A log line or warning of ours (a line cut to the model's length) still
reaches the user.
"""
from __future__ import annotations

import json
import logging
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mtcue import layout
from mtcue.config import generation_settings
from mtcue.corpus import META_FIELDS
from mtcue.io import read_json
from mtcue.language_check import NAMES, other_language
from mtcue.models import fairseq_args as fa
from mtcue.models.checkpoints import check_belongs
from mtcue.progress import Progress
from mtcue.records import RecordError, read_record
from mtcue.study import langs_of

log = logging.getLogger(__name__)

Texts = str | Sequence[str] | Sequence[Sequence[str]] | None
Cue = str | Sequence[str | None] | None
# The libraries whose loggers chatter on every call (fairseq: batching, loading; hydra, under fairseq's config;
# the sentence encoder's loading; MLflow's store, for runs:/).
LIBRARY_LOGGERS = ("fairseq", "fairseq_cli", "hydra", "sentence_transformers", "transformers", "mlflow")


@contextmanager
def _quiet() -> Iterator[None]:
    """Keep fairseq's INFO lines and library warnings out of the user's output during an API call: the
    root logger's handlers and level as they were before (importing fairseq_cli runs logging.basicConfig),
    LIBRARY_LOGGERS at WARNING. The user's own loggers and ours are left alone."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    libraries = [logging.getLogger(name) for name in LIBRARY_LOGGERS]
    levels = [logger.level for logger in libraries]
    for logger in libraries:
        logger.setLevel(max(logger.getEffectiveLevel(), logging.WARNING))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
        for logger, old in zip(libraries, levels):
            logger.setLevel(old)


@dataclass(frozen=True)
class TrainedModel:
    results: Path  # the study's results folder around the model (mtcue.layout)
    direction: str
    checkpoint: Path
    record: Path  # its training record
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
        results, direction, model = layout.model_at(folder)
        if not layout.checkpoint(direction, model, results).is_file():
            raise FileNotFoundError(f"{folder}: no checkpoint_best.pt: not a trained model's folder "
                                    "(results/models/{direction}/{model}/, written by the train step)"
                                    + _trained_models(results))
        record = layout.train_record(direction, model, results)
        if not record.is_file():
            raise FileNotFoundError(f"{record}: the training record of {direction}/{model} is missing (it names "
                                    "the model's context); rerun the train step")
        spec = read_record(record, "train").get("spec")
        if not isinstance(spec, dict) or "type" not in spec:
            raise RecordError(f"{record}: the training record names no model spec ('spec' with its 'type'); "
                              "rerun the train step")
        files = layout.model_files(direction, model, spec.get("context", {}).get("kind"), results)
        for key, what in (("spm", "SentencePiece model"), ("data", "binarised data"), ("tags", "tag store")):
            if key in files and not files[key].exists():
                raise FileNotFoundError(f"{files[key]}: the {what} of {direction} is missing; the model folder must "
                                        "sit in the study that trained it")
        max_positions = check_belongs(files["checkpoint"], direction, files["data"], spec["type"])
        return cls(results=results, direction=direction, checkpoint=files["checkpoint"], record=record, spec=spec,
                   spm_model=files["spm"], data_bin=files["data"], tag_store=files.get("tags"),
                   max_source_tokens=max_positions)

    def reading(self, columns: list[str]) -> TrainedModel:
        """The model given other context columns than it trained on (the EAMT22 test: the attribute
        sentences, which a zero-shot model never saw), as the study's eamt22_translate gives them."""
        if "context" not in self.spec:
            raise ValueError(f"a model without context ({self.spec['type']}) cannot read context columns {columns}")
        unknown = [c for c in columns if c not in META_FIELDS and not re.fullmatch(r"doc\d+|cue[1-9]\d*", c)]
        if unknown:
            raise ValueError(f"columns: unknown context column {unknown[0]!r}; a column is doc0, doc1, ... (the "
                             f"document), cue1, cue2, ... or one of the metadata fields {', '.join(META_FIELDS)}")
        return replace(self, spec={**self.spec, "context": {**self.spec["context"], "columns": list(columns)}})


def _trained_models(results: Path) -> str:
    """The models trained in the study of `results`, by direction, for a message naming a folder that is not one."""
    trained: dict[str, list[str]] = {}
    for found in sorted(results.glob(str(layout.checkpoint("*", "*", Path())))):
        trained.setdefault(found.parent.parent.name, []).append(found.parent.name)
    if not trained:
        return ""
    return (f"; the study in {results} has trained " +
            "; ".join(f"{direction}: {', '.join(models)}" for direction, models in trained.items()))


def _text(value: object, name: str, what: str = "a sentence") -> str:
    """`value`, a string of valid Unicode text; a clear error naming the argument otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name}: {what} must be a string, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:  # a lone surrogate: no tokenizer or encoder reads it
        raise ValueError(f"{name}: {value[err.start]!r} (character {err.start}) is a lone surrogate, not text; decode "
                         "the input as UTF-8 (errors='surrogateescape' makes them)") from None
    return value


def _texts(value: object, name: str, what: str, each: str) -> list[str]:
    """`value` as a list of strings (`what` they are; `each` of them); a mapping, a string or a non-iterable is
    refused."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{name}: give a list of {what} (strings), not {type(value).__name__}")
    return [_text(v, f"{name}[{k}]", each) for k, v in enumerate(value)]


def _per_sentence(value: Texts, n: int, name: str) -> list[list[str]]:
    """`value` as one list of strings per sentence: a string or a flat list is the same for all; a list of
    lists, one per sentence. A flat list of exactly n strings (n > 1) is still shared, with a warning."""
    if value is None:
        return [[] for _ in range(n)]
    if isinstance(value, str):
        return [[_text(value, name, "a context string")] for _ in range(n)]
    if isinstance(value, Mapping) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}: give a string, a list of strings (the same for every sentence) or one list of "
                        f"strings per sentence, not {type(value).__name__}"
                        + (" (strings are read in the order of the model's columns, t.context_columns, not by name)"
                           if isinstance(value, Mapping) else ""))
    if all(isinstance(v, str) for v in value):
        if n > 1 and len(value) == n:
            warnings.warn(f"{name}: a flat list of {n} strings for {n} sentences is one list shared by every sentence; "
                          f"for one per sentence give [[s] for s in {name}]", stacklevel=4)
        shared = [_text(v, f"{name}[{k}]", "a context string") for k, v in enumerate(value)]
        return [list(shared) for _ in range(n)]
    if len(value) != n or not all(isinstance(v, (list, tuple)) and all(isinstance(s, str) for s in v)
                                  for v in value):
        raise ValueError(f"{name}: give a string, a list of strings (the same for every sentence) or one list "
                         f"of strings per sentence ({n} sentences)")
    return [[_text(s, f"{name}[{i}][{k}]", "a context string") for k, s in enumerate(v)] for i, v in enumerate(value)]


def _cues(cue: Cue, n: int) -> list[str | None]:
    """`cue` as one cue (or None: none) per sentence: a string is every sentence's."""
    if cue is None:
        return [None] * n
    if isinstance(cue, str):
        cue = [cue] * n
    elif not isinstance(cue, (list, tuple)) or len(cue) != n:
        raise TypeError(f"cue: give a string (for every sentence) or a list of one per sentence (None for a sentence "
                        f"without), not {type(cue).__name__}"
                        + (f" of {len(cue)} for {n} sentences" if isinstance(cue, (list, tuple)) else ""))
    cues = [None if c is None else _text(c, f"cue[{i}]", "a cue") for i, c in enumerate(cue)]
    if any(c is not None and not c.strip() for c in cues):
        raise ValueError("cue: empty; give a cue such as 'Formal conversation'")
    return cues


@dataclass
class _Loaded:
    """The fairseq side: task (dictionaries, context columns), models, device."""
    task: object
    models: list
    cfg: object
    device: str


class Translator:
    """A model of the study in memory (see the module's documentation)."""

    def __init__(self, model: TrainedModel, loaded: _Loaded, encoder=None):
        import sentencepiece as spm

        self.model = model
        self.direction = model.direction
        self._fairseq = loaded
        self._spm = spm.SentencePieceProcessor(model_file=str(model.spm_model))
        self._generators: dict[tuple, object] = {}
        self._encoder = encoder  # texts -> vectors, for a model reading sentence vectors
        self._vectors: dict[str, np.ndarray] = {}  # context string -> its embedding (cache)
        self._tag_vocab: list[str] | None = None

    @classmethod
    def load(cls, model_dir: str | Path, device: str | None = None, columns: Sequence[str] | None = None
             ) -> Translator:
        """The model in `model_dir` (results/models/{direction}/{model}/ of a study, or "runs:/<run id>", the
        MLflow run of a trained model: its logged model), on `device` (CUDA when there is one, else the CPU).
        `columns`: context columns to read instead of the model's own (a zero-shot model reading EAMT22's
        attribute sentences)."""
        with _quiet():
            if str(model_dir).startswith("runs:/"):
                from mtcue.models.runs import run_model_dir

                model_dir = run_model_dir(str(model_dir))
            import torch

            if device not in (None, "cpu", "cuda"):
                raise ValueError(f"device={device!r}: 'cpu' or 'cuda' (or leave it out: CUDA when there is a GPU)")
            if device == "cuda" and not torch.cuda.is_available():
                raise ValueError("device='cuda', but torch sees no CUDA GPU here: use device='cpu', or leave it out")
            model = TrainedModel.find(model_dir)
            if columns:
                model = model.reading(list(columns))
            device = device or ("cuda" if torch.cuda.is_available() else "cpu")
            encoder = _encoder_of(model, device)
            return cls(model, _load_fairseq(model, device, _store_of(model, encoder)), encoder)

    # ---- translation ---------------------------------------------------------------------------

    def translate(self, sources: Sequence[str], context: Texts = None, previous: Texts = None, beam: int = 5,
                  batch_size: int = 64, max_len_a: float = 1.2, max_len_b: int = 10, cue: Cue = None) -> list[str]:
        """Translations of `sources` (one string each), read with `context` and `previous` lines, or with a
        `cue` as Table 5 reads a prompt (`cued_samples`)."""
        sources = ([_text(sources, "sources")] if isinstance(sources, str)
                   else _texts(sources, "sources", "sentences", "a sentence"))
        check_sources(sources)
        warn_other_language(sources, self.direction)
        settings = generation_settings({"beam": beam, "batch_size": batch_size, "max_len_a": max_len_a,
                                        "max_len_b": max_len_b}, "translate()")
        if cue is None:
            return self.translate_samples(self.samples(sources, context, previous), settings)
        hyps = [""] * len(sources)
        for where, samples, doc0 in self._groups(sources, context, previous, cue):
            for i, hyp in zip(where, self.translate_samples(samples, settings, doc0=doc0)):
                hyps[i] = hyp
        return hyps

    def translate_samples(self, samples: list[dict], generation: dict | None = None,
                          source: str | Path = "the input", doc0: bool = True, style: int | None = None) -> list[str]:
        """Translations of corpus-format samples (docs/formats.md, section 1; read from `source`), each
        with its own context. A sample's target text, where it has one, orders the batches as
        fairseq-generate orders a binarised split with its references. `doc0=False`: the sentence itself
        is not given as context (the authors' `--no-doc-context` of zero-shot prompting). `style`: the level
        (1..5) a style-control model translates at (default the neutral 3)."""
        settings = generation_settings(generation or {}, "generation")
        src, tgt = langs_of(self.direction)
        for n, sample in enumerate(samples, 1):
            if src not in sample["text"]:
                raise ValueError(f"{source}:{n}: the sample has no '{src}' text (languages: "
                                 f"{', '.join(sample['text'])}): a {self.direction} model translates a corpus of its "
                                 "own language pair")
        targets = all(tgt in s["text"] for s in samples)
        dataset = self._dataset(samples, with_targets=targets, doc0=doc0, style=style)
        generator = self._generator(settings)
        # fairseq_cli.generate.get_symbols_to_strip_from_output, not imported: importing fairseq_cli.generate
        # configures the root logger
        strip = getattr(generator, "symbols_to_strip_from_output", {generator.eos})
        hyps: dict[int, str] = {}
        with _quiet(), Progress(f"translate {self.direction}", len(samples), "sentences") as progress:
            for batch in self._batches(dataset, settings["batch_size"]):
                for i, hypos in zip(batch["id"].tolist(), self._task.inference_step(generator, self._models, batch)):
                    # fairseq-generate's D- line (utils.post_process_prediction, which would also add the words of
                    # the text to the dictionary: harmless in one run of the command, not in a long-lived one)
                    hyps[i] = self._task.target_dictionary.string(hypos[0]["tokens"].int().cpu(), "sentencepiece",
                                                                  extra_symbols_to_ignore=strip)
                progress.advance(len(batch["id"]))
        return [hyps[i] for i in range(len(samples))]

    # ---- scoring -------------------------------------------------------------------------------

    def score(self, source: str, candidates: Sequence[str], context: Texts = None, previous: Texts = None,
              normalise: bool = False, batch_size: int = 64, cue: str | None = None) -> list[float]:
        """The model's log-probability (natural log) of each candidate translation of `source`, force-decoded
        with the same context (or `cue`, read as `translate` reads it): summed over the candidate's tokens and
        its end of sentence, or with `normalise` their mean (per token)."""
        return [total / tokens if normalise else total
                for total, tokens in self.score_tokens(source, candidates, context, previous, batch_size, cue)]

    def score_tokens(self, source: str, candidates: Sequence[str], context: Texts = None, previous: Texts = None,
                     batch_size: int = 64, cue: str | None = None) -> list[tuple[float, int]]:
        """(summed log-probability, tokens scored) of each candidate (see `score`)."""
        _text(source, "source", "the sentence")
        if isinstance(candidates, str):  # would be scored character by character
            raise TypeError("candidates: give a list of candidate translations, not one string: "
                            f"score(source, [{candidates[:40]!r}])")
        candidates = _texts(candidates, "candidates", "candidate translations", "a candidate")
        check_sources([source, *candidates])
        if cue is None:
            return self.score_samples(self.samples([source], context, previous), [list(candidates)], batch_size)[0]
        (_, samples, doc0), = self._groups([source], context, previous, cue)
        return self.score_samples(samples, [list(candidates)], batch_size, doc0=doc0)[0]

    def score_samples(self, samples: list[dict], candidates: list[list[str]], batch_size: int = 64,
                      per_token: bool = False, doc0: bool = True) -> list[list[tuple]]:
        """(summed log-probability, tokens scored) of each candidate of each corpus-format sample (docs/formats.md,
        section 1), force-decoded with the sample's own context; all candidates batched together (contrastive
        suites). `per_token`: each also with its log-probability per token, pieces then </s> (P-CXMI's input).
        `doc0=False`: as in `translate_samples`."""
        from fairseq.sequence_scorer import SequenceScorer

        if len(samples) != len(candidates):
            raise ValueError(f"{len(samples)} samples but {len(candidates)} candidate lists")
        tgt = langs_of(self.direction)[1]
        flat = [{**sample, "id": f"{sample['id']}.{k}", "text": {**sample["text"], tgt: c}}
                for sample, cands in zip(samples, candidates) for k, c in enumerate(cands)]
        scorer = SequenceScorer(self._task.target_dictionary)
        scores: dict[int, tuple] = {}
        with _quiet():
            for batch in self._batches(self._dataset(flat, with_targets=True, doc0=doc0), batch_size):
                for i, hypos in zip(batch["id"].tolist(), self._task.inference_step(scorer, self._models, batch)):
                    positional = hypos[0]["positional_scores"]
                    scores[i] = (float(positional.sum()), int(positional.numel()),
                                 *([positional.tolist()] if per_token else []))
        out, i = [], 0
        for cands in candidates:
            out.append([scores[i + k] for k in range(len(cands))])
            i += len(cands)
        return out

    # ---- inputs --------------------------------------------------------------------------------

    @property
    def context_columns(self) -> list[str]:
        """The store columns the model reads (`context_columns`)."""
        return context_columns(self.model.spec)

    def samples(self, sources: list[str], context: Texts = None, previous: Texts = None) -> list[dict]:
        """Corpus-format samples (docs/formats.md, section 1) of `sources` with their context; the target
        side is left out."""
        contexts = _per_sentence(context, len(sources), "context")
        previous = _per_sentence(previous, len(sources), "previous")
        columns = self.context_columns
        if not columns and (any(contexts) or any(previous)):
            raise ValueError(f"a model without context ({self.model.spec['type']}) cannot read context or previous "
                             "lines")
        slots = [c for c in columns if not c.startswith("doc")]  # metadata, then cue columns (store order)
        lines_read = max(len([c for c in columns if c.startswith("doc")]) - 1, 0)
        src = langs_of(self.direction)[0]
        samples = []
        for i, (sentence, strings, lines) in enumerate(zip(sources, contexts, previous)):
            if len(strings) > len(slots):
                raise ValueError(f"{len(strings)} contexts given, but the model reads {len(slots)} context strings "
                                 f"besides its document ({', '.join(slots) or 'none'})")
            if len(lines) > lines_read:
                raise ValueError(f"{len(lines)} previous lines given, but the model reads at most {lines_read}")
            meta = dict.fromkeys(META_FIELDS) | {c: t for c, t in zip(slots, strings) if not c.startswith("cue")}
            samples.append({"id": f"{self.direction}.input.{i:06d}", "doc_id": "input", "text": {src: sentence},
                            "previous": {src: lines}, "meta": meta,
                            "cues": [t for c, t in zip(slots, strings) if c.startswith("cue")]})
        return samples

    def cued_samples(self, sources: list[str], cues: list[str]) -> list[dict]:
        """Samples of `sources`, each read with its cue as Table 5's zero-shot protocol reads a prompt
        (context.prompted): in the model's prompt column (its first metadata or cue column, else the previous
        line), to be translated with doc0=False: the cue is the whole context, not even the sentence is."""
        from mtcue.context.prompted import prompt_column

        if not self.context_columns:
            raise ValueError(f"a model without context ({self.model.spec['type']}) cannot read a cue")
        cues = [[c] for c in cues]
        if prompt_column(self.context_columns) == "doc1":  # a model that reads only the document
            return self.samples(sources, previous=cues)
        return self.samples(sources, cues)

    def _groups(self, sources: list[str], context: Texts, previous: Texts, cue: Cue
                ) -> list[tuple[list[int], list[dict], bool]]:
        """The sentences in groups read alike, each (their positions, samples, doc0): those with a cue
        (`cued_samples`, doc0 not read), then those with their context and previous lines."""
        n = len(sources)
        cues, contexts = _cues(cue, n), _per_sentence(context, n, "context")
        lines = _per_sentence(previous, n, "previous")
        both = [i for i, c in enumerate(cues) if c is not None and (contexts[i] or lines[i])]
        if both:
            raise ValueError(f"sentence {both[0]}: give a cue or context and previous lines, not both: a cue is the "
                             "model's whole context, as Table 5 gives its prompts")
        cued = [i for i, c in enumerate(cues) if c is not None]
        plain = [i for i, c in enumerate(cues) if c is None]
        groups = []
        if cued:
            groups.append((cued, self.cued_samples([sources[i] for i in cued], [cues[i] for i in cued]), False))
        if plain:
            groups.append((plain, self.samples([sources[i] for i in plain], [contexts[i] for i in plain],
                                               [lines[i] for i in plain]), True))
        return groups

    def pieces(self, text: str, name: str = "text") -> list[str]:
        """The SentencePiece pieces of `text`, as the model reads them; text that is not (a lone surrogate, which
        SentencePiece answers with a RuntimeError) is a ValueError naming it `name`."""
        return self._spm.encode(_text(text, name), out_type=str)

    def context_attention(self, source: list[str], context: list[str]) -> np.ndarray:
        """The model's attention from each source piece (then </s>) to each context piece (between the
        context's <s> and </s>): [source length + 1, context length + 2]. Only a model that exposes it
        (`context_attention`: VOITA-CONTEXT) has one."""
        import torch

        model = self._models[0]
        if not hasattr(model, "context_attention"):
            raise ValueError(f"a '{self.model.spec['type']}' model has no context attention to analyse "
                             "(voita_context only)")
        d, device = self._task.source_dictionary, next(model.parameters()).device
        src = torch.tensor([[d.index(p) for p in source] + [d.eos()]], device=device)
        ctx = torch.tensor([[d.bos(), *(d.index(p) for p in context), d.eos()]], device=device)
        return model.context_attention(src, ctx, ctx.eq(d.pad()))[0].float().cpu().numpy()

    def groupings(self, source: list[str]) -> np.ndarray:
        """Latent Grouping's or Selecting's categorisation of one sentence's pieces (then </s>) into its K groups:
        [source length + 1, K] (`categorisation`; evaluation.groupings, the shortening paper's Figure 3)."""
        import torch

        model = self._models[0]
        d, device = self._task.source_dictionary, next(model.parameters()).device
        return categorisation(model, torch.tensor([[d.index(p) for p in source] + [d.eos()]], device=device))

    # ---- fairseq -------------------------------------------------------------------------------

    @property
    def _task(self):
        return self._fairseq.task

    @property
    def _models(self):
        return self._fairseq.models

    def _generator(self, settings: dict):
        key = tuple(sorted(settings.items()))
        if key not in self._generators:
            from omegaconf import OmegaConf

            cfg = OmegaConf.merge(self._fairseq.cfg.generation, {"beam": settings["beam"],
                                                                  "max_len_a": settings["max_len_a"],
                                                                  "max_len_b": settings["max_len_b"]})
            self._generators[key] = self._task.build_generator(self._models, cfg)
        return self._generators[key]

    def _tokens(self, texts: list[str], lang: str):
        """Dictionary ids of `texts` as fairseq-preprocess writes them (pieces, then </s>), each cut to what
        the model reads, with a warning naming the line."""
        dictionary = self._task.source_dictionary if lang == langs_of(self.direction)[0] else \
            self._task.target_dictionary
        limit = self.model.max_source_tokens - 1  # and </s>
        out = []
        for n, text in enumerate(texts, 1):
            pieces = self._spm.encode(text, out_type=str)
            if len(pieces) > limit:
                log.warning("input line %d has %d pieces, more than the model reads (%d): only its first %d are "
                            "translated", n, len(pieces), limit, limit)
                pieces = pieces[:limit]
            out.append(dictionary.encode_line(" ".join(pieces), add_if_not_exist=False, append_eos=True).long())
        return out

    def _dataset(self, samples: list[dict], with_targets: bool, doc0: bool = True, style: int | None = None):
        from fairseq.data import LanguagePairDataset

        src, tgt = langs_of(self.direction)
        task = self._task
        source = self._tokens([s["text"][src] for s in samples], src)
        target = self._tokens([s["text"][tgt] for s in samples], tgt) if with_targets else None
        dataset = LanguagePairDataset(
            source, np.array([len(t) for t in source]), task.source_dictionary,
            target, None if target is None else np.array([len(t) for t in target]), task.target_dictionary,
            left_pad_source=task.cfg.left_pad_source, left_pad_target=task.cfg.left_pad_target, shuffle=False)
        if "style" in self.model.spec:  # a style-control model: every sentence at one level
            from mtcue.models.plugin.style.style_task import NEUTRAL

            return task.with_style(dataset, np.full(len(samples), NEUTRAL if style is None else style))
        if style is not None:
            raise ValueError(f"a {self.model.spec['type']} model has no style levels")
        if "context" not in self.model.spec:
            return dataset
        if task.store.kind == "tokens":
            return task.with_tokens(dataset, *self._context_tokens(samples), name="the input's context")
        index, vectors = self._context(samples, doc0)
        return task.with_context(dataset, index, vectors, "the input's context")

    def _context(self, samples: list[dict], doc0: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """The samples' context as a store holds it: an index over the store's columns and, for sentence
        vectors, the vectors it points to (tags: the ids themselves, no vectors). `doc0=False`: the doc0
        column empty (-1) and its sentences not embedded."""
        from mtcue.context.embed import build_index
        from mtcue.context.tags import tag_index

        src = langs_of(self.direction)[0]
        store = self._task.store
        read = [c for c in store.columns if doc0 or c != "doc0"]
        index = np.full((len(samples), len(store.columns)), -1, dtype=np.int32)
        where = [store.columns.index(c) for c in read]
        if store.kind == "tags":
            index[:, where] = tag_index(samples, src, read, self._tags())
            return index, None
        texts, indices = build_index({"input": samples}, src, read)
        index[:, where] = indices["input"]
        new = [t for t in texts if t not in self._vectors]  # build_index lists each string once
        if new:
            self._vectors.update(zip(new, self._encoder(new)))
        vectors = np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, store.dim), np.float32)
        return index, vectors

    def _context_tokens(self, samples: list[dict]) -> tuple[np.ndarray, np.ndarray]:
        """The samples' neighbouring lines as a token store holds them (tokens, offsets)."""
        from mtcue.context.token_store import encode_rows, neighbour_texts

        src = langs_of(self.direction)[0]
        dictionary = self._task.source_dictionary
        limit = self.model.max_source_tokens - 2  # and the marker and </s>
        return encode_rows(neighbour_texts(samples, src, self._task.store.slots),
                           lambda text: [dictionary.index(p) for p in self._spm.encode(text, out_type=str)][:limit])

    def _tags(self) -> list[str]:
        if self._tag_vocab is None:
            from mtcue.context.tags import VOCAB_FILE

            path = self.model.tag_store / VOCAB_FILE
            vocab = read_json(path)
            if not (isinstance(vocab, list) and all(isinstance(tag, str) for tag in vocab)):
                raise ValueError(f"{path}: not the tag store's list of tags (strings); rerun the step that writes the "
                                 "tag store")
            self._tag_vocab = vocab
        return self._tag_vocab

    def _batches(self, dataset, batch_size: int):
        """Batches as fairseq-generate makes them (by length, at most `batch_size` sentences), on the device."""
        from fairseq import utils

        task = self._task
        itr = task.get_batch_iterator(
            dataset=dataset, max_tokens=None, max_sentences=batch_size,
            max_positions=utils.resolve_max_positions(task.max_positions(), *[m.max_positions() for m in self._models]),
            ignore_invalid_inputs=False, required_batch_size_multiple=1, seed=self.model.spec["seed"],
            num_workers=0, disable_iterator_cache=True).next_epoch_itr(shuffle=False)
        for batch in itr:
            yield utils.move_to_cuda(batch) if self._fairseq.device == "cuda" else batch


def context_columns(spec: dict) -> list[str]:
    """The store columns a model of `spec` reads; for a token-context model (VOITA-CONTEXT, CONCAT) its token
    store's previous-line slots as document columns doc1.. (it reads one of them; next1 needs the following
    line, which an isolated input does not have)."""
    context = spec.get("context")
    if context and context.get("kind") == "tokens":
        return ["doc0", *(f"doc{s[4:]}" for s in context["slots"] if s.startswith("prev"))]
    return list(context["columns"]) if context else []


def check_sources(sources: list[str]) -> None:
    if not sources:
        raise ValueError("no input to translate: give one sentence per line")
    blank = [n for n, s in enumerate(sources, 1) if not s.strip()]
    if blank:
        raise ValueError(f"input line {blank[0]} is empty ({len(blank)} empty lines in all): give one sentence per "
                         "line, none empty")


def warn_other_language(sources: list[str], direction: str) -> None:
    """A warning, not an error, for sentences that look to be in another language than the model reads (German
    given to an en-de model), which it would translate as best it can without a word (language_check's guess)."""
    src = langs_of(direction)[0]
    found = other_language(sources, src)
    if found:
        (i, lang), n = found[0], len(found)
        log.warning("input line %d looks %s, not %s (%d of %d lines look another language): the %s model translates "
                    "them as if they were %s; give it %s sentences", i + 1, NAMES[lang], NAMES[src], n, len(sources),
                    direction, NAMES[src], NAMES[src])


def categorisation(model, tokens) -> np.ndarray:
    """c [length, K] of one sentence's dictionary ids `tokens` [1, length] (</s> last), from a shortening model
    whose shortener categorises (Latent Grouping or Selecting): its encoder's states, then the shortener's c."""
    import torch

    shortener = getattr(model.encoder, "context_shorten", None)
    if not hasattr(shortener, "categorise"):
        raise ValueError(f"a '{type(model).__name__}' has no Latent Grouping or Selecting to show (grouping, "
                         "selecting only)")
    with torch.no_grad():
        states, padding = model.encoder.encode(tokens)
        return shortener.categorise(states, padding)[:, 0].float().cpu().numpy()


def _load_fairseq(model: TrainedModel, device: str, store) -> _Loaded:
    """The model's task (its dictionaries and, for a contextual model, the kind and columns of its context
    from an in-memory `store`) and the checkpoint's weights, ready for inference on `device`."""
    from fairseq import checkpoint_utils, options, tasks, utils
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    import mtcue.models.plugin  # noqa: F401 - registers the task and models with fairseq
    from mtcue.models.plugin.task import ContextualTranslationTask

    # The arguments fairseq-generate gets in the study; the context comes from `store`, not a folder.
    args = [*fa.task_args(model.spec, model.direction, model.data_bin, "in-memory" if store else None),
            "--path", str(model.checkpoint), "--remove-bpe", "sentencepiece", "--seed", str(model.spec["seed"])]
    args += [] if device == "cuda" else ["--cpu"]
    cfg = convert_namespace_to_omegaconf(options.parse_args_and_arch(options.get_generation_parser(), input_args=args))
    utils.set_torch_seed(model.spec["seed"])
    if store is None:
        task = tasks.setup_task(cfg.task)
    else:
        task = ContextualTranslationTask(cfg.task, *(ContextualTranslationTask.load_dictionary(
            str(model.data_bin / f"dict.{lang}.txt")) for lang in langs_of(model.direction)), store=store)
    models, _ = checkpoint_utils.load_model_ensemble([str(model.checkpoint)], task=task)
    for m in models:
        m.to(device)
        m.prepare_for_inference_(cfg)
    return _Loaded(task, models, cfg, device)


def _encoder_of(model: TrainedModel, device: str):
    """The sentence encoder of a model that reads sentence vectors (None for tags or no context)."""
    from mtcue.context.embed import load_encoder

    context = model.spec.get("context")
    if context is None or model.tag_store is not None or context["kind"] == "tokens":
        return None
    return load_encoder(context["encoder"], context.get("pooling", "mean"), device)


def _store_of(model: TrainedModel, encoder):
    """The in-memory store a contextual model reads: its context's columns with the encoder's width, or
    the trained tag store's manifest, or a token store's slots; None for a model without context."""
    from mtcue.context.store import ContextStore

    from mtcue.context.token_store import TokenStore

    context = model.spec.get("context")
    if context is None:
        return None
    if context["kind"] == "tokens":
        return TokenStore(None, {"kind": "tokens", "slots": context["slots"]})
    if model.tag_store is not None:
        return ContextStore.in_memory(ContextStore(model.tag_store).manifest)
    columns = list(context["columns"])
    return ContextStore.in_memory({"kind": "vectors", "model": context["encoder"],
                                   "pooling": context.get("pooling", "mean"), "dim": int(encoder.dim),
                                   "columns": columns, "doc_columns": sum(c.startswith("doc") for c in columns)})
