"""End to end: a tiny slice of the real Snakemake DAG, asserting on the table it writes."""
import ast
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO
from mtcue.experiments.fewshot.plan import FEWSHOT
from mtcue.study import store_name

ARCH = {"embed_dim": 32, "heads": 2, "encoder_layers": 1, "encoder_ffn_dim": 64, "decoder_layers": 1,
        "decoder_ffn_dim": 64}
ARCH_PM = {**ARCH, "encoder_layers": 2}
CONTEXTUAL = {**ARCH, "context_layers": 1, "context_ffn_dim": 64}
MODELS = ["base", "base_pm", "tagging", "novotney_cue", "mtcue"]
NO_COMET = "/nonexistent/comet-model"
RUNAWAY = re.compile(r"(.)\1{4,}$")  # a hypothesis that repeats one character until the length cap
TINY = {
    "study": "e2e",
    "directions": ["en-de"],
    "corpus": {"docs": {"train": 120, "valid": 8, "test": 12}},
    "spm": {"vocab_size": 400},
    "training": {"lr": 0.003, "warmup_updates": 10, "max_tokens": 512, "update_freq": 1, "max_epoch": 3,
                 "patience": 2, "dropout": 0.1},
    "models": {
        "base": {"type": "base", "arch": ARCH},
        "base_pm": {"type": "base", "arch": ARCH_PM},
        "tagging": {"type": "tagging", "init_from": "base_pm", "arch": ARCH_PM},
        "novotney_cue": {"type": "novotney_cue", "init_from": "base", "arch": CONTEXTUAL},
        "mtcue": {"type": "mtcue", "init_from": "base", "arch": CONTEXTUAL},
        "mtcue_discrete": {"type": "mtcue", "init_from": "base", "context_encoder": "random-384", "arch": CONTEXTUAL},
        "mtcue_random_context": {"type": "mtcue", "init_from": "base", "random_context": "noise", "arch": CONTEXTUAL},
    },
    "experiments": {
        "quality": {"models": MODELS},
        "ablation": {"directions": ["en-de"], "rows": {"Full MTCUE": "mtcue", "no MINILM-V2": "mtcue_discrete",
                                                       "random context": "mtcue_random_context",
                                                       "no context (non-contextual Transformer)": "base"}},
        # EAMT22 few-shot (Figure 4) on German (formality and addressee number), three settings.
        "fewshot": {"directions": ["en-de"], "models": ["mtcue", "tagging"], "baseline": "base",
                    "settings": {"zero_shot": 0, "1": 1, "full": "all"}, "training": {"max_epoch": 2, "patience": 2}},
        # IWSLT22 zero-shot formality (Table 5), one prompt per register; Table 6 reads the ablation models'.
        "formality": {"models": ["base", "mtcue"],
                      "prompts": {"formal": ["Formal conversation"], "informal": ["Informal chit-chat"]}},
    },
    # An absent model: COMET is then "n/a" with the reason, and the DAG still completes.
    "evaluation": {"comet": {"model": NO_COMET}},
    "generation": {"beam": 2},
}


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [str(Path(sys.executable).parent / "snakemake"), "--snakefile", str(REPO / "Snakefile"),
           "--directory", str(workdir), "--cores", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("study")
    (workdir / "config").mkdir()
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(TINY, sort_keys=False))  # keeps table order
    run = snakemake(workdir)
    assert run.returncode == 0, run.stderr[-4000:]
    return workdir


@pytest.mark.slow
def test_table_from_the_dag(study):
    table = pd.read_csv(study / "results" / "tables" / "table4_quality.csv").set_index("model")
    assert list(table.index) == ["BASE", "BASE-PM", "TAGGING", "NOVOTNEY-CUE", "MTCUE"]
    assert table.loc["BASE", "en-de paper BLEU"] == pytest.approx(33.60)
    assert table.loc["MTCUE", "en-de paper BLEU"] == pytest.approx(36.02)
    assert table.loc["TAGGING", "en-de paper COMET"] == pytest.approx(49.21)
    assert table["en-de COMET"].isna().all()
    assert (table["en-de BLEU mark"] == "best").sum() == 1
    # Every number comes from the score records (a model this tiny may judge no phenomenon: NaN).
    for model in MODELS:
        record = json.loads((study / "results" / "records" / "score" / "en-de" / f"{model}.test.json").read_text())
        row = table.loc[model.upper().replace("_", "-")]
        assert 0 <= record["bleu"] <= 100 and row["en-de BLEU"] == pytest.approx(record["bleu"])
        assert record["n_segments"] == len((study / "results" / "hyps" / "en-de" / f"{model}.test.txt")
                                           .read_text().splitlines())
        accuracy = record["phenomena"].get("all", {}).get("accuracy")
        if accuracy is None:
            assert pd.isna(row["en-de phenomena %"])
        else:
            assert row["en-de phenomena %"] == pytest.approx(100 * accuracy)
        comet = json.loads((study / "results" / "records" / "comet" / "en-de" / f"{model}.test.json").read_text())
        assert comet["comet"] is None and NO_COMET in comet["unavailable"]
        assert comet["hyp_sha256"] == record["hyp_sha256"]
    md = (study / "results" / "tables" / "table4_quality.md").read_text()
    assert "| MTCUE |" in md and "nrefs:1|case:mixed|eff:no|tok:13a" in md
    assert f"no checkpoint at {NO_COMET}" in md


@pytest.mark.slow
def test_one_evaluation_job_writes_what_the_separate_steps_wrote(study, tmp_path):
    """Issue 55: en-de MTCUE's evaluation ran as one job (`mtcue evaluate`: its translations of both splits and of
    Table 5's prompts, their scores, COMET, context usage, the contrastive suite, EAMT22); each of its tasks run
    as a command of its own, one process each, in a copy of the study writes the same hypotheses byte for byte
    and the same records but for their time."""
    import shlex
    import shutil

    from conftest import evaluation_tasks

    shown = snakemake(study, "-n", "-p", "-f", "results/records/score/en-de/mtcue.test.json")
    assert shown.returncode == 0, shown.stderr[-2000:]
    tasks = evaluation_tasks(shown.stdout)
    steps = {task[0] for task in tasks}
    assert {"translate", "score", "comet", "context-usage", "score-contrastive", "translate-prompts"} <= steps, steps
    copy = tmp_path / "copy"
    shutil.copytree(study / "results", copy / "results", symlinks=True)
    outputs = [task[task.index("--out") + 1] for task in tasks]
    for out in outputs:
        shutil.rmtree(copy / out) if (copy / out).is_dir() else (copy / out).unlink()
    mtcue = str(Path(sys.executable).parent / "mtcue")
    for task in tasks:
        alone = subprocess.run([mtcue, *task], cwd=copy, capture_output=True, text=True,
                               env={**os.environ, "MTCUE_WARM": "0"})
        assert alone.returncode == 0, f"mtcue {shlex.join(task)}: {alone.stderr[-2000:]}"
    for out in outputs:
        merged, separate = study / out, copy / out
        files = [p.relative_to(merged) for p in sorted(merged.rglob("*")) if p.is_file()
                 and p.name != ".snakemake_timestamp"] if merged.is_dir() else [Path()]
        assert files and (not merged.is_dir() or {p.relative_to(separate) for p in separate.rglob("*")
                                                   if p.is_file()} == set(files)), out
        for name in files:
            a, b = (merged / name).read_bytes(), (separate / name).read_bytes()
            if out.startswith("results/records/"):
                a, b = ({**json.loads(text), "created": None} for text in (a, b))
            assert a == b, merged / name


@pytest.mark.slow
def test_models_table_from_the_training_records(study):
    table = pd.read_csv(study / "results" / "tables" / "table3_models.csv").set_index("model")
    assert list(table.index) == ["BASE", "BASE-PM", "TAGGING", "NOVOTNEY-CUE", "MTCUE"]
    params = {m: json.loads((study / "results" / "records" / "train" / "en-de" / f"{m}.json").read_text())["params"]
              for m in MODELS}
    # BASE-PM, TAGGING and MTCUE add parameters to BASE; TAGGING's tags on top of BASE-PM's
    assert params["base"]["total"] < params["novotney_cue"]["total"] < params["mtcue"]["total"]
    assert params["base_pm"]["total"] < params["tagging"]["total"]
    tags = json.loads((study / "results" / "tags" / "en-de" / "manifest.json").read_text())
    assert params["tagging"]["total"] - params["base_pm"]["total"] == tags["n_tags"] * ARCH["embed_dim"]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["tagging", "novotney_cue", "mtcue"])
def test_contextual_models_were_initialised_from_their_base(study, model):
    report = json.loads((study / "results" / "checkpoints" / "en-de" / model / "init_report.json").read_text())
    parent = TINY["models"][model]["init_from"]
    assert report["pretrained_base"] == f"results/models/en-de/{parent}/checkpoint_best.pt"
    assert report["missing_base_keys"] == [] and report["shape_mismatch"] == [] and report["unused_base_keys"] == []
    assert any(k.startswith("encoder.layers.") for k in report["loaded"])
    assert any(k.startswith("decoder.layers.") for k in report["loaded"])
    assert report["new"] and all(".context_" in k or k.startswith("encoder.context_") for k in report["new"])


@pytest.mark.slow
def test_rerun_does_nothing_and_mlflow_has_one_run_per_trained_model(study):
    again = snakemake(study, "--dry-run")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{study / 'results' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("e2e")
    runs = {r.data.tags["mtcue.model"]: r for r in client.search_runs([experiment.experiment_id])
            if "mtcue.model" in r.data.tags}  # the study's own run holds its tables and figures
    records = {p.stem: json.loads(p.read_text())
               for p in (study / "results" / "records" / "train" / "en-de").glob("*.json")}
    assert sorted(runs) == sorted(records) and len(records) == len(MODELS) + 2 + 4  # ablations, few-shot fine-tunings
    assert all("test_bleu" in runs[m].data.metrics for m in MODELS)
    assert "valid_bleu" in runs["mtcue_discrete"].data.metrics
    assert "eamt22_bleu" in runs["tagging_fewshot_1"].data.metrics
    # Each table row names the run of its cell; the run spans its training and names the run it was trained from.
    table = pd.read_csv(study / "results" / "tables" / "table4_quality.csv").set_index("model")
    for model, run in runs.items():
        if model in MODELS:
            assert table.loc[model.upper().replace("_", "-"), "en-de run"] == run.info.run_name == f"en-de/{model}"
        record = records[model]
        assert run.info.start_time == 1000 * datetime.fromisoformat(record["started"]).timestamp()
        assert run.info.end_time == 1000 * datetime.fromisoformat(record["finished"]).timestamp()
        assert run.data.tags["mtcue.model_path"] == f"results/models/en-de/{model}/checkpoint_best.pt"
        parent = record["spec"]["init_from"]
        assert run.data.tags.get("mtcue.parent_run_id") == (parent and runs[parent].info.run_id)


@pytest.mark.slow
def test_fewshot_figure_from_the_eamt22_records(study):
    """Figure 4's rows are the EAMT22 records of each (model, setting): the parent zero-shot, the fine-tuned
    variants, the baseline; a variant was initialised with every tensor of its parent."""
    figure = pd.read_csv(study / "results" / "figures" / "figure4_eamt22_fewshot.csv")
    ours = figure[figure["source"] == "ours"].set_index(["model", "setting"])
    assert sorted(ours.index) == sorted([(m, s) for m in ("mtcue", "tagging") for s in ("zero_shot", "1", "full")]
                                        + [("base", "baseline")])
    for (model, setting), row in ours.iterrows():
        name = model if setting in ("zero_shot", "baseline") else f"{model}_fewshot_{setting}"
        record = json.loads((study / "results" / "records" / "eamt22" / "en-de" / f"{name}.test.json").read_text())
        assert row["bleu"] == pytest.approx(record["bleu"], abs=0.01)
        assert row["samples"] == record["supervised_samples"]
        if record["attributes"]["formality"]["accuracy"] is not None:
            assert row["formality"] == pytest.approx(100 * record["attributes"]["formality"]["accuracy"], abs=0.01)
    store = json.loads((study / "results" / "fewshot" / "en-de" / "mtcue_fewshot_1" / "manifest.json").read_text())
    assert ours.loc[("mtcue", "1"), "samples"] == store["masked"]["supervised"]["train"] <= 12  # one per combination
    assert ours.loc[("mtcue", "zero_shot"), "samples"] == 0
    assert ours.loc[("mtcue", "full"), "samples"] > ours.loc[("mtcue", "1"), "samples"]
    report = json.loads((study / "results" / "checkpoints" / "en-de" / "tagging_fewshot_1" / "init_report.json").read_text())
    assert report["new"] == [] and report["unused_base_keys"] == [] and report["shape_mismatch"] == []
    assert report["pretrained_base"] == "results/models/en-de/tagging/checkpoint_best.pt"


@pytest.mark.slow
def test_store_row_i_is_the_context_of_binarised_sample_i(study):
    """The doc0 vector of row i of each split's store index is the embedding of binarised source i,
    decoded; doc1 (the previous line) is the decoded source of the sample before whenever it exists."""
    from fairseq.data import Dictionary, data_utils
    from sentence_transformers import SentenceTransformer

    from mtcue.context.embed import resolve_encoder_path
    from mtcue.context.store import ContextStore

    results = study / "results"
    store = ContextStore(results / "embed" / "en-de" / "all-MiniLM-L6-v2.mean")
    encoder = SentenceTransformer(resolve_encoder_path("all-MiniLM-L6-v2"), device="cpu")
    dictionary = Dictionary.load(str(results / "bin" / "en-de" / "dict.en.txt"))
    doc0, doc1 = store.columns.index("doc0"), store.columns.index("doc1")
    for split in ("train", "test"):
        tokens = data_utils.load_indexed_dataset(str(results / "bin" / "en-de" / f"{split}.en-de.en"), dictionary)
        sources = [dictionary.string(tokens[i], bpe_symbol="sentencepiece") for i in range(len(tokens))]
        index = store.index(split)
        assert len(index) == len(sources)
        sample = sources if split == "test" else sources[::25]
        rows = index[:len(sources)] if split == "test" else index[::25]
        expected = encoder.encode(sample, convert_to_numpy=True)
        np.testing.assert_allclose(store.vectors[rows[:, doc0]], expected, atol=1e-5)
        has_previous = index[1:, doc1] >= 0
        assert has_previous.mean() > 0.3
        assert (index[1:, doc1][has_previous] == index[:-1, doc0][has_previous]).all()


@pytest.mark.slow
def test_trained_mtcue_used_w_1_and_the_qk_scale_of_its_columns(study):
    from mtcue.models.checkpoints import load_checkpoint
    from mtcue.models.plugin.qk_norm_attention import default_qk_scale

    # the safe loader reads what the study trained (issue 33.1)
    checkpoint = load_checkpoint(study / "results" / "models" / "en-de" / "mtcue" / "checkpoint_best.pt")
    args = checkpoint["cfg"]["model"]
    assert args.parallel_attn_weight == 1.0 and not args.no_qk_norm
    assert args.qk_norm_scale_init == default_qk_scale(12) == pytest.approx(math.log2(132))  # doc0..5 + metadata


def percent(fraction):
    """A record's accuracy in %, NaN where the tiny models' outputs showed no register at all."""
    return math.nan if fraction is None else 100 * fraction


@pytest.mark.slow
def test_ablation_table_from_the_dag(study):
    table = pd.read_csv(study / "results" / "tables" / "table6_ablation.csv").set_index("ablation")
    rows = TINY["experiments"]["ablation"]["rows"]
    assert list(table.index) == list(rows) and list(table["model"]) == list(rows.values())
    for label, model in rows.items():
        record = json.loads((study / "results" / "records" / "score" / "en-de" / f"{model}.valid.json").read_text())
        assert table.loc[label, "en-de BLEU"] == pytest.approx(record["bleu"])
    assert table.loc["Full MTCUE", "paper COMET en-de"] == 46.89
    for label, model in rows.items():
        # Table 6 reads the validation set's records (the paper: "on the validation sets in all cases").
        record = json.loads((study / "results" / "records" / "formality" / "en-de" / f"{model}.valid.json").read_text())
        assert record["split"] == "valid"
        assert table.loc[label, "IWSLT22 formality en-de accuracy %"] == pytest.approx(percent(record["average"]),
                                                                                        nan_ok=True)
    md = (study / "results" / "tables" / "table6_ablation.md").read_text()
    assert "EAMT22 en-pl: n/a" in md  # the few-shot experiment runs in en-de here
    # the ablation models were trained in the ablation direction only, from BASE
    report = json.loads((study / "results" / "checkpoints" / "en-de" / "mtcue_discrete" / "init_report.json").read_text())
    assert report["missing_base_keys"] == [] and "encoder.context_encoder.project.weight" in report["new"]
    manifest = json.loads((study / "results" / "embed" / "en-de" / "random-384.mean" / "manifest.json").read_text())
    assert (manifest["model"], manifest["dim"]) == ("random-384", 384)


@pytest.mark.slow
def test_table5_from_the_formality_records(study):
    table = pd.read_csv(study / "results" / "tables" / "table5_formality.csv").set_index(["model", "prompt_kind"])
    assert list(table.index) == [(m, k) for m in ("BASE", "MTCUE") for k in ("in_distribution", "unseen")]
    records = {m: json.loads((study / "results" / "records" / "formality" / "en-de" / f"{m}.json").read_text())
               for m in ("base", "mtcue")}
    for kind in ("in_distribution", "unseen"):  # BASE translates once: the same numbers in both rows
        assert table.loc[("BASE", kind), "en-de average"] == pytest.approx(percent(records["base"]["average"]),
                                                                           nan_ok=True)
        best = records["mtcue"]["by_kind"].get(kind)  # a kind without a prompt of both registers has no average
        if best and None not in best["accuracy"].values():
            assert table.loc[("MTCUE", kind), "en-de average"] == pytest.approx(
                percent(sum(best["accuracy"].values()) / 2))
    assert records["mtcue"]["chosen_on"] == "valid"
    base = records["base"]
    assert base["formal"] is None or base["formal"] + base["informal"] == pytest.approx(1.0)  # one output, two shares
    assert [(p["id"], p["text"]) for p in records["mtcue"]["prompts"]] == [("f0", "Formal conversation"),
                                                                           ("i0", "Informal chit-chat")]
    source = study / "results" / "eval" / "iwslt22" / "en-de" / "formality-control.test.en-de.en"
    assert records["mtcue"]["prompts"][0]["n_segments"] == len(source.read_text().splitlines())


@pytest.mark.slow
@pytest.mark.parametrize("model", ["mtcue"])  # Table 5's models; the ablation rows are prompted on valid only
def test_prompted_translation_is_the_test_split_read_with_the_prompt(study, model, tmp_path):
    """`mtcue translate-prompts` prepares the IWSLT22 source anew (here: the test split's sources); the
    study's own test split, binarised and stored by its steps, with the prompt put in the model's
    prompt column (its first metadata column), translates the same."""
    from mtcue import config as cfg
    from mtcue.context.prompted import build_prompted_stores, prompt_column
    from mtcue.models.translate import translate

    results = study / "results"
    spec = json.loads((results / "records" / "train" / "en-de" / f"{model}.json").read_text())["spec"]
    context = spec["context"]
    store = results / ("tags/en-de" if context["kind"] == "tags" else f"embed/en-de/{store_name(context)}")
    assert prompt_column(context["columns"]) == "genre"
    build_prompted_stores(store, {"f0": "Formal conversation"}, "genre", tmp_path / "prompts")
    n = len((results / "clean" / "en-de" / "test.jsonl").read_text().splitlines())
    generation = {**cfg.validate(TINY)["generation"]}
    translate(spec, "en-de", results / "bin" / "en-de", results / "models" / "en-de" / model / "checkpoint_best.pt",
              "test", n, tmp_path / "f0.txt", generation, tmp_path / "prompts" / "f0")
    prompted = (results / "hyps" / "formality" / "en-de" / model / "f0.txt").read_text().splitlines()
    ours = (tmp_path / "f0.txt").read_text().splitlines()
    assert len(prompted) == len(ours) == n > 25
    # The tiny model loops on some lines ("Ich bin,,,,,..."); where such a runaway stops depends on the length
    # cap, the longest source of its batch, and the two paths batch differently. Every other line is the same.
    differ = [i for i, (a, b) in enumerate(zip(ours, prompted)) if a != b]
    assert all(RUNAWAY.search(ours[i]) and RUNAWAY.search(prompted[i]) for i in differ), [ours[i] for i in differ]
    assert len(differ) <= 0.05 * n


@pytest.mark.slow
@pytest.mark.parametrize("model", ["mtcue", "novotney_cue", "tagging", "base"])
def test_the_api_gives_the_studys_translations(study, model):
    """`mtcue.Translator` (what translate-text, translate-prompts and translate-corpus run), given the test
    split's lines with their own context, gives the hypotheses the study wrote. The whole test split: fairseq
    caps an output's length by the longest source of its batch, so a tiny model's runaway outputs match
    only when the batches do."""
    from mtcue import Translator
    from mtcue.corpus import read_corpus

    samples = list(read_corpus(study / "results" / "clean" / "en-de" / "test.jsonl"))
    hyps = Translator.load(study / "results" / "models" / "en-de" / model).translate_samples(samples, TINY["generation"])
    expected = (study / "results" / "hyps" / "en-de" / f"{model}.test.txt").read_text().splitlines()
    assert len(hyps) == len(samples) > 25 and hyps == expected


@pytest.mark.slow
def test_a_forced_translation_scores_what_beam_search_scored_it(study):
    """Translator.score force-decodes a candidate: for the beam's own best hypothesis it must give the score
    fairseq's beam search gave it (sum of its tokens' log-probabilities over their count, length penalty 1).
    Only where the hypothesis's text encodes back to the beam's pieces: a tiny model's runaway output
    ("Sie Sie ...") may not, and its text is then another token sequence with another score."""
    from mtcue import Translator

    translator = Translator.load(study / "results" / "models" / "en-de" / "mtcue")
    context = "Formal conversation"
    for source in ("Did you see the letter?", "Where were you yesterday?", "Are you ready?", "I forgot."):
        sample = translator.samples([source], context)
        batch = next(translator._batches(translator._dataset(sample, with_targets=False), 1))
        best = translator._task.inference_step(translator._generator(cfg_generation()), translator._models, batch)[0][0]
        hypothesis = translator.translate([source], context=context, beam=5)[0]
        (total, tokens), = translator.score_tokens(source, [hypothesis], context=context)
        if tokens == len(best["tokens"]):
            break
    assert tokens == len(best["tokens"]), "no hypothesis of the four encodes back to the beam's pieces"
    assert total / tokens == pytest.approx(float(best["score"]), abs=1e-4)
    assert translator.score(source, [hypothesis], context=context, normalise=True) == [pytest.approx(total / tokens)]
    other = translator.score(source, [hypothesis, "Hast du den Brief gesehen?"], context=context)
    assert other[0] == pytest.approx(total) and other[1] != pytest.approx(total)


def cfg_generation():
    from mtcue import config as cfg

    return cfg.generation_settings({})


def api_translator():
    """A Translator of an en-de model reading doc0..doc2, genre and cue1, without weights: what is checked
    before any model runs."""
    from test_formality import _translator

    return _translator("vectors", ["doc0", "doc1", "doc2", "genre", "cue1"], [])


@pytest.mark.parametrize("call, error, message", [
    (lambda t: t.translate(None), TypeError, r"^sources: give a list of sentences \(strings\), not NoneType"),
    (lambda t: t.translate(5), TypeError, r"^sources: give a list of sentences \(strings\), not int"),
    (lambda t: t.translate(["Hello.", None]), TypeError, r"^sources\[1\]: a sentence must be a string, not NoneType"),
    (lambda t: t.translate(["Hello \ud800."]), ValueError,
     r"^sources\[0\]: '\\ud800' \(character 6\) is a lone surrogate"),
    (lambda t: t.translate(["Hello."], context="Formal \udc80"), ValueError, r"^context: '\\udc80' .*lone surrogate"),
    (lambda t: t.translate(["Hi."], previous=[["Ok \ud800"]]), ValueError, r"^previous\[0\]\[0\]: .*lone surrogate"),
    # a dict's keys are not context strings: refused, not read as ["genre"]
    (lambda t: t.translate(["Hello."], context={"genre": "Drama"}), TypeError, r"^context: .* not dict .*in the order"),
    (lambda t: t.translate(["Hello."], previous=3), TypeError, r"^previous: give a string, .* not int"),
    (lambda t: t.score("Are you ready?", "Bereit?"), TypeError, r"^candidates: give a list of candidate translations"),
    (lambda t: t.score(None, ["Bereit?"]), TypeError, r"^source: the sentence must be a string, not NoneType"),
    (lambda t: t.score("Are you ready?", ["Bereit?", 3]), TypeError, r"^candidates\[1\]: .* not int"),
    (lambda t: t.score("Are you ready?", ["Bereit\udfff?"]), ValueError, r"^candidates\[0\]: .*lone surrogate"),
])
def test_api_misuse_is_refused_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call(api_translator())


def test_a_flat_list_as_long_as_the_sentences_is_shared_by_all_with_a_warning():
    import warnings

    translator = api_translator()
    with pytest.warns(UserWarning, match=r"previous: a flat list of 2 strings for 2 sentences is one list shared by "
                                         r"every sentence; for one per sentence give \[\[s\] for s in previous\]"):
        samples = translator.samples(["Hi.", "Bye."], previous=["A.", "B."])
    assert [s["previous"]["en"] for s in samples] == [["A.", "B."], ["A.", "B."]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        samples = translator.samples(["Hi.", "Bye."], context=[["Drama"], ["Comedy"]], previous=[["A."], ["B."]])
        assert [(s["previous"]["en"], s["meta"]["genre"]) for s in samples] == [(["A."], "Drama"), (["B."], "Comedy")]
        assert [s["previous"]["en"] for s in translator.samples(["Hi."], previous=["A.", "B."])] == [["A.", "B."]]


def test_cuda_without_a_gpu_and_other_devices_are_refused(monkeypatch, tmp_path):
    import torch

    from mtcue import Translator

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match=r"device='cuda', but torch sees no CUDA GPU here: use device='cpu'"):
        Translator.load(tmp_path, device="cuda")
    with pytest.raises(ValueError, match=r"device='gpu': 'cpu' or 'cuda'"):
        Translator.load(tmp_path, device="gpu")


@pytest.mark.slow
def test_the_api_translates_as_translate_text(study):
    """The README's example: the API in a notebook and `mtcue translate-text` give the same output."""
    from mtcue import Translator

    translator = Translator.load(study / "results" / "models" / "en-de" / "mtcue")
    lines = ["Are you ready?", "Did you see the letter?"]
    api = translator.translate(lines, context="Formal conversation", previous=["Good evening, Mrs Smith."])
    run = subprocess.run([str(Path(sys.executable).parent / "mtcue"), "translate-text", "--model-dir",
                          "results/models/en-de/mtcue", "--context", "Formal conversation", "--previous",
                          "Good evening, Mrs Smith."], input="".join(f"{x}\n" for x in lines), capture_output=True,
                         text=True, cwd=study)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == api and len(api) == 2 and all(api)
    per_line = translator.translate(lines, context=[["Formal conversation"], ["Informal chit-chat"]])
    assert per_line[0] == translator.translate(lines[:1], context="Formal conversation")[0]
    with pytest.raises(ValueError, match="one list of strings per sentence"):
        translator.translate(lines, context=[["Formal conversation"]])


@pytest.mark.slow
@pytest.mark.parametrize("model, parent", [("mtcue", "mtcue"), ("tagging_fewshot_1", "tagging")])
def test_translate_corpus_gives_the_studys_eamt22_translations(study, model, parent, tmp_path):
    """`mtcue translate-corpus` (what the paper's configuration runs on the official EAMT22 test set),
    given the EAMT22 columns, translates the test split as the study's eamt22_translate did (a zero-shot
    parent reads columns it never trained on)."""
    from mtcue import config as cfg

    tiny = cfg.validate(TINY)
    columns = ",".join(FEWSHOT.eamt22_columns(tiny, tiny["models"][parent]))
    run = subprocess.run([str(Path(sys.executable).parent / "mtcue"), "translate-corpus", "--model-dir",
                          f"results/models/en-de/{model}", "--corpus", "results/clean/en-de/test.jsonl",
                          "--columns", columns, "--generation", json.dumps(TINY["generation"]),
                          "--out", str(tmp_path / "hyps.txt")], capture_output=True, text=True, cwd=study)
    assert run.returncode == 0, run.stderr[-2000:]
    expected = (study / "results" / "hyps" / "eamt22" / "en-de" / f"{model}.test.txt").read_text().splitlines()
    assert len(expected) > 25 and (tmp_path / "hyps.txt").read_text().splitlines() == expected


@pytest.mark.slow
def test_translate_text_command_and_its_errors(study, tmp_path):
    def run(*args, text="Did you see the letter?\nAre you ready?\n", input_bytes=None):
        done = subprocess.run([str(Path(sys.executable).parent / "mtcue"), "translate-text", *args],
                              input=input_bytes if text is None else text.encode(), capture_output=True, cwd=study)
        return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())

    done = run("--model-dir", "results/models/en-de/mtcue", "--context", "Drama, Family, Romance",
               "--previous", "Good evening, Mrs Smith.")
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(done.stdout.splitlines()) == 2 and all(done.stdout.splitlines())
    cued = run("--model-dir", "results/models/en-de/mtcue", "--cue", "Formal conversation")
    assert cued.returncode == 0, cued.stderr[-2000:]
    from mtcue import Translator

    assert cued.stdout.splitlines() == Translator.load(study / "results" / "models" / "en-de" / "mtcue").translate(
        ["Did you see the letter?", "Are you ready?"], cue="Formal conversation")
    both = run("--model-dir", "results/models/en-de/mtcue", "--cue", "Formal conversation", "--previous", "Hello.")
    assert both.returncode == 1 and "--cue with --context or --previous" in both.stderr
    base_cue = run("--model-dir", "results/models/en-de/base", "--cue", "Formal conversation")
    assert base_cue.returncode == 1 and "a model without context (base) cannot read a cue" in base_cue.stderr
    no_model = run("--model-dir", str(tmp_path))
    assert no_model.returncode == 1 and "no checkpoint_best.pt: not a trained model's folder" in no_model.stderr
    empty = run("--model-dir", "results/models/en-de/mtcue", text="")
    assert empty.returncode == 1 and "no input to translate" in empty.stderr
    base = run("--model-dir", "results/models/en-de/base", "--context", "Formal conversation")
    assert base.returncode == 1 and "a model without context (base) cannot read context or previous lines" in base.stderr
    too_many = run("--model-dir", "results/models/en-de/mtcue", *[a for i in range(7) for a in ("--context", f"c{i}")])
    assert too_many.returncode == 1 and "7 contexts given, but the model reads 6 context strings" in too_many.stderr
    # Issue 22: each of these was a traceback, a wrong diagnosis or a silent default.
    blank = run("--model-dir", "results/models/en-de/mtcue", text="Hello.\n\nAre you ready?\n")
    assert blank.returncode == 1 and "input line 2 is empty" in blank.stderr
    not_utf8 = run("--model-dir", "results/models/en-de/mtcue", text=None, input_bytes=b"Hello.\nGr\xfc\xdfe\n")
    assert not_utf8.returncode == 1 and "standard input:2: not UTF-8 (byte 0xfc" in not_utf8.stderr
    previous = run("--model-dir", "results/models/en-de/mtcue", *[a for i in range(6) for a in ("--previous", f"p{i}")])
    assert previous.returncode == 1 and "6 previous lines given, but the model reads at most 5" in previous.stderr
    beam = run("--model-dir", "results/models/en-de/mtcue", "--beam", "0")
    assert beam.returncode == 2 and "'0' is not a whole number of at least 1" in beam.stderr
    long = run("--model-dir", "results/models/en-de/base", text="Are you ready?\n" + "Hello, " * 900 + "\nYes.\n")
    assert long.returncode == 0, long.stderr[-2000:]
    assert len(long.stdout.splitlines()) == 3 and all(long.stdout.splitlines())
    assert "input line 2 has" in long.stderr and "only its first 1023 are translated" in long.stderr


@pytest.mark.slow
def test_translate_prompts_never_replaces_what_it_did_not_write(study, tmp_path):
    def run(out, prompts='{"f0": "Formal conversation"}', *extra):
        return subprocess.run([str(Path(sys.executable).parent / "mtcue"), "translate-prompts", "--model-dir",
                               "results/models/en-de/mtcue", "--source", str(source), "--prompts", prompts,
                               "--out", str(out), *extra], capture_output=True, text=True, cwd=study)

    source = tmp_path / "src.txt"
    source.write_text("Are you ready?\n")
    model = study / "results" / "models" / "en-de" / "mtcue"
    before = sorted(p.name for p in model.iterdir())
    for out in (model, study, "."):
        refused = run(out)
        assert refused.returncode == 1 and "nothing was changed" in refused.stderr + "working directory" \
            or "working directory or one of its parents" in refused.stderr, refused.stderr[-1000:]
    assert sorted(p.name for p in model.iterdir()) == before and (model / "checkpoint_best.pt").is_file()
    escaped = run(tmp_path / "out", '{"../../escaped": "Formal conversation"}')
    assert escaped.returncode == 1 and "prompt id '../../escaped' is not a plain file name" in escaped.stderr
    for prompts, option in (('["Formal"]', "give a JSON object"), ("{'f0': 1}", "--prompts: not valid JSON")):
        bad = run(tmp_path / "out", prompts)
        assert bad.returncode == 1 and option in bad.stderr
    beam = run(tmp_path / "out", '{"f0": "Formal conversation"}', "--generation", '{"beem": 3}')
    assert beam.returncode == 1 and "--generation: Additional properties are not allowed ('beem'" in beam.stderr
    assert not list(tmp_path.glob("**/escaped*")) and not (tmp_path / "out").exists()
    assert not list(study.parent.glob("escaped*"))


@pytest.mark.slow
def test_translate_corpus_refuses_another_pair_and_unknown_columns(study, tmp_path, write_corpus):
    from conftest import make_sample

    def run(corpus, *extra):
        return subprocess.run([str(Path(sys.executable).parent / "mtcue"), "translate-corpus", "--model-dir",
                               "results/models/en-de/mtcue", "--corpus", str(corpus), "--out",
                               str(tmp_path / "hyps.txt"), *extra], capture_output=True, text=True, cwd=study)

    french = make_sample(0)
    french["text"] = {"fr": "Bonjour.", "de": "Hallo."}
    french["previous"] = {"fr": [], "de": []}
    wrong = run(write_corpus([french], "fr.jsonl"))
    assert wrong.returncode == 1 and "fr.jsonl:1: the sample has no 'en' text (languages: fr, de)" in wrong.stderr
    unknown = run(write_corpus([make_sample(0)], "ok.jsonl"), "--columns", "doc0,speaker_gender")
    assert unknown.returncode == 1 and "columns: unknown context column 'speaker_gender'" in unknown.stderr
    assert not (tmp_path / "hyps.txt").exists()


# The four models of Table 4 in de-en only: the SentencePiece model and data of a direction into English.
INTO_ENGLISH = {**TINY, "study": "into-english", "directions": ["de-en"], "corpus": {"docs": {"train": 60, "valid": 6, "test": 8}},
                "models": {m: TINY["models"][m] for m in MODELS},
                "experiments": {"quality": {"models": MODELS}, "formality": {"directions": []}}}


@pytest.fixture(scope="module")
def study_into_english(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("into-english")
    (workdir / "config").mkdir()
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(INTO_ENGLISH, sort_keys=False))
    run = snakemake(workdir, "table4_quality")
    assert run.returncode == 0, run.stderr[-4000:]
    return workdir


@pytest.mark.slow
@pytest.mark.parametrize("model", ["mtcue", "novotney_cue", "tagging", "base"])
def test_translating_into_english_gives_the_studys_translations(study_into_english, model):
    from mtcue import Translator
    from mtcue.corpus import read_corpus

    results = study_into_english / "results"
    assert not (results / "spm" / "en-de.model").exists()  # only de-en's: the model of the direction is read
    samples = list(read_corpus(results / "clean" / "en-de" / "test.jsonl"))  # a pair's corpus, both directions
    hyps = Translator.load(results / "models" / "de-en" / model).translate_samples(samples, TINY["generation"])
    expected = (results / "hyps" / "de-en" / f"{model}.test.txt").read_text().splitlines()
    assert len(hyps) == len(samples) > 10 and hyps == expected


@pytest.mark.slow
def test_a_checkpoint_in_another_directions_folder_is_refused(study, study_into_english, tmp_path):
    """An en-de checkpoint copied into a de-en study's model folder translated "Ich Ich Ich"; now it names
    the mismatch."""
    folder = study_into_english / "results" / "models" / "de-en" / "imposter"
    folder.mkdir()
    (folder / "checkpoint_best.pt").write_bytes((study / "results" / "models" / "en-de" / "base" /
                                                 "checkpoint_best.pt").read_bytes())
    record = study_into_english / "results" / "records" / "train" / "de-en"
    (record / "imposter.json").write_text((record / "base.json").read_text())
    run = subprocess.run([str(Path(sys.executable).parent / "mtcue"), "translate-text", "--model-dir", str(folder)],
                         input="Hallo.\n", capture_output=True, text=True)
    assert run.returncode == 1 and "trained for en-de, but it sits among the de-en models" in run.stderr and run.stdout == ""


# ---- MLflow: a run leads to its model; the study's artifacts; the docs' examples --------------------

LINES = ["Are you ready?", "Did you see the letter?"]
CONTEXTS = [["Formal conversation"], ["Informal chit-chat"]]
PREVIOUS = [["Good evening, Mrs Smith."], []]


def run_ids(study):
    return json.loads((study / "results" / "mlflow" / f"{TINY['study']}.runs.json").read_text())["runs"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(url, body=None, timeout=60):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        text = response.read().decode()
        return response.status, json.loads(text) if text.strip() else None


@pytest.mark.slow
def test_a_run_loads_its_model_and_mlflow_serves_it_with_context(study, monkeypatch, tmp_path):
    """Translator.load("runs:/<id>") is the model of the run's folder, and a real `mlflow models serve` of
    runs:/<id>/en-de_mtcue translates with context over HTTP what the API translates."""
    from mlflow.tracking import MlflowClient

    from mtcue import Translator

    monkeypatch.chdir(study)  # the study's store, sqlite:///results/mlflow.db, by default
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    run_id = run_ids(study)["en-de/mtcue"]
    folder = Translator.load(study / "results" / "models" / "en-de" / "mtcue")
    api = folder.translate(LINES, context=CONTEXTS, previous=PREVIOUS)
    from_run = Translator.load(f"runs:/{run_id}")
    assert from_run.model == folder.model
    assert from_run.translate(LINES, context=CONTEXTS, previous=PREVIOUS) == api and all(api)
    command = subprocess.run([str(Path(sys.executable).parent / "mtcue"), "translate-text", "--run", run_id,
                              "--context", CONTEXTS[0][0], "--previous", PREVIOUS[0][0]], input=f"{LINES[0]}\n",
                             cwd=study, capture_output=True, text=True)
    assert command.returncode == 0, command.stderr[-2000:]
    assert command.stdout.splitlines() == api[:1]
    # the command keeps its own log lines; fairseq's stay out, as from the API
    assert "INFO mtcue.progress: translate en-de: done 1 sentences" in command.stderr
    assert "fairseq" not in command.stderr and "creating new batches" not in command.stderr

    port = _free_port()
    log = (tmp_path / "serve.log").open("w")
    # The README's command as written, run from the study's folder (its own port)
    serve, = [line for line in (REPO / "README.md").read_text().splitlines() if "mlflow models serve" in line]
    assert "MLFLOW_TRACKING_URI=sqlite:///results/mlflow.db " in serve
    server = subprocess.Popen(
        f"{serve.replace('RUN_ID', run_id)} --host 127.0.0.1 --port {port}", shell=True,
        # the venv's bin/ on PATH, as the README's `. .venv/bin/activate` puts it: the server starts its uvicorn
        # from there
        cwd=study, env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"},
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if _request(f"{url}/ping", timeout=5)[0] == 200:
                    break
            except OSError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()[-3000:]
            time.sleep(1)
        records = [{"source": s, "context": c, "previous": p} for s, c, p in zip(LINES, CONTEXTS, PREVIOUS)]
        status, served = _request(f"{url}/invocations", {"dataframe_records": records})
        assert status == 200 and served == {"predictions": api}
        # a cue per row, also in MLflow's columnar form
        cues = ["Formal conversation", "Informal chit-chat"] * len(LINES)
        cued = folder.translate(LINES * 2, cue=cues)
        status, served = _request(f"{url}/invocations", {"inputs": {"source": LINES * 2, "cue": cues}})
        assert status == 200 and served == {"predictions": cued}
        # the context reaches the model: more previous lines than it reads are refused, as the API refuses them
        with pytest.raises(urllib.error.HTTPError) as refused:
            _request(f"{url}/invocations", {"dataframe_records": [{"source": LINES[0], "previous": ["Hello."] * 9}]})
        assert json.loads(refused.value.read().decode())["message"] == \
            "9 previous lines given, but the model reads at most 5"
        # the model's own input example (a sentence with context and a previous line) serves too, with a beam
        client = MlflowClient("sqlite:///results/mlflow.db")
        logged, = [m for m in client.search_logged_models([client.get_run(run_id).info.experiment_id])
                   if m.source_run_id == run_id]
        example = json.loads(
            (Path(logged.artifact_location.removeprefix("file://")) / "serving_input_example.json").read_text())
        assert example["dataframe_split"]["columns"] == ["source", "context", "previous"]
        status, served = _request(f"{url}/invocations", {**example, "params": {"beam": 2}})
        source, context, previous = example["dataframe_split"]["data"][0]
        assert status == 200 and served == {"predictions": folder.translate([source], [context], [previous], beam=2)}
    finally:  # the server and its workers (its process group), whatever happened
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(server.pid, sig)
                server.wait(timeout=30)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        server.wait()
        log.close()
    # runs:/ loads, the command and the server used the study's store: MLflow made no default one beside it
    assert not (study / "mlflow.db").exists() and not (study / "mlruns").exists()


@pytest.mark.slow
def test_mlflow_holds_each_models_hypotheses_and_the_studys_tables_and_figures(study, tmp_path):
    from mlflow.tracking import MlflowClient

    ids = json.loads((study / "results" / "mlflow" / f"{TINY['study']}.runs.json").read_text())
    client = MlflowClient(f"sqlite:///{study / 'results' / 'mlflow.db'}")
    run_id = ids["runs"]["en-de/mtcue"]
    hyps = client.download_artifacts(run_id, "hyps/en-de/mtcue.test.txt", str(tmp_path / "hyps"))
    assert Path(hyps).read_text() == (study / "results" / "hyps" / "en-de" / "mtcue.test.txt").read_text()
    assert {a.path for a in client.list_artifacts(run_id, "records/train")} == {"records/train/mtcue.json"}
    experiment = client.get_experiment_by_name(TINY["study"]).experiment_id
    study_run, = client.search_runs([experiment], "tags.`mtcue.kind` = 'study'")
    tables = {a.path for a in client.list_artifacts(study_run.info.run_id, "tables")}
    assert {f"tables/table4_quality.{ext}" for ext in ("csv", "md", "html")} <= tables
    table = client.download_artifacts(study_run.info.run_id, "tables/table4_quality.csv", str(tmp_path / "table"))
    assert Path(table).read_text() == (study / "results" / "tables" / "table4_quality.csv").read_text()
    assert "figures/training_curves.svg" in {a.path for a in client.list_artifacts(study_run.info.run_id, "figures")}
    html = (study / "results" / "mlflow" / f"{TINY['study']}.html").read_text()
    assert f"/#/experiments/{experiment}/runs/{run_id}" in html


@pytest.mark.slow
def test_a_copied_model_loads_from_the_store_alone(study, tmp_path, monkeypatch):
    """With mlflow.copy_models the run's model carries the files Translator.load reads (TAGGING: its tag
    vocabulary too), and translates as the study's folder does."""
    from mtcue import Translator
    from mtcue.cli import main
    from mtcue.models.runs import run_model_dir

    monkeypatch.chdir(study)
    uri = f"sqlite:///{tmp_path}/copied.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    main(["track", "--study", TINY["study"], "--uri", uri, "--records", "results/records/train/en-de/tagging.json",
          "--artifacts", "--copy-models", "--run-ids", str(tmp_path / "ids.json")])
    run_id = json.loads((tmp_path / "ids.json").read_text())["runs"]["en-de/tagging"]
    copy = run_model_dir(f"runs:/{run_id}")
    original = study / "results" / "models" / "en-de" / "tagging"
    assert tmp_path in copy.parents and copy.parts[-3:] == original.parts[-3:]
    assert (copy / "checkpoint_best.pt").read_bytes() == (original / "checkpoint_best.pt").read_bytes()
    context = [["Drama, Family, Romance"], ["Comedy"]]
    assert Translator.load(f"runs:/{run_id}").translate(LINES, context=context) == \
        Translator.load(original).translate(LINES, context=context)


# Runs each statement of the docs' examples as a notebook or the interactive interpreter would, the value
# of an expression statement shown (its repr).
DOCS_RUNNER = """
import ast, json, sys
def show(value):
    if value is not None:
        sys.stdout.write(repr(value) + "\\n")
sys.displayhook = show
scope = {}
for block in json.loads(sys.argv[1]):
    for node in ast.parse(block).body:
        exec(compile(ast.Interactive([node]), "docs/translating.md", "single"), scope)
"""


@pytest.mark.slow
def test_the_api_docs_examples_run_and_print_only_their_results(study):
    """docs/translating.md's Python examples (mtcue.Translator, the MLflow model), run in a fresh interpreter in the study's folder (the docs' study is
    the demo, this one e2e), print their results and nothing else: no fairseq line, no warning."""
    blocks = [b.replace("results/mlflow/demo.", f"results/mlflow/{TINY['study']}.")
              for b in re.findall(r"```python\n(.*?)```", (REPO / "docs" / "translating.md").read_text(), re.S)]
    # MLflow's own loader (mlflow.pyfunc.load_model) draws a download bar unless told not to, as the docs say
    env = {**{k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"},
           "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false"}
    run = subprocess.run([sys.executable, "-c", DOCS_RUNNER, json.dumps(blocks)], cwd=study, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stderr == ""
    shown = [ast.literal_eval(line) for line in run.stdout.splitlines()]
    # every expression statement shows its value, but mlflow.set_tracking_uri's (None, shown by none)
    expressions = [n for b in blocks for n in ast.parse(b).body
                   if isinstance(n, ast.Expr) and not ast.unparse(n).startswith("mlflow.set_tracking_uri(")]
    assert len(shown) == len(expressions) >= 10
    columns, *results = shown
    assert "doc0" in columns and True in results
    translations = [r for r in results if isinstance(r, list) and r and all(isinstance(x, str) for x in r)]
    scores = [r for r in results if isinstance(r, list) and r and all(isinstance(x, float) for x in r)]
    assert len(translations) >= 5 and all(all(x) for x in translations) and len(scores) == 2
