"""The warm server (mtcue.warm): a step handed to it behaves as the command run by itself: the same
standard streams, exit status and error message, and a stopped command stops its step."""
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import REPO, SNAKEMAKE

MTCUE = str(Path(SNAKEMAKE).parent / "mtcue")


@pytest.fixture
def env():
    """A private temporary folder (the server's socket lives there); the server is stopped after."""
    tmp = tempfile.mkdtemp(prefix="warm-", dir="/tmp")
    yield {**os.environ, "TMPDIR": tmp, "PYTHONPATH": str(REPO / "src")}
    for pid in _processes(tmp):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(tmp)


def _processes(tmp: str) -> list[int]:
    """The server and its children: processes running `python -m mtcue.warm <socket in tmp>`."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mtcue.warm" in cmdline and any(arg.startswith(tmp.encode()) for arg in cmdline):
            pids.append(int(proc.name))
    return pids


def mtcue(args, env, warm, **kwargs):
    return subprocess.run([MTCUE, *args], env={**env, "MTCUE_WARM": "1" if warm else "0"}, capture_output=True,
                          text=True, timeout=180, **kwargs)


def without_times(text: str) -> str:
    return re.sub(r"^\S+ \S+ ", "", text, flags=re.M)


def test_a_warm_step_matches_the_command(env):
    for args, stdin in ((["--help"], None), (["translate-text", "--model-dir", "no-such-model"], "Hello.\n")):
        cold, warm = mtcue(args, env, False, input=stdin), mtcue(args, env, True, input=stdin)
        assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
        assert without_times(warm.stderr) == without_times(cold.stderr)
    assert cold.returncode == 1 and "no-such-model" in cold.stderr
    assert len(_processes(env["TMPDIR"])) == 1  # one server, started by the first step, serves them all


def test_stopping_the_command_stops_its_step(env):
    mtcue(["--help"], env, True)  # the server is up
    server = _processes(env["TMPDIR"])
    # translate-text waits for its standard input, which stays open: the step runs until stopped.
    command = subprocess.Popen([MTCUE, "translate-text", "--model-dir", "no-such-model"], env={**env, "MTCUE_WARM": "1"},
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while len(_processes(env["TMPDIR"])) < 2:
        assert time.monotonic() < deadline, "the step never started"
        time.sleep(0.05)
    command.send_signal(signal.SIGTERM)
    assert command.wait(timeout=30) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 10
    while _processes(env["TMPDIR"]) != server:
        assert time.monotonic() < deadline, "the step outlived its command"
        time.sleep(0.05)
    command.stdin.close()


def test_a_step_ends_with_its_server(env):
    mtcue(["--help"], env, True)
    [server] = _processes(env["TMPDIR"])
    command = subprocess.Popen([MTCUE, "translate-text", "--model-dir", "no-such-model"], env={**env, "MTCUE_WARM": "1"},
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while len(_processes(env["TMPDIR"])) < 2:
        assert time.monotonic() < deadline, "the step never started"
        time.sleep(0.05)
    os.kill(server, signal.SIGKILL)
    _, err = command.communicate(timeout=30)
    assert command.returncode == 1 and "warm server went away" in err
    deadline = time.monotonic() + 10
    while _processes(env["TMPDIR"]):
        assert time.monotonic() < deadline, "the step outlived its server"
        time.sleep(0.05)


def test_only_this_user_reaches_the_server(tmp_path):
    """The socket lives in a folder only its user may enter, and the server serves only its user: a step
    runs with the environment its command sends (PYTHONPATH included)."""
    import socket
    import stat

    from mtcue import warm

    folder = tmp_path / "warm"
    assert warm.private_folder(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o755)  # a folder others may enter is refused, so the step runs cold
    assert not warm.private_folder(folder)
    ours, theirs = socket.socketpair(socket.AF_UNIX)
    assert warm.same_user(ours)
    ours.close()
    theirs.close()


def test_files_take_the_umask_the_process_has_when_writing(tmp_path):
    """A warm step's umask is set after mtcue.io was imported (by the server)."""
    from mtcue.io import atomic_write_text

    before = os.umask(0o077)
    try:
        atomic_write_text(tmp_path / "private.txt", "secret\n")
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "private.txt").stat().st_mode) == 0o600
