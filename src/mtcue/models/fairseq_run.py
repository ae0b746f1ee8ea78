"""fairseq-train and fairseq-generate run inside the calling `mtcue` process.

Starting them as commands meant a second interpreter per job that imported torch and fairseq
again (~5 s of CPU per training or translation, paid dozens of times by the demo). Here the same
argument lists go through fairseq's own parsers and entry points (`fairseq_cli.train.main`,
`fairseq_cli.generate.main`), so devices, fp16, checkpoints and resuming behave as on the
command line. Only a multi-GPU world goes on running as a command (see `train_command`).
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mtcue.io import scratch_directory
from mtcue.progress import Progress

# fairseq's log format (fairseq_cli/train.py): parse_fairseq_log reads lines in this form.
LOG_FORMAT = "%(asctime)s | %(levelname)s | %(name)s | %(message)s"
LOG_DATEFMT = "%Y-%m-%d %H:%M:%S"


@contextmanager
def fairseq_log(path: Path) -> Iterator[None]:
    """Append fairseq's INFO log to `path` in fairseq's format, record by record (a killed job
    keeps every line written before the kill), as the command's output used to be."""
    root = logging.getLogger()
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT, LOG_DATEFMT))
    level = root.level
    root.addHandler(handler)
    root.setLevel(min(level, logging.INFO) if level else logging.INFO)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()
        root.setLevel(level)


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """torch's intra-op threads for the block (what OMP_NUM_THREADS set for the command), with
    subnormal floats flushed to zero on the CPU: x86 kernels slow down many times over on them
    (docs/benchmarks.md, Subnormal floats); GPUs are unaffected by the setting."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    flushed = torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_num_threads(before)
        if flushed:
            torch.set_flush_denormal(False)


def training_config(args: list[str]):
    """fairseq-train's configuration for its command-line arguments (plugin imported by --user-dir)."""
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    return convert_namespace_to_omegaconf(options.parse_args_and_arch(options.get_training_parser(), input_args=args))


def train_command(cfg) -> bool:
    """Whether training must run as the fairseq-train command: with several GPUs fairseq spawns one
    process per GPU, and only the command's output pipe collects their logs (the training record
    is read from them)."""
    return cfg.distributed_training.distributed_world_size > 1


def train(cfg, log_path: Path, threads: int) -> None:
    """Train in this process (one device: CPU or one GPU), appending fairseq's log to `log_path`."""
    import fairseq_cli.train
    from fairseq import checkpoint_utils
    from fairseq.distributed import utils as distributed_utils

    # fairseq keeps the best validation loss (for checkpoint_best.pt and early stopping) on two
    # functions; a second training in this process must not inherit the first one's (a resumed run
    # gets its own back from its checkpoint: fairseq's load, plugin.resume).
    for function, attribute in ((checkpoint_utils.save_checkpoint, "best"),
                                (fairseq_cli.train.should_stop_early, "best"),
                                (fairseq_cli.train.should_stop_early, "num_runs")):
        if hasattr(function, attribute):
            delattr(function, attribute)
    with fairseq_log(log_path), torch_threads(threads):
        distributed_utils.call_main(cfg, fairseq_cli.train.main)


class _ReportedBatches:
    """What fairseq-generate uses of its progress bar (iterating the batches, `log`), counting the
    sentences of each batch through mtcue.progress. fairseq's own bar logs "i / n" batches every
    100 batches, without time left, where stderr is not a terminal."""

    def __init__(self, batches, progress: Progress):
        self.batches, self.progress = batches, progress

    def __iter__(self):
        for batch in self.batches:
            yield batch
            self.progress.advance(len(batch.get("id", ())))

    def log(self, stats, tag=None, step=None) -> None:
        """fairseq's words per second after every batch: dropped (its closing "Translated N sentences"
        line gives the rate)."""


def generate(args: list[str], threads: int, total: int | None = None) -> str:
    """fairseq-generate's output text (S-/H-/D- lines) for its command-line arguments; progress in
    sentences done of `total` (the split's size)."""
    import fairseq_cli.generate
    from fairseq import options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq.logging import progress_bar

    with scratch_directory("mtcue-generate-") as tmp, torch_threads(threads):
        parsed = options.parse_args_and_arch(options.get_generation_parser(),
                                             input_args=[*args, "--results-path", str(tmp)])
        cfg = convert_namespace_to_omegaconf(parsed)
        label = f"translate {cfg.task.source_lang}-{cfg.task.target_lang} {cfg.dataset.gen_subset}"
        fairseq_bar = progress_bar.progress_bar
        with Progress(label, total, "sentences") as progress:
            # fairseq-generate makes its bar with this module function: ours for this call only.
            progress_bar.progress_bar = lambda batches, **_: _ReportedBatches(batches, progress)
            try:
                fairseq_cli.generate.main(cfg)
            finally:
                progress_bar.progress_bar = fairseq_bar
        return (tmp / f"generate-{cfg.dataset.gen_subset}.txt").read_text(encoding="utf-8")
