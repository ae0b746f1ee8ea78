"""Token context store (docs/formats.md, section 2): the neighbouring source sentences of every
sample as token ids of the direction's fairseq dictionary, for models that encode context with
the source encoder (VOITA-CONTEXT, CONCAT; the sequence-shortening systems read it too).

Slots `prev1..prevK` are the sample's previous source lines, most recent first, exactly as the
corpus lists them (`previous`: a document's history is reset at a scene gap, the paper's 7 s rule on
real subtitles); `next1` is the following line of the same document when that line's own history
starts with this one (so the same gap rule holds forwards).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from mtcue.corpus import read_corpus
from mtcue.outputs import atomic_directory
from mtcue.study import langs_of

from .store import ContextStoreError, read_manifest

NEXT = "next1"


def slot_names(previous: int, following: bool) -> list[str]:
    return [f"prev{i}" for i in range(1, previous + 1)] + ([NEXT] if following else [])


def neighbour_texts(samples: list[dict], src: str, slots: list[str]) -> list[list[str | None]]:
    """Per sample, the source text of each slot (None = no such line)."""
    rows = []
    for i, sample in enumerate(samples):
        previous = sample["previous"][src]
        row = []
        for slot in slots:
            if slot == NEXT:
                after = samples[i + 1] if i + 1 < len(samples) else None
                follows = (after is not None and after["doc_id"] == sample["doc_id"]
                           and after["previous"][src][:1] == [sample["text"][src]])
                row.append(after["text"][src] if follows else None)
            else:
                j = int(slot[4:]) - 1
                row.append(previous[j] if j < len(previous) else None)
        rows.append(row)
    return rows


def encode_rows(rows: list[list[str | None]], encode) -> tuple[np.ndarray, np.ndarray]:
    """(tokens int32 [T], offsets int64 [n, k, 2] = (start, length) into tokens; length 0 = missing).
    `encode(text)` gives a line's token ids (no end-of-sentence)."""
    k = len(rows[0]) if rows else 0
    offsets = np.zeros((len(rows), k, 2), dtype=np.int64)
    chunks, start = [], 0
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            if text is None:
                continue
            ids = list(encode(text))
            offsets[i, j] = (start, len(ids))
            chunks.append(ids)
            start += len(ids)
    tokens = np.fromiter((t for c in chunks for t in c), dtype=np.int32, count=start)
    return tokens, offsets


def spm_encoder(spm_model: str | Path, dictionary):
    """text -> ids of `dictionary` (fairseq Dictionary) through the SentencePiece model, as binarised."""
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_file=str(spm_model))
    return lambda text: [dictionary.index(p) for p in processor.encode(text, out_type=str)]


def build_token_store(corpora: dict[str, str | Path], direction: str, spm_model: str | Path, data_bin: str | Path,
                      previous: int, following: bool, out: str | Path) -> None:
    """Write the store of `direction` for every split of `corpora` ({split: cleaned corpus}) into `out`."""
    from fairseq.data import Dictionary

    src, _ = langs_of(direction)
    dict_path = Path(data_bin) / f"dict.{src}.txt"
    dictionary = Dictionary.load(str(dict_path))
    encode = spm_encoder(spm_model, dictionary)
    slots = slot_names(previous, following)
    manifest = {"kind": "tokens", "slots": slots, "dictionary": str(dict_path), "n_symbols": len(dictionary),
                "splits": {}, "present": {}}
    with atomic_directory(out, "token-store") as tmp:
        for split, path in corpora.items():
            samples = list(read_corpus(path))
            tokens, offsets = encode_rows(neighbour_texts(samples, src, slots), encode)
            np.save(tmp / f"{split}.tokens.npy", tokens)
            np.save(tmp / f"{split}.offsets.npy", offsets)
            manifest["splits"][split] = len(samples)
            manifest["present"][split] = dict(zip(slots, (offsets[:, :, 1] > 0).sum(0).tolist()))
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


class TokenStore:
    """Reads a token store; `kind` "tokens" (what the task and models check)."""

    kind = "tokens"
    dim = n_tags = None

    def __init__(self, directory: str | Path | None, manifest: dict | None = None):
        self.dir = Path(directory) if directory is not None else None
        if manifest is None:
            manifest = read_manifest(self.dir / "manifest.json")
        if manifest.get("kind") != "tokens" or not isinstance(manifest.get("slots"), list):
            raise ContextStoreError(f"{self.dir}: not a token store (manifest kind {manifest.get('kind')!r})")
        self.manifest = manifest
        self.slots: list[str] = manifest["slots"]
        self.columns, self.doc_columns = self.slots, 0

    def slot(self, name: str) -> int:
        if name not in self.slots:
            raise ContextStoreError(f"{self.dir}: no slot {name!r} (the store has {self.slots})")
        return self.slots.index(name)

    def split(self, split: str) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, offsets) of a split, memory-mapped and checked against the manifest."""
        paths = [self.dir / f"{split}.{part}.npy" for part in ("tokens", "offsets")]
        for path in paths:
            if not path.is_file():
                raise ContextStoreError(f"{path}: no such file (the store has no '{split}' split)")
        tokens, offsets = (np.load(p, mmap_mode="r") for p in paths)
        n = self.manifest.get("splits", {}).get(split)
        if offsets.ndim != 3 or offsets.shape[1:] != (len(self.slots), 2) or (n is not None and len(offsets) != n):
            raise ContextStoreError(f"{paths[1]}: shape {offsets.shape}, expected ({n}, {len(self.slots)}, 2)")
        ends = offsets[:, :, 0] + offsets[:, :, 1]
        if ends.size and ends.max() > len(tokens):
            raise ContextStoreError(f"{paths[1]}: offsets point past the {len(tokens)} tokens of {paths[0]}")
        return tokens, offsets


def open_store(directory: str | Path):
    """The store at `directory`: a TokenStore or a ContextStore (vectors, tags), by its manifest's kind."""
    from .store import ContextStore

    path = Path(directory) / "manifest.json"
    kind = read_manifest(path).get("kind") if path.is_file() else None  # none: ContextStore names the problem
    return TokenStore(directory) if kind == "tokens" else ContextStore(directory)
