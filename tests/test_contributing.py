"""docs/contributing.md, followed as written: in a scratch copy of the repository, a throwaway model family and a
throwaway experiment are added touching only the files the page names, and the dry run plans their jobs."""
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter

from conftest import REPO, SNAKEMAKE

# Adding a model, step 1: the plugin, here a new family (its folder and __init__.py, so the plugin loads it).
PLUGIN = '''\
"""Model `probe`: CONCAT under another name (tests/test_contributing.py's throwaway family)."""
from fairseq.models import register_model, register_model_architecture

from ..voita.concat_model import ConcatModel, concat_architecture


@register_model("probe")
class ProbeModel(ConcatModel):
    pass


@register_model_architecture("probe", "probe")
def probe_architecture(args):
    concat_architecture(args)
'''

# Adding an experiment, step 1: its plan, registered.
PLAN = '''\
"""The probe experiment (probe.smk): the probe model trained and scored in the experiment's directions."""
from __future__ import annotations

from mtcue.plan.experiments import check_directions
from mtcue.plan.registry import Experiment, Targets, register


def probe_runs(cfg: dict) -> list[tuple[str, str]]:
    exp = cfg["experiments"]["probe"]
    return [(d, m) for d in exp["directions"] for m in exp["models"]]


def targets(cfg: dict) -> Targets:
    runs, split = probe_runs(cfg), cfg["evaluation"]["split"]
    return Targets(records=[f"results/records/score/{d}/{m}.{split}.json" for d, m in runs],
                   tables=[f"results/tables/probe.{ext}" for ext in ("csv", "md", "html")] if runs else [])


def check(cfg: dict) -> None:
    check_directions(cfg, "probe", cfg["experiments"]["probe"]["directions"])


register(Experiment("probe", "the probe", targets, trains=probe_runs, check=check,
                    names=lambda cfg: cfg["experiments"]["probe"]["models"]))
'''

# Adding an experiment, step 3: its rules.
RULES = '''\
# The probe (plan/probe.py): one table of its models' scores.
from mtcue.plan import probe


rule table_probe:
    localrule: True
    input:
        records=probe.targets(config).records,
    output:
        csv="results/tables/probe.csv",
        md="results/tables/probe.md",
        html=report("results/tables/probe.html", caption="../report/table4_quality.rst", category="Tables"),
    log:
        "results/logs/table_probe.log",
    shell:
        "mtcue table --records {input.records:q} --csv {output.csv:q} --md {output.md:q} --html {output.html:q} "
        "2> {log:q}"
'''


def edit(path, old, new):
    text = path.read_text()
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new))


def jobs(repo):
    """The dry run's job count per rule (its job-stats table)."""
    run = subprocess.run([SNAKEMAKE, "--snakefile", str(repo / "Snakefile"), "--directory", str(repo / "work"),
                          "--configfile", str(repo / "config" / "config.yaml"), "-n"], cwd=repo, text=True,
                         capture_output=True, env={**os.environ, "PYTHONPATH": str(repo / "src")})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    stats = re.search(r"Job stats:\n(.*?)\n\n", run.stdout, re.S).group(1)
    return Counter({m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+(\d+)$", stats, re.M)})


def test_a_model_family_and_an_experiment_added_as_the_page_says_are_planned(tmp_path):
    repo = tmp_path / "repo"
    for folder in ("src", "workflow", "config"):
        shutil.copytree(REPO / folder, repo / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(REPO / "Snakefile", repo)
    before = jobs(repo)
    touched = set()

    def touch(relative):
        touched.add(relative)
        return repo / relative

    # -- Adding a model: a family of its own --
    family = touch("src/mtcue/models/plugin/probe")
    family.mkdir()
    touch("src/mtcue/models/plugin/probe/__init__.py").write_text("")
    touch("src/mtcue/models/plugin/probe/probe_model.py").write_text(PLUGIN)
    edit(touch("src/mtcue/study.py"), '"multi_encoder": _SHORTENING,\n}',
         '"multi_encoder": _SHORTENING,\n    "probe": ModelType("probe", "tokens"),\n}')
    schema = touch("src/mtcue/schemas/config.schema.yaml")
    edit(schema, "enum: [base, tagging,", "enum: [base, probe, tagging,")
    edit(touch("config/config.yaml"), "\nmodels:\n", textwrap.dedent("""
        models:
          probe:
            type: probe
            init_from: base
            arch: {embed_dim: 64, heads: 4, encoder_layers: 2, encoder_ffn_dim: 128, decoder_layers: 2, decoder_ffn_dim: 128}
        """))

    # -- Adding an experiment --
    touch("src/mtcue/plan/probe.py").write_text(PLAN)
    edit(touch("src/mtcue/plan/__init__.py"), "memory_growth)", "memory_growth, probe)")
    edit(schema, "\n      memory_growth:\n", textwrap.indent(textwrap.dedent("""
        probe:
          description: The probe (tests/test_contributing.py).
          type: object
          additionalProperties: false
          default: {}
          properties:
            models: {type: array, items: {type: string}, default: [probe]}
            directions: {type: array, items: {type: string}, default: [en-de]}
        """), "      ") + "      memory_growth:\n")
    touch("workflow/rules/probe.smk").write_text(RULES)
    edit(touch("Snakefile"), 'include: "workflow/rules/style.smk"\n',
         'include: "workflow/rules/style.smk"\ninclude: "workflow/rules/probe.smk"\n')

    # The page names every file touched: the model's under "Adding a model", the experiment's under "Adding an
    # experiment" (the schema under both), as the page spells them.
    page = (REPO / "docs" / "contributing.md").read_text()
    section = lambda title: page.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    spelled = {"src/mtcue/models/plugin/probe": "models/plugin/{family}/",
               "src/mtcue/models/plugin/probe/__init__.py": "models/plugin/{family}/__init__.py",
               "src/mtcue/models/plugin/probe/probe_model.py": "models/plugin/{family}/{type}_model.py",
               "src/mtcue/study.py": "src/mtcue/study.py", "config/config.yaml": "config/config.yaml",
               "src/mtcue/schemas/config.schema.yaml": "src/mtcue/schemas/config.schema.yaml",
               "src/mtcue/plan/probe.py": "src/mtcue/plan/{experiment}.py",
               "src/mtcue/plan/__init__.py": "src/mtcue/plan/__init__.py",
               "workflow/rules/probe.smk": "workflow/rules/{experiment}.smk", "Snakefile": "`Snakefile`"}
    assert set(spelled) == touched
    model = {path for path in touched if path.startswith(("src/mtcue/models/", "src/mtcue/study.py", "config/"))}
    for path in touched:
        if path in model or path.endswith("config.schema.yaml"):
            assert spelled[path] in section("Adding a model"), path
        if path not in model:
            assert spelled[path] in section("Adding an experiment"), path

    # The plugin registers the new family's model with fairseq, as every family's.
    run = subprocess.run([sys.executable, "-c", "import mtcue.models.plugin; from fairseq.models import "
                          "ARCH_MODEL_REGISTRY, MODEL_REGISTRY; assert 'probe' in MODEL_REGISTRY, 'model'; "
                          "assert 'probe' in ARCH_MODEL_REGISTRY, 'arch'"],
                         cwd=repo, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(repo / "src")})
    assert run.returncode == 0, run.stderr[-2000:]

    # The dry run plans the probe's training in en-de, its translation and score, and the table; as every trained
    # model of an en->xx direction reading context, it is also scored on the contrastive suite and for CXMI.
    after = jobs(repo)
    assert after - before == Counter({"train": 1, "translate": 1, "score": 1, "table_probe": 1,
                                      "score_contrastive": 1, "context_usage": 1, "total": 6})
