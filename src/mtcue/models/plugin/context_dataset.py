"""A LanguagePairDataset whose batches also carry each sample's context vectors."""
from __future__ import annotations

import numpy as np
import torch
from fairseq.data import BaseWrapperDataset


class ContextDataset(BaseWrapperDataset):
    """Adds `net_input["context"]` and `net_input["context_padding_mask"]` (bool [B, S], True =
    missing) to the wrapped dataset's batches. `context` is float [B, S, dim] looked up in
    `vectors`, or, for a tag store (`vectors` None), the int64 tag ids [B, S] themselves (0 where
    missing: masked anyway).

    `index` is the store's [n_samples, n_columns] index for this split, `columns` the positions of
    the selected columns (None = all), `name` what error messages call the index.

    `random` (the random-context ablations of Table 6), drawn afresh each epoch from (`random_seed`,
    epoch), so evaluation (epoch 1, as fairseq's validation and generation use) is fixed and a retry
    draws the same:
    - "noise": every present context vector is replaced by N(0, 0.1^2) noise (the authors'
      `randn * 0.1`), drawn per sample from (seed, epoch, sample id): the same whatever the batch;
      missing columns stay missing. Vector stores only.
    - "shuffle": each sample reads the whole context row of another sample of the split instead of
      its own. Every row is read exactly once per epoch, so the contexts keep their shape and
      distribution but say nothing about the sample.
    - "drop": every column of every sample missing (test time only: a side-information model decoded
      without its labels, Hoang et al.'s "w/o side info" row).
    - "predict": likewise, and every tag id -1, "to be predicted" (test time only, tag stores: the
      target-prefix model predicts its labels, si-trg-prefix-p).
    """

    NOISE_STD = 0.1

    def __init__(self, dataset, index: np.ndarray, vectors: np.ndarray | None, columns: list[int] | None = None,
                 name: str = "context index", random: str | None = None, random_seed: int = 1):
        super().__init__(dataset)
        if len(index) != len(dataset):
            raise ValueError(f"{name} has {len(index)} rows but the binarised split has {len(dataset)} samples")
        if random not in (None, "noise", "shuffle", "drop", "predict"):
            raise ValueError(f"--random-context {random!r}: expected 'noise', 'shuffle', 'drop' or 'predict'")
        if random == "predict" and vectors is not None:
            raise ValueError(f"--random-context predict asks a model to predict its labels; {name} holds vectors")
        if random == "noise" and vectors is None:
            raise ValueError(f"--random-context noise replaces context vectors; {name} belongs to a tag store")
        self.index = index
        self.vectors = vectors
        self.columns = columns
        self.random, self.random_seed = random, random_seed
        self.row_of = None  # sample id -> the index row it reads; None = its own
        self.set_epoch(1)

    def set_epoch(self, epoch):
        super().set_epoch(epoch)
        self.epoch = epoch
        if self.random == "shuffle":
            self.row_of = other_samples(len(self.index), self.random_seed, epoch)

    def collater(self, samples, **kwargs):
        batch = self.dataset.collater(samples, **kwargs)
        if not batch:
            return batch
        # The inner collater sorts samples by source length: look contexts up by sample id, not position.
        ids = batch["id"].numpy()
        rows = np.asarray(self.index[ids if self.row_of is None else self.row_of[ids]])
        if self.columns is not None:
            rows = rows[:, self.columns]
        missing = rows < 0
        if self.random in ("drop", "predict"):
            missing = np.ones_like(missing)
        if self.vectors is None:
            ids = np.full(rows.shape, -1) if self.random == "predict" else np.where(missing, 0, rows)
            batch["net_input"]["context"] = torch.from_numpy(ids.astype(np.int64))
            batch["net_input"]["context_padding_mask"] = torch.from_numpy(missing)
            return batch
        context = np.zeros(rows.shape + (self.vectors.shape[1],), dtype=np.float32)
        if self.random == "noise":
            for i, sample in enumerate(ids):
                context[i] = noise(self.random_seed, self.epoch, int(sample), context.shape[1:])
            context[missing] = 0.0
        else:
            context[~missing] = self.vectors[rows[~missing]]
        batch["net_input"]["context"] = torch.from_numpy(context)
        batch["net_input"]["context_padding_mask"] = torch.from_numpy(missing)
        return batch

    def num_tokens_vec(self, indices):
        return self.dataset.num_tokens_vec(indices)


def other_samples(n: int, seed: int, epoch: int) -> np.ndarray:
    """A random permutation without fixed points (for n >= 2): sample i reads row result[i]. The
    samples are put in a random cycle and each reads its successor's row."""
    cycle = np.random.default_rng([seed, epoch]).permutation(n)
    row_of = np.empty(n, dtype=np.int64)
    row_of[cycle] = np.roll(cycle, -1)
    return row_of


def noise(seed: int, epoch: int, sample: int, shape: tuple[int, ...]) -> np.ndarray:
    """The random-context noise of one sample: N(0, 0.1^2) float32 of `shape` ([columns, dim]),
    from a generator seeded by (seed, epoch, sample id)."""
    rng = np.random.default_rng([seed, epoch, sample])
    return (ContextDataset.NOISE_STD * rng.standard_normal(shape)).astype(np.float32)


class TokenContextDataset(BaseWrapperDataset):
    """Adds token-store slots to the wrapped dataset's batches: `net_input["context"]` int64
    [B, L] for one slot, [B, c, L] for c slots (in the order given), each sentence `marker,
    tokens..., eos` (`tokens..., eos` when `marker` is None, as a source sentence) left-padded with
    `pad` like fairseq's sources, and `context_padding_mask` (bool, the same shape, True = padding).
    A sample without that line gets `marker, eos` (`eos`): an empty context sentence. `slot`: a
    slot's position or a list of them. `random_seed`: as ContextDataset's."""

    def __init__(self, dataset, tokens: np.ndarray, offsets: np.ndarray, slot: int | list[int], marker: int | None,
                 eos: int, pad: int,
                 name: str = "token store", random_seed: int | None = None):
        super().__init__(dataset)
        if len(offsets) != len(dataset):
            raise ValueError(f"{name} has {len(offsets)} rows but the binarised split has {len(dataset)} samples")
        self.tokens, self.offsets, self.slot = tokens, offsets, slot
        self.marker, self.eos, self.pad = marker, eos, pad
        self.random_seed = random_seed
        self.row_of = None
        self.set_epoch(1)

    def set_epoch(self, epoch):
        super().set_epoch(epoch)
        if self.random_seed is not None:
            self.row_of = other_samples(len(self.offsets), self.random_seed, epoch)

    def collater(self, samples, **kwargs):
        batch = self.dataset.collater(samples, **kwargs)
        if not batch:
            return batch
        ids = batch["id"].numpy()
        rows = ids if self.row_of is None else self.row_of[ids]
        slots = [self.slot] if isinstance(self.slot, int) else list(self.slot)
        spans = self.offsets[rows][:, slots]  # [B, c, 2]
        first = [] if self.marker is None else [self.marker]
        lines = [[[*first, *self.tokens[start:start + length].tolist(), self.eos] for start, length in row]
                 for row in spans]
        width = max(len(line) for row in lines for line in row)
        context = torch.full((len(lines), len(slots), width), self.pad, dtype=torch.long)
        for i, row in enumerate(lines):
            for j, line in enumerate(row):
                context[i, j, width - len(line):] = torch.tensor(line, dtype=torch.long)
        if isinstance(self.slot, int):
            context = context[:, 0]
        batch["net_input"]["context"] = context
        batch["net_input"]["context_padding_mask"] = context.eq(self.pad)
        return batch

    def num_tokens_vec(self, indices):
        return self.dataset.num_tokens_vec(indices)
