"""`mtcue extract-opensubtitles` beside the authors' parser (st-vincent1/opensubtitles_parser) on the
same generated OPUS copy: pairs kept (and each class of difference), time, CPU and peak memory, and
our extraction with 1, 2, ... workers (issue 28, item 1). Figures: docs/data.md, "Extraction speed".

    git clone https://github.com/st-vincent1/opensubtitles_parser AUTHORS
    python -m venv --system-site-packages VENV && VENV/bin/pip install mosestokenizer tqdm requests
    PYTHONPATH=src python workflow/scripts/bench_extraction.py --authors AUTHORS --authors-python VENV/bin/python \\
        --work WORK --links 2200000 --workers 1,2 --rounds 1 --out bench.json

The authors' code is copied into WORK and run there, never into this project, with two patches
(printed and written to WORK/authors.diff): no `import cld3` (unused; pycld3 does not build on
Python 3.11), and no OMDb request (offline: the train split keeps films without metadata). Their
layout is made from the copy as their download script leaves it (documents unzipped, alignment file
uncompressed); that step is not timed. Runs alternate (authors', ours with each worker count, then
again for each round), so load from other processes falls on all of them alike. Peak memory is each
process's VmHWM, sampled from /proc every 0.2 s (Linux).
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from collections import Counter
from pathlib import Path

from mtcue.data.opus_synth import generate_mirror

# (file, the line, what it becomes): the only changes to the authors' code
PATCHES = [
    ("preprocess_opensubs.py", "import cld3\n", "# import cld3  # patch: unused; pycld3 does not build here\n"),
    ("utils.py", "def process_metadata_from_omdb(imdb_id, apikey):\n",
     "def process_metadata_from_omdb(imdb_id, apikey):\n    return {}  # patch: offline, no OMDb\n"),
]
FILES = ("extract_bitext.py", "utils.py", "preprocess_opensubs.py")
STRICT = 0.9005  # the authors keep overlap > 0.9; the copy's overlaps have 3 decimals


def authors_copy(authors: Path, work: Path) -> Path:
    """The authors' three modules under WORK/authors/src, patched; a block list naming no film."""
    run_dir = work / "authors"
    (run_dir / "src").mkdir(parents=True, exist_ok=True)
    (run_dir / "blocklist").mkdir(exist_ok=True)
    (run_dir / "blocklist" / "blocklist.de").write_text("de/0/0/0.xml\n")
    diff = []
    for name in FILES:
        text = (authors / "src" / name).read_text()
        for target, old, new in PATCHES:
            if target == name:
                if text.count(old) != 1:
                    raise SystemExit(f"{authors}/src/{name}: the line to patch ({old.strip()!r}) is not there once")
                text = text.replace(old, new)
                diff.append(f"{name}: {old.strip()!r} -> {new.strip()!r}")
        (run_dir / "src" / name).write_text(text)
    (work / "authors.diff").write_text("\n".join(diff) + "\n")
    print("patches to the authors' code:\n  " + "\n  ".join(diff), file=sys.stderr)
    return run_dir


def authors_layout(copy: Path, raw: Path) -> None:
    """raw/OpenSubtitles/xml/{lang}/... and raw/OpenSubtitles/de-en/de-en.xml, as download_os_xml.sh leaves them."""
    if (raw / "OpenSubtitles" / "de-en" / "de-en.xml").exists():
        return
    for lang in ("de", "en"):
        with zipfile.ZipFile(copy / "xml" / f"{lang}.zip") as archive:
            archive.extractall(raw)
    (raw / "OpenSubtitles" / "de-en").mkdir(parents=True, exist_ok=True)
    subprocess.run(f"zcat {copy}/xml/de-en.xml.gz > {raw}/OpenSubtitles/de-en/de-en.xml", shell=True, check=True)


class TreeMemory(threading.Thread):
    """Peak resident memory (VmHWM) of a process and of every process under it, by command line."""

    def __init__(self, root: int):
        super().__init__(daemon=True)
        self.root, self.peaks, self.names, self.done = root, {}, {}, threading.Event()

    def _tree(self) -> list[int]:
        parents = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                    parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
        tree, frontier = [self.root], [self.root]
        while frontier:
            frontier = [pid for pid, ppid in parents.items() if ppid in frontier]
            tree += frontier
        return tree

    def run(self) -> None:
        while not self.done.wait(0.2):
            for pid in self._tree():
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                    self.names.setdefault(pid, Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                                          .decode(errors="replace").strip())
                except OSError:
                    continue
                for line in status.splitlines():
                    if line.startswith("VmHWM:"):
                        self.peaks[pid] = max(self.peaks.get(pid, 0), int(line.split()[1]) // 1024)


def timed(cmd: list[str], cwd: Path, env: dict | None = None) -> dict:
    start = time.perf_counter()
    with open(cwd / "stderr.log", "w") as err:
        process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    watch = TreeMemory(process.pid)
    watch.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    watch.done.set()
    watch.join()
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({status}); see {cwd}/stderr.log")
    workers = [mb for pid, mb in watch.peaks.items() if "multiprocessing" in watch.names.get(pid, "")
               and "resource_tracker" not in watch.names.get(pid, "")]
    helpers = [mb for pid, mb in watch.peaks.items() if pid != process.pid and "multiprocessing" not in
               watch.names.get(pid, "")]
    return {"wall_s": round(wall, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_rss_mb": watch.peaks.get(process.pid), "worker_peak_rss_mb": sorted(workers),
            "helper_processes_peak_rss_mb": sorted(helpers)}


def ours(copy: Path, out: Path, workers: int, min_overlap: float = 0.9) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    result = timed([sys.executable, "-m", "mtcue.cli", "extract-opensubtitles", "--mirror", str(copy), "--pair", "en-de",
                    "--out", str(out / "all.jsonl"), "--stats", str(out / "stats.json"), "--min-overlap",
                    str(min_overlap), "--workers", str(workers)], out, env)
    result["pairs"] = json.loads((out / "stats.json").read_text())["pairs"]
    return result


MARK = ".bench-extraction"  # in WORK: this script made it, so it may replace what it wrote there


def claim_work_dir(work: Path) -> Path:
    """WORK, created or reused only where this script made it: the runs replace their outputs there,
    so a folder holding anything else (a user's files) is refused, untouched."""
    if work.exists() and not (work / MARK).is_file() and (not work.is_dir() or any(work.iterdir())):
        sys.exit(f"--work {work}: not empty and not made by this script; name a new or empty folder")
    work.mkdir(parents=True, exist_ok=True)
    (work / MARK).touch()
    return work


def theirs(python: str, run_dir: Path, raw: Path) -> dict:
    shutil.rmtree(run_dir / "data", ignore_errors=True)
    result = timed([python, "src/extract_bitext.py", "-l", "de", "-s", "train", "-p", str(raw), "-a", "none"], run_dir)
    result["pairs"] = len((run_dir / "data" / "en-de" / "train.en").read_text(encoding="utf-8").splitlines())
    return result


def words(text: str) -> list[str]:
    """The words of a line in any order, dialogue dashes aside (a line's leading dash is removed by
    both cleanings, so a sentence moved to the front loses its dash)."""
    return sorted(w for w in text.split() if w != "-")


def compare(ours_jsonl: Path, authors_data: Path) -> dict:
    """Our pairs against the authors' in order: equal, the same link with other text, only ours, only
    theirs; for each class with text differences, whether the two texts hold the same words (the
    order of a multi-sentence link) and the share of pairs whose previous line differs."""
    mine, previous = [], []
    with open(ours_jsonl, encoding="utf-8") as f:
        for line in f:
            sample = json.loads(line)
            mine.append((sample["text"]["en"], sample["text"]["de"]))
            previous.append(sample["previous"]["en"][:1])
    def lines(name):
        return (authors_data / name).read_text(encoding="utf-8").splitlines()
    theirs_ = list(zip(lines("train.en"), lines("train.de")))
    # Their context file k holds the line k back; 0 is the pair itself.
    their_previous = [[p] if p else [] for p in lines("context/train.1.en")]
    classes: Counter = Counter()
    examples: dict = {}
    context_differs = 0
    matcher = difflib.SequenceMatcher(None, mine, theirs_, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            for a, b in zip(mine[i1:i2], theirs_[j1:j2]):
                same_words = all(words(x) == words(y) for x, y in zip(a, b))
                kind = "same link, sentences in another order" if same_words else "same link, other text"
                classes[kind] += 1
                examples.setdefault(kind, (a, b))
        elif tag != "equal":
            for kind, block in (("only ours", mine[i1:i2]), ("only theirs", theirs_[j1:j2])):
                if block:
                    classes[kind] += len(block)
                    examples.setdefault(kind, block[0])
        if tag in ("equal", "replace") and i2 - i1 == j2 - j1:
            context_differs += sum(previous[i] != their_previous[j] for i, j in zip(range(i1, i2), range(j1, j2)))
    return {"ours": len(mine), "theirs": len(theirs_), "identical": len(mine) - sum(
        v for k, v in classes.items() if k != "only theirs"), "differences": dict(classes),
        "examples": examples, "previous_line_differs": context_differs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authors", required=True, type=Path, help="a checkout of st-vincent1/opensubtitles_parser")
    parser.add_argument("--authors-python", required=True, help="a Python with mosestokenizer, tqdm and requests")
    parser.add_argument("--work", required=True, type=Path)
    parser.add_argument("--links", type=int, default=2_200_000)
    parser.add_argument("--workers", default="1,2", help="worker counts of our runs")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", required=True, type=Path)
    a = parser.parse_args()
    work = claim_work_dir(a.work.resolve())
    copy, raw = work / "opus", work / "raw"
    if not (copy / "xml" / "de-en.xml.gz").exists():
        generate_mirror(copy, "en-de", a.links)
    authors_layout(copy, raw)
    run_dir = authors_copy(a.authors.resolve(), work)
    counts = [int(w) for w in a.workers.split(",")]
    runs: dict = {"authors": [], **{f"ours_{w}_workers": [] for w in counts}}
    for round_ in range(a.rounds):
        print(f"round {round_ + 1}: authors' parser", file=sys.stderr)
        runs["authors"].append(theirs(a.authors_python, run_dir, raw))
        for w in counts:
            print(f"round {round_ + 1}: ours, {w} workers", file=sys.stderr)
            runs[f"ours_{w}_workers"].append(ours(copy, work / f"ours{w}", w))
    # The authors keep overlap > 0.9, we keep >= 0.9: the same rule as theirs isolates the other differences.
    strict = ours(copy, work / "ours_strict", max(counts), STRICT)
    best = {name: min(r["wall_s"] for r in rs) for name, rs in runs.items()}
    serial = f"ours_{counts[0]}_workers"
    report = {
        "links": a.links, "runs": runs,
        "pairs": {name: rs[0]["pairs"] for name, rs in runs.items()},
        "pairs_per_s": {name: round(rs[0]["pairs"] / best[name]) for name, rs in runs.items()},
        "time_ratio_authors_to_ours_1_worker": round(best["authors"] / best[serial], 2),
        "cpu_ratio_authors_to_ours_1_worker": round(min(r["cpu_s"] for r in runs["authors"])
                                                    / min(r["cpu_s"] for r in runs[serial]), 2),
        "kept_only_by_overlap_exactly_0.9": runs[serial][0]["pairs"] - strict["pairs"],
        "ours_with_overlap_above_0.9_vs_authors": compare(work / "ours_strict" / "all.jsonl", run_dir / "data" / "en-de"),
    }
    a.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
