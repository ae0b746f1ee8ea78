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
    the checkout itself, whose results/ a finished `make demo` fills: a test must not depend on it. Its stdout ends
    with each evaluation job's steps as their own command lines (`evaluation_commands`), as `mtcue <step>` runs
    them by hand."""
    with tempfile.TemporaryDirectory(prefix="dry-run-") as fresh:
        run = subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir or fresh),
                              "-n", "-p", *args], cwd=REPO, capture_output=True, text=True)
    run.stdout += evaluation_commands(run.stdout)
    return run


def evaluation_tasks(stdout: str) -> list[list[str]]:
    """The steps of every evaluation job a `snakemake -n -p` printed (`mtcue evaluate --tasks JSON`, one job per
    trained model): each step's command line, as `mtcue <step> ...` runs it by hand."""
    import re
    import shlex

    tasks = []
    for line in re.findall(r"^.*mtcue evaluate --tasks .*$", stdout, re.M):
        words = shlex.split(line[line.index("mtcue evaluate"):])
        tasks += json.loads(words[words.index("--tasks") + 1])
    return tasks


def evaluation_commands(stdout: str) -> str:
    """The evaluation jobs' steps as shell command lines (`mtcue translate --spec ...`), one a line."""
    import shlex

    return "".join(f"mtcue {shlex.join(task)}\n" for task in evaluation_tasks(stdout))


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


# `make check` runs the tests not marked slow, in at most 3 minutes; `make test` (CI) runs every one. A test
# is slow when it runs Snakemake (a process, the rehearsal's or cluster-plan's, or a whole DAG built in-process)
# or the test SLURM, starts processes (each `mtcue` step imports torch and fairseq: seconds), builds every model of a
# config, loads a COMET model (unbabel-comet and Lightning: seconds to import, the MiniLM encoder to load) or
# measures the synthetic corpus's statistics on its thousand-document training corpora (TRAIN_DOCS, seconds per
# pair): found here from the names it (or a fixture or helper of its, at any depth) uses, so a new one needs no
# marker.
SLOW_NAMES = frozenset({"dry_run", "SNAKEMAKE", "rehearse", "_build_dag", "local_slurm", "subprocess", "count_config",
                        "comet_stand_in", "TRAIN_DOCS", "plan_submissions"})


def _uses_slow_name(fn, seen: set) -> bool:
    code = getattr(fn, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    codes, names = [code], set()
    while codes:  # the function and every function, lambda or comprehension inside it
        c = codes.pop()
        names.update(c.co_names)
        codes.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    if names & SLOW_NAMES:
        return True
    scope = getattr(fn, "__globals__", {})
    return any(_uses_slow_name(scope[n], seen) for n in names
               if callable(scope.get(n)) and getattr(scope[n], "__module__", "").startswith(("test_", "conftest")))


def pytest_collection_modifyitems(config, items):
    for item in items:
        fixtures = [d[-1].func for d in item._fixtureinfo.name2fixturedefs.values()]
        seen: set = set()
        if any(_uses_slow_name(fn, seen) for fn in [getattr(item, "obj", None), *fixtures]):
            item.add_marker(pytest.mark.slow)
