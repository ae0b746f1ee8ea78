"""The warm server of `mtcue` steps (mtcue.warm starts it, with `python -P -m mtcue.warm_server <socket>`):
it imports what every model step imports once, then forks a child for each command's request that
becomes the command's process and runs `mtcue.cli.main`. It never waits on one command: requests are
read as their bytes arrive, and one not whole within REQUEST_S, or malformed, is dropped."""
from __future__ import annotations

import array
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time
from pathlib import Path

from mtcue.warm import HEADER

IDLE_S = 60
REQUEST_S = 30
MAX_REQUEST = 1 << 24
# What every model step imports first (a step's own modules are cheap once these are in).
WARM_MODULES = ("torch", "fairseq", "fairseq_cli.train", "fairseq_cli.generate", "sentence_transformers", "sacrebleu",
                "mtcue.cli")
_FDS = socket.CMSG_SPACE(3 * array.array("i").itemsize)


class _Request:
    """A command's request as far as it has arrived: the JSON after its length, and the command's
    standard streams (three descriptors)."""

    def __init__(self) -> None:
        self.data = b""
        self.fds: list[int] = []
        self.since = time.monotonic()

    def read(self, conn: socket.socket) -> dict | None:
        """The request once whole, else None; ValueError if it cannot become one."""
        try:
            data, ancillary, _, _ = conn.recvmsg(65536, _FDS)
        except BlockingIOError:
            return None
        except OSError as err:
            raise ValueError(err.strerror) from None
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
                self.fds += fds
        if not data:
            raise ValueError("closed before its request was whole")
        self.data += data
        if len(self.data) < HEADER.size:
            return None
        (size,) = HEADER.unpack_from(self.data)
        if size > MAX_REQUEST:
            raise ValueError(f"a request of {size} bytes")
        if len(self.data) < HEADER.size + size:
            return None
        if len(self.fds) != 3:
            raise ValueError(f"{len(self.fds)} standard streams, not 3")
        request = json.loads(self.data[HEADER.size:HEADER.size + size])
        if not isinstance(request, dict):
            raise ValueError("not a JSON object")
        return request

    def stopped(self) -> bool:
        """Whether the command sent its stop (a byte after the request) before the step started."""
        return len(self.data) > HEADER.size + HEADER.unpack_from(self.data)[0]

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


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
        raise SystemExit(f"mtcue.warm_server: imports started {threading.active_count() - 1} threads; not serving")
    sys.stdout.flush()
    sys.stderr.flush()

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    staging = f"{path}.{os.getpid()}"
    listener.bind(staging)
    listener.listen(16)
    os.replace(staging, path)  # clients connect only once the server is ready
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    # A connection's data in the selector: its _Request while the request arrives, then its step's pid.
    children: dict[int, socket.socket] = {}
    idle_since = time.monotonic()
    try:
        while children or len(selector.get_map()) > 1 or time.monotonic() - idle_since < IDLE_S:
            for key, _ in selector.select(timeout=0.1):
                if key.fileobj is listener:
                    _accept(listener, selector)
                elif isinstance(key.data, _Request):
                    _read(key.fileobj, key.data, selector, children)
                else:  # the command was stopped, or died: so does its step
                    _terminate(key.data)
                    selector.unregister(key.fileobj)
            _drop_late(selector)
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


def _accept(listener: socket.socket, selector: selectors.BaseSelector) -> None:
    try:
        conn, _ = listener.accept()
    except OSError:
        return
    if not same_user(conn):
        conn.close()
        return
    conn.setblocking(False)
    selector.register(conn, selectors.EVENT_READ, _Request())


def _read(conn: socket.socket, request: _Request, selector: selectors.BaseSelector,
          children: dict[int, socket.socket]) -> None:
    """More of a request; the step is forked once it is whole."""
    try:
        whole = request.read(conn)
    except ValueError as err:
        print(f"mtcue.warm_server: a request dropped: {err}", file=sys.stderr, flush=True)
        _drop(conn, request, selector)
        return
    if whole is None:
        return
    pid = _fork_step(whole, request, selector, children)
    selector.unregister(conn)
    request.close()
    children[pid] = conn
    if request.stopped():
        _terminate(pid)
    else:
        selector.register(conn, selectors.EVENT_READ, pid)


def _drop(conn: socket.socket, request: _Request, selector: selectors.BaseSelector) -> None:
    selector.unregister(conn)
    request.close()
    conn.close()


def _drop_late(selector: selectors.BaseSelector) -> None:
    """Drop the requests that did not arrive whole within REQUEST_S."""
    now = time.monotonic()
    for key in list(selector.get_map().values()):
        if isinstance(key.data, _Request) and now - key.data.since > REQUEST_S:
            print(f"mtcue.warm_server: a request dropped: not whole after {REQUEST_S} s", file=sys.stderr, flush=True)
            _drop(key.fileobj, key.data, selector)


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


def _fork_step(request: dict, received: _Request, selector: selectors.BaseSelector,
               children: dict[int, socket.socket]) -> int:
    pid = os.fork()
    if pid:
        return pid
    # The child: become the command's process, then run the step as `mtcue` would.
    code = 1
    try:
        for key in list(selector.get_map().values()):  # the listener, every connection, others' streams
            if isinstance(key.data, _Request) and key.data is not received:
                key.data.close()
            key.fileobj.close()
        for other in children.values():
            other.close()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        _end_with_server()
        for target, fd in enumerate(received.fds):
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
