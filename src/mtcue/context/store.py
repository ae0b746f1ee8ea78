"""Read-only access to a context embedding store (docs/formats.md, section 2)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from mtcue.io import read_json


class ContextStoreError(ValueError):
    pass


def read_manifest(path: Path) -> dict:
    """A store's manifest.json; one that is not UTF-8 JSON of an object is an error naming the file."""
    try:
        manifest = read_json(path)
    except ValueError as err:  # not UTF-8, not JSON: the file and line are in the message
        raise ContextStoreError(f"{err} (a store's manifest: rerun the step that writes the store)") from None
    if not isinstance(manifest, dict):
        raise ContextStoreError(f"{path}: not a store's manifest (a JSON object); rerun the step that writes the store")
    return manifest


KINDS = ("vectors", "tags")


class ContextStore:
    """manifest.json + one `{split}.index.npy` per split, and for a `vectors` store vectors.npy
    (memory-mapped sentence embeddings; index entries are its rows). A `tags` store (TAGGING) has
    no vectors: index entries are tag ids, 0 = unknown (docs/formats.md, section 2)."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)
        manifest_path = self.dir / "manifest.json"
        if not manifest_path.is_file():
            raise ContextStoreError(f"{manifest_path}: no such file (is --context-dir a context embedding store?)")
        self._read_manifest(read_manifest(manifest_path), manifest_path)
        if self.kind == "vectors":
            self._load_vectors()

    @classmethod
    def in_memory(cls, manifest: dict) -> ContextStore:
        """A store described by `manifest` alone, with no files: what a model needs to know of its context
        (kind, columns, width) when the context is embedded in memory (mtcue.Translator)."""
        store = cls.__new__(cls)
        store.dir = None
        store._read_manifest(manifest, "an in-memory store's manifest")
        return store

    def _read_manifest(self, manifest: dict, where) -> None:
        try:
            self.manifest = manifest
            self.columns: list[str] = list(manifest["columns"])
            self.doc_columns = int(manifest["doc_columns"])
            self.kind = manifest.get("kind", "vectors")
            self.dim = int(manifest["dim"]) if self.kind == "vectors" else None
            self.n_tags = int(manifest["n_tags"]) if self.kind == "tags" else None
        except (KeyError, TypeError, ValueError) as err:
            raise ContextStoreError(f"{where}: not a valid manifest ({err!r})") from None
        if self.kind not in KINDS:
            raise ContextStoreError(f"{where}: kind {self.kind!r} is not one of {KINDS}")
        if not 0 <= self.doc_columns <= len(self.columns):
            raise ContextStoreError(f"{where}: doc_columns={self.doc_columns} but {len(self.columns)} columns")
        self.vectors = None
        self.size = self.n_tags  # index entries lie in [-1, size)

    def _load_vectors(self) -> None:
        vectors_path = self.dir / "vectors.npy"
        if not vectors_path.is_file():
            raise ContextStoreError(f"{vectors_path}: no such file")
        self.vectors = np.load(vectors_path, mmap_mode="r")
        n_vectors = self.manifest.get("n_vectors", self.vectors.shape[0])
        if self.vectors.ndim != 2 or self.vectors.shape != (n_vectors, self.dim):
            raise ContextStoreError(f"{vectors_path}: shape {self.vectors.shape}, manifest says ({n_vectors}, {self.dim})")
        if self.vectors.dtype != np.float32:
            raise ContextStoreError(f"{vectors_path}: dtype {self.vectors.dtype}, expected float32")
        self.size = len(self.vectors)

    def index(self, split: str) -> np.ndarray:
        """int32 [n_samples, n_columns] rows of `vectors.npy`, -1 = missing; memory-mapped."""
        path = self.dir / f"{split}.index.npy"
        if not path.is_file():
            raise ContextStoreError(f"{path}: no such file (the store has no '{split}' split)")
        index = np.load(path, mmap_mode="r")
        if index.ndim != 2 or index.shape[1] != len(self.columns):
            raise ContextStoreError(f"{path}: shape {index.shape}, expected (n_samples, {len(self.columns)}) "
                                    f"for the manifest's columns {self.columns}")
        if not np.issubdtype(index.dtype, np.integer):
            raise ContextStoreError(f"{path}: dtype {index.dtype}, expected int32")
        expected_rows = self.manifest.get("splits", {}).get(split)
        if expected_rows is not None and index.shape[0] != expected_rows:
            raise ContextStoreError(f"{path}: {index.shape[0]} rows, manifest says {expected_rows} for '{split}'")
        if index.size and (index.min() < -1 or index.max() >= self.size):
            raise ContextStoreError(f"{path}: entries must lie in [-1, {self.size})")
        return index

    def select_columns(self, names: list[str] | None) -> tuple[list[int], int]:
        """Column positions for `names` (None = all), in store order, and how many are document slots.

        Document slots get positional embeddings by slot number, so a selection must keep them
        contiguous from doc0 (e.g. doc0..doc2 for a shorter history); any metadata or cue subset works.
        """
        if names is None:
            return list(range(len(self.columns))), self.doc_columns
        unknown = [n for n in names if n not in self.columns]
        if unknown:
            raise ContextStoreError(f"{self.dir or 'the context'}: unknown context columns {unknown} "
                                    f"(known: {self.columns})")
        selected = sorted({self.columns.index(n) for n in names})
        if not selected:
            raise ContextStoreError("--context-columns selects no column")
        docs = [i for i in selected if i < self.doc_columns]
        if docs != list(range(len(docs))):
            raise ContextStoreError(f"document columns must be a prefix doc0..docK of {self.columns[:self.doc_columns]}, "
                                    f"got {[self.columns[i] for i in docs]}")
        return selected, len(docs)
