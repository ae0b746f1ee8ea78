"""Exact resumption of fairseq-train (a job killed by its time limit continues where it stopped).

fairseq already restores most of what the trajectory depends on: weights, optimizer and
LR-scheduler state, the update count (it reseeds torch from seed + updates before every update, so
dropout repeats) and the epoch iterator's position (batch order is seeded by seed + epoch). Three
things it does not do, which this module adds when the plugin is imported (every mtcue training is):

- The batches themselves (which sentences go together) are made once, with seed + the epoch in
  which the training iterator is first built, and reused in every later epoch. An uninterrupted
  run builds it in epoch 1; a run resumed in epoch 3 would build it with seed + 3 and batch
  differently from there on. Here the batches are always made as in epoch 1 (unless
  --update-epoch-batch-itr asks for new batches every epoch, which resumes consistently anyway).

- Early stopping's state (the best validation loss and how many validations since) lives in
  attributes of `fairseq_cli.train.should_stop_early`, not in the checkpoint: a resumed run
  would forget a non-improving epoch and stop later than an uninterrupted one. It is saved in
  the checkpoint's extra state and restored on load; a run that had already stopped early
  trains no further epoch when rerun.
- `--save-interval-updates N` also validates at every mid-epoch save, so early stopping would
  count mid-epoch validations (the paper's patience is in epochs) and the best checkpoint
  could fall mid-epoch. Here a mid-epoch save writes only checkpoint_last.pt, without
  validating; validation stays at the end of each epoch.
"""
from __future__ import annotations

import functools
import logging
import sys
from types import ModuleType

import fairseq_cli.train
from fairseq import checkpoint_utils
from fairseq.tasks import FairseqTask
from fairseq.trainer import Trainer
from omegaconf import open_dict

log = logging.getLogger(__name__)
STATE_KEY = "mtcue_early_stop"


def training_loop() -> ModuleType:
    """The copy of fairseq_cli.train that runs: `python -m fairseq_cli.train` runs a second copy
    as __main__ (so do multiprocessing's spawned children of it), besides the imported one."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None) == "fairseq_cli.train":
        return main
    return fairseq_cli.train


def early_stop_state() -> dict:
    stop = training_loop().should_stop_early
    return {"best": getattr(stop, "best", None), "num_runs": getattr(stop, "num_runs", 0)}


def _save_with_early_stop_state(save):
    @functools.wraps(save)
    def wrapper(self, filename, extra_state):
        return save(self, filename, {**extra_state, STATE_KEY: early_stop_state()})
    return wrapper


def _load_with_early_stop_state(load):
    @functools.wraps(load)
    def wrapper(self, *args, **kwargs):
        extra_state = load(self, *args, **kwargs)
        state = (extra_state or {}).get(STATE_KEY)
        if state is not None:
            stop = training_loop().should_stop_early
            stop.best, stop.num_runs = state["best"], state["num_runs"]
            log.info("restored early-stopping state: best %s, %d validations without improvement",
                     state["best"], state["num_runs"])
        return extra_state
    return wrapper


def _no_epoch_after_early_stop(train_epoch):
    @functools.wraps(train_epoch)
    def wrapper(cfg, trainer, task, epoch_itr):
        patience = cfg.checkpoint.patience
        if patience > 0 and early_stop_state()["num_runs"] >= patience:
            log.info("this run had stopped early before it was interrupted: no further epoch")
            return [None], True
        return train_epoch(cfg, trainer, task, epoch_itr)
    return wrapper


def _save_mid_epoch_without_validating(validate_and_save):
    @functools.wraps(validate_and_save)
    def wrapper(cfg, trainer, task, epoch_itr, valid_subsets, end_of_epoch):
        interval = cfg.checkpoint.save_interval_updates
        if end_of_epoch or interval <= 0 or trainer.get_num_updates() % interval:
            return validate_and_save(cfg, trainer, task, epoch_itr, valid_subsets, end_of_epoch)
        # With the interval off, fairseq's function only checks its other stopping rules
        # (--max-update, --stop-time-hours), validating and saving if one of them fires.
        with open_dict(cfg):
            cfg.checkpoint.save_interval_updates = 0
            try:
                valid_losses, should_stop = validate_and_save(cfg, trainer, task, epoch_itr, valid_subsets,
                                                              end_of_epoch)
                if not should_stop:  # no validation loss: only checkpoint_last.pt is written
                    checkpoint_utils.save_checkpoint(cfg.checkpoint, trainer, epoch_itr, None)
            finally:
                cfg.checkpoint.save_interval_updates = interval
        return valid_losses, should_stop
    return wrapper


def _batches_as_in_epoch_one(get_batch_iterator):
    @functools.wraps(get_batch_iterator)
    def wrapper(self, *args, **kwargs):
        if not kwargs.get("update_epoch_batch_itr"):
            kwargs["epoch"] = 1  # the iterator's own epoch comes from the checkpoint (load_state_dict)
        return get_batch_iterator(self, *args, **kwargs)
    return wrapper


def install() -> None:
    """Patch fairseq (once per process; the plugin is imported once)."""
    if hasattr(Trainer.save_checkpoint, "__wrapped__"):
        return
    Trainer.save_checkpoint = _save_with_early_stop_state(Trainer.save_checkpoint)
    Trainer.load_checkpoint = _load_with_early_stop_state(Trainer.load_checkpoint)
    FairseqTask.get_batch_iterator = _batches_as_in_epoch_one(FairseqTask.get_batch_iterator)
    # The training loop looks these up as module globals at call time.
    loop = training_loop()
    loop.train = _no_epoch_after_early_stop(loop.train)
    loop.validate_and_save = _save_mid_epoch_without_validating(loop.validate_and_save)


install()
