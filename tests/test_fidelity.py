"""Behaviour the paper specifies that nothing else pins: config/paper.yaml reaches fairseq as the
paper's settings, context dropout acts in training only, and MTCUE as built by default follows the
paper's equations (w = 1, a QK-norm scale derived from the data)."""
import json
import math
import re

import pytest
import torch
from fairseq import options
from test_plugin import tiny_batch, tiny_model, tiny_task
from test_workflow_config import dry_run, train_specs

from conftest import REPO
from mtcue import config as cfg
from mtcue.models import fairseq_args as fa
from mtcue.models.params import DataFreeTask, build_model, parse_arch_args
from mtcue.reporting.tables import context_footnotes

PAPER_MODELS = ["base", "base_pm", "tagging", "novotney_cue", "mtcue"]


@pytest.fixture(scope="module")
def paper_run():
    """The commands Snakemake runs for config/paper.yaml (dry run)."""
    run = dry_run("--configfile", "config/paper.yaml")
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def fairseq_train_args(spec: dict, direction: str = "en-de"):
    """fairseq's own parse of the command line `mtcue train` builds from a spec (with a GPU)."""
    argv = [*fa.task_args(spec, direction, "/data-bin", "/store"), *fa.arch_args(spec), *fa.optimisation_args(spec, True)]
    return options.parse_args_and_arch(options.get_training_parser(), input_args=argv)


def test_paper_config_reaches_fairseq_as_the_papers_settings(paper_run):
    """Section 3.4 and appendix B: fairseq's transformer recipe (dropout 0.3, weight decay 1e-4,
    Adam (0.9, 0.98), inverse_sqrt with 4,000 warm-up updates, label smoothing 0.1), lr 3e-4 and
    ~200K tokens per update for the contextual models, patience 5, fp16 on the GPU, beam 5; context
    dropout 0.25. BASE and BASE-PM as the authors' pretrain.sh: lr 5e-4, --max-tokens 25000
    --update-freq 1, --max-epoch 75 (the contextual models keep the schema's 100)."""
    specs = train_specs(paper_run)
    for model in PAPER_MODELS:
        args = fairseq_train_args(specs[model])
        pretrained = model in ("base", "base_pm")
        assert args.lr == [0.0005 if pretrained else 0.0003], model
        assert (args.max_tokens, args.update_freq) == ((25_000, [1]) if pretrained else (25_000, [8])), model
        assert args.max_epoch == (75 if pretrained else 100), model
        assert (args.patience, args.dropout, args.weight_decay) == (5, 0.3, 0.0001), model
        assert (args.label_smoothing, args.warmup_updates, args.lr_scheduler) == (0.1, 4000, "inverse_sqrt")
        assert (args.optimizer, eval(args.adam_betas), args.fp16) == ("adam", (0.9, 0.98), True)
        assert args.encoder_embed_dim == 512 and args.share_all_embeddings
        if model != "base" and model != "base_pm":
            assert args.context_dropout == 0.25
    generation = json.loads(re.search(r"mtcue translate .*?--generation '(\{.*?\})'", paper_run).group(1))
    gen = options.parse_args_and_arch(options.get_generation_parser(), input_args=[
        "/data-bin", "--path", "checkpoint_best.pt", *fa.task_args(specs["mtcue"], "en-de", "/data-bin", "/store")[1:],
        *fa.generation_args(generation)])
    assert (gen.beam, gen.task) == (5, "contextual_translation")


def test_voita_models_train_with_vaswanis_regularisation_and_schedule(paper_run):
    """Voita et al. (2018), appendix A: "regularization as described in Vaswani et al. (2017)" (residual
    dropout 0.1, label smoothing 0.1) and Vaswani's learning rate d^-0.5 min(step^-0.5, step warmup^-1.5),
    warmup 4,000: fairseq's inverse_sqrt reaches the same curve from a peak of 512^-0.5 4000^-0.5."""
    specs = train_specs(paper_run)
    for model in ("concat", "voita_context", "voita_context_next"):
        args = fairseq_train_args(specs[model], "en-ru")
        assert (args.dropout, args.label_smoothing, args.weight_decay, args.warmup_updates) == (0.1, 0.1, 0.0, 4000)
        assert args.lr[0] == pytest.approx(512 ** -0.5 * 4000 ** -0.5, rel=1e-5), model


def test_novotney_cue_reads_a_multilingual_distilbert_into_english():
    """Section 3.1: the document context of *->en is not English, so a multilingual encoder embeds it;
    NOVOTNEY-CUE keeps DistilBERT's role (CLS vector, 768-d) with its multilingual twin."""
    paper = cfg.load(REPO / "config" / "paper.yaml")
    records = []
    for direction in paper["directions"]:
        context = cfg.model_spec(paper, "novotney_cue", direction)["context"]
        expected = "distilbert-base-uncased" if direction.startswith("en-") else "distilbert-base-multilingual-cased"
        assert (context["encoder"], context["pooling"]) == (expected, "cls"), direction
        records.append({"model": "novotney_cue", "direction": direction,
                        "spec": {"type": "novotney_cue", "context": context}})
    assert context_footnotes(records) == []   # as the paper describes it: no footnote


@pytest.mark.parametrize("model_type", ["mtcue", "novotney_cue", "tagging"])
def test_context_dropout_is_active_in_training_and_off_in_evaluation(model_type):
    task = tiny_task()
    model = tiny_model(model_type, task, context_dropout=0.5)   # every other dropout of the tiny model is 0
    dropout = model.encoder.context_dropout if model_type == "tagging" else model.encoder.context_encoder.dropout_module
    assert dropout.p == 0.5 and not dropout.apply_during_inference
    seen = []
    dropout.register_forward_hook(lambda module, inputs, output: seen.append((inputs[0], output)))
    batch = tiny_batch(task, batch_size=8)
    model.train()
    first, second = model(**batch)[0], model(**batch)[0]
    x, y = seen[0]
    dropped = (y == 0) & (x != 0)
    assert 0.35 < dropped.float().mean() < 0.65                      # element-wise, p = 0.5
    torch.testing.assert_close(y[~dropped], 2 * x[~dropped])         # survivors scaled by 1 / (1 - p)
    assert not torch.allclose(first, second)
    model.eval()
    evaluated = model(**batch)[0]
    x, y = seen[-1]
    assert torch.equal(x, y)
    torch.testing.assert_close(evaluated, tiny_model(model_type, task, context_dropout=0.0)(**batch)[0])


@pytest.mark.parametrize("model, columns", [("mtcue", 12), ("mtcue_no_metadata", 6)])
def test_mtcue_as_built_by_default_uses_w_1_and_a_qk_scale_from_its_data(model, columns):
    """Paper section 2.3: T' = C' + S' (the authors' code halved it); section 2.2: the QK-norm scale is
    learned, initialised from the data (Henry et al.: log2(L^2 - L), L = the context length)."""
    demo = cfg.load(REPO / "config" / "config.yaml")
    spec = cfg.model_spec(demo, model, "en-de")
    assert len(spec["context"]["columns"]) == columns
    model_type, arch_args = parse_arch_args(fa.arch_args(spec))
    assert "parallel_attn_weight" not in arch_args and "qk_norm_scale_init" not in arch_args
    built = build_model(model_type, arch_args, DataFreeTask(100, doc_columns=sum(
        c.startswith("doc") for c in spec["context"]["columns"]), n_columns=columns))
    assert [layer.encoder_attn.weight for layer in built.decoder.layers] == [1.0] * len(built.decoder.layers)
    scales = [layer.self_attn.qk_scale.item() for layer in built.encoder.context_encoder.layers]
    assert scales == pytest.approx([{12: 7.0444, 6: 4.9069}[columns]] * 2, abs=1e-4)   # log2(132), log2(30)
    assert math.log2(columns ** 2 - columns) == pytest.approx(scales[0])


def test_on_several_gpus_the_batch_per_update_stays_the_papers(paper_run):
    """fairseq's data-parallel training sums every GPU's batch into one update: with N GPUs each
    accumulates update_freq / N steps, so tokens per update stay ~200K; N that does not divide
    update_freq is refused before training."""
    spec = train_specs(paper_run)["mtcue"]
    for gpus in (1, 2, 4):
        argv = [*fa.task_args(spec, "en-de", "/data-bin", "/store"), *fa.arch_args(spec),
                *fa.optimisation_args(spec, True, gpus), *fa.distributed_args(gpus, 12345)]
        args = options.parse_args_and_arch(options.get_training_parser(), input_args=argv)
        assert args.max_tokens * args.update_freq[0] * gpus == 200_000
        if gpus > 1:
            assert (args.distributed_world_size, args.distributed_init_method) == (gpus, "tcp://localhost:12345")
    with pytest.raises(ValueError, match="update_freq 8 is not a multiple of 3 GPUs"):
        fa.optimisation_args(spec, True, 3)
