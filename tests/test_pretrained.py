"""Offline compute nodes (issue 44, docs/paper-scale.md "Offline compute nodes"): the study's pretrained models
are fetched once into results/pretrained, and a job, offline, reads them only from there."""
import filecmp
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, SNAKEMAKE, dry_run, make_sample
from mtcue.pretrained import folder_name, local_source

PYTHON_M = [sys.executable, "-m", "mtcue.cli"]
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "MTCUE_WARM": "0"}


def no_network() -> list[str]:
    """A command prefix that starts its command in a network namespace of its own (no interface but
    loopback, down): a compute node without internet."""
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True) if shutil.which("unshare") else None
    if probe is None or probe.returncode:
        pytest.skip("needs `unshare -rn` (util-linux, user namespaces) to start a job without network")
    return ["unshare", "-rn"]


def mtcue(*args, env=None, prefix=()):
    return subprocess.run([*prefix, *PYTHON_M, *args], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "MTCUE_WARM": "0", **(env or {})})


@pytest.fixture
def corpus(tmp_path):
    samples = [make_sample(i, en=f"Line {i} of the film.", previous_en=[f"Line {i - 1}."] if i else [],
                           meta={"genre": "Drama"}) for i in range(3)]
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    return path


def test_the_fetch_copies_a_local_source_and_an_offline_embedding_job_reads_the_copy(tmp_path, corpus):
    source = tmp_path / "source" / "minilm"
    shutil.copytree(local_source("all-MiniLM-L6-v2"), source)
    folder = tmp_path / "results" / "pretrained"
    fetched = mtcue("fetch-pretrained", "--folder", str(folder), "--encoder", str(source))
    assert fetched.returncode == 0, fetched.stderr
    entry = json.loads((folder / "manifest.json").read_text())[str(source)]
    copy = folder / entry["path"]
    assert entry == {"path": folder_name(str(source)), "source": str(source)}
    assert folder_name(str(source)) == \
        f"{str(source).strip('/').replace('/', '--')}-{hashlib.sha256(str(source).encode()).hexdigest()[:8]}"
    assert filecmp.dircmp(source, copy).diff_files == [] and (copy / "model.safetensors").is_file()
    assert sorted(p.name for p in source.iterdir()) == sorted(p.name for p in copy.iterdir() if p.name != ".mtcue-output.json")
    shutil.rmtree(tmp_path / "source")  # the copy is now the only one: the job must read it

    store = tmp_path / "store"
    job = mtcue("embed", "--store", f"en-de={store}", "--corpus", f"en-de:test={corpus}", "--columns", "doc0,doc1,genre",
                "--encoder", str(source), env={"MTCUE_PRETRAINED": str(folder), **OFFLINE}, prefix=no_network())
    assert job.returncode == 0, job.stderr
    manifest = json.loads((store / "manifest.json").read_text())
    assert manifest["model"] == str(source) and manifest["n_vectors"] == 6  # 3 lines, 2 previous lines, 1 genre
    from mtcue.context.embed import load_encoder

    texts = ["Line 0 of the film.", "Drama"]
    index = np.load(store / "test.index.npy")
    vectors = np.load(store / "vectors.npy")[[index[0, 0], index[0, 2]]]
    assert np.allclose(vectors, load_encoder("all-MiniLM-L6-v2")(texts), atol=1e-5)  # the same model, from the copy


def test_a_job_reads_its_models_only_from_the_folder(tmp_path, corpus):
    """The bundled encoder is in the wheel, but a job given the study's folder does not look there."""
    folder = tmp_path / "pretrained"
    folder.mkdir()
    job = mtcue("embed", "--store", f"en-de={tmp_path / 'store'}", "--corpus", f"en-de:test={corpus}", "--columns",
                "doc0", "--encoder", "all-MiniLM-L6-v2", env={"MTCUE_PRETRAINED": str(folder), **OFFLINE})
    assert job.returncode == 1 and "Traceback" not in job.stderr
    assert (f"embed failed: pretrained model 'all-MiniLM-L6-v2' is not in {folder} (jobs read their models only from "
            "there, offline): run `snakemake pretrained_models` where the Hugging Face hub is reachable") in job.stderr
    assert not (tmp_path / "store").exists()


def test_a_model_that_cannot_be_had_fails_the_fetch_naming_it_and_what_to_do(tmp_path):
    folder = tmp_path / "pretrained"
    fetched = mtcue("fetch-pretrained", "--folder", str(folder), "--encoder", "all-MiniLM-L6-v2",
                    "--encoder", "sentence-transformers/all-MiniLM-L12-v2", prefix=no_network())
    assert fetched.returncode == 1 and "Traceback" not in fetched.stderr
    assert (f"fetch-pretrained failed: sentence encoder 'sentence-transformers/all-MiniLM-L12-v2' is not in {folder} "
            "and could not be fetched from the Hugging Face hub") in fetched.stderr
    assert ("Run `snakemake pretrained_models` where the hub is reachable (a cluster's login node), or set the "
            "encoder (context.encoder") in fetched.stderr
    assert not (folder / "manifest.json").exists()  # no manifest, so the study goes no further
    assert not (folder / folder_name("sentence-transformers/all-MiniLM-L12-v2")).exists()

    # COMET: listed as unavailable where it is optional (the demo), a failure where it is required (the paper)
    comet = ["--comet-model", "Unbabel/wmt20-comet-da"]
    assert mtcue("fetch-pretrained", "--folder", str(folder), *comet, prefix=no_network()).returncode == 0
    unavailable = json.loads((folder / "manifest.json").read_text())["Unbabel/wmt20-comet-da"]["unavailable"]
    assert unavailable.startswith("COMET model 'Unbabel/wmt20-comet-da' is unavailable: it is not in the local hub cache")
    missing = tmp_path / "no-comet"  # a local checkpoint that is not there: said so, as before the folder
    assert mtcue("fetch-pretrained", "--folder", str(folder), "--comet-model", str(missing)).returncode == 0
    assert json.loads((folder / "manifest.json").read_text())[str(missing)]["unavailable"].endswith(
        f"is unavailable: no checkpoint at {missing}. It needs a one-time download from the Hugging Face hub "
        "(Unbabel/wmt20-comet-da is ~2.3 GB, plus its encoder's tokenizer): run this step once with network access, "
        "or point evaluation.comet.model at a local checkpoint (.../checkpoints/model.ckpt or its model directory)")
    (folder / "manifest.json").unlink()
    required = mtcue("fetch-pretrained", "--folder", str(folder), *comet, "--comet-required", prefix=no_network())
    assert required.returncode == 1 and f"fetch-pretrained failed: {unavailable}" in required.stderr


def test_the_fetch_names_every_model_of_the_study_and_runs_before_the_steps_that_load_them():
    paper = dry_run("results/pretrained/manifest.json", "--configfile", "config/paper.yaml")
    assert paper.returncode == 0, paper.stderr
    fetch = next(line for line in paper.stdout.splitlines() if "mtcue fetch-pretrained" in line)
    assert fetch.split("mtcue fetch-pretrained ")[1].split(" 2>")[0] == (
        "--folder results/pretrained --encoder distilbert-base-multilingual-cased --encoder distilbert-base-uncased "
        "--encoder sentence-transformers/all-MiniLM-L12-v2 "
        "--encoder sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2 "
        "--comet-model Unbabel/wmt20-comet-da --comet-required")
    demo = dry_run("results/comet/model.json", "results/embed/en-de/all-MiniLM-L6-v2.mean", "--configfile", "config/config.yaml")
    assert demo.returncode == 0, demo.stderr
    # a job's block, inside a group job's listing too (indented): its rule name, then its input line
    inputs = {block.split(":", 1)[0]: re.search(r"\binput: (.*)", block)[1].split(", ")
              for block in re.split(r"\n\s*rule ", demo.stdout)[1:] if re.search(r"\binput: ", block)}
    assert "pretrained_models" not in inputs  # it reads nothing: it can run first
    assert "results/pretrained/manifest.json" in inputs["comet_model"]
    assert "results/pretrained/manifest.json" in inputs["embed_all-MiniLM-L6-v2.mean"]


def test_the_demo_fetches_its_encoder_where_snakemake_runs(tmp_path):
    """The rule for real on the demo's config: the bundled encoder copied, COMET listed as unavailable."""
    run = subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path), "--cores", "1",
                          "results/pretrained/manifest.json", "--configfile", "config/config.yaml"], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    manifest = json.loads((tmp_path / "results" / "pretrained" / "manifest.json").read_text())
    assert sorted(manifest) == ["Unbabel/wmt20-comet-da", "all-MiniLM-L6-v2"]
    assert manifest["all-MiniLM-L6-v2"] == {"path": "all-MiniLM-L6-v2", "source": str(local_source("all-MiniLM-L6-v2"))}
    assert "unavailable" in manifest["Unbabel/wmt20-comet-da"]


def test_a_local_comet_checkpoint_is_copied_and_scored_from_the_copy(tmp_path, corpus, monkeypatch):
    """The rehearsal's COMET stand-in (a seeded regression model on the bundled MiniLM) as the study's COMET:
    fetched, its source removed, then decided (comet_model) and scored offline from the study's folder."""
    from mtcue.cli import main
    from mtcue.records import read_record
    from mtcue.rehearsal.stand_ins import comet_stand_in

    source = comet_stand_in(tmp_path / "comet-source", local_source("all-MiniLM-L6-v2"))
    folder = tmp_path / "pretrained"
    assert main(["fetch-pretrained", "--folder", str(folder), "--comet-model", str(source), "--comet-required"]) == 0
    entry = json.loads((folder / "manifest.json").read_text())[str(source)]
    assert entry == {"path": f"{folder_name(str(source))}/checkpoints/model.ckpt", "source": str(source)}
    assert filecmp.cmp(source / "checkpoints" / "model.ckpt", folder / entry["path"], shallow=False)
    shutil.rmtree(source)

    for name, value in {"MTCUE_PRETRAINED": str(folder), **OFFLINE}.items():
        monkeypatch.setenv(name, value)
    known = tmp_path / "model.json"
    assert main(["comet-model", "--comet-model", str(source), "--required", "--out", str(known)]) == 0
    assert json.loads(known.read_text())["checkpoint"] == str(folder / entry["path"])
    hyps = tmp_path / "hyps.txt"
    hyps.write_text("".join(f"Zeile {i} des Films.\n" for i in range(3)))
    out = tmp_path / "record.json"
    assert main(["comet", "--hyps", str(hyps), "--corpus", str(corpus), "--direction", "en-de", "--model", "base",
                 "--split", "test", "--study", "t", "--config-hash", "abc", "--comet-model", str(source), "--required",
                 "--availability", str(known), "--out", str(out)]) == 0
    record = read_record(out, "comet")
    assert record["unavailable"] is None and len(record["segment_scores"]) == 3


def test_the_study_sets_its_jobs_offline_and_leaves_the_process_that_reads_it_as_it_was(tmp_path, monkeypatch):
    """Snakemake run in-process (critical_path's DAG; a notebook): every job's shell starts offline, reading
    this study's folder, but the process itself keeps its environment, so a model it loads afterwards is not
    looked for in that study's folder (before: MTCUE_PRETRAINED stayed set, and Translator.load failed)."""
    from snakemake.shell import shell

    from mtcue.reporting.critical_path import study_dag

    names = ("MTCUE_PRETRAINED", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE")
    for name in names:
        monkeypatch.delenv(name, raising=False)
    assert study_dag(REPO / "Snakefile", [REPO / "config" / "tiny.yaml"])
    assert {n: os.environ.get(n) for n in names} == dict.fromkeys(names)
    prefix = shell._get_process_prefix()
    assert prefix.startswith("set -euo pipefail; ")
    assert "export HF_HUB_OFFLINE=1;" in prefix and "export TRANSFORMERS_OFFLINE=1;" in prefix
    assert re.search(r"export MTCUE_PRETRAINED=\S+/results/pretrained;", prefix)


def test_comet_null_leaves_the_option_out_of_the_fetch(tmp_path):
    config = tmp_path / "no-comet.yaml"
    config.write_text((REPO / "config" / "config.yaml").read_text() + "\n")
    override = tmp_path / "override.yaml"
    override.write_text("evaluation:\n  comet: {model: null, required: true}\n")
    planned = dry_run("results/pretrained/manifest.json", "--configfile", str(config), str(override))
    assert planned.returncode == 0, planned.stderr
    fetch = next(line for line in planned.stdout.splitlines() if "mtcue fetch-pretrained" in line)
    assert fetch.split("mtcue fetch-pretrained ")[1].split(" 2>")[0].split() == \
        ["--folder", "results/pretrained", "--encoder", "all-MiniLM-L6-v2", "--comet-required"]  # no 'None' model


def test_two_names_of_one_sanitised_form_get_folders_apart():
    assert folder_name("all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"  # a plain name is its own folder
    names = ["/m/x", "/m x", "m/x", "m--x"]
    assert len({folder_name(n) for n in names}) == 4
    assert folder_name("/m/x") == f"m--x-{hashlib.sha256(b'/m/x').hexdigest()[:8]}"


@pytest.mark.parametrize("encoder", ["", ".", "./", ".."])
def test_an_encoder_naming_the_working_folder_is_refused_before_any_copy(tmp_path, monkeypatch, encoder):
    from mtcue.config import validate
    from mtcue.pretrained import fetch
    from mtcue.study import ConfigError

    with pytest.raises(ConfigError, match="context.encoder: .* does not match"):
        validate({"context": {"encoder": encoder}})
    with pytest.raises(ConfigError, match=r"models.m.context_encoder_per_direction.en-de: .* does not match"):
        validate({"models": {"m": {"type": "mtcue", "context_encoder_per_direction": {"en-de": encoder}}}})
    study = tmp_path / "study"
    (study / "results").mkdir(parents=True)
    (study / "results" / "notes.txt").write_text("mine\n")
    monkeypatch.chdir(study / "results" if encoder == ".." else study)
    with pytest.raises(ValueError, match=f"model '{re.escape(str(Path(encoder)))}': holds .*results/pretrained, the "
                                         "folder it would be copied into; name the model's own folder"):
        fetch(study / "results" / "pretrained", [encoder])
    assert [p.name for p in (study / "results" / "pretrained").iterdir()] == []  # nothing copied


def test_the_fetch_keeps_a_manifest_it_did_not_write_and_names_a_damaged_one(tmp_path):
    from mtcue.cli import main
    from mtcue.pretrained import read_manifest, resolve

    source = tmp_path / "enc"
    source.mkdir()
    (source / "config.json").write_text("{}\n")
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "manifest.json").write_text('{"my": "notes"}\n')
    assert main(["fetch-pretrained", "--folder", str(folder), "--encoder", str(source)]) == 1
    assert (folder / "manifest.json").read_text() == '{"my": "notes"}\n' and sorted(os.listdir(folder)) == \
        ["manifest.json"]  # refused before any copy
    for text, problem in (('[{"path": "x"}]', "not a mapping of model names to entries"),
                          ('{"my": "notes"}', "'my' is not a model's entry"),
                          ('{"m": {"source": "x"}}', "'m' is not a model's entry"),
                          ('{"m": ', "1: not valid JSON")):
        (folder / "manifest.json").write_text(text)
        with pytest.raises(ValueError, match=re.escape(f"{folder / 'manifest.json'}") + ".*" + re.escape(problem)):
            read_manifest(folder)
    # a path out of the folder, as written by hand or by a tampered copy
    outside = tmp_path / "outside"
    outside.mkdir()
    for path in ("../outside", str(outside)):
        (folder / "manifest.json").write_text(json.dumps({"m": {"path": path, "source": "x"}}))
        os.environ["MTCUE_PRETRAINED"] = str(folder)
        try:
            with pytest.raises(ValueError, match=re.escape(f"{folder / 'manifest.json'}: 'm': names ") + ".*" +
                               re.escape(f"which lies outside {folder}; the manifest was changed by hand")):
                resolve("m")
        finally:
            del os.environ["MTCUE_PRETRAINED"]
