"""Shared file helpers: nothing half-written is ever visible under the final name."""
import os
import subprocess
import sys

import pytest

from mtcue import io
from mtcue.io import atomic_write_text


def test_atomic_write_keeps_old_file_when_replace_fails(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def fail(*_):
        raise OSError("disk full")

    monkeypatch.setattr(io.os, "replace", fail)
    with pytest.raises(OSError):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.txt"]


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077], ids=["022", "002", "077"])
def test_written_files_and_folders_get_the_umask_mode(tmp_path, umask):
    # The umask is read when mtcue.io is imported: set it in a fresh interpreter first.
    script = f"""
import os, stat, sys
os.umask({umask})
from pathlib import Path
from mtcue.io import atomic_directory, atomic_write_text, write_jsonl, write_lines
out = Path(sys.argv[1])
atomic_write_text(out / "text.txt", "x")
write_lines(out / "lines.txt", ["a"])
write_jsonl(out / "records.jsonl", [{{"a": 1}}])
with atomic_directory(out / "folder") as tmp:
    (tmp / "inside.txt").write_text("x")
print(" ".join(f"{{p.name}}={{stat.S_IMODE(p.stat().st_mode):o}}" for p in sorted(out.iterdir())))
"""
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True)
    file_mode, dir_mode = 0o666 & ~umask, 0o777 & ~umask
    assert run.stdout.split() == [f"folder={dir_mode:o}", f"lines.txt={file_mode:o}",
                                  f"records.jsonl={file_mode:o}", f"text.txt={file_mode:o}"]
