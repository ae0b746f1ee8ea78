"""Progress of a long step: a tqdm bar when stderr is a terminal (a step run by hand), else
throttled log lines (a Snakemake or SLURM log file).

The bar appears only once the work has taken BAR_DELAY_S: a quick call of the Python API (a few
sentences) draws none.

A log line comes at most every INTERVAL_S seconds and, when the total is known, only after a
further STEP of it, whichever is rarer: a long step writes at most ~20 lines however big the
data (1/STEP), a short one a line per 30 s at most, and one shorter than 30 s none but the
final "done" line. A stream of unknown length (extraction, cleaning) gives done and rate only,
one line per 30 s.
"""
from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Self, TypeVar

log = logging.getLogger(__name__)
INTERVAL_S = 30.0
BAR_DELAY_S = 3.0
STEP = 0.05
T = TypeVar("T")


def duration(seconds: float) -> str:
    """3725 -> "1 h 02 min", 200 -> "3 min 20 s", 7.4 -> "7 s"."""
    seconds = round(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


class Progress:
    """Counts `unit`s done of `total` (None: unknown); `advance(n)` as work is done. Used as a
    context manager, it logs "done" at a normal end (not when the step fails)."""

    def __init__(self, label: str, total: int | None = None, unit: str = "items",
                 clock: Callable[[], float] = time.monotonic):
        self.label, self.total, self.unit, self.clock = label, total, unit, clock
        self.done = 0
        self._start = self._last_time = clock()
        self._last_done = 0
        self._bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=label, unit=f" {unit}", file=sys.stderr, dynamic_ncols=True,
                             delay=BAR_DELAY_S)

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        now = self.clock()
        if now - self._last_time < INTERVAL_S:
            return
        if self.total and self.done - self._last_done < STEP * self.total:
            return
        self._last_time, self._last_done = now, self.done
        rate = self.done / (now - self._start) if now > self._start else 0.0
        if not self.total:
            log.info("%s: %d %s, %.1f/s", self.label, self.done, self.unit, rate)
            return
        left = duration((self.total - self.done) / rate) if rate else "an unknown time"
        log.info("%s: %d of %d %s (%.0f%%), %.1f/s, about %s left", self.label, self.done, self.total,
                 self.unit, 100 * self.done / self.total, rate, left)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, error_type, *_) -> None:
        if self._bar is not None:
            self._bar.close()
        elif error_type is None:
            elapsed = self.clock() - self._start
            rate = f", {self.done / elapsed:.1f}/s" if elapsed > 0 else ""
            log.info("%s: done %d %s in %s%s", self.label, self.done, self.unit, duration(elapsed), rate)


def track(items: Iterable[T], label: str, total: int | None = None, unit: str = "items") -> Iterator[T]:
    """`items`, reported as done once the consumer asks for the next one; the total defaults to
    len(items) where it has one."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with Progress(label, total, unit) as progress:
        for item in items:
            yield item
            progress.advance()
