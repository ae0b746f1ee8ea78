"""Warm start for `mtcue` steps on one machine: `MTCUE_WARM=1` (set by `make demo`); the command's side.

A model step (training, translating, scoring with a model) spends about 2.4 s of CPU importing torch,
scikit-learn (through fairseq) and fairseq before its work, and the demo runs about 490 of them
(docs/benchmarks.md, Start-up per job). With MTCUE_WARM set, the `mtcue` command hands its step to a
server (mtcue.warm_server) that made those imports once and forks a fresh child for each step. The child
takes the command's arguments, working directory, environment, umask and standard streams, runs
`mtcue.cli.main` as the command would, and its exit status becomes the command's. SIGTERM or SIGINT to the
command (Snakemake cancelling a job) reaches the child as SIGTERM, and so does the command's death; the
command ends at most STOP_GRACE_S later.

What modules read when imported (HF_HUB_OFFLINE, HF_HOME, OMP_NUM_THREADS), the umask, the nice level, CPU
affinity and resource limits (ulimit) are the server's, so a server serves only the commands that would have
the same: its socket's key is the interpreter, source tree and code, working directory, environment, umask,
nice level, affinity and limits (the command that starts a server hands it its own). The jobs of one local
Snakemake run share all these but for the thread variables (OMP_NUM_THREADS, ...), which follow a rule's
`threads` (1 in every rule of the demo): the demo needs one server. The server does not import from the folder it started in (a
cold `mtcue` does not either) and exits after a minute without steps. Its socket lives in a folder only the
user may enter, and it serves only that user. Where no server can be reached or started, the step runs
cold. Local runs only: on a cluster each job's limits and accounting belong to its own process, and a
CUDA context cannot be forked, so a SLURM run never sets MTCUE_WARM (workflow/rules/local.smk).
"""
from __future__ import annotations

import array
import fcntl
import hashlib
import json
import os
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

START_TIMEOUT_S = 120
STOP_GRACE_S = 5  # after SIGTERM, how long the command waits for its step's status
# A Unix socket's path holds at most 108 bytes; the server first binds it with ".<pid>" (8 more) appended.
MAX_SOCKET_PATH = 108 - 8
HEADER = struct.Struct("!I")  # the request's length, before the request (JSON)


def enabled() -> bool:
    return os.environ.get("MTCUE_WARM", "") not in ("", "0")


def socket_path() -> Path:
    """The socket of the server for this command (the module docstring's key), in the user's private
    folder (private_folder)."""
    src = Path(__file__).resolve().parent
    newest = max(p.stat().st_mtime_ns for p in src.rglob("*.py"))
    key = hashlib.sha256(json.dumps([sys.executable, str(src), newest, os.getcwd(), umask(),
                                     sorted(os.environ.items()), process_limits()]).encode())
    return Path(tempfile.gettempdir()) / f"mtcue-warm-{os.getuid()}" / f"{key.hexdigest()[:16]}.sock"


def process_limits() -> list:
    """The command's nice level, CPU affinity and resource limits (ulimit): a server started by the command
    inherits them and a forked step inherits the server's, so commands that differ in any get servers apart."""
    import resource

    names = sorted(name for name in dir(resource) if name.startswith("RLIMIT_"))
    return [os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0)),
            [(name, resource.getrlimit(getattr(resource, name))) for name in names]]


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def private_folder(folder: Path) -> bool:
    """Whether `folder` is (now) a folder of this user's that nobody else may enter: a step run by the
    server runs with the environment its command sends, so only this user may reach the socket."""
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def run(argv: list[str]) -> int | None:
    """The step's exit status, run by the warm server; None if no server can be reached or started
    (the caller then runs the step itself)."""
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
        path = socket_path()
    except OSError:  # a closed standard stream, or a working directory that is gone: as the command would
        return None
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return _cold(f"the warm server's socket {path} is longer than a Unix socket allows ({MAX_SOCKET_PATH} "
                     "bytes): set TMPDIR to a shorter folder to run steps warm")
    if not private_folder(path.parent):
        return _cold(f"{path.parent} is not a private folder of this user's")
    conn = _connect(path) or _start(path)
    if conn is None:
        return None
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask()}).encode()
    message = HEADER.pack(len(request)) + request
    try:
        sent = conn.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
        conn.sendall(message[sent:])
    except OSError as err:  # the server went away before it had the whole request: no step started
        return _cold(f"the warm server took no request ({err.strerror})")
    return _wait(conn)


def _wait(conn: socket.socket) -> int:
    """The step's status as the server reports it."""
    stopped: list[int] = []

    def stop(signum, _frame):  # the server sends the child SIGTERM; its status follows
        if stopped:
            return
        stopped.append(signum)
        try:
            conn.send(b"T")
        except OSError:
            pass
        signal.signal(signal.SIGALRM, give_up)
        signal.alarm(STOP_GRACE_S)

    def give_up(_signum, _frame):
        sys.stderr.write(f"mtcue: the step reported no status within {STOP_GRACE_S} s of the stop; ending\n")
        raise SystemExit(128 + stopped[0])

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = conn.recv(64)
        if not chunk:
            sys.stderr.write("mtcue: the warm server went away before the step ended\n")
            return 1
        reply += chunk
    return int(reply.split()[-1])


def _cold(why: str) -> None:
    sys.stderr.write(f"mtcue: {why}; running the step cold\n")


def _connect(path: Path) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
        return conn
    except OSError:
        conn.close()
        return None


def _start(path: Path) -> socket.socket | None:
    """Start the server (one at a time: a lock beside the socket) and connect to it. `-P`: the working
    directory is not on its import path."""
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        conn = _connect(path)  # another command started it while this one waited for the lock
        if conn is not None:
            return conn
        with open(f"{path}.log", "ab") as log:
            server = subprocess.Popen([sys.executable, "-P", "-m", "mtcue.warm_server", str(path)],
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                                      close_fds=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            conn = _connect(path)
            if conn is not None:
                return conn
            if server.poll() is not None:
                return _cold(f"the warm server exited at start with status {server.returncode} (its log: {path}.log)")
            time.sleep(0.05)
    return _cold(f"the warm server did not start within {START_TIMEOUT_S} s (its log: {path}.log)")
