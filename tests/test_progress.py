"""mtcue.progress: throttled log lines with a fake clock, and a tqdm bar on a terminal."""
import io
import logging

import pytest

from mtcue import progress as progress_module
from mtcue.progress import Progress, duration, track


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "mtcue.progress"]


@pytest.fixture(autouse=True)
def info(caplog):
    caplog.set_level(logging.INFO, logger="mtcue.progress")


def test_lines_come_after_30_s_and_5_percent_more_whichever_is_rarer(caplog):
    clock = Clock()
    with Progress("embed en-de", 1000, "strings", clock=clock) as p:
        for t, n in ((10, 10), (31, 90), (70, 10), (80, 40), (90, 850)):
            clock.now = t
            p.advance(n)
        clock.now = 100
    assert messages(caplog) == [
        # t=10: too early. t=31: 100 done, 100/31 = 3.23/s, 900 left / 3.23/s = 279 s.
        "embed en-de: 100 of 1000 strings (10%), 3.2/s, about 4 min 39 s left",
        # t=70: 10 more is under 5% (50). t=80: 150/80 = 1.875/s, 850 / 1.875 = 453 s.
        "embed en-de: 150 of 1000 strings (15%), 1.9/s, about 7 min 33 s left",
        # t=90: only 10 s after the last line. The end: 1000 in 100 s.
        "embed en-de: done 1000 strings in 1 min 40 s, 10.0/s",
    ]


def test_a_step_shorter_than_the_interval_logs_only_its_end(caplog):
    clock = Clock()
    with Progress("OMDb", 5, "films", clock=clock) as p:
        for t in range(5):
            clock.now = 29 * (t + 1) / 5
            p.advance()
    assert messages(caplog) == ["OMDb: done 5 films in 29 s, 0.2/s"]


def test_an_unknown_total_gives_done_and_rate_every_30_s(caplog):
    clock = Clock()
    with Progress("extract de-en", unit="pairs", clock=clock) as p:
        for t in (10, 30, 45, 61, 3700):
            clock.now = t
            p.advance(100)
    assert messages(caplog) == ["extract de-en: 200 pairs, 6.7/s", "extract de-en: 400 pairs, 6.6/s",
                                "extract de-en: 500 pairs, 0.1/s", "extract de-en: done 500 pairs in 1 h 01 min, 0.1/s"]


def test_a_failed_step_does_not_say_done(caplog):
    with pytest.raises(RuntimeError), Progress("clean", 10) as p:
        p.advance()
        raise RuntimeError("disk full")
    assert messages(caplog) == []


def test_track_takes_the_total_from_the_items_and_counts_each_once_consumed(caplog, monkeypatch):
    monkeypatch.setattr(progress_module, "INTERVAL_S", 0)
    assert list(track(["a", "b", "c", "d"], "COMET", unit="segments")) == ["a", "b", "c", "d"]
    lines = messages(caplog)
    assert [line.split(",")[0] for line in lines[:-1]] == [f"COMET: {n} of 4 segments ({25 * n}%)" for n in range(1, 5)]
    assert lines[-1].startswith("COMET: done 4 segments in 0 s")


def test_on_a_terminal_a_tqdm_bar_replaces_the_log_lines(caplog, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(progress_module.sys, "stderr", terminal)
    monkeypatch.setattr(progress_module, "INTERVAL_S", 0)
    assert sum(track(range(3), "translate test")) == 3
    # work shorter than BAR_DELAY_S (3 s) draws no bar (a quick call of the API prints nothing)
    assert messages(caplog) == [] and terminal.getvalue() == ""
    monkeypatch.setattr(progress_module, "BAR_DELAY_S", 0)
    assert sum(track(range(3), "translate test")) == 3
    assert messages(caplog) == []
    assert "translate test: 100%" in terminal.getvalue() and "3/3" in terminal.getvalue()


@pytest.mark.parametrize("seconds, text", [(7.4, "7 s"), (60, "1 min 00 s"), (200, "3 min 20 s"),
                                           (3725, "1 h 02 min"), (90000, "25 h 00 min")])
def test_durations_read_as_hours_minutes_seconds(seconds, text):
    assert duration(seconds) == text
