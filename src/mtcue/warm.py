"""Warm start for `mtcue` steps on one machine: `MTCUE_WARM=1` (set by `make demo`).

A model step (training, translating, scoring with a model) spends about 2.4 s of CPU importing torch,
scikit-learn (through fairseq) and fairseq before its work, and the demo runs about 490 of them
(docs/benchmarks.md, Start-up per job). With MTCUE_WARM set, the `mtcue` command hands its step to a
server that made those imports once and forks a fresh child for each step. The child takes the
command's arguments, working directory, environment, umask and standard streams, runs `mtcue.cli.main`
as the command would, and its exit status becomes the command's. SIGTERM or SIGINT to the command (Snakemake
cancelling a job) reaches the child as SIGTERM, and so does the command's death.

The first step starts the server; it exits after IDLE_S seconds without steps. A server serves only
commands of the same interpreter, source tree and code (the key of its socket), so an edited checkout
starts a new one. Its socket lives in a folder only the user may enter, and it serves only processes
of the same user, since a step runs with whatever environment its command sends. Local runs only: on a
cluster each job's limits and accounting belong to its own process, and a CUDA context cannot be
forked, so a SLURM run never sets MTCUE_WARM (workflow/rules/local.smk).
"""
from __future__ import annotations

import array
import fcntl
import hashlib
import json
import os
import selectors
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IDLE_S = 60
START_TIMEOUT_S = 120
# What every model step imports first (a step's own modules are cheap once these are in).
WARM_MODULES = ("torch", "fairseq", "fairseq_cli.train", "fairseq_cli.generate", "sentence_transformers", "sacrebleu",
                "mtcue.cli")
_HEADER = struct.Struct("!I")


def enabled() -> bool:
    return os.environ.get("MTCUE_WARM", "") not in ("", "0")


def socket_path() -> Path:
    """One server per interpreter, source tree and code version (the newest source file's time), in
    the user's private folder (private_folder)."""
    src = Path(__file__).resolve().parent
    newest = max(p.stat().st_mtime_ns for p in src.rglob("*.py"))
    key = hashlib.sha256(f"{sys.executable}\0{src}\0{newest}\0{os.environ.get('PYTHONPATH', '')}".encode())
    return Path(tempfile.gettempdir()) / f"mtcue-warm-{os.getuid()}" / f"{key.hexdigest()[:16]}.sock"


def private_folder(folder: Path) -> bool:
    """Whether `folder` is (now) a folder of this user's that nobody else may enter: a step run by the
    server runs with the environment its command sends, so only this user may reach the socket."""
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


# --- the command's side ---------------------------------------------------------------------------

def run(argv: list[str]) -> int | None:
    """The step's exit status, run by the warm server; None if no server can be reached or started
    (the caller then runs the step itself)."""
    path = socket_path()
    if not private_folder(path.parent):
        sys.stderr.write(f"mtcue: {path.parent} is not a private folder of this user's; running the step cold\n")
        return None
    conn = _connect(path) or _start(path)
    if conn is None:
        return None
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": _umask()}).encode()
    conn.sendmsg([_HEADER.pack(len(request)) + request],
                 [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])

    def stop(signum, _frame):  # the server sends the child SIGTERM; its status follows
        try:
            conn.send(b"T")
        except OSError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    reply = b""
    while not reply.endswith(b"\n"):
        try:
            chunk = conn.recv(64)
        except InterruptedError:
            continue
        if not chunk:
            sys.stderr.write("mtcue: the warm server went away before the step ended\n")
            return 1
        reply += chunk
    return int(reply.split()[-1])


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _connect(path: Path) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
        return conn
    except OSError:
        conn.close()
        return None


def _start(path: Path) -> socket.socket | None:
    """Start the server (one at a time: a lock beside the socket) and connect to it."""
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        conn = _connect(path)  # another command started it while this one waited for the lock
        if conn is not None:
            return conn
        log = open(f"{path}.log", "ab")
        subprocess.Popen([sys.executable, "-m", "mtcue.warm", str(path)], stdin=subprocess.DEVNULL, stdout=log,
                         stderr=log, start_new_session=True, close_fds=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            conn = _connect(path)
            if conn is not None:
                return conn
            time.sleep(0.05)
    return None


# --- the server's side ----------------------------------------------------------------------------

def serve(path: Path) -> None:
    import importlib
    import logging
    import threading

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    for name in WARM_MODULES:
        importlib.import_module(name)
    # fairseq_cli configures logging to stdout when imported; a fresh `mtcue` configures it first (stderr).
    root.handlers[:], root.level = handlers, level
    if threading.active_count() > 1:  # forking a process with threads is unsafe: no server then
        raise SystemExit(f"mtcue.warm: imports started {threading.active_count() - 1} threads; not serving")
    sys.stdout.flush()
    sys.stderr.flush()

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    staging = f"{path}.{os.getpid()}"
    listener.bind(staging)
    listener.listen(16)
    os.replace(staging, path)  # clients connect only once the server is ready
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}  # child pid -> its command's connection
    idle_since = time.monotonic()
    try:
        while children or time.monotonic() - idle_since < IDLE_S:
            for key, _ in selector.select(timeout=0.1):
                if key.fileobj is listener:
                    conn, _ = listener.accept()
                    if not same_user(conn):
                        conn.close()
                        continue
                    pid = _fork_step(conn, listener, children)
                    if pid:
                        children[pid] = conn
                        selector.register(conn, selectors.EVENT_READ, pid)
                else:  # the command was stopped, or died: so does its step
                    _terminate(key.data)
                    selector.unregister(key.fileobj)
            for pid, code in _reaped(children):
                conn = children.pop(pid)
                if conn.fileno() in selector.get_map():
                    selector.unregister(conn)
                try:
                    conn.sendall(f"exit {code}\n".encode())
                except OSError:
                    pass
                conn.close()
                idle_since = time.monotonic()
    finally:
        if path.exists() and path.stat().st_ino == os.fstat(listener.fileno()).st_ino:
            path.unlink()
        listener.close()


def same_user(conn: socket.socket) -> bool:
    """Whether the process at the other end of `conn` runs as this user (SO_PEERCRED: pid, uid, gid)."""
    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return uid == os.getuid()


def _reaped(children: dict[int, socket.socket]):
    """(pid, exit status as a shell reports it) of each child that has ended."""
    for pid in list(children):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            yield pid, code if code >= 0 else 128 - code


def _terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, ancillary, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(3 * array.array("i").itemsize))
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    (size,) = _HEADER.unpack(data[:_HEADER.size])
    body = data[_HEADER.size:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("the command closed its connection mid-request")
        body += chunk
    return json.loads(body), list(fds)


def _fork_step(conn: socket.socket, listener: socket.socket, children: dict[int, socket.socket]) -> int | None:
    try:
        request, fds = _receive(conn)
    except (OSError, ValueError, ConnectionError):
        conn.close()
        return None
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    # The child: become the command's process, then run the step as `mtcue` would.
    code = 1
    try:
        listener.close()
        for other in children.values():
            other.close()
        conn.close()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        _end_with_server()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.umask(request["umask"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = request["argv"]
        _reseed()
        from mtcue import cli

        code = cli.main(request["argv"][1:])
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported as the command would report it
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _end_with_server() -> None:
    """SIGTERM for the child if the server dies (Linux): its command then fails, and a step left
    running would write outputs Snakemake has already given up on."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _reseed() -> None:
    """Fresh random states, as a new process has (the forked child would share the server's)."""
    import random

    import numpy as np
    import torch

    random.seed()
    np.random.seed()
    torch.seed()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
