"""What a newcomer sees, checked as a browser shows it (issue 53): headless Chromium opens the report of a finished
study and the MLflow UI that `make ui` opens. The report lists its tables by title and shows Table 4 with its
numbers; the UI lands on the study's runs in MLflow's machine-learning view (not its GenAI pages), and each model
there is named by its direction and model and carries its run's metrics. The numbers are a demo's en-de BASE and
MTCUE records (tests/data/readme_fixture/). Skipped where there is no Chromium; `MTCUE_SCREENSHOTS=docs/img` saves
the screenshots docs/results-and-tracking.md shows."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from base64 import b64decode
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from PIL import Image

from conftest import REPO
from mtcue.cli import main
from test_tracking import _free_port, wait_healthy

pytestmark = pytest.mark.slow  # a stubbed study, its report, an MLflow server and a browser

RECORDS = REPO / "tests" / "data" / "readme_fixture" / "records"
MTCUE = str(Path(sys.executable).parent / "mtcue")
ENV = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}


def chromium(url: str, *args: str, size: tuple[int, int] = (1300, 800)) -> str:
    """Headless Chromium's standard output for `url` (the page's DOM with --dump-dom) once its scripts have run."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no Chromium to look with (apt-get install chromium)")
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--window-size={size[0]},{size[1]}", "--virtual-time-budget=20000", *args, url],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dom(url: str) -> str:
    return chromium(url, "--dump-dom")


def screenshot(url: str, name: str, tmp_path: Path, size: tuple[int, int]) -> None:
    """The page as a PNG of `size`, in 256 colours (a few tens of KB); kept in $MTCUE_SCREENSHOTS as `name`.png."""
    png = tmp_path / f"{name}.png"
    chromium(url, f"--screenshot={png}", size=size)
    image = Image.open(png)
    assert image.size == size
    image.quantize(256).save(png, optimize=True)
    if folder := os.environ.get("MTCUE_SCREENSHOTS"):
        shutil.copy(png, REPO / folder / png.name)


def in_view(report: Path, script: str) -> Path:
    """A copy of Snakemake's report that runs `script` once loaded (its app, `app`, has no address for a view)."""
    page = report.with_name(f"view-{len(list(report.parent.glob('view-*')))}.html")
    head, tail = report.read_text().rsplit("</body>", 1)
    page.write_text(f'{head}<script>window.addEventListener("load", () => setTimeout(() => {{{script}}}, 300));'
                    f"</script></body>{tail}")
    return page


def records(kind: str) -> list[str]:
    return sorted(str(p) for p in (RECORDS / kind).rglob("*.json"))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """The report of the demo made to look finished (tests/stub_study.py), its Table 4 built from real records."""
    study = tmp_path_factory.mktemp("study")
    shutil.copy(REPO / "config" / "config.yaml", study / "config.yaml")
    subprocess.run([sys.executable, str(REPO / "tests" / "stub_study.py"), str(REPO / "Snakefile"),
                    str(study / "config.yaml"), str(study)], check=True, capture_output=True, cwd=REPO)
    tables = study / "results" / "tables"
    stub = (tables / "table4_quality.html").stat()
    for f in tables.glob("table4_quality.*"):
        f.unlink()
    subprocess.run([MTCUE, "table", "--records", *records("score"), "--comet-records", *records("comet"),
                    "--train-records", *records("train"), "--bootstrap-samples", "200", "--alpha", "0.05",
                    *(arg for ext in ("csv", "md", "html")
                      for arg in (f"--{ext}", f"results/tables/table4_quality.{ext}"))],
                   cwd=study, check=True, capture_output=True)
    for f in tables.glob("table4_quality.*"):  # as old as the stub's: the study's MLflow page stays up to date
        os.utime(f, ns=(stub.st_atime_ns, stub.st_mtime_ns))
    here = os.getcwd()
    os.chdir(study)  # make report's folder
    try:
        assert main(["report", "--out", "results/report.html", "--configfile", "config.yaml", "--snakefile",
                     str(REPO / "Snakefile")]) == 0
    finally:
        os.chdir(here)
    return study / "results" / "report.html"


def test_the_report_lists_every_table_by_its_title(report, tmp_path):
    shown = in_view(report, 'app.showCategory("Tables");')
    page = dom(shown.as_uri())
    results = json.loads(re.search(r'var results = (\{.*?\});\s*</script>', report.read_text(), re.S).group(1))
    titles = [r["labels"]["name"] for path, r in results.items() if path.startswith("results/tables/")]
    assert len(titles) == 11 and "Table 4: translation quality" in titles
    assert [t for t in titles if f">{t}<" not in page] == []
    screenshot(shown.as_uri(), "report-tables", tmp_path, (1300, 760))


def test_the_report_shows_table4_with_its_numbers(report, tmp_path):
    shown = in_view(report, 'const p = "results/tables/table4_quality.html"; '
                            'app.setView({content: "html", contentPath: results[p].data_uri, resultPath: p});')
    frame, = re.findall(r'<iframe src="data:text/html;[^"]*base64,([^"]+)"', dom(shown.as_uri()))
    table = b64decode(frame).decode()
    assert "<title>Translation quality, study demo (cf. MTCue paper, Table 4)</title>" in table
    bleu = table.split("<h2>BLEU</h2>")[1].split("</table>")[0]
    # en-de and avg of BASE and MTCUE, each linked to its run, MTCUE's en-de the best (bold)
    assert re.findall(r'<td><a href="\.\./mlflow/demo\.html#[^"]+">(?:<b>)?(\d+\.\d\d)', bleu) == \
        ["84.70", "84.70", "87.77", "87.77"]
    assert "<b>87.77</b>" in bleu
    screenshot(shown.as_uri(), "report-table4", tmp_path, (1100, 640))


@pytest.fixture
def ui(tmp_path):
    """`mtcue ui` (what `make ui` runs) in the folder of a study whose records and models are synced: (the address
    it prints, the store's URI)."""
    shutil.copytree(RECORDS, tmp_path / "results" / "records")
    for record in (tmp_path / "results" / "records").rglob("*.json"):  # the files the records name
        for name in re.findall(r'"(?:hyp|model)_path": "([^"]+)"', record.read_text()):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text("stand-in\n")
    synced = subprocess.run([MTCUE, "track", "--study", "demo", "--uri", "sqlite:///results/mlflow.db", "--artifacts",
                             "--records", *(str(p) for p in (tmp_path / "results" / "records").rglob("*.json"))],
                            cwd=tmp_path, env=ENV, capture_output=True, text=True)
    assert synced.returncode == 0, synced.stderr[-3000:]
    port = _free_port()
    log = (tmp_path / "ui.log").open("w+")
    server = subprocess.Popen([MTCUE, "ui", "--port", str(port)], cwd=tmp_path, env=ENV, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_healthy(server, f"http://127.0.0.1:{port}", tmp_path / "ui.log")
        yield (tmp_path / "ui.log").read_text().splitlines()[0], f"sqlite:///{tmp_path}/results/mlflow.db"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()
    assert not (tmp_path / "mlartifacts").exists() and not (tmp_path / "mlflow.db").exists()


def test_make_ui_lands_on_the_studys_runs_in_the_machine_learning_view(ui, tmp_path):
    printed, uri = ui
    experiment = MlflowClient(uri).get_experiment_by_name("demo").experiment_id
    assert re.fullmatch(rf"study demo: (http://127\.0\.0\.1:\d+)/#/experiments/{experiment}/runs"
                        r"\?workflowType=machine_learning&viewStateShareKey=mtcue-runs", printed)
    address = printed.removeprefix("study demo: ")
    page = dom(address)
    # the runs list, not the GenAI pages
    assert "<strong>2</strong> matching runs" in page and "en-de/mtcue" in page and "en-de/base" in page
    assert all(column in page for column in ("test_bleu", "test_acc_all", "formality_average"))
    screenshot(address, "mlflow-runs", tmp_path, (1700, 560))


def test_each_model_in_the_ui_is_named_by_its_direction_and_model_and_shows_its_metrics(ui, tmp_path):
    printed, uri = ui
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("demo").experiment_id
    base = printed.removeprefix("study demo: ").split("/#/")[0]
    models = f"{base}/#/experiments/{experiment}/models?workflowType=machine_learning"
    page = dom(models)
    assert ">en-de_mtcue<" in page and ">en-de_base<" in page
    model, = client.search_logged_models([experiment], filter_string="name = 'en-de_mtcue'")
    run = client.get_run(model.source_run_id)
    its_page = f"{base}/#/experiments/{experiment}/models/{model.model_id}?workflowType=machine_learning"
    page = dom(its_page)
    assert f"Metrics ({len(run.data.metrics)})" in page and f"Parameters ({len(run.data.params)})" in page
    assert len(run.data.metrics) > 10
    screenshot(models, "mlflow-models", tmp_path, (1700, 400))
    screenshot(its_page, "mlflow-model", tmp_path, (1700, 760))
