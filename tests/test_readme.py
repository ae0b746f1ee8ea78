"""The README's results are rendered from records and say which run they come from (issue 13.9)."""
import hashlib
from types import SimpleNamespace

import pytest

from conftest import REPO
from mtcue.cli import main
from mtcue.evaluation.score import bleu
from mtcue.records import write_record
from mtcue.reporting.readme import BEGIN, END, _bounds, block_of, hand_edit, render, render_headlines
from mtcue.reporting.results import Run

SIG = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
REFS = ["did you see the letter on the table", "good evening sir how are you today",
        "the cat sat on the mat with a hat", "we should leave before the rain starts"]
WORSE = ["did you see a letter on the table", "good evening sir how are you",
         "the cat sat on a mat with the hat", "we must leave before the rain"]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
ARCH = {"embed_dim": 64, "heads": 4, "encoder_layers": 2, "decoder_layers": 2, "encoder_ffn_dim": 128,
        "decoder_ffn_dim": 128}


def score(model, direction, hyps, accuracy):
    return {"kind": "score", "model": model, "direction": direction, "split": "test", "study": "demo",
            **bleu(hyps, REFS), "bleu_signature": SIG, "n_segments": len(hyps),
            "phenomena": {"all": {"correct": 1, "incorrect": 1, "ignored": 0, "accuracy": accuracy}},
            "hyp_sha256": hashlib.sha256("\n".join(hyps).encode()).hexdigest(), "config_hash": "h",
            "git_commit": COMMIT}


def train(model, direction, seed, walls, best, total, init_from=None):
    arch = {**ARCH, "context_layers": 2} if model == "mtcue" else ARCH
    return {"kind": "train", "model": model, "direction": direction, "study": "demo",
            "spec": {"model": model, "type": model, "init_from": init_from, "arch": arch, "seed": seed},
            "params": {"total": total, "trainable": total}, "best_epoch": best, "best_valid_loss": 3.0,
            "epochs": [{"epoch": i + 1, "train_loss": 4.0, "valid_loss": 3.0, "wall_s": w} for i, w in enumerate(walls)],
            "config_hash": "h", "git_commit": COMMIT + "-dirty", "device": "cpu"}


def write_run(folder, seed=1, mtcue_hyps=REFS):
    """base and mtcue in en-de and de-en; English marks no phenomenon (accuracy None in de-en)."""
    cells = {("base", "en-de"): (WORSE, 0.5), ("mtcue", "en-de"): (mtcue_hyps, 0.75),
             ("base", "de-en"): (WORSE, None), ("mtcue", "de-en"): (REFS, None)}
    for (model, direction), (hyps, accuracy) in cells.items():
        write_record(folder / "score" / direction / f"{model}.test.json", score(model, direction, hyps, accuracy))
    for direction, walls in (("en-de", (2.0, 4.0)), ("de-en", (3.0, 3.0))):
        write_record(folder / "train" / direction / "base.json", train("base", direction, seed, walls, 2, 229_000))
        write_record(folder / "train" / direction / "mtcue.json",
                     train("mtcue", direction, seed, (5.0,), 1 if direction == "en-de" else 3, 354_000, "base"))
    return folder


def test_the_block_names_its_run_and_holds_the_records_numbers(tmp_path):
    text = render([Run.load(write_run(tmp_path / "records"))])
    lines = text.splitlines()
    assert lines[1].startswith("From one run of the study: study `demo`, commit `0123456789ab`, `0123456789ab-dirty`, "
                               "seed 1, records of ")
    worse, same = bleu(WORSE, REFS)["bleu"], 100.0
    # MTCUE translates every sentence exactly: best in both directions; BASE is worse in every segment, so
    # every bootstrap resample favours MTCUE (p = 0): not marked as indistinguishable.
    assert f"| BASE | {worse:.2f} | {worse:.2f} | {worse:.2f} |" in lines
    assert f"| MTCUE | **{same:.2f}** | **{same:.2f}** | {same:.2f} |" in lines
    # Phenomena: en-de only (de-en has no labels), 100 x accuracy.
    assert "| BASE | 50.0 | 50.0 |" in lines and "| MTCUE | 75.0 | 75.0 |" in lines
    # Table 3: BASE s/epoch = mean over directions of each direction's mean (3.0, 3.0), sd 0; epochs to best 2 ± 0;
    # MTCUE best epochs 1 and 3: 2.0 ± 1.4 (sample sd sqrt(2)).
    assert "| BASE | 229k | -/2/2 | 3.0 ± 0.0 | 2.0 ± 0.0 |" in lines
    assert "| MTCUE | 354k | 2/2/2 | 5.0 ± 0.0 | 2.0 ± 1.4 (fine-tuning) |" in lines


def test_the_spread_between_runs_of_two_seeds(tmp_path):
    first = Run.load(write_run(tmp_path / "seed1"))
    second = Run.load(write_run(tmp_path / "seed2", seed=2, mtcue_hyps=WORSE))   # MTCUE en-de as bad as BASE
    lines = render([first, second]).splitlines()
    spread = lines[lines.index(next(l for l in lines if l.startswith("Spread between 2 runs"))):]
    assert "seed 1" in spread[0] and "seed 2" in spread[0]
    worse = bleu(WORSE, REFS)["bleu"]
    # MTCUE: en-de 100 vs worse, de-en 100 vs 100: ranges (100 - worse, 0), mean (100 - worse) / 2, max 100 - worse.
    assert (f"| MTCUE | 100.00 / {(100 + worse) / 2:.2f} | {(100 - worse) / 2:.2f} / {100 - worse:.2f} "
            f"| 75.0 / 75.0 | 0.0 / 0.0 |") in spread
    assert f"| BASE | {worse:.2f} / {worse:.2f} | 0.00 / 0.00 | 50.0 / 50.0 | 0.0 / 0.0 |" in spread


def test_the_readme_is_updated_between_its_markers_and_a_hand_edit_shows(tmp_path, caplog):
    records = write_run(tmp_path / "records")
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nBefore.\n{BEGIN}\nhand-copied 96.23\n{END}\nAfter.\n")
    args = ["readme-results", "--records", str(records), "--readme", str(readme)]
    assert main([*args, "--check"]) == 1 and "results are not those of" in caplog.text
    assert main(args) == 0
    text = readme.read_text()
    assert text.startswith(f"# Title\n\nBefore.\n{BEGIN}\n<!-- rendered from records") and text.endswith(f"{END}\nAfter.\n")
    assert "96.23" not in text and hand_edit(block_of(text)) is None
    assert main([*args, "--check"]) == 0
    edited = text.replace("| MTCUE | **100.00**", "| MTCUE | **99.00**")
    assert hand_edit(block_of(edited)) == "it was edited after it was rendered (checksum mismatch)"
    readme.write_text("no markers\n")
    assert main(args) == 1 and f"{readme}: needs one {BEGIN} line" in caplog.text


def test_the_readme_gets_the_headlines_and_the_results_page_every_section(tmp_path):
    records = write_run(tmp_path / "records")
    (tmp_path / "docs").mkdir()
    readme, page = tmp_path / "README.md", tmp_path / "docs" / "results.md"
    for path in (readme, page):
        path.write_text(f"# {path.stem}\n\n{BEGIN}\n{END}\n")
    args = ["readme-results", "--records", str(records), "--readme", str(readme), "--results-page", str(page)]
    assert main(args) == 0 and main([*args, "--check"]) == 0
    headlines, everything = block_of(readme.read_text()), block_of(page.read_text())
    assert hand_edit(headlines) is None and hand_edit(everything) is None
    assert "BLEU on the test split" in headlines and "Accuracy on the context-determined phenomena" not in headlines
    assert "Accuracy on the context-determined phenomena" in everything
    # each headline section is the page's, word for word: the README condenses, it never differs; the run is
    # named on both, its commit on the page only
    for section in headlines.split("\n", 2)[2].split("\n\n"):
        assert section.strip() in everything
    assert "commit `" in everything and "commit `" not in headlines
    run = Run.load(records)
    assert everything == render([run]) and headlines == render_headlines([run])


@pytest.mark.parametrize("page", ["README.md", "docs/results.md"])
def test_the_repository_readme_and_results_page_hold_rendered_results(page):
    block = block_of((REPO / page).read_text(encoding="utf-8"), page)
    problem = hand_edit(block)
    if problem == "it was not rendered from records (no stamp line)":
        pytest.skip(f"{page}'s results are not yet rendered from a run's records: run `make readme` after `make demo`")
    assert problem is None, f"{page}'s results block: {problem}; rerun `make readme` instead of editing it"


def test_the_readmes_headlines_are_sections_of_the_results_page():
    headlines = block_of((REPO / "README.md").read_text(encoding="utf-8"), "README.md")
    everything = block_of((REPO / "docs" / "results.md").read_text(encoding="utf-8"), "docs/results.md")
    # the same run; the README leaves the commit to the results page
    run_line = re.sub(r"commit `[^`]+`(, `[^`]+`)*, ", "", everything.split("\n", 2)[1])
    assert headlines.split("\n", 2)[1] == f"{run_line.removesuffix('.')} (its commit: [Results](docs/results.md))."
    for section in headlines.split("\n", 2)[2].split("\n\n"):
        assert section.strip() in everything


def eamt22(model, accuracy, bleu_score, samples=0, fewshot=None, columns=("doc0", "cue1")):
    return {"kind": "eamt22", "model": model, "direction": "en-de", "split": "test", "study": "demo",
            "accuracy_mean": accuracy, "bleu": bleu_score, "supervised_samples": samples, "fewshot": fewshot,
            "context_columns": list(columns), "detector": "labels", "attributes": {}, "bleu_signature": SIG,
            "n_segments": 4, "hyp_sha256": "0" * 64, "config_hash": "h", "git_commit": COMMIT}


def test_fewshot_points_follow_the_tables_and_variants_stay_out_of_table3(tmp_path):
    folder = write_run(tmp_path / "records")
    variant = {"parent": "mtcue", "setting": "5", "samples": 5}
    for record in (eamt22("mtcue", 0.5, 80.0), eamt22("base", None, 70.0, columns=()),
                   eamt22("mtcue_fewshot_5", 0.875, 81.256, samples=60, fewshot=variant)):
        write_record(folder / "eamt22" / "en-de" / f"{record['model']}.json", record)
    write_record(folder / "train" / "en-de" / "mtcue_fewshot_5.json", train("mtcue_fewshot_5", "en-de", 1, (9.0,), 1, 354_000))
    lines = render([Run.load(folder)]).splitlines()
    assert "| model | zero-shot | 5 (60 lines) |" in lines
    assert "| MTCUE | 50.0 / 80.00 | 87.5 / 81.26 |" in lines
    assert any("BASE without context: n/a / 70.00" in line for line in lines)
    # The variant is no row of Table 3.
    assert not [line for line in lines if line.startswith("| MTCUE-FEWSHOT")]
    assert "| MTCUE | 354k | 2/2/2 | 5.0 ± 0.0 | 2.0 ± 1.4 (fine-tuning) |" in lines


def test_records_of_another_split_stay_out(tmp_path):
    """Table 6's ablation models are scored on the validation split: not rows of Tables 3 and 4."""
    folder = write_run(tmp_path / "records")
    write_record(folder / "score" / "en-de" / "mtcue_no_doc.valid.json",
                 {**score("mtcue_no_doc", "en-de", WORSE, 0.5), "split": "valid"})
    write_record(folder / "train" / "en-de" / "mtcue_no_doc.json", train("mtcue_no_doc", "en-de", 1, (7.0,), 1, 354_000))
    lines = render([Run.load(folder)]).splitlines()
    assert not [line for line in lines if line.startswith("| MTCUE-NO-DOC")]
    assert render([Run.load(folder)]) == render([Run.load(write_run(tmp_path / "plain"))]).replace(
        str(tmp_path / "plain"), str(tmp_path / "records"))


def test_table5_points_are_rendered_per_prompt_kind_with_claims_worded_by_their_intervals(tmp_path):
    from test_formality import MTCUE_BEST, MTCUE_PROMPTS, formality_record

    folder = write_run(tmp_path / "records")
    # 40 test lines: MTCUE's in_distribution prompts are all right, its unseen ones as BASE (half)
    prompts = {i: (a, k, ("FFFF-" if a == "formal" else "IIII-") * 10 if k == "in_distribution" else "FIFI-" * 10)
               for i, (a, k, _labels) in MTCUE_PROMPTS.items()}
    records = {"mtcue": formality_record("mtcue", "en-de", prompts, MTCUE_BEST),
               "base": formality_record("base", "en-de", {"none": (None, None, "FIFI-" * 10)}),
               "mtcue_discrete": formality_record("mtcue_discrete", "en-de", prompts, MTCUE_BEST)}  # an ablation
    for model, record in records.items():
        write_record(folder / "formality" / "en-de" / f"{model}.json", {**record, "git_commit": COMMIT})
    lines = render([Run.load(folder)]).splitlines()
    assert any(line.startswith("IWSLT22 zero-shot formality") and "in_distribution 2 + 1; unseen 1 + 1" in line
               and "chosen on the valid split" in line for line in lines)
    assert "| MTCUE | in_distribution | 100.0 / 100.0 (100.0 [100.0, 100.0]) | 100.0 / 100.0 |" in lines
    assert "| BASE | unseen | 50.0 / 50.0 (50.0 [50.0, 50.0]) | 50.0 / 50.0 |" in lines
    claims = [line for line in lines if line.startswith("- en-de")]
    assert claims == [
        "- en-de, in_distribution prompts, MTCUE's average above (points, paired 95% interval): BASE +50.0 "
        "[+50.0, +50.0] **reproduced**.",
        "- en-de, unseen prompts, MTCUE's average above (points, paired 95% interval): BASE +0.0 [+0.0, +0.0] "
        "**not settled by the demo**."]
    assert not [line for line in lines if "MTCUE-DISCRETE" in line]


# ---- the README and docs/: links and quoted commands (issue 23) ------------------------------

import argparse
import functools
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
INLINE = re.compile(r"`([^`]+)`")
CHECKED = ("make", "mtcue", "snakemake")
# Options whose values are Snakemake targets (rules or files) too.
TARGET_OPTIONS = {"--forcerun", "-R", "--until", "-U", "--omit-from", "-O", "--allowed-rules"}


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text of links and code, lower case, punctuation dropped
    (letters, digits, `_`, `-` and spaces kept), spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor in a Markdown text (a repeated heading gets -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", text).splitlines():
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(1))
            out.add(base if base not in seen else f"{base}-{seen[base]}")
            seen[base] = seen.get(base, 0) + 1
    return out


def link_problems(page: Path, text: str) -> list[str]:
    """Relative links of `page` (outside code blocks) that name no file, or no heading of it."""
    problems = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            problems.append(f"{page.name}: link {target}: no file {path}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            problems.append(f"{page.name}: link {target}: {file.name} has no heading #{anchor}")
    return problems


def quoted_commands(text: str) -> list[str]:
    """Command lines quoted in a Markdown text: each line of a code block (`\\` continuations joined)
    and each inline code span, split at `|`, `&&`, `||` and `;`."""
    spans = []
    for block in FENCE.findall(text):
        spans += block.replace("\\\n", " ").splitlines()
    spans += INLINE.findall(FENCE.sub("", text))
    commands = []
    for span in spans:
        try:
            tokens = shlex.split(span.replace("\n", " "), comments=True)
        except ValueError:  # an unbalanced quote: not a command line
            continue
        command: list[str] = []
        for token in [*tokens, "&&"]:
            if token in ("|", "&&", "||", ";"):
                commands.append(command)
                command = []
            else:
                command.append(token)
    return list(_commands_of(commands))


def _commands_of(segments: list[list[str]]) -> Iterator[list[str]]:
    for tokens in segments:
        while tokens and (re.match(r"[A-Za-z_][A-Za-z0-9_]*=", tokens[0]) or tokens[0] in ("time", "/usr/bin/time")):
            tokens = tokens[1:]
        if tokens and Path(tokens[0]).name in CHECKED:
            # `[--option value]` marks an optional part; `...` an elided rest.
            yield [Path(tokens[0]).name, *(t.strip("[]") for t in tokens[1:] if t.strip("[]") not in ("", "..."))]


def parse(tokens: list[str], parser: argparse.ArgumentParser) -> tuple[list[tuple[str, list[str]]], list[str], list[str]]:
    """(options with their values, positional arguments, unknown options) of `tokens` by the parser's
    options and their number of values."""
    actions = {o: a for a in parser._actions for o in a.option_strings}
    options, positionals, unknown = [], [], []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("-") or token == "-":
            positionals.append(token)
            continue
        name, eq, value = token.partition("=")
        action = actions.get(name)
        if action is None:  # its values, if any, are no positional arguments
            unknown.append(name)
            while not eq and i < len(tokens) and not tokens[i].startswith("-"):
                i += 1
            continue
        values = [value] if eq else []
        nargs = action.nargs
        if not eq and nargs != 0:
            if nargs in (None, "?") or isinstance(nargs, int):
                count = 1 if nargs in (None, "?") else nargs
                while count and i < len(tokens) and not (tokens[i].startswith("-") and nargs == "?"):
                    values.append(tokens[i])
                    i, count = i + 1, count - 1
            else:  # "*", "+": every following argument up to the next option
                while i < len(tokens) and not tokens[i].startswith("-"):
                    values.append(tokens[i])
                    i += 1
        options.append((name, values))
    return options, positionals, unknown


@functools.cache
def mtcue_steps() -> dict[str, argparse.ArgumentParser]:
    from mtcue.cli import _parser

    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@functools.cache
def snakemake_parser() -> argparse.ArgumentParser:
    """The parser behind `snakemake --help` (with the installed executor plugins' options)."""
    from snakemake.cli import get_argument_parser

    return get_argument_parser()


@functools.cache
def snakemake_rules() -> tuple:
    """The workflow's rules under the embedded default and under the paper's config (which adds the paper
    data's rules)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, Quietness, ResourceSettings

    rules = {}
    for config in ("config.yaml", "paper.yaml"):
        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
            workflow = api.workflow(ResourceSettings(cores=1), ConfigSettings(configfiles=[REPO / "config" / config]),
                                    snakefile=REPO / "Snakefile", workdir=REPO)._workflow
            for rule in workflow.rules:
                rules.setdefault(rule.name, rule)
    return tuple(rules.values())


def make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return {t for t in re.findall(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?!=)", text, re.M)}


def snakemake_target_problem(target: str) -> str | None:
    rules = snakemake_rules()
    if any(r.name == target for r in rules):
        return None
    # A shell glob stands for any direction or model; ask with one.
    path = target.replace("*", "en-de")
    if "/" in path or "." in path:
        if any(r.is_producer(path) for r in rules):
            return None
        return f"no rule makes {target}"
    return f"no rule {target}"


def command_problems(command: list[str]) -> list[str]:
    """What in a quoted `make`/`mtcue`/`snakemake` command names no target, step, rule or option."""
    program, args = command[0], command[1:]
    said = " ".join(command)
    problems = []
    if program == "make":
        for arg in args:
            if "=" not in arg and not arg.startswith("-") and arg not in make_targets():
                problems.append(f"`{said}`: no make target {arg}")
    elif program == "mtcue":
        if not args or "<" in args[0]:  # `mtcue`, `mtcue <step>`
            return []
        step, rest = args[0], args[1:]
        parser = mtcue_steps().get(step)
        if parser is None:
            return [f"`{said}`: no mtcue step {step}"]
        _, positionals, unknown = parse(rest, parser)
        problems += [f"`{said}`: mtcue {step} has no option {o}" for o in unknown]
        if positionals and not [a for a in parser._actions if not a.option_strings]:
            problems.append(f"`{said}`: mtcue {step} takes no argument {positionals[0]}")
    else:
        options, targets, unknown = parse(args, snakemake_parser())
        problems += [f"`{said}`: snakemake has no option {o}" for o in unknown]
        for name, values in options:
            if name in TARGET_OPTIONS:
                targets += values
            elif name == "--set-resources":
                targets += [v.split(":")[0] for v in values]
            elif name in ("--configfile", "--configfiles", "--profile", "--snakefile", "-s"):
                for value in values:
                    local = not value.startswith(("..", "/", "~", "$"))
                    where = [REPO / value] + ([REPO / "workflow" / "profiles" / value] if name == "--profile" else [])
                    if local and not any(p.exists() for p in where):
                        problems.append(f"`{said}`: {name} {value}: no such file in the repository")
        for target in targets:
            if not re.search(r"[<{]", target) and (problem := snakemake_target_problem(target)):
                problems.append(f"`{said}`: {problem}")
    return problems


def page_problems(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    problems = link_problems(page, text)
    for command in quoted_commands(text):
        problems += [f"{page.name}: {p}" for p in command_problems(command)]
    return problems


def test_every_link_and_quoted_command_of_the_readme_and_docs_exists():
    """Every relative link of README.md and docs/*.md names a file (and a heading, for `#anchor`), and every
    `make`, `mtcue` and `snakemake` command they quote names a make target, an mtcue step and its options, a
    snakemake option and a rule or a file a rule makes."""
    assert len(PAGES) > 2
    problems = [p for page in PAGES for p in page_problems(page)]
    assert problems == []


def test_the_readme_links_its_docs_and_the_deviations():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    linked = {Path(t.partition("#")[0]).name for t in LINK.findall(readme) if t.startswith("docs/")}
    assert linked >= {p.name for p in PAGES[1:]}
    assert "[Deviations from the paper](docs/deviations.md)" in readme and "deviation" in readme
    # a front page: the hand-written part short, the rendered headlines beside it (every section: docs/results.md)
    begin, end = _bounds(readme, "README.md")
    assert len((readme[:begin] + readme[end:]).splitlines()) <= 190 and len(readme.splitlines()) <= 300
    assert "[Results](docs/results.md)" in readme
    assert ["make", "demo"] in quoted_commands(readme) and ["make", "test"] in quoted_commands(readme)


def test_the_checks_catch_broken_links_and_commands(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## A `code` heading: yes\n")
    page = tmp_path / "README.md"
    page.write_text("# T\n\n[ok](docs/other.md#a-code-heading-yes) [gone](docs/gone.md) "
                    "[bad anchor](docs/other.md#nope) [self](#t) [web](https://example.org/x)\n\n"
                    "```bash\nmake demo\nmake nosuchtarget\n.venv/bin/mtcue translate-text --model-dir M \\\n"
                    "    --no-such-option x\n```\n\n`mtcue nosuchstep`, `mtcue <step>`, "
                    "`snakemake --cores 2 table4_quality`, `snakemake --no-such-flag`, `snakemake no_such_rule`, "
                    "`snakemake --cores 2 results/tables/nothing.md`, `time snakemake results/models/*/mtcue/checkpoint_best.pt`, "
                    "`cd x && snakemake --set-resources nosuch:slurm_partition=a`, `mtcue score-formality --hyp H [--no-spaces]`\n")
    text = page.read_text()
    assert link_problems(page, text) == [
        "README.md: link docs/gone.md: no file docs/gone.md",
        "README.md: link docs/other.md#nope: other.md has no heading #nope"]
    problems = [p for c in quoted_commands(text) for p in command_problems(c)]
    assert problems == [
        "`make nosuchtarget`: no make target nosuchtarget",
        "`mtcue translate-text --model-dir M --no-such-option x`: mtcue translate-text has no option --no-such-option",
        "`mtcue nosuchstep`: no mtcue step nosuchstep",
        "`snakemake --no-such-flag`: snakemake has no option --no-such-flag",
        "`snakemake no_such_rule`: no rule no_such_rule",
        "`snakemake --cores 2 results/tables/nothing.md`: no rule makes results/tables/nothing.md",
        "`snakemake --set-resources nosuch:slurm_partition=a`: no rule nosuch"]


# ---- claims worded as the numbers allow (issue 24, "Spread") ------------------------------------

def test_a_claim_is_reproduced_only_beyond_its_spread():
    from mtcue.reporting.verdicts import OPPOSITE, REPRODUCED, UNSETTLED, verdict

    nan = float("nan")
    assert verdict(2.0, 1.0) == REPRODUCED
    assert verdict(0.5, 1.0) == UNSETTLED            # within one sd of the difference
    assert verdict(-2.0, 1.0) == OPPOSITE
    assert verdict(2.0, nan) == UNSETTLED             # one run each: no spread measured
    assert verdict(2.0, 0.5, (-0.1, 4.0)) == UNSETTLED   # beyond the sd, but the interval holds 0
    assert verdict(2.0, nan, (0.5, 3.5)) == REPRODUCED   # one run (zero-shot): the interval alone
    assert verdict(-2.0, 0.5, (-3.5, -0.5)) == OPPOSITE


def test_table6_and_figure4_claims_are_rendered_with_their_numbers(tmp_path):
    import pandas as pd

    folder = write_run(tmp_path / "results" / "records")
    (tmp_path / "results" / "tables").mkdir()
    (tmp_path / "results" / "figures").mkdir()
    # Full MTCUE 30.0 ± 0.3 (3 runs); no metadata 28.0 ± 0.4: 2.0 > sqrt(0.3² + 0.4²) = 0.5; no QK-norm 29.6 ± 0.4:
    # 0.4 < 0.5; BASE one run 29.0: 1.0 > 0.3 (the full model's sd alone). The paper: 46.89 - 45.23 = +1.66.
    pd.DataFrame({"ablation": ["Full MTCUE", "no metadata", "no QK-norm", "no context (non-contextual Transformer)"],
                  "model": ["mtcue", "mtcue_no_metadata", "mtcue_no_qk_norm", "base"], "n_seeds": [3, 3, 3, 1],
                  "en-de BLEU": [30.0, 28.0, 29.6, 29.0], "en-de BLEU sd": [0.3, 0.4, 0.4, None],
                  "paper COMET en-de": [46.89, 45.23, None, 41.22]}).to_csv(
        tmp_path / "results" / "tables" / "table6_ablation.csv", index=False)
    # setting 5: +10 in [4, 16], sd 2 and 2: 10 > 2.83; setting 1: +3 in [-1, 7]: the interval holds 0.
    points = [("mtcue", "1", 60.0, 2.0, "tagging", 3.0, -1.0, 7.0), ("tagging", "1", 57.0, 2.0, "", None, None, None),
              ("mtcue", "5", 80.0, 2.0, "tagging", 10.0, 4.0, 16.0), ("tagging", "5", 70.0, 2.0, "", None, None, None)]
    pd.DataFrame([{"direction": "en-pl", "model": m, "setting": s, "accuracy_mean": a, "sd": sd, "n_seeds": 3,
                   "compared_with": c, "difference": d, "ci_low": lo, "ci_high": hi, "source": "ours"}
                  for m, s, a, sd, c, d, lo, hi in points]).to_csv(
        tmp_path / "results" / "figures" / "figure4_eamt22_fewshot.csv", index=False)
    lines = render([Run.load(folder)]).splitlines()
    assert "| ablation | runs | en-de BLEU | paper COMET en-de full − row |" in lines
    assert "| no metadata | 3 | +2.00 ± 0.50: reproduced | +1.66 |" in lines
    assert "| no QK-norm | 3 | +0.40 ± 0.50: not settled by the demo | n/a |" in lines
    assert "| no context (non-contextual Transformer) | 1 | +1.00 ± 0.30: reproduced | +5.67 |" in lines
    assert "| en-pl | 5 | 3 | +10.00 | [+4.00, +16.00] | 2.83 | reproduced |" in lines
    assert "| en-pl | 1 | 3 | +3.00 | [-1.00, +7.00] | 2.83 | not settled by the demo |" in lines


def test_a_seeded_fewshot_setting_shows_the_mean_and_sd_of_its_runs(tmp_path):
    folder = write_run(tmp_path / "records")
    variant = {"parent": "mtcue", "setting": "5", "samples": 5}
    for record in (eamt22("mtcue", 0.5, 80.0), eamt22("mtcue_fewshot_5", 0.9, 81.0, samples=60, fewshot=variant),
                   eamt22("mtcue_fewshot_5_seed2", 0.7, 79.0, samples=60, fewshot=variant),
                   {**eamt22("mtcue_no_doc", 0.1, 10.0), "split": "valid"}):   # Table 6's: not Figure 4's
        write_record(folder / "eamt22" / "en-de" / f"{record['model']}.{record['split']}.json", record)
    lines = render([Run.load(folder)]).splitlines()
    # (90 + 70) / 2 = 80, sd 20 / sqrt(2) = 14.1; BLEU 80.00 ± 1.41
    assert "| MTCUE | 50.0 / 80.00 | 80.0 ± 14.1 / 80.00 ± 1.41 |" in lines
    assert not [line for line in lines if "10.00" in line]


def test_contrastive_and_voita2018_sections_and_systems_scored_in_some_directions_stay_out_of_table4(tmp_path):
    import pandas as pd

    folder = write_run(tmp_path / "results" / "records")
    # CONCAT is scored in en-de only (Voita et al.'s directions): not a row of the BLEU table.
    write_record(folder / "score" / "en-de" / "concat.test.json", score("concat", "en-de", REFS, 0.6))
    (tmp_path / "results" / "tables").mkdir()
    rows = [("en-de", "base", "all", 0.5), ("en-de", "base", "phenomenon=pronoun", 0.25),
            ("en-de", "mtcue", "all", 0.75), ("en-de", "mtcue", "phenomenon=pronoun", 0.5),
            ("en-de", "mtcue", "distance=2", 1.0)]
    pd.DataFrame([{"direction": d, "model": m, "suite": "synthetic", "group": g, "accuracy": a, "n": 8, "ties": 0,
                   "source": "this study"} for d, m, g, a in rows]
                 + [{"direction": "en-de", "model": "sentence-level", "suite": "contrapro", "group": "all",
                     "accuracy": 0.4367, "n": None, "ties": None, "source": "shortening paper"}]).to_csv(
        tmp_path / "results" / "tables" / "contrastive.csv", index=False)
    pd.DataFrame([{"table": "bleu", "direction": d, "row": r, "metric": "bleu", "value": v}
                  for d, r, v in (("en-ru", "baseline", 76.9), ("en-ru", "context-aware", 77.51),
                                  ("paper en-ru", "baseline", 29.46), ("paper en-ru", "context-aware", 30.14))]
                 + [{"table": "attention_any_nouns", "direction": "en-ru", "row": "all", "metric": m, "value": v}
                    for m, v in (("n", 42), ("attention", 31.0), ("first", 100.0))]).to_csv(
        tmp_path / "results" / "tables" / "voita2018.csv", index=False)
    lines = render([Run.load(folder)]).splitlines()
    assert not any(line.startswith("| CONCAT |") for line in lines)
    assert "| BASE | 50.0 / 25.0 |" in lines and "| MTCUE | 75.0 / 50.0 |" in lines
    assert "| model | en-de all / pronoun |" in lines
    assert "| baseline | 76.90 | 29.46 |" in lines and "| context-aware | 77.51 | 30.14 |" in lines
    assert "| en-ru, every context (Table 6) | 42 | 31 | 100 |" in lines


def test_contrastive_differences_and_context_usage_sections(tmp_path):
    import pandas as pd

    folder = write_run(tmp_path / "results" / "records")
    (tmp_path / "results" / "tables").mkdir()
    rows = [("base", "all", 0.5, None), ("base", "phenomenon=pronoun", 0.25, None),
            ("mtcue", "all", 0.75, (0.25, 0.05, 0.45)), ("mtcue", "phenomenon=pronoun", 0.5, (0.25, -0.1, 0.6))]
    pd.DataFrame([{"direction": "en-de", "model": m, "suite": "synthetic", "group": g, "accuracy": a, "n": 8,
                   "ties": 0, "vs_base": d and d[0], "vs_base_low": d and d[1], "vs_base_high": d and d[2],
                   "source": "this study"} for m, g, a, d in rows]).to_csv(
        tmp_path / "results" / "tables" / "contrastive.csv", index=False)
    pd.DataFrame([{"direction": "en-de", "model": m, "split": "test", "group": g, "cxmi": c, "reads_context": r}
                  for m, g, c, r in (("base", "all", 0.0, "no"), ("mtcue", "all", 0.0123, "yes"),
                                     ("concat", "all", -0.2, "yes, to its loss"),
                                     ("mtcue", "phenomenon=pronoun", 0.1, "yes"))]).to_csv(
        tmp_path / "results" / "tables" / "context_usage.csv", index=False)
    lines = render([Run.load(folder)]).splitlines()
    assert "| BASE | 50.0 / 25.0 |" in lines
    assert "| MTCUE | 75.0 (+25.0 [+5.0, +45.0]) / 50.0 (+25.0 [-10.0, +60.0]) |" in lines
    assert "| model | en-de CXMI |" in lines and "| BASE | +0.0000 no |" in lines and "| MTCUE | +0.0123 yes |" in lines
    assert any(line.endswith("Systems that read their context in at least one direction: MTCUE, CONCAT.")
               for line in lines)


def test_the_memory_section_condenses_the_figure(tmp_path):
    import pandas as pd

    folder = write_run(tmp_path / "results" / "records")
    (tmp_path / "results" / "figures").mkdir()
    # CONCAT decoding 5.0 MiB at c=1, 19.0 at c=8: (19 - 5) / 7 = +2.00 per sentence; MTCUE flat.
    rows = [("concat", 1, "decode", 5.0), ("concat", 8, "decode", 19.0), ("concat", 4, "decode", 11.0),
            ("mtcue", 1, "decode", 3.5), ("mtcue", 8, "decode", 3.5)]
    pd.DataFrame([{"model": m, "context_sentences": c, "phase": p, "peak_mib": v} for m, c, p, v in rows]).to_csv(
        tmp_path / "results" / "figures" / "memory_growth.csv", index=False)
    lines = render([Run.load(folder)]).splitlines()
    assert "| model | decode c=1 / c=8 (MiB) | decode MiB per sentence |" in lines
    assert "| CONCAT | 5.0 / 19.0 | +2.00 |" in lines and "| MTCUE | 3.5 / 3.5 | +0.00 |" in lines


def test_the_other_systems_sections_condense_their_csvs():
    import pandas as pd

    from mtcue.experiments.shortening.table import shortening_section
    from mtcue.experiments.side_information.table import side_information_section
    from mtcue.experiments.style.figure import style_section

    side = pd.DataFrame([
        {"table": "bleu", "direction": "en-de", "row": "base", "metric": "bleu", "value": 30.0},
        {"table": "bleu", "direction": "en-de", "row": "output-layer", "metric": "bleu", "value": 31.456},
        {"table": "bleu", "direction": "en-de", "row": "output-layer", "metric": "p_better", "value": 0.01},
        {"table": "bleu", "direction": "en-de", "row": "output-layer", "metric": "p_worse", "value": 0.99},
        {"table": "bleu", "direction": "en-de", "row": "mtl", "metric": "bleu", "value": 29.0},
        {"table": "bleu", "direction": "en-de", "row": "mtl", "metric": "p_better", "value": 0.9},
        {"table": "bleu", "direction": "en-de", "row": "mtl", "metric": "p_worse", "value": 0.2},
        {"table": "claims", "direction": "en-de", "row": "output_layer_best", "metric": "holds", "value": 1.0},
        {"table": "claims", "direction": "en-de", "row": "trg_prefix_h_not_above_base", "metric": "holds", "value": None}])
    lines = side_information_section(SimpleNamespace(side_information=side))
    assert "| output-layer | 31.46+ |" in lines and "| mtl | 29.00 |" in lines and "| base | 30.00 |" in lines
    assert any(line.startswith("- Hoang et al.'s claim \"output-layer") and line.endswith("en-de holds.")
               for line in lines)
    assert not any("si-trg-prefix-h" in line for line in lines)   # a claim with no verdict is not printed
    # a sweep that dips at level 3 does not rise with the level; Table 5 at the extremes beside
    levels = pd.DataFrame([{"direction": "en-de", "model": m, "level": lv, "formal_accuracy": a, "meaning_chrf": 50 + lv}
                           for m, values in (("style_dim", (10, 20, 30, 40, 90)), ("style_token", (10, 60, 50, 70, 80)))
                           for lv, a in zip((1, 2, 3, 4, 5), values)])
    table5 = pd.DataFrame([{"model": "STYLE-DIM (supervised)", "prompt_kind": "unseen", "en-de formal": 90.0,
                            "en-de informal": 90.0, "en-de average": 90.0, "en-de average low": 88.04,
                            "en-de average high": 91.96}, {"model": "MTCUE", "prompt_kind": "unseen"}])
    lines = style_section(SimpleNamespace(style_levels=levels, table5=table5))
    assert ("| en-de, STYLE-DIM | 10.0 / 51.0 | 20.0 / 52.0 | 30.0 / 53.0 | 40.0 / 54.0 | 90.0 / 55.0 | yes | "
            "90.0 / 90.0 (90.0 [88.0, 92.0]) |") in lines
    assert "| en-de, STYLE-TOKEN | 10.0 / 51.0 | 60.0 / 52.0 | 50.0 / 53.0 | 70.0 / 54.0 | 80.0 / 55.0 | no | n/a |" in lines
    short = pd.DataFrame([{"direction": "en-de", "row": r, "metric": m, "source": s, "value": v}
                          for r, m, s, v in (("Grouping (C=1)", "BLEU", "this study", 25.0),
                                             ("Grouping (C=1)", "accuracy", "this study", 60.0),
                                             ("Grouping (C=1)", "pronouns", "this study", 50.0),
                                             ("Grouping (C=1)", "d=2", "this study", 40.0),
                                             ("Grouping (C=1)", "d=1", "this study", 55.0),
                                             ("Grouping (C=1)", "accuracy", "shortening paper (IWSLT17)", 70.0))])
    lines = shortening_section(SimpleNamespace(shortening=short))
    assert "| system | en-de BLEU | en-de all / pronouns % | en-de pronouns d=1/d=2 % |" in lines
    assert "| Grouping (C=1) | 25.00 | 60.0 / 50.0 | 55/40 |" in lines
    none = SimpleNamespace(side_information=None, style_levels=None, table5=None, shortening=None)
    assert side_information_section(none) == style_section(none) == shortening_section(none) == []


# A recorded slice of the demo (en-de BASE and MTCUE: their train, score, COMET and formality records) and the
# blocks `mtcue readme-results` rendered from it, in the README's and the results page's layout.
FIXTURE = REPO / "tests" / "data" / "readme_fixture"
RERENDER = (f"mtcue readme-results --records {FIXTURE.relative_to(REPO)}/records --readme "
            f"{FIXTURE.relative_to(REPO)}/README.md --results-page {FIXTURE.relative_to(REPO)}/results.md")


def test_readme_results_check_passes_on_the_recorded_fixture_and_fails_once_a_number_changes(tmp_path):
    """What CI can check without a demo: the code renders the recorded fixture's records into the blocks committed
    beside them. A change to what the results say, or how, fails here until the fixture is rendered again
    (RERENDER), which is the reminder that the README's and docs/results.md's blocks need `make readme` too."""
    import json
    import shutil
    import subprocess
    import sys

    shutil.copytree(FIXTURE, tmp_path / "fixture")
    check = [str(Path(sys.executable).parent / "mtcue"), "readme-results", "--check", "--records", "records",
             "--readme", "README.md", "--results-page", "results.md"]
    done = subprocess.run(check, cwd=tmp_path / "fixture", capture_output=True, text=True)
    assert done.returncode == 0, f"the fixture's blocks are not what the code renders: run `{RERENDER}`, then " \
        f"`make readme` after a demo\n{done.stderr[-2000:]}"
    score = tmp_path / "fixture" / "records" / "score" / "en-de" / "mtcue.test.json"
    record = json.loads(score.read_text())
    score.write_text(json.dumps({**record, "bleu": record["bleu"] - 1.0}))
    stale = subprocess.run(check, cwd=tmp_path / "fixture", capture_output=True, text=True)
    assert stale.returncode != 0 and "their results are not those of records; run `make readme`" in stale.stderr
