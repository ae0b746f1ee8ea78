"""The study is exactly the config the user gives (--configfile), never merged with the demo's."""
import ast
import itertools
import json
import os
import re
import string
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import REPO, SNAKEMAKE, dry_run
from mtcue import config as cfg
from mtcue.experiments import rule_files as experiment_rules
from mtcue.plan.models import all_models
from mtcue.study import SHORTENING_TYPES, store_name


def train_specs(stdout: str) -> dict[str, dict]:
    """{model: spec} of the first train command of each model in a dry run's printed commands."""
    specs = {}
    for match in re.finditer(r"mtcue train --spec '(\{.*?\})' ", stdout):
        spec = json.loads(match.group(1))
        specs.setdefault(spec["model"], spec)
    return specs


def test_paper_config_is_used_instead_of_the_demo_config():
    run = dry_run("--configfile", "config/paper.yaml")
    assert run.returncode == 0, run.stderr[-2000:]
    specs = train_specs(run.stdout)
    paper = cfg.load(REPO / "config" / "paper.yaml")
    # With the few-shot variants; a shortening-family entry trains only as its context-size runs ({name}_c{C}).
    templates = {m for m, e in paper["models"].items() if e["type"] in SHORTENING_TYPES}
    assert set(specs) == set(all_models(paper)) - templates
    # The contextual models use the paper's shared training block, not the demo's fine-tuning one.
    assert specs["mtcue"]["training"]["lr"] == paper["training"]["lr"] == 0.0003
    assert specs["mtcue"]["training"]["warmup_updates"] == 4000
    assert specs["mtcue"]["arch"]["embed_dim"] == 512
    assert "--docs 400 " not in run.stdout  # the demo's corpus size


def test_a_one_model_config_trains_one_model(tmp_path):
    config = {"study": "one", "directions": ["en-de"], "models": {"base": {"type": "base"}}}
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(config))
    run = dry_run("--configfile", str(path), workdir=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert set(train_specs(run.stdout)) == {"base"}
    assert "tagging" not in run.stdout and "mtcue train --spec" in run.stdout


def test_a_config_without_models_is_an_error(tmp_path):
    path = tmp_path / "none.yaml"
    path.write_text(yaml.safe_dump({"study": "none", "directions": ["en-de"], "models": {}}))
    run = dry_run("--configfile", str(path), workdir=tmp_path)
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert f"{path}: invalid configuration" in out and "models: {} should be non-empty" in out


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml"])
def test_shipped_configs_dry_run(name):
    run = dry_run("--configfile", f"config/{name}")
    assert run.returncode == 0, run.stderr[-2000:]


def test_a_direction_the_corpus_source_cannot_provide_fails_the_dry_run(tmp_path):
    path = tmp_path / "es.yaml"
    path.write_text(yaml.safe_dump({"study": "es", "directions": ["en-de", "en-es"], "models": {"base": {"type": "base"}}}))
    run = dry_run("--configfile", str(path), workdir=tmp_path)
    assert run.returncode != 0
    assert "directions: ['en-es'] need language pairs that corpus.source 'synthetic' cannot provide" in run.stdout + run.stderr


def test_the_seed_varies_training_only(tmp_path):
    run = dry_run("--config", "seed=2", "--configfile", str(REPO / "config" / "config.yaml"), workdir=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    specs = [json.loads(m) for m in re.findall(r"mtcue train --spec '(\{.*?\})' ", run.stdout)]
    # 5 models x 8 directions, 2 parents x 4 few-shot settings x 3 seeds in en-pl, 6 ablations x 3 seeds and
    # MTCUE's seeds 2 and 3 in en-de (experiments.*.seeds: 3); run k of a fine-tuning trains with seed + k - 1;
    # Voita et al.'s CONCAT and VOITA-CONTEXT in en-ru, en-de, en-fr and the next-sentence model in en-ru,
    # Hoang et al.'s 5 side-information models and BASE trained on as they are in de-en and en-de; Jeong et al.'s style models: two in en-de
    # and en-ru, four more variants in en-de; the 8 sequence-shortening models with one context sentence in
    # en-de and en-fr and with two in en-de
    assert len(specs) == 5 * 8 + 2 * 4 * 3 + 6 * 3 + 2 + 2 * 3 + 1 + 6 * 2 + (2 * 2 + 4) + 8 * 3 + 1  # the last: CONCAT at 2 sentences, en-de
    seeds = {(s["model"], s["seed"]) for s in specs}
    assert {seed for model, seed in seeds if not re.search(r"_seed\d$", model)} == {2}
    assert {("mtcue_seed3", 4), ("mtcue_fewshot_5_seed2", 3), ("mtcue_no_doc_seed2", 3)} <= seeds
    assert not [model for model, _ in seeds if model.startswith(("base_seed", "base_pm_seed"))]   # shared parents
    generate = re.findall(r"mtcue generate .*?--seed (\d+) ", run.stdout)
    assert len(generate) == 12 and set(generate) == {"1"}     # the same documents as seed 1's run


def test_the_slurm_profile_is_found_by_name():
    """`snakemake --profile slurm` from the repository root (the README's cluster command, docs/paper-scale.md) plans the paper's
    study (the profile names no rule: tests/test_cluster_plan.py)."""
    run = dry_run("--profile", "slurm", "--configfile", "config/paper.yaml")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "rule train:" in run.stdout


def test_no_test_runs_snakemake_on_the_checkouts_results():
    """After `make demo` the checkout's results/ holds a finished study: a Snakemake run of a test in the
    checkout itself would see it (a dry run with nothing left to do). Every test that runs the Snakefile
    names its own --directory (conftest.dry_run does)."""
    import ast

    offenders = []
    for path in sorted((REPO / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            # A Snakemake command line starts with the executable (a name or call); an `mtcue` step's
            # argument list starts with the step's name (critical-path takes the study folder itself).
            if isinstance(node, ast.List) and node.elts and not isinstance(node.elts[0], ast.Constant):
                words = {n.value for n in node.elts if isinstance(n, ast.Constant)}
                if "--snakefile" in words and "--directory" not in words:
                    offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


ESCAPING = "http://127.0.0.1:9/x/../../../../../escaped.json"  # from results/download/127.0.0.1:9/x: 5 up


@pytest.mark.parametrize("url, segment", [
    (ESCAPING, ".."),
    ("http://host/x/%2e%2E/escaped.json", "%2e%2E"),  # a server decodes it as ..
    ("http://host/x/./y.json", "."),
    ("http:///etc/passwd", ""),                        # no host: an absolute path
    ("http://host//etc/passwd", ""),
    ("http://host/dir/", ""),                          # a folder, not a file
    ("http://host/x\\..\\..\\y.json", "x\\..\\..\\y.json"),
    ("http://host/x%2F..%2F..%2Fy.json", "x%2F..%2F..%2Fy.json"),
])
def test_a_url_that_would_leave_the_download_folder_is_refused(url, segment):
    from mtcue.data import sources

    for where in (sources.local, lambda u: sources.mirrored({"download": {"mirror": "/m"}}, u)):
        with pytest.raises(ValueError) as err:
            where(url)
        assert str(err.value).startswith(f"URL {url!r}: its segment {segment!r} would not stay inside "
                                         "results/download/{host}/")
    assert sources.local("https://h.example:8080/a/b%20c.txt") == "results/download/h.example:8080/a/b%20c.txt"


@pytest.mark.parametrize("corpus, sets, key", [
    ({"splits": {"heldout": {"en-de": ["https://h.example/ok.txt", ESCAPING]}}}, {}, "corpus.splits.heldout.en-de.1"),
    ({"opensubtitles": {"url": "https://h.example/OPUS/../"}}, {}, "corpus.opensubtitles.url"),
    ({}, {"contrapro": {"json": "https://h.example/%2e%2e/c.json"}}, "evaluation_sets.contrapro.json"),
])
def test_a_config_url_that_would_leave_the_download_folder_names_its_key(corpus, sets, key):
    from mtcue.data import sources

    raw = {"study": "s", "directions": ["en-de"], "models": {"base": {"type": "base"}},
           "corpus": {"source": "opensubtitles", **corpus}, "evaluation_sets": sets}
    with pytest.raises(cfg.ConfigError, match=rf"^{re.escape(key)}: URL '[^']+': its segment '(\.\.|%2e%2e)' would"):
        cfg.validate(raw, checks=[sources.check_urls])
    cfg.validate(raw)  # the data stage's check: the loader itself reads no URLs


def test_a_dry_run_with_an_escaping_url_fails_and_writes_nothing(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    config = {"study": "bad", "directions": ["en-de"], "models": {"base": {"type": "base"}},
              "corpus": {"source": "opensubtitles", "splits": {"heldout": {"en-de": [ESCAPING]}}}}
    (work / "bad.yaml").write_text(yaml.safe_dump(config))
    run = dry_run("--configfile", str(work / "bad.yaml"), workdir=work)
    assert run.returncode != 0
    message = f"corpus.splits.heldout.en-de.0: URL {ESCAPING!r}: its segment '..' would not stay inside"
    assert message in run.stdout + run.stderr
    assert "rule download" not in run.stdout
    assert {p.relative_to(tmp_path).parts[:2] for p in tmp_path.rglob("*")} <= {("work",), ("work", "bad.yaml"),
                                                                                ("work", ".snakemake")}


def test_a_config_file_with_a_key_written_twice_fails_the_dry_run(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text("study: twice\ndirections: [en-de]\nmodels: {base: {type: base}}\nstudy: again\n")
    run = dry_run("--configfile", str(path), workdir=tmp_path)
    assert run.returncode != 0
    assert f"{path}:4: key 'study' is written twice in one mapping (first on line 1)" in run.stdout + run.stderr


# ---- config values in the shell (issue 43) ---------------------------------------------------------

INJECTION = "x||touch INJECTED;#"
# Substitutions that need no quoting: a number Snakemake itself gives (the job's threads, a resource).
UNQUOTED = re.compile(r"threads$|resources\.\w+$")


def shell_commands(path):
    """(line, command) of every `shell:` string of a rule file: the implicitly joined literals below it, each
    branch's of a command chosen by the config (`"..." if OPENSUBTITLES else "..."`); a command read off the
    registry (tables.smk's `_table.command`) is checked there (`registered_commands`)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"(\s*)shell:\s*$", line)
        if match:
            indent = len(match.group(1))
            block = itertools.takewhile(lambda t: not t.strip() or len(t) - len(t.lstrip()) > indent, lines[i + 1:])
            command = ast.parse("(" + "\n".join(block) + ")", mode="eval").body
            if isinstance(command, ast.Attribute):
                continue
            for branch in (command.body, command.orelse) if isinstance(command, ast.IfExp) else (command,):
                yield i + 1, ast.literal_eval(branch)


def registered_commands():
    """(table, command) of every table the experiments declare (mtcue.plan: `Experiment.tables`)."""
    from mtcue.plan import EXPERIMENTS

    return [(table.name, table.command) for experiment in EXPERIMENTS.values() for table in experiment.tables]


def test_every_value_in_a_shell_command_is_quoted():
    """A file name, wildcard or config value reaches the shell only through Snakemake's :q (shlex.quote)."""
    rule_files = [*sorted((REPO / "workflow" / "rules").glob("*.smk")), *map(Path, experiment_rules())]
    commands = [(f"{path.relative_to(REPO)}:{line}", command) for path in rule_files
                for line, command in shell_commands(path)]
    commands += [(f"table {table}", command) for table, command in registered_commands()]
    unquoted = [f"{where} {{{field}}}" for where, command in commands
                for _, field, spec, _ in string.Formatter().parse(command)
                if field is not None and not UNQUOTED.match(field) and not (spec or "").endswith("q")]
    assert len(commands) > 50 and unquoted == []  # 54 since a model's evaluation is one rule per profile (issue 55)


def test_the_check_sees_an_unquoted_value(tmp_path):
    (tmp_path / "r.smk").write_text('rule r:\n    shell:\n        "mtcue x {params.encoder} "\n        "2> {log:q}"\n')
    assert list(shell_commands(tmp_path / "r.smk")) == [(2, "mtcue x {params.encoder} 2> {log:q}")]


def injection_config(work, encoder=INJECTION) -> tuple:
    """A study whose context encoder is `encoder`, and its vector store's folder (what the embed rule writes)."""
    config = {"study": "inj", "directions": ["en-de"], "corpus": {"docs": {"train": 2, "valid": 1, "test": 1}},
              "context": {"encoder": encoder},
              "models": {"base": {"type": "base"}, "mtcue": {"type": "mtcue", "init_from": "base"}}}
    (work / "inj.yaml").write_text(yaml.safe_dump(config))
    return work / "inj.yaml", f"results/embed/en-de/{store_name({'encoder': encoder, 'pooling': 'mean'})}"


def test_a_config_value_reaches_the_shell_quoted(tmp_path):
    path, store = injection_config(tmp_path)
    run = dry_run(store, "--configfile", str(path), workdir=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert f"--encoder '{INJECTION}' " in run.stdout
    assert "--encoder x||touch" not in run.stdout


@pytest.mark.parametrize("encoder", [INJECTION, "my encoders/MiniLM"])
def test_the_embed_rule_runs_no_code_of_a_config_value(tmp_path, encoder):
    """The rules run for real (the corpora written by hand, so nothing else runs): the fetch of the pretrained
    models, then the embedding step, each fails on an encoder that does not exist, and the payload never runs;
    a path with a space stays one argument."""
    path, store = injection_config(tmp_path, encoder)
    for split in ("train", "valid", "test"):
        corpus = tmp_path / "results" / "clean" / "en-de" / f"{split}.jsonl"
        corpus.parent.mkdir(parents=True, exist_ok=True)
        corpus.write_text("")
    logs = tmp_path / "results" / "logs"

    def run(target: str) -> subprocess.CompletedProcess:
        return subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
                               "--configfile", str(path), "--cores", "1", target], cwd=REPO, capture_output=True,
                              text=True, env={**os.environ, "MTCUE_WARM": "0", "HF_HUB_OFFLINE": "1"})

    fetch = run("results/pretrained/manifest.json")
    assert fetch.returncode != 0 and "rule pretrained_models" in fetch.stdout + fetch.stderr
    assert encoder in (logs / "pretrained_models.log").read_text()
    (logs / "pretrained_models.log").unlink()
    # A folder without the encoder: the embedding step itself gets the value, and refuses it
    (tmp_path / "results" / "pretrained").mkdir()
    (tmp_path / "results" / "pretrained" / "manifest.json").write_text("{}")
    embed = run(store)
    assert embed.returncode != 0 and "rule embed_" in embed.stdout + embed.stderr
    assert not (tmp_path / "INJECTED").exists() and not (REPO / "INJECTED").exists()
    log = f"embed/{store.rsplit('/', 1)[1]}.log"
    assert [str(p.relative_to(logs)) for p in logs.rglob("*") if p.is_file()] == [log]  # no stray log file
    assert encoder in (logs / log).read_text()  # the whole value, one argument, in the step's refusal
