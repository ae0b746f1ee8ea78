"""Each paper is named by its short citation (Voita et al. (2018), Mąka et al. (2024), ...), never "the seed":
"seed" is the training seed (`seed`, `experiments.*.seeds`, `seed_of`, `Run.seed`), and a paper cited by a
file of its text (`seed ....txt`) points outside the repository."""
import re

import pytest

from conftest import REPO

SCANNED = ("src", "workflow", "docs", "config", "README.md", "Snakefile")
PAPER_AS_SEED = re.compile(
    r"\bthe\s+(?!seeds\s+of\b)seed(s|'s|s')?(?!\w)"   # "the seed('s)"; "the seeds of a fine-tuning" are its runs
    r"|\bseed\s+papers?\b"
    r"|\b[a-z]+-[a-z]+\s+seed\b"                     # "the sequence-shortening seed", "the Korean-English seed"
    r"|\bseeds?\s+[\w./-]+\.txt\b|\bseeds/",         # a paper's text file, a folder of them
    re.IGNORECASE)


def paper_as_seed(text: str) -> list[str]:
    """The phrases of `text` that call a paper a seed, line breaks (and a comment's `#`) read as spaces."""
    return [m.group(0) for m in PAPER_AS_SEED.finditer(re.sub(r"\s*\n[\s#]*", " ", text))]


def scanned_files():
    for name in SCANNED:
        path = REPO / name
        yield from ([path] if path.is_file() else
                    sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts))


@pytest.mark.parametrize("text", [
    "ours beside the seed's.", "(the seed: CoreNLP on OpenSubtitles)", "the sequence-shortening seed's Figure 4",
    "Jeong et al.'s style control (the Korean-English seed)", "(seed sequence_shortening_context_mt.txt, Tables 2-3)",
    "from BASE (the\n  # seed trains from scratch)", "the seed paper", "*Compared with the seeds:*",
    "as printed in the papers in `../../seeds/`"])
def test_the_check_itself_sees_a_paper_called_seed(text):
    assert paper_as_seed(text)


@pytest.mark.parametrize("text", [
    "mean ± sd over the seeds of a repeated fine-tuning", "a seeded COMET regression model", "the seeded runs",
    "sampled with the study's seed", "training seed `seed` + k - 1", "a one-seed study", "its first seed's",
    "the sampling `seed`", "`snakemake --config seed=2`", "one run (seed 42)"])
def test_the_check_lets_training_seeds_be(text):
    assert paper_as_seed(text) == []


def test_no_paper_is_called_the_seed():
    found = {}
    for path in scanned_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:   # binary data files
            continue
        if phrases := paper_as_seed(text):
            found[str(path.relative_to(REPO))] = phrases
    assert found == {}, "name the paper by its short citation (Voita et al. (2018), ...), not 'seed'"
