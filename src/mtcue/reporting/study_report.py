"""The study's HTML report of what is built (`make report`, `mtcue report`): Snakemake's report of the tables and
figures that exist, however few (a study grown one table at a time), the list of those not built yet, and the
study's MLflow page rebuilt for the UI's address, through which each table number links to its run.

Snakemake's `--report` of the whole study stops at the first result that does not exist; given the built results
as targets, it reports those. It writes its file as it goes, so it writes into a scratch folder beside `out`, and
the report replaces `out` only when complete: an interrupted `make report` leaves the previous report, never half
of a new one.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from mtcue.io import scratch_directory
from mtcue.layout import mlflow_page
from mtcue.plan.experiments import report_files

log = logging.getLogger(__name__)


def result_status(cfg: dict, folder: Path = Path(".")) -> tuple[list[str], list[str]]:
    """(built, not built) of the study's tables and figures under `folder` (a study's working directory), each
    by its files (a table: CSV, Markdown and HTML), in the registry's order; a result is built when all its
    files are."""
    results: dict[tuple[str, str], list[str]] = {}
    for f in report_files(cfg):
        results.setdefault((str(Path(f).parent), Path(f).stem), []).append(f)
    built = [f for files in results.values() if all((folder / f).is_file() for f in files) for f in files]
    missing = [f"{parent}/{stem}" for (parent, stem), files in results.items() if files[0] not in built]
    return built, missing


def write_report(cfg: dict, out: str, snakefile: str, configfile: str | None = None, ui: str = "") -> list[str]:
    """Write the report of the built results to `out` (run in the study's working directory); returns the
    results not built yet. With the whole study built and synced (its MLflow page exists), the page is rebuilt
    first when `ui` (the MLflow UI's address) changed it, and reported: nothing else is run."""
    built, missing = result_status(cfg)
    if not built:
        raise FileNotFoundError("no table or figure of this study is built yet: build one first (e.g. "
                                "`snakemake --cores 2 table4_quality`), then `make report`")
    snakemake = lambda *targets: [str(Path(sys.executable).parent / "snakemake"), *targets, "--snakefile", snakefile,
                                  *(["--configfile", configfile] if configfile else [])]
    page = str(mlflow_page(cfg["study"]))
    if Path(page).is_file() and not missing:
        # the page's params hold the UI's address: a changed one reruns this rule, and no other is allowed to run
        subprocess.run([*snakemake(page), "--cores", "1", "--allowed-rules", "mlflow_study"],
                       env={**os.environ, "MTCUE_MLFLOW_UI": ui}, check=True)
        built.append(page)
    # the report's front page names what it leaves out (the Snakefile hands it to the page's template)
    names = " ".join(Path(m).name for m in missing)
    with scratch_directory(".mtcue-report-", parent=Path(out).resolve().parent) as scratch:
        partial = scratch / Path(out).name  # Snakemake takes the format from the suffix
        subprocess.run([*snakemake(*built), "--report", str(partial)],
                       env={**os.environ, "MTCUE_REPORT_NOT_BUILT": names}, check=True)
        os.replace(partial, out)
    if missing:
        log.warning("%s: %d results not built yet, left out: %s", out, len(missing), ", ".join(missing))
    return missing
