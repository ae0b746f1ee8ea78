"""Task `style_translation`: translation whose batches carry a style level per sentence (the style-control
models of Jeong et al., Korean-English; docs/formats.md, the style store).

Levels are 1..5 (least to most formal). `--style-mode token` (`style_token`): the shared dictionary gains
five symbols <style1>..<style5>; each target starts with its level's symbol (so the decoder reads
[BOS, <styleN>, y1, ...]) and generation forces it as a one-token prefix, stripped from the output.
`--style-mode value` (`style_dim`): net_input["style"] is the continuous value, level - 3 (-2..2).
Training reads `--style-dir` ({split}.npy, one level per line of the binarised split; level 0: a line the
store's flattening left out, never batched); at inference
`--style-level` (or `with_style`) gives every sentence the same level.
"""
# No `from __future__ import annotations` here: fairseq builds argparse options from the real field types.
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import torch
from fairseq.data import BaseWrapperDataset
from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask

from mtcue.context.style_levels import NOT_SAMPLED

from ..pretrained import FromCheckpoint

LEVELS = (1, 2, 3, 4, 5)
NEUTRAL = 3


def style_symbol(level: int) -> str:
    return f"<style{level}>"


def add_style_symbols(dictionary) -> int:
    """Add <style1>..<style5> after the last symbol of `dictionary`; returns the id of <style1>."""
    first = len(dictionary)
    for level in LEVELS:
        dictionary.add_symbol(style_symbol(level))
    return first


def style_value(level) -> float:
    """The continuous value a level stands for (Jeong et al.'s score scale, its extremes at +-2)."""
    return float(level) - NEUTRAL


def check_levels(levels: np.ndarray, where: str) -> np.ndarray:
    levels = np.asarray(levels)
    bad = np.flatnonzero(~np.isin(levels, (NOT_SAMPLED, *LEVELS)))
    if len(bad):
        raise ValueError(f"{where}: line {bad[0] + 1} has style level {levels[bad[0]]}; levels are 1..5 "
                         f"({NOT_SAMPLED}: left out of training)")
    return levels


class StyleDataset(BaseWrapperDataset):
    """`dataset` (a LanguagePairDataset) with a level per item: token mode prepends the level's symbol to
    the target and gives the batch `style_prefix` [B, 1]; value mode gives net_input["style"] [B]."""

    def __init__(self, dataset, levels: np.ndarray, mode: str, first_symbol: int | None, name: str):
        super().__init__(dataset)
        if len(levels) != len(dataset):
            raise ValueError(f"{name}: {len(levels)} style levels for the {len(dataset)} lines of the split")
        self.levels, self.mode, self.first_symbol = check_levels(levels, name), mode, first_symbol

    def symbol(self, index: int) -> int:
        return self.first_symbol + int(self.levels[index]) - 1

    def __getitem__(self, index):
        item = self.dataset[index]
        if self.mode == "token" and item.get("target") is not None:
            item = {**item, "target": torch.cat([item["target"].new_tensor([self.symbol(index)]), item["target"]])}
        return item

    def num_tokens(self, index):
        return self.dataset.num_tokens(index) + (self.mode == "token")

    def size(self, index):
        src, tgt = self.dataset.size(index)
        return src, tgt + (self.mode == "token")

    def collater(self, samples):
        batch = self.dataset.collater(samples)
        if not batch:
            return batch
        ids = batch["id"].numpy()
        if self.mode == "token":
            batch["style_prefix"] = torch.tensor([[self.symbol(i)] for i in ids], dtype=torch.long)
        else:
            batch["net_input"]["style"] = torch.tensor([style_value(self.levels[i]) for i in ids])
        return batch


@dataclass
class StyleTranslationConfig(TranslationConfig):
    style_mode: str = field(default="token", metadata={"help": "token (level symbols) or value (continuous)"})
    style_dir: Optional[str] = field(default=None, metadata={"help": "style store: {split}.npy, a level per line"})
    style_level: Optional[int] = field(default=None, metadata={"help": "every sentence at this level (1..5)"})


@register_task("style_translation", dataclass=StyleTranslationConfig)
class StyleTranslationTask(FromCheckpoint, TranslationTask):
    def __init__(self, cfg, src_dict, tgt_dict):
        if cfg.style_mode not in ("token", "value"):
            raise ValueError(f"--style-mode {cfg.style_mode}: token or value")
        self.first_symbol = None
        if cfg.style_mode == "token":
            # The same symbols at the end of both (shared) dictionaries: BASE's ids are unchanged.
            firsts = {add_style_symbols(d) for d in {id(src_dict): src_dict, id(tgt_dict): tgt_dict}.values()}
            (self.first_symbol,) = firsts
        super().__init__(cfg, src_dict, tgt_dict)

    def load_dataset(self, split, epoch=1, combine=False, **kwargs):
        super().load_dataset(split, epoch=epoch, combine=combine, **kwargs)
        if self.cfg.style_level is not None:
            levels = np.full(len(self.datasets[split]), self.cfg.style_level)
            name = f"--style-level {self.cfg.style_level}"
        elif self.cfg.style_dir:
            path = Path(self.cfg.style_dir) / f"{split}.npy"
            levels, name = np.load(path), str(path)
        else:
            raise ValueError("--task style_translation needs --style-dir (training) or --style-level")
        self.datasets[split] = self.with_style(self.datasets[split], levels, name)

    def with_style(self, dataset, levels: np.ndarray, name: str = "the input's style levels") -> StyleDataset:
        return StyleDataset(dataset, levels, self.cfg.style_mode, self.first_symbol, name)

    def filter_indices_by_size(self, indices, dataset, max_positions=None, ignore_invalid_inputs=False):
        indices = super().filter_indices_by_size(indices, dataset, max_positions, ignore_invalid_inputs)
        # the lines the style store's flattening left out (level 0) are never batched
        return indices[dataset.levels[indices] != NOT_SAMPLED] if isinstance(dataset, StyleDataset) else indices

    def style_symbols(self) -> set[int]:
        return set() if self.first_symbol is None else {self.first_symbol + i for i in range(len(LEVELS))}

    def build_generator(self, models, args, seq_gen_cls=None, extra_gen_cls_kwargs=None, **kwargs):
        extra = {**(extra_gen_cls_kwargs or {}), "symbols_to_strip_from_output": self.style_symbols()}
        return super().build_generator(models, args, seq_gen_cls, extra, **kwargs)

    def inference_step(self, generator, models, sample, prefix_tokens=None, constraints=None):
        if self.cfg.style_mode == "token" and prefix_tokens is None and hasattr(generator, "beam_size"):
            prefix_tokens = sample["style_prefix"].to(sample["net_input"]["src_tokens"].device)
        return super().inference_step(generator, models, sample, prefix_tokens, constraints)
