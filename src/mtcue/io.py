"""Small shared file helpers: reading text a user may have written (UTF-8, named errors), and writing files that
appear only once complete (atomic replace), with the permissions the umask gives any other new file. What a
step may replace is mtcue.outputs'."""
from __future__ import annotations

import codecs
import glob
import json
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, TextIO


class TextFileError(ValueError):
    """A text file is not valid UTF-8; the message names the file and line."""


def _decode(raw: bytes, path: str | Path, lineno: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = lineno + raw.count(b"\n", 0, err.start)
        column = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        raise TextFileError(f"{path}:{line}: not UTF-8 (byte 0x{raw[err.start]:02x} at byte {column} of the line); "
                            "convert the file to UTF-8, e.g. with iconv") from None


def read_text_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """(line number, line with its "\n") of a UTF-8 file a user may have written: a leading byte
    order mark is dropped; a line that is not UTF-8 stops reading with file and line. Lines end at
    "\n" only (a subtitle may hold other line separators)."""
    with open(path, "rb") as handle:
        yield from decode_lines(handle, path)


def decode_lines(handle: BinaryIO, name: str | Path) -> Iterator[tuple[int, str]]:
    """read_text_lines of an open binary stream (standard input); errors name it `name`."""
    for lineno, raw in enumerate(handle, 1):
        yield lineno, _decode(raw.removeprefix(codecs.BOM_UTF8) if lineno == 1 else raw, name, lineno)


def read_text(path: str | Path) -> str:
    """The whole of a UTF-8 file, as read_text_lines reads it."""
    return _decode(Path(path).read_bytes().removeprefix(codecs.BOM_UTF8), path, 1)


def parse_json(text: str, path: str | Path, first_line: int = 1) -> object:
    """JSON `text` read from `path` (from its line `first_line`: one line of a JSONL file); a syntax error, or
    nesting too deep for the parser (a RecursionError otherwise), is a ValueError naming the file and line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}:{first_line + err.lineno - 1}: not valid JSON ({err.msg}); is the file complete? "
                         "Write or download it again") from None
    except RecursionError:
        raise ValueError(f"{path}:{first_line}: JSON nested too deeply to read; is it the right file?") from None


def read_json(path: str | Path) -> object:
    """The JSON of a UTF-8 file, errors as parse_json's."""
    return parse_json(read_text(path), path)


def confined(path: str | Path, folder: str | Path, where: str, fix: str) -> Path:
    """`path`, read from a file (a record, a manifest, an MLmodel; `where` names the file and key), resolved with
    its links followed, when it lies inside `folder`; else a ValueError naming `where` and saying what to do
    (`fix`). The one check of every such path: `..`, an absolute path or a link cannot lead a step out."""
    resolved, base = Path(path).resolve(), Path(folder).resolve()
    if not resolved.is_relative_to(base):
        raise ValueError(f"{where}: names {path}, which lies outside {base}; {fix}")
    return resolved


def check_file_name(name: str, what: str) -> str:
    """`name`, when it is a plain file name that stays in its folder (letters, digits, '.', '_', '-';
    starting with a letter or digit); else a ValueError naming `what`."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", name):
        raise ValueError(f"{what} {name!r} is not a plain file name (letters, digits, '.', '_', '-'; at most 100, "
                         "starting with a letter or digit)")
    return name


def current_umask() -> int:
    """The umask now, not at import (a warm step takes its command's after the server's imports:
    mtcue.warm). Read from /proc (Linux): os.umask reads it only by setting it, which would race with
    other threads creating files."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))
    except (OSError, StopIteration):
        mask = os.umask(0)
        os.umask(mask)
        return mask


def atomic_path(path: str | Path) -> tuple[int, str]:
    """A temporary file beside `path`, to be os.replace()d onto it once complete. mkstemp makes it
    0600; it gets the mode open() would give (0666 less the umask), as the final file must on a
    shared project directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, 0o666 & ~current_umask())
    return fd, tmp


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def scratch_directory(prefix: str, parent: str | Path | None = None) -> Iterator[Path]:
    """A temporary folder `{prefix}{pid}-XXXX` (in `parent`, else the system's temporary directory),
    removed after the block. A SIGKILL leaves one behind: the next call removes this user's folders
    of the same prefix whose process is gone."""
    parent = Path(parent or tempfile.gettempdir())
    parent.mkdir(parents=True, exist_ok=True)
    for old in parent.glob(f"{glob.escape(prefix)}*-*"):
        pid = old.name.removeprefix(prefix).split("-", 1)[0]
        if pid.isdigit() and old.is_dir() and not old.is_symlink() and old.stat().st_uid == os.getuid() \
                and not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix=f"{prefix}{os.getpid()}-", dir=parent) as tmp:
        yield Path(tmp)


def error_naming(err: OSError, path: str | Path, what: str = "file") -> OSError:
    """`err` naming the file (or folder) it was writing (a full disk's ENOSPC names none)."""
    return err if err.filename else type(err)(err.errno, f"{err.strerror} (writing {path}; the old {what} is kept)",
                                              str(path))


@contextmanager
def _replacing(path: str | Path) -> Iterator[TextIO]:
    """A text handle on a temporary file beside `path` that replaces `path` once the block completes; on an error
    the temporary file is removed, `path` stays as it was and an OSError names it."""
    fd, tmp = atomic_path(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException as err:
        os.unlink(tmp)
        if isinstance(err, OSError):
            raise error_naming(err, path) from err
        raise


def write_lines(path: str | Path, lines: Iterable[str]) -> int:
    """Write plain text lines atomically. Returns the count."""
    count = 0
    with _replacing(path) as handle:
        for line in lines:
            handle.write(line.replace("\n", " ") + "\n")
            count += 1
    return count


def write_jsonl(path: str | Path, records: Iterable[dict]) -> int:
    """Write records as JSON lines; the file appears only once complete. Returns the count."""
    return write_lines(path, (json.dumps(r, ensure_ascii=False) for r in records))


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write via a temp file in the same directory and os.replace, so readers (and Snakemake
    after a crash) never see a half-written file."""
    path = Path(path)
    with _replacing(path) as handle:
        handle.write(text)
    return path
