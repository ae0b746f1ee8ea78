"""What a step may replace, and only that: the output-ownership protocol. A folder a step writes whole appears
at once (`atomic_directory`) and carries a marker naming the step and its files; a file a step writes by name
carries a record beside it (`step_outputs`). A step replaces only its own earlier, unchanged output; a user's
files, `.`, or another step's output are refused before any work, nothing changed. One writer per folder at a
time (`exclusive`)."""
from __future__ import annotations

import errno
import fcntl
import glob
import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from mtcue.io import atomic_write_text, current_umask, error_naming

# Every folder a step writes carries this file: the step that wrote it and what it put there. A folder
# is replaced only by the same step, and only when it holds nothing else than what the file lists, so a
# user's folder, a model's folder, `.` or another step's output is never deleted by a step that was
# given it as its output by mistake.
OWNED_MARKER = ".mtcue-output.json"
STAGING = ".mtcue-staging"  # name part of the temporary folders beside a destination


class OutputFolderError(ValueError):
    """A step was asked to write a folder it may not replace; the message says why and what to do."""


def _check_replaceable(path: Path, step: str) -> None:
    here = Path.cwd().resolve()
    target = path.resolve()
    if target == here or target in here.parents:
        raise OutputFolderError(f"{path}: is the working directory or one of its parents; give the step a new "
                                "folder of its own as output")
    if not target.exists():
        return
    if path.is_symlink() or not target.is_dir():
        raise OutputFolderError(f"{path}: exists and is not a folder; give the step another output path")
    entries = {p.name for p in target.iterdir()}
    if not entries:
        return
    marker = target / OWNED_MARKER
    if not marker.is_file():
        raise OutputFolderError(f"{path}: holds files that no mtcue step wrote ({', '.join(sorted(entries)[:5])}); "
                                "nothing was changed: give the step a new or empty folder, or move those files away")
    try:
        written = json.loads(marker.read_text(encoding="utf-8"))
        owned, owner = set(written["files"]), written.get("step", step)  # an older marker names no step
    except (ValueError, KeyError, TypeError, AttributeError):
        raise OutputFolderError(f"{marker}: unreadable; {path} is left alone: remove the folder by hand if it is "
                                "yours to remove") from None
    if owner != step:
        raise OutputFolderError(f"{path}: is the output of step '{owner}', not of '{step}'; nothing was "
                                "changed: give this step another folder")
    foreign = sorted(entries - owned - {OWNED_MARKER})
    if foreign:
        raise OutputFolderError(f"{path}: holds files its step did not write ({', '.join(foreign[:5])}); nothing was "
                                "changed: move them away, or give the step another folder")


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold `.{name}.lock` beside `path` for the block; a second writer of the same folder fails at once
    instead of replacing the first one's output under it. The lock file is removed only if this call
    created it (a file of that name may be a user's)."""
    lock = path.parent / f".{path.name}.lock"
    while True:
        try:
            fd, created = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666), True
        except FileExistsError:
            try:
                fd, created = os.open(lock, os.O_RDWR), False
            except FileNotFoundError:  # its writer removed it just now: try again
                continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputFolderError(f"{path}: another process is writing this folder now (it holds {lock}); "
                                    "wait for it to finish, or give this run another output") from None
        try:  # the lock file may have been removed by the writer before us: lock the one on disk
            if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        yield
    finally:
        if created:
            lock.unlink(missing_ok=True)
        os.close(fd)


@contextmanager
def atomic_directory(path: str | Path, step: str) -> Iterator[Path]:
    """Yield a temporary folder beside `path` that replaces `path` once the block completes; on an
    error it is removed and an existing `path` stays as it was. Only a folder `step` wrote (its
    marker names `step` and lists every entry) or an empty one is replaced; one writer at a time;
    staging folders a killed run left beside `path` are removed first."""
    path = Path(path)
    _check_replaceable(path, step)
    path.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(path):
        for stale in path.parent.glob(f".{glob.escape(path.name)}.{STAGING}.*"):
            shutil.rmtree(stale, ignore_errors=True)  # no writer of `path` is alive: the lock is ours
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.{STAGING}."))
        tmp.chmod(0o777 & ~current_umask())  # mkdtemp makes it 0700
        try:
            yield tmp
            entries = sorted(p.name for p in tmp.iterdir())
            (tmp / OWNED_MARKER).write_text(json.dumps({"step": step, "files": entries}) + "\n", encoding="utf-8")
            _check_replaceable(path, step)  # what the block ran long enough for a user to put there
            if path.exists():
                shutil.rmtree(path)
            os.replace(tmp, path)
        except OSError as err:
            if err.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise error_naming(err, path, "folder") from err  # a full disk: name the folder, not a bare errno
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


# A file a step writes by name (`--csv`, `--md`, `--out`, ...) gets `.{name}.mtcue-output` beside it: JSON,
# the step and the SHA-256 of what it wrote (no `.json` suffix: `*.json` of a records folder skips it).
# The step replaces the file only while that record names it and the file is still what it wrote; a
# user's file, a file the user edited since, or another step's output is refused before any work.
class OutputFileError(ValueError):
    """A step was asked to write a file it may not replace; the message says why and what to do."""


def output_record(path: str | Path) -> Path:
    """Where the record of a step's output file `path` lives: `.{name}.mtcue-output` beside it."""
    path = Path(path)
    return path.parent / f".{path.name}.mtcue-output"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_file_replaceable(path: Path, step: str) -> None:
    if path.is_dir():
        raise OutputFileError(f"{path}: is a folder; give step '{step}' a file path")
    if not (path.exists() or path.is_symlink()):
        return
    try:
        written = json.loads(output_record(path).read_text(encoding="utf-8"))
        owner, sha256 = written["step"], written["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        owner = sha256 = None
    if owner is None or path.is_symlink():
        raise OutputFileError(f"{path}: exists and no mtcue step wrote it; nothing was changed: give "
                              f"step '{step}' another path, or move that file away")
    if owner != step:
        raise OutputFileError(f"{path}: is the output of step '{owner}', not of '{step}'; nothing was "
                              "changed: give this step another path")
    if _sha256(path) != sha256:
        raise OutputFileError(f"{path}: was changed since step '{step}' wrote it; nothing was changed: move "
                              "it away (or delete it) if the step may write it again")


@contextmanager
def step_outputs(step: str, *paths: str | Path | None) -> Iterator[None]:
    """Guard the files `step` writes by name (None: an option not given): each must be new or this
    step's own unchanged earlier output, else OutputFileError before the block runs, nothing changed.
    On the way out (also after an error), each of them that exists now is recorded as `step`'s."""
    files = [Path(p) for p in dict.fromkeys(paths) if p is not None]
    for path in files:
        _check_file_replaceable(path, step)
    try:
        yield
    finally:
        for path in files:
            if path.is_file() and not path.is_symlink():
                atomic_write_text(output_record(path), json.dumps({"step": step, "sha256": _sha256(path)}) + "\n")

