"""Guards on the machine's resources (issue 43): `mtcue binarise --workers` capped at the usable CPUs (1000 used
to start 1,008 processes), and one training at a time in a checkpoint folder (a second one resumed the first
one's epoch 9)."""
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mtcue.cli import main
from mtcue.data import opensubtitles, prepare
from mtcue.models.train import hold_checkpoint_dir

HOLDER = """
import sys, time
from pathlib import Path
from mtcue.models.train import hold_checkpoint_dir
with hold_checkpoint_dir(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.mark.parametrize("asked, used", [(1000, 2), (2, 2), (1, 1)])
def test_binarise_workers_are_capped_at_the_usable_cpus(monkeypatch, tmp_path, caplog, asked, used):
    monkeypatch.setattr(opensubtitles, "usable_cpus", lambda: 2)
    calls = []
    monkeypatch.setattr(prepare, "binarise", lambda *args: calls.append(args))
    assert main(["binarise", "--prepared", str(tmp_path), "--direction", "en-de", "--dest", str(tmp_path / "bin"),
                 "--workers", str(asked)]) == 0
    assert calls == [(str(tmp_path), "en-de", str(tmp_path / "bin"), used)]
    assert ("--workers 1000: capped at 2" in caplog.text) == (asked == 1000)


def test_binarise_refuses_a_worker_count_below_one(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["binarise", "--prepared", str(tmp_path), "--direction", "en-de", "--dest", str(tmp_path), "--workers",
              "0"])
    assert "'0': a whole number >= 1 of worker processes" in capsys.readouterr().err


@pytest.fixture
def holder(tmp_path):
    """Another process training in tmp_path/ckpt (holding its lock), until it is terminated."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "ckpt")], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "held\n"
    yield proc
    proc.kill()
    proc.wait()


WAITER = """
import logging, sys
from pathlib import Path
from mtcue.models.train import hold_checkpoint_dir
logging.basicConfig(level=logging.INFO)
with hold_checkpoint_dir(Path(sys.argv[1])):
    print("got it", flush=True)
"""


def test_a_second_training_in_a_held_checkpoint_folder_waits_for_the_first(tmp_path, holder):
    """Issue 52: a Snakemake restarted while a training runs submits it again; the new job waits for the old one
    to end (and then resumes where it stopped) instead of failing and using up the rule's retries."""
    ckpt = tmp_path / "ckpt"
    waiter = subprocess.Popen([sys.executable, "-c", WAITER, str(ckpt)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    with pytest.raises(subprocess.TimeoutExpired):
        waiter.wait(timeout=3)
    holder.kill()  # the old job ends (a wall-time kill, or its training done)
    out, err = waiter.communicate(timeout=30)
    assert (waiter.returncode, out) == (0, "got it\n")
    assert f"{ckpt}: another training is using this checkpoint folder (it holds {ckpt}.lock): waiting" in err


def test_the_lock_is_released_when_the_training_is_terminated(tmp_path, holder):
    holder.send_signal(signal.SIGTERM)  # a wall-time limit: the rerun must resume
    assert holder.wait(timeout=30) == -signal.SIGTERM
    with hold_checkpoint_dir(tmp_path / "ckpt"):
        pass


def test_the_lock_is_released_when_a_training_ends(tmp_path):
    for _ in range(2):
        with hold_checkpoint_dir(tmp_path / "runs" / "ckpt"):
            assert (tmp_path / "runs" / "ckpt.lock").exists()
    with pytest.raises(ValueError), hold_checkpoint_dir(tmp_path / "ckpt"):
        raise ValueError("a failed training")
    with hold_checkpoint_dir(tmp_path / "ckpt"):
        assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.lock", "runs"]
    assert not Path(tmp_path / "ckpt").exists()


def test_a_link_to_a_checkpoint_folder_meets_the_lock_of_the_folder(tmp_path, holder):
    """A training holds tmp_path/ckpt: one given a link to it waits for the same lock (issue 50 item 8; it waits,
    issue 52, rather than fails), and no lock of the link's own name appears beside it."""
    link = tmp_path / "elsewhere"
    link.symlink_to(tmp_path / "ckpt")
    waiter = subprocess.Popen([sys.executable, "-c", WAITER, str(link)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    with pytest.raises(subprocess.TimeoutExpired):
        waiter.wait(timeout=3)
    holder.kill()
    out, err = waiter.communicate(timeout=30)
    assert (waiter.returncode, out) == (0, "got it\n")
    assert f"another training is using this checkpoint folder (it holds {tmp_path / 'ckpt.lock'})" in err
    assert not (tmp_path / "elsewhere.lock").exists()


@pytest.mark.parametrize("gpus", ["0", "-1"])
def test_train_on_no_gpus_is_refused_at_the_option(tmp_path, capsys, gpus):
    with pytest.raises(SystemExit):
        main(["train", "--direction", "en-de", "--gpus", gpus, "--checkpoint-dir", str(tmp_path), "--out", "x",
              "--record", "r", "--study", "s"])
    assert f"argument --gpus: '{gpus}' is not a whole number of at least 1" in capsys.readouterr().err
