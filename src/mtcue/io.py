"""Small shared file helpers: files and folders appear only once complete (atomic replace),
with the permissions the umask gives any other new file."""
from __future__ import annotations

import codecs
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator


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
        for lineno, raw in enumerate(handle, 1):
            yield lineno, _decode(raw.removeprefix(codecs.BOM_UTF8) if lineno == 1 else raw, path, lineno)


def read_text(path: str | Path) -> str:
    """The whole of a UTF-8 file, as read_text_lines reads it."""
    return _decode(Path(path).read_bytes().removeprefix(codecs.BOM_UTF8), path, 1)


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once, at import: os.umask can only be read by setting it, which must not race with other
# threads creating files.
UMASK = _read_umask()


def atomic_path(path: str | Path) -> tuple[int, str]:
    """A temporary file beside `path`, to be os.replace()d onto it once complete. mkstemp makes it
    0600; it gets the mode open() would give (0666 less the umask), as the final file must on a
    shared project directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, 0o666 & ~UMASK)
    return fd, tmp


@contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Yield a temporary folder beside `path` that replaces `path` once the block completes; on an
    error it is removed and an existing `path` stays as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
    tmp.chmod(0o777 & ~UMASK)  # mkdtemp makes it 0700
    try:
        yield tmp
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_lines(path: str | Path, lines: Iterable[str]) -> int:
    """Write plain text lines atomically. Returns the count."""
    fd, tmp = atomic_path(path)
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line.replace("\n", " ") + "\n")
                count += 1
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return count


def write_jsonl(path: str | Path, records: Iterable[dict]) -> int:
    """Write records as JSON lines; the file appears only once complete. Returns the count."""
    return write_lines(path, (json.dumps(r, ensure_ascii=False) for r in records))


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write via a temp file in the same directory and os.replace, so readers (and Snakemake
    after a crash) never see a half-written file."""
    path = Path(path)
    fd, tmp = atomic_path(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path
