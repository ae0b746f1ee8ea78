"""Shared file helpers: nothing half-written is ever visible under the final name."""
import hashlib
import json
import os
import subprocess
import sys

import pytest

from mtcue import io, outputs
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
    # A fresh interpreter, so that the umask set here is the process's own from its start.
    script = f"""
import os, stat, sys
os.umask({umask})
from pathlib import Path
from mtcue.io import atomic_write_text, write_jsonl, write_lines
from mtcue.outputs import atomic_directory
out = Path(sys.argv[1])
atomic_write_text(out / "text.txt", "x")
write_lines(out / "lines.txt", ["a"])
write_jsonl(out / "records.jsonl", [{{"a": 1}}])
with atomic_directory(out / "folder", "generate") as tmp:
    (tmp / "inside.txt").write_text("x")
print(" ".join(f"{{p.name}}={{stat.S_IMODE(p.stat().st_mode):o}}" for p in sorted(out.iterdir())))
"""
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True)
    file_mode, dir_mode = 0o666 & ~umask, 0o777 & ~umask
    assert run.stdout.split() == [f"folder={dir_mode:o}", f"lines.txt={file_mode:o}",
                                  f"records.jsonl={file_mode:o}", f"text.txt={file_mode:o}"]


# ---- atomic_directory: a step replaces only what it wrote ----------------------------------------

def write_folder(path, files=("a.txt",), step="generate"):
    with outputs.atomic_directory(path, step) as tmp:
        for name in files:
            (tmp / name).write_text(name)


def test_a_folder_the_step_wrote_is_replaced_with_the_new_files(tmp_path):
    write_folder(tmp_path / "out", ["a.txt", "b.txt"])
    write_folder(tmp_path / "out", ["c.txt"])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [outputs.OWNED_MARKER, "c.txt"]
    assert sorted(os.listdir(tmp_path)) == ["out"]  # no staging folder, no lock file left


@pytest.mark.parametrize("holder", ["notes", "model"])
def test_a_folder_with_a_users_files_is_left_alone(tmp_path, holder):
    out = tmp_path / "out"
    out.mkdir()
    kept = out / ("notes.txt" if holder == "notes" else "checkpoint_best.pt")
    kept.write_text("mine")
    with pytest.raises(outputs.OutputFolderError, match=f"out: holds files that no mtcue step wrote \\({kept.name}\\)"):
        write_folder(out)
    assert kept.read_text() == "mine" and sorted(os.listdir(out)) == [kept.name]


def test_a_file_added_to_a_steps_folder_keeps_it_from_being_replaced(tmp_path):
    out = tmp_path / "out"
    write_folder(out)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(outputs.OutputFolderError, match=r"did not write \(notes.txt\)"):
        write_folder(out)
    assert (out / "notes.txt").read_text() == "mine" and (out / "a.txt").exists()


def test_the_working_directory_and_its_parents_are_never_an_output(tmp_path, monkeypatch):
    here = tmp_path / "project" / "sub"
    here.mkdir(parents=True)
    (here / "keep.txt").write_text("mine")
    monkeypatch.chdir(here)
    for out in (".", "..", str(tmp_path)):
        with pytest.raises(outputs.OutputFolderError, match="working directory or one of its parents"):
            write_folder(out)
    assert (here / "keep.txt").read_text() == "mine"


def test_an_empty_folder_is_filled(tmp_path):
    (tmp_path / "out").mkdir()
    write_folder(tmp_path / "out")
    assert (tmp_path / "out" / "a.txt").read_text() == "a.txt"


def test_a_second_writer_of_the_same_folder_fails_and_the_first_finishes(tmp_path):
    out = tmp_path / "out"
    with outputs.atomic_directory(out, "generate") as first:
        (first / "first.txt").write_text("1")
        with pytest.raises(outputs.OutputFolderError, match="another process is writing this folder"):
            write_folder(out, ["second.txt"])
    assert sorted(p.name for p in out.iterdir()) == [outputs.OWNED_MARKER, "first.txt"]


def test_staging_folders_of_a_killed_run_are_swept_by_the_next(tmp_path):
    out = tmp_path / "out"
    script = f"""
import os, signal
from mtcue.outputs import atomic_directory
with atomic_directory({str(out)!r}, "generate") as tmp:
    (tmp / "half.txt").write_text("x")
    os.kill(os.getpid(), signal.SIGKILL)
"""
    subprocess.run([sys.executable, "-c", script])
    left = [p.name for p in tmp_path.iterdir()]
    assert any(".mtcue-staging." in n for n in left) and "out" not in left
    write_folder(out)
    # the killed run's lock file stays: it cannot be told from a user's file of that name (harmless)
    assert sorted(os.listdir(tmp_path)) == [".out.lock", "out"]


def test_a_users_lock_file_beside_the_output_is_kept(tmp_path):
    (tmp_path / ".out.lock").write_text("mine")
    write_folder(tmp_path / "out")
    assert (tmp_path / ".out.lock").read_text() == "mine" and (tmp_path / "out" / "a.txt").exists()


def test_a_step_never_replaces_another_steps_folder(tmp_path):
    out = tmp_path / "fs"
    write_folder(out, ["formality-control.test.en-de.en"], step="iwslt22-synth")
    with pytest.raises(outputs.OutputFolderError, match=r"fs: is the output of step 'iwslt22-synth', not of "
                                                   r"'translate-prompts'; nothing was changed"):
        write_folder(out, ["none.txt"], step="translate-prompts")
    assert sorted(os.listdir(out)) == [outputs.OWNED_MARKER, "formality-control.test.en-de.en"]
    assert json.loads((out / outputs.OWNED_MARKER).read_text()) == {"step": "iwslt22-synth",
                                                                "files": ["formality-control.test.en-de.en"]}
    write_folder(out, ["again.txt"], step="iwslt22-synth")  # its own step replaces it
    assert sorted(os.listdir(out)) == [outputs.OWNED_MARKER, "again.txt"]


def test_a_marker_written_before_steps_were_recorded_still_lets_the_folder_be_replaced(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.txt").write_text("old")
    (out / outputs.OWNED_MARKER).write_text(json.dumps({"files": ["a.txt"]}) + "\n")
    write_folder(out, ["b.txt"], step="tags")
    assert sorted(os.listdir(out)) == [outputs.OWNED_MARKER, "b.txt"]
    (out / outputs.OWNED_MARKER).write_text('["a.txt"]\n')  # not an object: unreadable, left alone
    with pytest.raises(outputs.OutputFolderError, match="unreadable"):
        write_folder(out, ["c.txt"], step="tags")
    assert (out / "b.txt").exists()


# ---- step_outputs: a file a step writes by name ---------------------------------------------------

def write_file(path, text, step="table"):
    with outputs.step_outputs(step, path):
        atomic_write_text(path, text)


def test_a_step_replaces_its_own_file_and_records_what_it_wrote(tmp_path):
    out = tmp_path / "t.csv"
    write_file(out, "a,b\n")
    write_file(out, "a,c\n")
    assert out.read_text() == "a,c\n"
    record = json.loads(outputs.output_record(out).read_text())
    assert record == {"step": "table", "sha256": hashlib.sha256(b"a,c\n").hexdigest()}
    assert outputs.output_record(out).name == ".t.csv.mtcue-output"


@pytest.mark.parametrize("case", ["users", "edited", "other_step", "folder", "svg_lookalike"])
def test_a_file_the_step_did_not_write_is_refused_before_any_work(tmp_path, case):
    out = tmp_path / "notes.txt"
    if case == "users":
        out.write_text("mine\n")
    elif case == "svg_lookalike":  # content that looks like an output proves nothing
        out.write_text('<svg xmlns="http://www.w3.org/2000/svg"><!-- my drawing --></svg>\n')
    elif case == "edited":
        write_file(out, "the step's\n", step="figure")
        out.write_text("the step's, and my edit\n")
    elif case == "other_step":
        write_file(out, "a table\n", step="table")
    else:
        out.mkdir()
    before = sorted(os.listdir(tmp_path)), out.is_file() and out.read_text()
    ran = []
    message = {"users": "exists and no mtcue step wrote it", "svg_lookalike": "exists and no mtcue step wrote it",
               "edited": "was changed since step 'figure' wrote it", "folder": "is a folder",
               "other_step": "is the output of step 'table', not of 'figure'"}[case]
    with pytest.raises(outputs.OutputFileError, match=f"notes.txt: {message}"):
        with outputs.step_outputs("figure", tmp_path / "new.svg", out):
            ran.append(True)
    assert not ran and (sorted(os.listdir(tmp_path)), out.is_file() and out.read_text()) == before


def test_an_output_written_before_a_failure_is_still_recorded_as_the_steps(tmp_path):
    csv, md = tmp_path / "t.csv", tmp_path / "t.md"
    with pytest.raises(RuntimeError):
        with outputs.step_outputs("table", csv, md):
            atomic_write_text(csv, "a\n")
            raise RuntimeError("the markdown failed")
    assert not md.exists() and not outputs.output_record(md).exists()
    write_file(csv, "b\n")  # the rerun may replace its own CSV
    assert csv.read_text() == "b\n"


def test_scratch_folders_of_dead_processes_are_swept_and_live_ones_kept(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    (tmp_path / f"mtcue-translate-{dead}-abc").mkdir()
    (tmp_path / f"mtcue-translate-{os.getpid()}-live").mkdir()
    (tmp_path / "mtcue-translate-notes").mkdir()  # not a pid: someone else's
    with io.scratch_directory("mtcue-translate-", tmp_path) as scratch:
        assert scratch.parent == tmp_path and scratch.name.startswith(f"mtcue-translate-{os.getpid()}-")
    assert sorted(os.listdir(tmp_path)) == [f"mtcue-translate-{os.getpid()}-live", "mtcue-translate-notes"]


def test_a_full_disk_names_the_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    import errno

    path = tmp_path / "out.txt"
    path.write_text("old")

    class Full:
        def __init__(self, fd, *args, **kwargs):
            os.close(fd)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def write(self, _):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(io.os, "fdopen", Full)
    for write in (lambda: io.write_lines(path, ["new"]), lambda: atomic_write_text(path, "new")):
        with pytest.raises(OSError, match="No space left on device") as caught:
            write()
        assert caught.value.filename == str(path) and caught.value.errno == errno.ENOSPC
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]


def test_a_full_disk_names_the_folder_and_keeps_the_old_one(tmp_path):
    """A step writing a folder (a context store, an evaluation set) on a full disk said only "[Errno 28] No space
    left on device", naming nothing."""
    import errno

    with outputs.atomic_directory(tmp_path / "store", "embed") as tmp:
        (tmp / "vectors.npy").write_text("old")
    with pytest.raises(OSError, match="No space left on device") as caught:
        with outputs.atomic_directory(tmp_path / "store", "embed") as tmp:
            (tmp / "vectors.npy").write_text("half")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as numpy's or open()'s write raises it
    assert caught.value.filename == str(tmp_path / "store") and caught.value.errno == errno.ENOSPC
    assert "the old folder is kept" in str(caught.value)
    assert sorted(os.listdir(tmp_path)) == ["store"] and (tmp_path / "store" / "vectors.npy").read_text() == "old"


def test_sigterm_removes_a_steps_scratch_and_staging_folders(tmp_path):
    """What `mtcue` does on SIGTERM (Snakemake cancelling, SLURM's time limit): unwind, cleaning up."""
    script = f"""
import signal, time
from mtcue import cli
from mtcue.io import scratch_directory
from mtcue.outputs import atomic_directory
signal.signal(signal.SIGTERM, cli._exit)
with scratch_directory("mtcue-translate-") as scratch, atomic_directory({str(tmp_path / "out")!r}, "generate") as tmp:
    (scratch / "big.bin").write_bytes(bytes(1000))
    (tmp / "half.txt").write_text("x")
    print("ready", flush=True)
    time.sleep(60)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.stdout.readline() == "ready\n"
    proc.terminate()
    assert proc.wait(timeout=30) == 143
    assert os.listdir(tmp_path) == []
