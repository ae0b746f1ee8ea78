"""docs/contributing.md, followed as written: in a scratch copy of the repository a throwaway model family and a
throwaway experiment are added touching only the files the page names, and twice over under other names (the
steps find where to write by the files' structure, so a second model and experiment go in beside the first); the
dry run plans their jobs, the new experiment's table rule makes its table from score records through its own
`mtcue` step, and the rendered results show its section: no shared file lists the experiment."""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import yaml

from conftest import REPO, SNAKEMAKE

DATA = REPO / "tests" / "data"

# Adding a model, step 1: the plugin, here a new family (its folder and __init__.py, so the plugin loads it).
PLUGIN = '''\
"""Model `{name}`: CONCAT under another name (tests/test_contributing.py's throwaway family)."""
from fairseq.models import register_model, register_model_architecture

from ..voita.concat_model import ConcatModel, concat_architecture


@register_model("{name}")
class Model(ConcatModel):
    pass


@register_model_architecture("{name}", "{name}")
def architecture(args):
    concat_architecture(args)
'''

# Adding an experiment, step 1: its folder, whose __init__.py imports its plan.
PACKAGE = '''\
"""The {name} experiment (tests/test_contributing.py's throwaway experiment)."""
from mtcue.experiments.{name} import plan  # noqa: F401
'''

# Step 2: its plan, registered, with its table (its records only), the table's `mtcue` step and its section of the
# rendered results.
PLAN = '''\
"""The {name} experiment: its models trained and scored in its directions, and one table of their scores."""
from __future__ import annotations

import functools

from mtcue import layout
from mtcue.plan.experiments import check_directions
from mtcue.plan.registry import TABLE_OUTPUTS, Experiment, Option, Section, Step, Table, Targets, register


def runs(cfg: dict) -> list[tuple[str, str]]:
    exp = cfg["experiments"]["{name}"]
    return [(d, m) for d in exp["directions"] for m in exp["models"]]


def targets(cfg: dict) -> Targets:
    split = cfg["evaluation"]["split"]
    return Targets(records=[layout.record("score", d, m, split) for d, m in runs(cfg)],
                   tables=layout.table_files("{name}") if runs(cfg) else [])


def check(cfg: dict) -> None:
    check_directions(cfg, "{name}", cfg["experiments"]["{name}"]["directions"])


TABLE = Table("{name}", "the {name} experiment", "mtcue table-{name} --records {{input.records:q}} " + TABLE_OUTPUTS,
              lambda cfg: {{"records": targets(cfg).records}}, rule="table_{name}",
              step=Step("table-{name}", "the {name} experiment's table",
                        "mtcue.experiments.{name}.table:write_{name}_table",
                        (Option("--records", records="score", required=True),)))

register(Experiment("{name}", "the {name} experiment", targets, trains=runs, check=check, tables=(TABLE,),
                    names=lambda cfg: cfg["experiments"]["{name}"]["models"],
                    sections=(Section("mtcue.experiments.{name}.table:{name}_section", 1000),),
                    results={{"{name}": functools.partial(layout.table, "{name}", "csv")}}))
'''

# Step 3, its table module: the writer its step calls (by keyword) and its section of the rendered results.
TABLE_MODULE = '''\
"""The {name} experiment's table and its section of the rendered results."""
from __future__ import annotations

import pandas as pd

from mtcue.reporting.kit import display_name, write_table


def write_{name}_table(*, records, csv, md, runs):
    df = pd.DataFrame([{{"model": display_name(r["model"]), "direction": r["direction"], "bleu": r["bleu"]}}
                       for r in records]).set_index("model")
    write_table(df, csv, md, "The {name} experiment", [], runs=runs)


def {name}_section(run):
    table = run.{name}
    return [] if table is None else [f"The {name} experiment: BLEU {{table['bleu'].iloc[0]:.1f}}."]
'''

# Step 5, its own rules (the second experiment only: "if it has steps of its own"): a figure read off its table.
RULES = '''\
from mtcue.experiments.{name}.plan import TABLE


rule figure_{name}:
    input:
        layout.table(TABLE.name, "csv"),
    output:
        layout.figure("{name}", "txt"),
    log:
        layout.log("figures", "{name}"),
    shell:
        "wc -l < {{input:q}} > {{output:q}} 2> {{log:q}}"
'''

ARCH = {"embed_dim": 64, "heads": 4, "encoder_layers": 2, "encoder_ffn_dim": 128, "decoder_layers": 2,
        "decoder_ffn_dim": 128}


def insert(path: Path, offset: int, text: str) -> None:
    old = path.read_text()
    path.write_text(old[:offset] + text + old[offset:])


def offset_of(text: str, line: int, column: int) -> int:
    """The character offset of a 1-based line and 0-based column (Python's ast positions)."""
    return sum(len(row) for row in text.splitlines(keepends=True)[:line - 1]) + column


def yaml_node(text: str, keys: list[str]) -> yaml.Node:
    """The node of the YAML document `text` at the mapping keys `keys`."""
    node = yaml.compose(text)
    for key in keys:
        node = next(value for name, value in node.value if name.value == key)
    return node


def add_yaml_entry(path: Path, keys: list[str], name: str, value: dict) -> None:
    """`name: value` as the first entry of the block mapping at `keys`, at its entries' indentation (the file's
    comments and layout kept; the value in flow style, as JSON)."""
    first = yaml_node(path.read_text(), keys).value[0][0].start_mark
    insert(path, first.index - first.column, " " * first.column + f"{name}: {json.dumps(value)}\n")


def add_yaml_item(path: Path, keys: list[str], item: str) -> None:
    """`item` first in the flow sequence at `keys` (the schema's enum of model types)."""
    node = yaml_node(path.read_text(), keys)
    assert node.flow_style, keys
    insert(path, node.value[0].start_mark.index, f"{item}, ")


def python_node(path: Path, found) -> ast.AST:
    """The one node of the module at `path` for which `found(node)` holds."""
    nodes = [node for node in ast.walk(ast.parse(path.read_text())) if found(node)]
    assert len(nodes) == 1, (path, nodes)
    return nodes[0]


def add_model_type(study: Path, name: str, row: str) -> None:
    """`name: row` as the last entry of `study.py`'s MODEL_TYPES (step 2 of adding a model)."""
    table = python_node(study, lambda n: isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "MODEL_TYPES")
    text = study.read_text()
    closing = offset_of(text, table.value.end_lineno, table.value.end_col_offset - 1)  # the dict's `}`
    insert(study, closing, f"    {name!r}: {row},\n")


def import_last(package_init: Path, name: str) -> None:
    """The experiment imported last by `mtcue/experiments/__init__.py`, whose import order is the registry's."""
    imports = python_node(package_init, lambda n: isinstance(n, ast.ImportFrom) and n.module == "mtcue.experiments")
    last = imports.names[-1]
    insert(package_init, offset_of(package_init.read_text(), last.end_lineno, last.end_col_offset), f", {name}")


def add_model(repo: Path, name: str) -> set[str]:
    """Adding a model, as the page says, with a family of its own (`name`, a token-context model): the files
    touched."""
    family = repo / "src" / "mtcue" / "models" / "plugin" / name
    family.mkdir()
    (family / "__init__.py").write_text("")
    (family / f"{name}_model.py").write_text(PLUGIN.format(name=name))
    add_model_type(repo / "src/mtcue/study.py", name, f'ModelType("{name}", "tokens")')
    add_yaml_item(repo / "src/mtcue/schemas/config.schema.yaml", ["$defs", "model", "properties", "type", "enum"], name)
    add_yaml_entry(repo / "config/config.yaml", ["models"], name, {"type": name, "init_from": "base", "arch": ARCH})
    return {f"src/mtcue/models/plugin/{name}", f"src/mtcue/models/plugin/{name}/__init__.py",
            f"src/mtcue/models/plugin/{name}/{name}_model.py", "src/mtcue/study.py",
            "src/mtcue/schemas/config.schema.yaml", "config/config.yaml"}


def add_experiment(repo: Path, name: str, model: str, rules: bool) -> set[str]:
    """Adding an experiment, as the page says: `name`, training `model` in en-de, with one table (its rule is
    tables.smk's, its `mtcue` step reporting/cli.py's, its section readme.py's: all from the registry) and, where
    `rules`, a step of its own (its folder's rules.smk); the files touched."""
    folder = repo / "src/mtcue/experiments" / name
    folder.mkdir()
    (folder / "__init__.py").write_text(PACKAGE.format(name=name))
    (folder / "plan.py").write_text(PLAN.format(name=name))
    (folder / "table.py").write_text(TABLE_MODULE.format(name=name))
    if rules:
        (folder / "rules.smk").write_text(RULES.format(name=name))
    import_last(repo / "src/mtcue/experiments/__init__.py", name)
    add_yaml_entry(repo / "src/mtcue/schemas/config.schema.yaml", ["properties", "experiments", "properties"], name,
                   {"description": f"The {name} experiment (tests/test_contributing.py).", "type": "object",
                    "additionalProperties": False, "default": {},
                    "properties": {"models": {"type": "array", "items": {"type": "string"}, "default": [model]},
                                   "directions": {"type": "array", "items": {"type": "string"},
                                                  "default": ["en-de"]}}})
    return {f"src/mtcue/experiments/{name}", f"src/mtcue/experiments/{name}/__init__.py",
            f"src/mtcue/experiments/{name}/plan.py", f"src/mtcue/experiments/{name}/table.py",
            "src/mtcue/experiments/__init__.py", "src/mtcue/schemas/config.schema.yaml",
            *([f"src/mtcue/experiments/{name}/rules.smk"] if rules else [])}


def snakemake(repo: Path, *args: str) -> subprocess.CompletedProcess:
    run = subprocess.run([SNAKEMAKE, *args, "--snakefile", str(repo / "Snakefile"), "--directory", str(repo / "work"),
                          "--configfile", str(repo / "config" / "config.yaml")], cwd=repo, text=True,
                         capture_output=True, env={**os.environ, "PYTHONPATH": str(repo / "src")})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run


def jobs(repo: Path) -> Counter:
    """The dry run's job count per rule (its job-stats table)."""
    stats = re.search(r"Job stats:\n(.*?)\n\n", snakemake(repo, "-n").stdout, re.S).group(1)
    counts = Counter()
    for m in re.finditer(r"^(\S+)\s+(\d+)$", stats, re.M):  # the evaluation rules (evaluate_*) as one
        counts[re.sub(r"^evaluate_\w+$", "evaluate", m.group(1))] += int(m.group(2))
    return counts


def page_names_every_file(touched: set[str], names: tuple[str, str]) -> None:
    """The page names every file touched, as it spells them: the model's under "Adding a model", the
    experiment's under "Adding an experiment" (the schema under both)."""
    page = (REPO / "docs" / "contributing.md").read_text()
    section = lambda title: page.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    model, experiment = names
    spelled = {f"src/mtcue/models/plugin/{model}": "models/plugin/{family}/",
               f"src/mtcue/models/plugin/{model}/__init__.py": "models/plugin/{family}/__init__.py",
               f"src/mtcue/models/plugin/{model}/{model}_model.py": "models/plugin/{family}/{type}_model.py",
               "src/mtcue/study.py": "src/mtcue/study.py", "config/config.yaml": "config/config.yaml",
               "src/mtcue/schemas/config.schema.yaml": "src/mtcue/schemas/config.schema.yaml",
               f"src/mtcue/experiments/{experiment}": "src/mtcue/experiments/{experiment}/",
               f"src/mtcue/experiments/{experiment}/__init__.py": "src/mtcue/experiments/{experiment}/__init__.py",
               f"src/mtcue/experiments/{experiment}/plan.py": "src/mtcue/experiments/{experiment}/plan.py",
               f"src/mtcue/experiments/{experiment}/table.py": "src/mtcue/experiments/{experiment}/table.py",
               f"src/mtcue/experiments/{experiment}/rules.smk": "src/mtcue/experiments/{experiment}/rules.smk",
               "src/mtcue/experiments/__init__.py": "src/mtcue/experiments/__init__.py"}
    optional = {f"src/mtcue/experiments/{experiment}/rules.smk"}  # an experiment with steps of its own
    assert touched <= set(spelled) and set(spelled) - touched <= optional
    for path in touched:
        in_model = path.startswith(("src/mtcue/models/", "src/mtcue/study.py", "config/"))
        if in_model or path.endswith("config.schema.yaml"):
            assert spelled[path] in section("Adding a model"), path
        if not in_model:
            assert spelled[path] in section("Adding an experiment"), path


def touched_files(repo: Path, before: dict[str, bytes]) -> set[str]:
    """The files and folders of the scratch copy that differ from `before` (`snapshot`), added or changed."""
    now = snapshot(repo)
    return {path for path in now if before.get(path) != now[path]}


def snapshot(repo: Path) -> dict[str, bytes]:
    """Every file's bytes (a folder: b"") of the copy's source, workflow and config."""
    return {path.relative_to(repo).as_posix(): b"" if path.is_dir() else path.read_bytes()
            for folder in ("src", "workflow", "config") for path in (repo / folder).rglob("*")
            if "__pycache__" not in path.parts}


def test_a_model_family_and_an_experiment_added_twice_as_the_page_says_are_planned_and_tabled(tmp_path):
    repo = tmp_path / "repo"
    for folder in ("src", "workflow", "config"):
        shutil.copytree(REPO / folder, repo / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(REPO / "Snakefile", repo)
    before = jobs(repo)

    added = [("probe", "probe_study"), ("echo", "echo_study")]  # (model family and type, experiment)
    for model, experiment in added:
        files = snapshot(repo)
        touched = add_model(repo, model) | add_experiment(repo, experiment, model, rules=experiment == "echo_study")
        assert touched_files(repo, files) == touched   # exactly these, nothing else
        page_names_every_file(touched, (model, experiment))

    # The plugin registers each new family's model with fairseq, as every family's.
    check = "; ".join(f"assert {m!r} in MODEL_REGISTRY and {m!r} in ARCH_MODEL_REGISTRY, {m!r}" for m, _ in added)
    run = subprocess.run([sys.executable, "-c", "import mtcue.models.plugin; from fairseq.models import "
                          f"ARCH_MODEL_REGISTRY, MODEL_REGISTRY; {check}"],
                         cwd=repo, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(repo / "src")})
    assert run.returncode == 0, run.stderr[-2000:]

    # The dry run plans each model's training in en-de, its evaluation (one job: its translation and score; as
    # every trained model of an en->xx direction reading context, it is also scored on the contrastive suite and
    # for CXMI) and each experiment's table.
    assert jobs(repo) - before == Counter({"train": 2, "evaluate": 2, "table_probe_study": 1, "table_echo_study": 1,
                                           "total": 6})

    # The table rule runs: from the model's score record (the demo's en-de BASE record, as the probe's), its table.
    record = json.loads((DATA / "readme_fixture/records/score/en-de/base.test.json").read_text())
    scores = repo / "work/results/records/score/en-de"
    scores.mkdir(parents=True)
    (scores / "probe.test.json").write_text(json.dumps({**record, "model": "probe"}))
    snakemake(repo, "results/tables/probe_study.md", "--cores", "1", "--allowed-rules", "table_probe_study")
    table = (repo / "work/results/tables/probe_study.md").read_text()
    assert "PROBE" in table and f"{record['bleu']:.1f}" in table, table
    assert all((repo / f"work/results/tables/probe_study.{ext}").is_file() for ext in ("csv", "html"))

    # The second experiment's own rule, included because its folder has it, plans after its table's.
    run = snakemake(repo, "-n", "results/figures/echo_study.txt")
    assert re.search(r"^figure_echo_study\s+1$", run.stdout, re.M) and re.search(r"^table_echo_study\s+1$", run.stdout,
                                                                                   re.M), run.stdout[-3000:]

    # The rendered results show its section, from its table beside a run's records (the README fixture's run).
    shutil.copytree(DATA / "readme_fixture/records", repo / "work/results/records", dirs_exist_ok=True)
    readme = repo / "work/README.md"
    shutil.copy(DATA / "readme_fixture/README.md", readme)
    run = subprocess.run([sys.executable, "-m", "mtcue.cli", "readme-results", "--records", "results/records",
                          "--readme", "README.md"], cwd=repo / "work", capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(repo / "src")})
    assert run.returncode == 0, run.stderr[-2000:]
    assert f"The probe_study experiment: BLEU {record['bleu']:.1f}." in readme.read_text()
