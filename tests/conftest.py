import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def dry_run(*args: str, workdir: Path | None = None) -> subprocess.CompletedProcess:
    """`snakemake -n -p` of the repository's Snakefile in `workdir` (default: a new empty folder), never in
    the checkout itself, whose results/ a finished `make demo` fills: a test must not depend on it."""
    with tempfile.TemporaryDirectory(prefix="dry-run-") as fresh:
        return subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir or fresh),
                               "-n", "-p", *args], cwd=REPO, capture_output=True, text=True)


def make_sample(i, doc="d0", en="Did you see the letter?", de="Hast du den Brief gesehen?",
                previous_en=(), previous_de=(), meta=None, cues=()):
    fields = ("genre", "pg_rating", "writers", "year", "country", "plot")
    return {
        "id": f"en-de.test.{i:06d}", "doc_id": doc,
        "text": {"en": en, "de": de},
        "previous": {"en": list(previous_en), "de": list(previous_de)},
        "meta": {f: (meta or {}).get(f) for f in fields},
        "cues": list(cues),
    }


@pytest.fixture
def write_corpus(tmp_path):
    def write(samples, name="c.jsonl"):
        path = tmp_path / name
        path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples))
        return path
    return write
