"""The README's results and the results page, rendered from the records of a run of the study, never copied
by hand.

`mtcue readme-results --records results/records --readme README.md --results-page docs/results.md`
(`make readme`) replaces what lies between BEGIN and END in the results page with every section the registered
experiments declare (`Experiment.sections`, functions of `readme_sections` and of the experiments' table and figure
modules: Tables 3 and 4, the phenomena, Table 5, Figure 4, the claims worded by `verdicts`, the contrastive suites
with each model's difference from BASE, the context usage, each other system's table, memory growth) and in the
README with the headlines (Table 4's BLEU, Figure 4's points and one table per other system family), naming the
run they come from (study, commit, seed). Records of further runs (other seeds, or the same seed on another
machine) add a table of the spread between runs to the page. Each block's first line holds a checksum of
the rest, so a hand edit shows (tests/test_readme.py).
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from mtcue.io import atomic_write_text, read_text
from mtcue.plan import EXPERIMENTS
from mtcue.reporting.kit import BOOTSTRAP, Bootstrap
from mtcue.reporting.readme_sections import spread_section
from mtcue.reporting.results import Run

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
STAMP = "<!-- rendered from records by `make readme` (mtcue readme-results); do not edit: sha256 {} -->"
_STAMP = re.compile(r"^<!-- rendered from records .* sha256 ([0-9a-f]{12}) -->\n")


def _sections(run: Run, bootstrap: Bootstrap, headlines: bool) -> list[str]:
    """The registered experiments' sections of the results (`Experiment.sections`) in their places, with the
    headlines only where `headlines`, each after an empty line; those with nothing to show left out."""
    sections = sorted((s for e in EXPERIMENTS.values() for s in e.sections if s.headline or not headlines),
                      key=lambda s: s.place)
    return [line for section in sections if (lines := section.lines(run, bootstrap)) for line in ("", *lines)]


def render(runs: Sequence[Run], bootstrap: Bootstrap = BOOTSTRAP) -> str:
    """The results block (stamp line, then Markdown) for the first run, with the spread over all."""
    first = runs[0]
    body = [f"From one run of the study: {first.describe()}.", *_sections(first, bootstrap, headlines=False)]
    if len(runs) > 1:
        body += ["", *spread_section(runs)]
    return _stamped(body)


def render_headlines(runs: Sequence[Run], bootstrap: Bootstrap = BOOTSTRAP) -> str:
    """The README's block: of the first run, the headline sections (Table 4's BLEU, Figure 4's points and the
    headline table of each other system family), each as `render` writes it (the rest is the results page's)."""
    first = runs[0]
    return _stamped([f"From one run of the study: {first.describe(commit=False)} (its commit: "
                     "[Results](docs/results.md)).", *_sections(first, bootstrap, headlines=True)])


def _stamped(body: list[str]) -> str:
    text = "\n".join(body) + "\n"
    return STAMP.format(_checksum(text)) + "\n" + text


def _checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _bounds(readme: str, where: str) -> tuple[int, int]:
    if readme.count(BEGIN) != 1 or readme.count(END) != 1 or readme.index(BEGIN) > readme.index(END):
        raise ValueError(f"{where}: needs one {BEGIN} line and, after it, one {END} line around the results")
    return readme.index(BEGIN) + len(BEGIN) + 1, readme.index(END)


def block_of(readme: str, where: str = "README") -> str:
    start, end = _bounds(readme, where)
    return readme[start:end]


def hand_edit(block: str) -> str | None:
    """Why the block was not written by `render` as it stands, or None."""
    stamp = _STAMP.match(block)
    if stamp is None:
        return "it was not rendered from records (no stamp line)"
    if stamp.group(1) != _checksum(block[stamp.end():]):
        return "it was edited after it was rendered (checksum mismatch)"
    return None


def update_readme(readme_path: str | Path, runs: Sequence[Run], bootstrap: Bootstrap = BOOTSTRAP,
                  check: bool = False, results_page: str | Path | None = None) -> bool:
    """Write the rendered blocks: every section into `results_page` and the headlines into the README (without
    a results page, every section into the README); with `check`, only report whether they are current.
    Returns True when the files already held these blocks."""
    blocks = {readme_path: render(runs, bootstrap)}
    if results_page is not None:
        blocks = {readme_path: render_headlines(runs, bootstrap), results_page: blocks[readme_path]}
    current = True
    for path, block in blocks.items():
        text = read_text(path)
        start, end = _bounds(text, str(path))
        if text[start:end] != block:
            current = False
            if not check:
                atomic_write_text(path, text[:start] + block + text[end:])
    return current
