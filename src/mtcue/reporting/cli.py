"""Steps of the reporting stage: tables and figures from records, the MLflow mirror."""
from __future__ import annotations

import json
import logging
from pathlib import Path

from mtcue.options import json_option, options, positive_int, significance_level

log = logging.getLogger("mtcue")


def _table_options(s) -> None:
    s.add_argument("--csv", required=True)
    s.add_argument("--md", required=True)
    s.add_argument("--html", required=True, help="the HTML rendering (the report's), written beside the Markdown: "
                                                 "the --md path with .html")


def _table_files(a) -> list:
    """A table's --csv, --md and --html; refused before any work where --html is not beside the Markdown."""
    from mtcue.reporting.kit import html_path

    if Path(a.html) != html_path(a.md):
        raise ValueError(f"--html {a.html}: a table writes its HTML rendering beside its Markdown, {html_path(a.md)}")
    return [a.csv, a.md, a.html]


def _runs(a, *records: list[dict]):
    """The MLflow run of each number of a table, named from its records (kit.Runs), its HTML (if any) linking them."""
    from mtcue.reporting.kit import Runs

    return Runs.of_records([r for group in records for r in group], getattr(a, "html", None))


def cmd_figure(a):
    from mtcue.plots import save_svg
    from mtcue.records import load_records
    from mtcue.reporting import figures

    records = load_records(a.records, figures.RECORD_KIND[a.kind])
    save_svg(figures.FIGURES[a.kind](records), a.out)


def cmd_style_levels(a):
    from mtcue.records import load_records
    from mtcue.experiments.style.figure import write_style_levels

    write_style_levels(load_records(a.records, "formality"), a.csv, a.svg)


def cmd_groupings(a):
    from mtcue.records import load_records
    from mtcue.reporting.groupings import write_groupings

    records = load_records(a.records, "groupings")
    write_groupings(records, _runs(a, records), a.csv, a.svg)


def cmd_figure4(a):
    import json

    from mtcue.records import load_records
    from mtcue.experiments.fewshot.figure import write_figure4
    from mtcue.reporting.kit import Bootstrap

    records = load_records(a.records, "eamt22")
    write_figure4(records, json.loads(a.points), a.csv, a.png, _runs(a, records),
                  Bootstrap(n=a.bootstrap_samples, alpha=a.alpha))


def _by_kind(items: list[str], option: str) -> dict[str, str]:
    """KIND=VALUE options as {kind: value}."""
    pairs = [item.split("=", 1) for item in items]
    bad = [item for item, pair in zip(items, pairs) if len(pair) != 2]
    if bad:
        raise ValueError(f"{option} takes KIND=VALUE, got {bad}")
    return dict(pairs)


def _table_command(step):
    """The command of a table's step (plan.registry.Step): its options' values as its writer takes them, by
    keyword."""
    def command(a):
        from mtcue.records import load_records
        from mtcue.reporting import kit

        values, linked = {}, []
        for option in step.options:
            value = getattr(a, option.name)
            if option.records:
                value = load_records(value, None if option.records == "any" else option.records)
                linked += [value] if option.linked else []
            elif option.json:
                value = json.loads(value)
            elif option.pairs:
                value = _by_kind(value, option.flag)
            values[option.name] = value
        if step.bootstrap:
            values["bootstrap"] = kit.Bootstrap(n=a.bootstrap_samples, alpha=a.alpha)
        step.writer()(**values, csv=a.csv, md=a.md, runs=_runs(a, *linked))
    return command


def _add_option(s, option) -> None:
    """A Step's option as argparse's: records a list of files, pairs KIND=VALUE items."""
    kwargs = {"dest": option.name, "help": option.help or None, "metavar": option.metavar}
    if option.records:
        kwargs |= {"nargs": "+", "required": True} if option.required else {"nargs": "*", "default": []}
    elif option.pairs:
        kwargs |= {"nargs": "+", "action": "extend", "default": []}
    else:
        kwargs |= {"nargs": option.nargs, "default": option.default, "required": option.required,
                   "choices": option.choices}
    s.add_argument(option.flag, **kwargs)


def _register_tables(step) -> None:
    """Each registered experiment's table steps (`Table.step`), once each (the quality experiment's four tables share
    `mtcue table`): a table reads its options' records and writes its three files."""
    from mtcue.plan import EXPERIMENTS

    steps = {table.step.name: table.step for experiment in EXPERIMENTS.values() for table in experiment.tables
             if table.step}
    for declared in steps.values():
        s = step(declared.name, _table_command(declared), declared.help, _table_files)
        for option in declared.options:
            _add_option(s, option)
        if declared.bootstrap:
            s.add_argument("--bootstrap-samples", type=positive_int, default=1000,
                           help="resamples of the paired bootstrap (significance, intervals)")
            s.add_argument("--alpha", type=significance_level, default=0.05,
                           help="significance level: intervals cover 1 - alpha")
        _table_options(s)


def cmd_track(a):
    from pathlib import Path

    from mtcue.io import atomic_write_text
    from mtcue.records import read_record
    from mtcue.models.runs import resolve_uri
    from mtcue.reporting.tracking import run_artifacts, sync_records

    experiments = json_option(a.experiments, "--experiments")
    if not isinstance(experiments, dict):
        raise ValueError(f"--experiments: give a JSON object {{\"direction/model\": [experiment, ...]}}, not "
                         f"{a.experiments!r}")
    uri = resolve_uri(a.uri)
    records = {Path(p): read_record(p) for p in a.records}
    files, models = run_artifacts(records) if a.artifacts else ({}, {})
    runs = sync_records(uri, a.study, list(records.values()), experiments, files, models, a.copy_models)
    log.info("synced records of study '%s' to %s", a.study, uri)
    if a.run_ids:
        # The experiment is named after the study (`mtcue track-study` reads this).
        atomic_write_text(a.run_ids, json.dumps({"tracking_uri": uri, "experiment": a.study, "runs": runs},
                                                indent=1, sort_keys=True) + "\n")


def cmd_track_study(a):
    from pathlib import Path

    from mtcue.io import atomic_write_text, read_json
    from mtcue.reporting.tracking import links_html, sync_study_files

    ids = read_json(a.run_ids)
    missing = [k for k in ("tracking_uri", "experiment", "runs") if not isinstance(ids, dict) or k not in ids]
    if missing:
        raise ValueError(f"{a.run_ids}: no {', '.join(missing)}: not a run-ids file `mtcue track --run-ids` wrote; "
                         "rerun the study's mlflow_sync to write it again")
    files = {Path(f).relative_to("results").as_posix() if Path(f).parts[0] == "results" else Path(f).name: Path(f)
             for f in a.files}
    experiment_id, run_id = sync_study_files(ids["tracking_uri"], ids["experiment"], files)
    log.info("logged %d tables and figures of study '%s' into its run %s", len(files), ids["experiment"], run_id)
    atomic_write_text(a.html, links_html(ids["tracking_uri"], ids["experiment"], experiment_id, run_id, ids["runs"],
                                         a.ui))


def cmd_ui(a):
    import os
    import sys

    from mtcue.models.runs import resolve_uri, sqlite_path
    from mtcue.reporting.tracking import runs_url, study_experiments

    uri = resolve_uri(a.uri)
    db = sqlite_path(uri)
    if db is not None and not db.is_file():  # MLflow would create an empty store there
        raise FileNotFoundError(f"no MLflow store at {db.resolve()} ({uri}): run from the study's folder after its "
                                "mlflow_sync (`make demo` runs it), or give --uri")
    studies = study_experiments(uri)
    if not studies:
        raise ValueError(f"{uri} holds no study's runs: run the study's mlflow_sync first")
    base = f"http://{a.host}:{a.port}"
    for study, experiment_id in studies.items():
        print(f"study {study}: {runs_url(base, experiment_id)}", flush=True)
    mlflow = str(Path(sys.executable).parent / "mlflow")
    # A sqlite store's artifacts lie beside it (the sync's mlartifacts/), not in the folder the UI starts from.
    artifacts = ["--artifacts-destination", str(db.parent.resolve() / "mlartifacts")] if db else []
    os.execv(mlflow, [mlflow, "ui", "--backend-store-uri", uri, *artifacts, "--host", a.host, "--port", str(a.port)])


def cmd_readme_results(a):
    from mtcue.reporting import kit, readme

    runs = [readme.Run.load(d) for d in a.records]
    bootstrap = kit.Bootstrap(n=a.bootstrap_samples, alpha=a.alpha)
    current = readme.update_readme(a.readme, runs, bootstrap, check=a.check, results_page=a.results_page)
    where = " and ".join(filter(None, (a.readme, a.results_page)))
    if a.check and not current:
        raise ValueError(f"{where}: their results are not those of {', '.join(a.records)}; run `make readme`")
    log.info("%s: results %s from %s", where, "current" if current else "rendered", ", ".join(a.records))


def cmd_report(a):
    from mtcue import config as cfgmod
    from mtcue.reporting.study_report import write_report

    cfg = cfgmod.load(a.configfile or "config/config.yaml")
    missing = write_report(cfg, a.out, a.snakefile, a.configfile, a.ui)
    log.info("%s: the study's built tables and figures%s", a.out, f"; not built yet: {len(missing)}" if missing else "")


def cmd_critical_path(a):
    from mtcue.reporting.critical_path import write_critical_path

    r = write_critical_path(a.snakefile, a.configfile or ["config/config.yaml"], a.study, a.out, tuple(a.cores))
    log.info("%s: %d jobs, total work %.0f s, critical path %.0f s (%d jobs); projected wall s per cores %s",
             a.out, r["jobs"], r["total_work_s"], r["critical_path_s"], len(r["chain"]), r["projected_wall_s"])


def register(step) -> None:
    _register_tables(step)

    s = step("figure", cmd_figure, "draw a figure (SVG) from records", options("out"))
    s.add_argument("--kind", required=True, choices=["training_curves", "phenomena_accuracy", "bleu_gain"],
                   help="training_curves: loss per epoch (train records); phenomena_accuracy: accuracy per "
                        "phenomenon, model and direction (score records); bleu_gain: BLEU over BASE, this run "
                        "beside the paper (score records)")
    s.add_argument("--records", nargs="+", required=True)
    s.add_argument("--out", required=True, help="the SVG file")

    s = step("figure-style-levels", cmd_style_levels, "the style level sweep (Jeong et al.'s style-control models): "
             "formal accuracy and meaning preservation per level, CSV and SVG, from their formality records",
             options("csv", "svg"))
    s.add_argument("--records", nargs="+", required=True, help="supervised formality records (with `levels`)")
    s.add_argument("--csv", required=True)
    s.add_argument("--svg", required=True)

    s = step("figure-groupings", cmd_groupings, "the shortening paper's Figure 3: each Latent Grouping / Selecting "
             "model's weights of one sentence's pieces in its groups, CSV and SVG, from their groupings records",
             options("csv", "svg"))
    s.add_argument("--records", nargs="+", required=True, help="groupings records (mtcue groupings)")
    s.add_argument("--csv", required=True)
    s.add_argument("--svg", required=True)

    s = step("figure4", cmd_figure4, "Figure 4 (EAMT22 few-shot) from EAMT22 records: CSV and PNG",
             options("csv", "png"))
    s.add_argument("--records", nargs="+", required=True, help="EAMT22 records of every point's runs")
    s.add_argument("--bootstrap-samples", type=positive_int, default=1000,
                   help="resamples of the confidence interval of the first parent's difference to the second")
    s.add_argument("--alpha", type=significance_level, default=0.05, help="the interval covers 1 - alpha")
    s.add_argument("--points", required=True,
                   help="JSON list of {direction, model, setting, per_combination, record} (Fewshot.points)")
    s.add_argument("--csv", required=True)
    s.add_argument("--png", required=True)

    s = step("track", cmd_track, "mirror the records of trained models into MLflow, one run per model and direction",
             options("run_ids"))
    s.add_argument("--study", required=True)
    s.add_argument("--uri", required=True, help="MLflow tracking URI (MLFLOW_TRACKING_URI overrides)")
    s.add_argument("--records", nargs="+", required=True,
                   help="train, score, COMET, formality, EAMT22, contrastive and context-usage records of the study")
    s.add_argument("--experiments", default="{}",
                   help='JSON {"direction/model": [experiment, ...]} (plan.models.trained_models): tag mtcue.experiments')
    s.add_argument("--run-ids", help="after a successful sync, write {direction/model: run id} here (JSON)")
    s.add_argument("--artifacts", action="store_true",
                   help="also log each model's records, the hypotheses they scored and the trained model (an "
                        "MLflow model referring to its folder; run from the study's folder)")
    s.add_argument("--copy-models", action="store_true",
                   help="with --artifacts, copy each model's files into MLflow instead of referring to them "
                        "(config mlflow.copy_models)")

    s = step("track-study", cmd_track_study, "log the study's tables and figures into its MLflow run and write "
             "the report's page of links to the MLflow UI", options("html"))
    s.add_argument("--run-ids", required=True, help="what `mtcue track --run-ids` wrote (store, study, runs)")
    s.add_argument("--files", nargs="+", required=True, help="tables and figures (results/tables/..., "
                   "results/figures/...), logged under tables/ and figures/")
    s.add_argument("--html", required=True, help="the page of links to the MLflow UI (the report's; each table "
                   "number links to its run through it)")
    s.add_argument("--ui", default="", help="the MLflow UI's address the links go to (default: a server's own "
                   "address, else `mlflow ui`'s http://127.0.0.1:5000)")

    s = step("ui", cmd_ui, "the MLflow UI of the study's store; prints the address of each study's runs (MLflow's "
             "machine-learning view, BLEU and the main results as columns)")
    s.add_argument("--uri", help="the store (default MLFLOW_TRACKING_URI, else sqlite:///results/mlflow.db)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=positive_int, default=5000)

    s = step("readme-results", cmd_readme_results, "render the README's results from the records of a run")
    s.add_argument("--records", nargs="+", required=True,
                   help="records folder of the run to show (results/records), then those of other runs "
                        "(other seeds) for the spread between runs")
    s.add_argument("--readme", default="README.md")
    s.add_argument("--results-page", help="the page that gets every section (docs/results.md); the README then gets "
                   "the headlines only")
    s.add_argument("--bootstrap-samples", type=positive_int, default=1000)
    s.add_argument("--alpha", type=significance_level, default=0.05)
    s.add_argument("--check", action="store_true", help="only check that the README holds these results")

    s = step("report", cmd_report, "the study's HTML report of the tables and figures built so far (Snakemake's "
             "report, captioned), naming those not built yet; its MLflow links resolved to the UI's address",
             options("out"))
    s.add_argument("--out", required=True, help="the report's HTML file (results/report.html)")
    s.add_argument("--configfile", help="the study's config, as given to snakemake (default: the embedded "
                   "config/config.yaml)")
    s.add_argument("--snakefile", default="Snakefile")
    s.add_argument("--ui", default="", help="the MLflow UI's address the links go to (default: a tracking "
                   "server's own, else `mlflow ui`'s http://127.0.0.1:5000)")

    s = step("critical-path", cmd_critical_path,
             "the study on more cores: critical path, total work and projected wall time per core count, from "
             "the benchmark files and the DAG", options("out"))
    s.add_argument("--snakefile", default="Snakefile")
    s.add_argument("--configfile", nargs="+", action="extend",
                   help="the study's config files, as given to Snakemake (default config/config.yaml)")
    s.add_argument("--study", default=".", help="the study's folder: its results/benchmarks/ holds the job times")
    s.add_argument("--cores", nargs="+", type=positive_int, default=[2, 4, 8, 16], help="core counts to project")
    s.add_argument("--out", default="results/benchmarks/critical_path.json")
