"""The README's and docs/translating.md's way to ask for a register (`--cue`) does what they say on the demo's
MTCUE: the demo's own config trained in en-de (BASE, then MTCUE from it; a few minutes on 2 cores), the
documented commands run as written from the study's folder, their German judged by the IWSLT22 scorer
(mtcue.evaluation.formality, the rule Table 5 is scored with)."""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from mtcue.evaluation.formality import FORMAL, INFORMAL, FormalityTestSet

# The IWSLT22 form of a reference per register: [F]...[/F] around the words that show it. One per sentence
# the documented examples translate; a new sentence there needs its pair here.
ANNOTATED = {
    "Did you see the letter?": ("[F]Haben[/F] [F]Sie[/F] den Brief gesehen?",
                                "[F]Hast[/F] [F]du[/F] den Brief gesehen?"),
    "Where were you yesterday?": ("Wo [F]waren[/F] [F]Sie[/F] gestern?", "Wo [F]warst[/F] [F]du[/F] gestern?"),
}
PAGES = ("README.md", "docs/translating.md")
# Every experiment but the models' own, left out: the slice trains BASE and MTCUE of en-de only.
OTHER_EXPERIMENTS = ("fewshot", "ablation", "voita2018", "shortening", "side_information", "style")


def cue_commands(page: str) -> list[str]:
    """The shell commands of `page`'s bash blocks that pass --cue (continuation lines joined)."""
    blocks = re.findall(r"```bash\n(.*?)```", (REPO / page).read_text(encoding="utf-8"), re.S)
    commands = [c.strip() for block in blocks for c in block.replace("\\\n", " ").splitlines()]
    return [c for c in commands if "--cue" in c]


@pytest.fixture(scope="module")
def demo_slice(tmp_path_factory):
    """The demo's en-de BASE and MTCUE, trained from config/config.yaml as `make demo` trains them."""
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["directions"] = ["en-de"]
    cfg["models"] = {m: cfg["models"][m] for m in ("base", "mtcue")}
    cfg["experiments"] = {"quality": {"models": ["base", "mtcue"]}, "formality": cfg["experiments"]["formality"],
                          "memory_growth": {"models": {}}, **{e: {"directions": []} for e in OTHER_EXPERIMENTS}}
    cfg["experiments"]["formality"]["models"] = ["base", "mtcue"]
    workdir = tmp_path_factory.mktemp("demo-slice")
    (workdir / "config").mkdir()
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    run = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--snakefile", str(REPO / "Snakefile"),
                          "--directory", str(workdir), "--cores", "2", "results/models/en-de/mtcue/checkpoint_best.pt"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    return workdir, cfg["experiments"]["formality"]["prompts"]


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_the_documented_cue_gives_the_register_it_names(demo_slice, page, tmp_path):
    workdir, prompts = demo_slice
    commands = cue_commands(page)
    cues = [shlex.split(c.split("#")[0])[-1] for c in commands]
    # the page asks for both registers, with prompts of Table 5
    assert {FORMAL if c in prompts[FORMAL] else INFORMAL if c in prompts[INFORMAL] else c for c in cues} == {
        FORMAL, INFORMAL}, commands
    for command, cue in zip(commands, cues):
        sentences = shlex.split(command)[1].encode().decode("unicode_escape").splitlines()
        formal, informal = tmp_path / "formal.annotated.de", tmp_path / "informal.annotated.de"
        formal.write_text("".join(ANNOTATED[s][0] + "\n" for s in sentences))
        informal.write_text("".join(ANNOTATED[s][1] + "\n" for s in sentences))
        run = subprocess.run(command.replace(".venv/bin/", f"{Path(sys.executable).parent}/"), shell=True,
                             cwd=workdir, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-3000:]
        hyps = run.stdout.splitlines()
        labels = FormalityTestSet.from_references(formal, informal).labels(hyps, command)
        register = FORMAL if cue in prompts[FORMAL] else INFORMAL
        # every line in the register asked for, as the page's comment says (Sie / du)
        assert labels == register[0].upper() * len(sentences), (cue, hyps)
        assert ("with Sie" if register == FORMAL else "with du") in command
