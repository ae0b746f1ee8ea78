"""The layout says what imports what (issue 34): the shared floor imports no stage, evaluation reaches into no
private attribute of a model or translator, the plugin registers every model type from its family folder,
the DAG's shared file stays a reader of the plan, no module imports itself through others (lazy imports included:
703c68f had three such circles, which import_graph finds) and a stage imports no later stage."""
import ast
from pathlib import Path

import pytest

from conftest import REPO
from mtcue.experiments import rule_files as experiment_rules

SRC = REPO / "src" / "mtcue"
STAGES = ("data", "context", "models", "evaluation", "reporting")
SHARED = ("study.py", "config.py", "layout.py", "corpus.py", "io.py", "outputs.py", "records.py", "options.py", "paper.py",
          "plots.py", "polish.py", "suites.py", "schedule.py", "pretrained.py",
          *(f"plan/{p.name}" for p in (SRC / "plan").glob("*.py")),
          # an experiment's plan is shared too; its table or figure module is reporting's
          "experiments/__init__.py",
          *(p.relative_to(SRC).as_posix() for name in ("__init__.py", "plan.py")
            for p in (SRC / "experiments").glob(f"*/{name}")))


def imported_modules(path: Path) -> set[str]:
    """Every module an `import` or `from ... import` of the file names (lazy ones inside functions too)."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return modules


@pytest.mark.parametrize("name", SHARED)
def test_the_shared_floor_imports_no_stage(name):
    stages = {m for m in imported_modules(SRC / name) if m.split(".")[:2] in (["mtcue", s] for s in STAGES)}
    assert stages == set()


def test_the_check_itself_sees_an_upward_import(tmp_path):
    (tmp_path / "bad.py").write_text("def f():\n    from mtcue.data.sources import url_path\n")
    assert "mtcue.data.sources" in imported_modules(tmp_path / "bad.py")


def test_config_loads_and_validates_only():
    assert len((SRC / "config.py").read_text(encoding="utf-8").splitlines()) <= 400
    defined = {n.name for n in ast.parse((SRC / "config.py").read_text(encoding="utf-8")).body
               if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
    assert defined == {"schema", "validate", "generation_settings", "read_yaml", "load", "load_files", "merge",
                       "paper_formality_prompts"}


def test_evaluation_touches_no_private_attribute():
    private = [f"{path.name}:{node.lineno} .{node.attr}" for path in sorted((SRC / "evaluation").glob("*.py"))
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")]
    assert private == []


def test_every_model_type_is_registered_from_its_family_folder():
    import mtcue.models.plugin  # noqa: F401  (registers every module of the folder)
    from fairseq.models import ARCH_MODEL_REGISTRY, MODEL_REGISTRY

    from mtcue.models.fairseq_args import FAIRSEQ_ARCH
    from mtcue.study import CONTEXT_KIND, MODEL_TYPES

    families = {m.family for m in MODEL_TYPES.values() if m.family}
    plugin = SRC / "models" / "plugin"
    assert {p.name for p in plugin.iterdir() if (p / "__init__.py").exists()} == families
    for model_type in CONTEXT_KIND:
        arch = FAIRSEQ_ARCH[model_type]
        assert arch in ARCH_MODEL_REGISTRY and arch in MODEL_REGISTRY, model_type
        if model_type != "base":  # BASE is fairseq's own transformer
            module = MODEL_REGISTRY[arch].__module__
            assert module.split(".")[:3] == ["mtcue", "models", "plugin"] and module.split(".")[3] in families, \
                (model_type, module)


def test_the_rules_give_input_functions_no_fake_wildcards():
    """A rule's path is the results layout's (mtcue.layout) of a direction and model, not an input function
    called with a made-up wildcards object."""
    rules = [*(REPO / "workflow" / "rules").glob("*.smk"), *map(Path, experiment_rules()), REPO / "Snakefile"]
    assert [r.name for r in rules if "SimpleNamespace" in r.read_text(encoding="utf-8")] == []


def test_common_smk_reads_the_plan():
    common = (REPO / "workflow" / "rules" / "common.smk").read_text(encoding="utf-8")
    assert len(common.splitlines()) <= 200
    assert "from mtcue.plan import" in common


def unresolved_imports(path: Path) -> list[str]:
    """The `from mtcue... import name` of a file (lazy ones inside functions too) that name no module or
    attribute: after a module moves, a lazy import fails only when its step runs."""
    import importlib

    missing = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("mtcue")):
            continue
        try:
            module = importlib.import_module(node.module)
        except ImportError:
            missing.append(f"{path.name}:{node.lineno}: {node.module}")
            continue
        for alias in node.names:
            if not hasattr(module, alias.name) and importlib.util.find_spec(f"{node.module}.{alias.name}") is None:
                missing.append(f"{path.name}:{node.lineno}: {node.module}.{alias.name}")
    return missing


def test_every_lazy_import_of_the_package_resolves(tmp_path):
    """`mtcue table-context-usage` imported `mtcue.reporting.tables` inside its function after tables.py
    had been split: nothing failed until the study ran the step."""
    (tmp_path / "stale.py").write_text("def f():\n    from mtcue.reporting import tables\n")
    assert unresolved_imports(tmp_path / "stale.py") == ["stale.py:2: mtcue.reporting.tables"]
    assert [m for path in sorted(SRC.rglob("*.py")) for m in unresolved_imports(path)] == []


def import_graph(package: Path) -> dict[str, set[str]]:
    """{module: the package's modules it imports, at module or function level, relative imports resolved}.
    `from pkg import module` is an edge to that module only; importing any other name of a module is an edge to it."""
    paths = {".".join(p.relative_to(package.parent).with_suffix("").parts).removesuffix(".__init__"): p
             for p in package.rglob("*.py")}
    graph = {}
    for module, path in paths.items():
        here = module if path.name == "__init__.py" else module.rpartition(".")[0]
        names = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join([*here.split(".")[:len(here.split(".")) - node.level + 1], *filter(None, [node.module])]) \
                    if node.level else node.module
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in paths]
                names += subs if len(subs) == len(node.names) else [base, *subs]
        edges = set()
        for name in names:
            while name and name not in paths:  # a name inside a module: the module
                name = name.rpartition(".")[0]
            if name and name != module:
                edges.add(name)
        graph[module] = edges
    return graph

def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_and_stages_import_only_earlier_stages():
    graph = import_graph(SRC)
    assert circles(graph) == []
    stage = {m: m.split(".")[1] for m in graph if m.count(".") and m.split(".")[1] in STAGES}
    later = [(a, b) for a, targets in graph.items() for b in targets
             if a in stage and b in stage and STAGES.index(stage[b]) > STAGES.index(stage[a])]
    assert later == []


def test_the_circle_check_sees_a_circle_through_a_lazy_import(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import g\n\ndef f():\n    return g()\n")
    (package / "b.py").write_text("def g():\n    from pkg import a\n    return a\n")
    (package / "c.py").write_text("from pkg import a, b\n")
    assert circles(import_graph(package)) == [["pkg.a", "pkg.b"]]
