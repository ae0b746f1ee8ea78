"""The experiment registry: each experiment's plan (mtcue/experiments/{name}/plan.py, and the quality tables'
plan/quality.py) registers one `Experiment` (at its bottom), and everything that
goes over the study's experiments (the trained runs, the unknown-model check, the config checks, the GPU-hour
rows, the MLflow mirror's records, `rule all`) reads `EXPERIMENTS`. Imports nothing of the plan, so every
plan module may register and `plan.models` may read it.
"""
from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mtcue.study import ConfigError


@dataclass(frozen=True)
class Targets:
    """What an experiment makes, the same fields for every one: `records`, its trained models' records (the
    MLflow sync mirrors them in each model's run); `tables` and `figures` (rule `all`, the study's MLflow
    run); `others`, what else `all` asks for (records of no model's run). Paths as strings, whether given as
    strings or as `mtcue.layout`'s Paths (what the rules, the MLflow sync and the targets' lookups compare)."""
    records: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)

    def __post_init__(self):
        for name in ("records", "tables", "figures", "others"):
            object.__setattr__(self, name, [str(path) for path in getattr(self, name)])


def _of_validated(read: Callable[[dict], object], what: str) -> Callable[[dict], object]:
    """`read` of a config, whose missing key (a config not filled in by `config.validate`) is a ConfigError naming
    it, not a bare KeyError from deep in the plan."""
    @functools.wraps(read)
    def of(cfg: dict):
        try:
            return read(cfg)
        except KeyError as err:
            raise ConfigError(f"{what}: the config has no key {err.args[0]!r}: the plan reads a config validated by "
                              "mtcue.config.load or mtcue.config.validate, which fill in every default") from None
    return of


def _none(cfg: dict) -> list:
    return []


def _empty(cfg: dict) -> dict:
    return {}


def _nothing(cfg: dict) -> None:
    return None


def _function(name: str) -> Callable:
    """The function named "module:function", imported when called for (the plan names reporting's functions
    without importing the stage)."""
    module, function = name.split(":")
    return getattr(importlib.import_module(module), function)


# The end of most tables' commands: the three files (`Table.command`'s outputs) and the log.
TABLE_OUTPUTS = "--csv {output.csv:q} --md {output.md:q} --html {output.html:q} 2> {log:q}"


@dataclass(frozen=True)
class Option:
    """An option of a table's `mtcue` step (`Step`): `flag`, `help`, and what its writer gets, by `name` (default
    the flag's: `--comet-records`, `comet_records`): with `records`, the records of that kind in the files it names
    (one or more where `required`, else any; "any": of any kind, for a writer that checks them), each number's
    MLflow run named from them unless `linked` is False; with `json`, its decoded JSON; with `pairs`, its KIND=VALUE
    items as a dict; else the text given (`nargs`, `default`, `choices` as argparse takes them)."""
    flag: str
    help: str = ""
    name: str = ""
    records: str = ""
    linked: bool = True
    json: bool = False
    pairs: bool = False
    required: bool = False
    nargs: str | None = None
    default: object = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "name", self.name or self.flag.lstrip("-").replace("-", "_"))


# The --records of the tables of other papers' systems: their score records, as `scores`.
SCORES = Option("--records", name="scores", records="score", required=True, help="score records")


@dataclass(frozen=True)
class Step:
    """The `mtcue {name}` step that writes a table, registered from the registry by reporting/cli.py: `write`, the
    writer ("module:function", a reporting module's, named so that the plan imports no stage), called with keyword
    arguments only: each of its `options` by its name, `csv`, `md`, `runs` (the MLflow runs of the linked records)
    and, with `bootstrap`, the step's --bootstrap-samples and --alpha as `bootstrap`."""
    name: str
    help: str
    write: str
    options: tuple[Option, ...]
    bootstrap: bool = False

    def writer(self) -> Callable:
        return _function(self.write)


@dataclass(frozen=True)
class Section:
    """A section of the rendered results (`mtcue readme-results`, reporting/readme.py): `render`, its function
    ("module:function" of reporting) given the run (reporting.results.Run) and, with `bootstrap`, the bootstrap,
    returning its Markdown lines (none where the run has nothing to show); `place`, its place on the results page
    (ascending: the MTCue paper's results, then the other papers' systems, then memory growth); `headline`, in the
    README's block too."""
    render: str
    place: int
    headline: bool = False
    bootstrap: bool = False

    def lines(self, run, bootstrap) -> list[str]:
        render = _function(self.render)
        return render(run, bootstrap) if self.bootstrap else render(run)


@dataclass(frozen=True)
class Table:
    """A table an experiment makes and how: workflow/rules/tables.smk makes one rule of each (its outputs
    `common.smk`'s `table_outputs(table)`). `name`: its files' (layout.table_files); `label`: its name in the
    report; `command`: the shell command that writes it, a
    Snakemake template of `{input.*}`, `{params.*}`, `{output.csv}`/`md`/`html` and `{log}`, each value `:q`;
    `inputs(cfg)`: the records it reads, by name (its own experiment's and those it `reads`, never a file of the
    whole study); `params(cfg)`: its other options' values, by name; `rule`: its rule's name and log's (default
    `name`); `benchmark`: its benchmark's folder and name (`layout.benchmark`; default tables/{name}); `step`: the
    `mtcue` step its `command` runs (None: a step another table declares); `caption`: its caption in the report, a
    reStructuredText file, absolute or relative to workflow/rules/ (default ../report/{name}.rst: the quality tables',
    in workflow/report/; an experiment's captions are in its folder)."""
    name: str
    label: str
    command: str
    inputs: Callable[[dict], dict[str, list[str]]]
    params: Callable[[dict], dict] = _empty
    rule: str = ""
    benchmark: tuple[str, ...] = ()
    step: Step | None = None
    caption: str = ""

    def __post_init__(self):
        object.__setattr__(self, "rule", self.rule or self.name)
        object.__setattr__(self, "caption", self.caption or f"../report/{self.name}.rst")
        object.__setattr__(self, "benchmark", self.benchmark or ("tables", self.name))


@dataclass(frozen=True)
class Experiment:
    """One experiment of the study.

    `name`: its `experiments.{name}` config section (and, but for a variant, its folder's); `label`: what it is
    (the GPU-hour table's row). `targets(cfg)`: its `Targets`. `trains(cfg)`: the (direction, run) pairs whose results it
    gives (`plan.models.trained_models`). `names(cfg)`: the configured models it names (None: it names none), under the key
    `experiments.{name}.{names_key}` (the unknown-model check). `derives(cfg)`: the runs it derives from
    configured models, {name: model entry} (`plan.models.all_models`). `check(cfg)`: its config checks (each
    raises ConfigError), run by `config.validate` after the unknown-model check. `reads(cfg)`: the records of
    other experiments its tables and figures read too (Table 5's supervised rows are the style experiment's),
    so that what one of its tables trains is known from the registry (`plan.models.experiment_trainings`).
    `figure_records(cfg)`: the records its figures read that neither `targets(cfg).records` nor its tables
    list (the shortening experiment's groupings), so that every trained model's evaluation is known from the
    registry (`plan.evaluation`). `tables`: how each of its tables is made (`Table`), one rule each. `sections`:
    its sections of the rendered results (`Section`); `results`: the CSVs they read beside a run's records, {name:
    its path given the results folder}, each the run's attribute of that name (reporting.results.Run; None where
    the file is missing)."""
    name: str
    label: str
    targets: Callable[[dict], Targets]
    trains: Callable[[dict], list[tuple[str, str]]] = _none
    names: Callable[[dict], list[str]] | None = None
    names_key: str = "models"
    derives: Callable[[dict], dict[str, dict]] = _empty
    check: Callable[[dict], None] = _nothing
    reads: Callable[[dict], list[str]] = _none
    figure_records: Callable[[dict], list[str]] = _none
    tables: tuple[Table, ...] = ()
    sections: tuple[Section, ...] = ()
    results: dict[str, Callable[[Path], Path]] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("targets", "trains", "derives", "reads", "figure_records") + (("names",) if self.names else ()):
            object.__setattr__(self, name, _of_validated(getattr(self, name), f"experiment '{self.name}' {name}"))


# {name: experiment}, in registration order (mtcue/experiments/__init__.py imports them in the study's order).
EXPERIMENTS: dict[str, Experiment] = {}


def register(experiment: Experiment) -> Experiment:
    if experiment.name in EXPERIMENTS:
        raise ValueError(f"experiment '{experiment.name}' registered twice")
    EXPERIMENTS[experiment.name] = experiment
    return experiment
