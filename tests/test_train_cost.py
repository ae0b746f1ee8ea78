"""Training cost per model (mtcue.models.train_cost, `mtcue bench-train-cost`), on tiny sizes."""
import json

import pytest
import torch
import yaml

from conftest import REPO
from mtcue import config as cfgmod
from mtcue.cli import main
from mtcue.models.params import DataFreeTask
from mtcue.models.train_cost import PAPER_RATIOS, bench_config, make_batch, pack, padded_tokens, ratios
from mtcue.plan.models import model_columns

TINY_ARCH = {"embed_dim": 16, "heads": 2, "encoder_layers": 1, "encoder_ffn_dim": 32,
             "decoder_layers": 1, "decoder_ffn_dim": 32}


@pytest.fixture
def small_config(tmp_path):
    """config/tiny.yaml with the three contextual models of Table 3 (NOVOTNEY-CUE over 768-d DistilBERT vectors)."""
    raw = yaml.safe_load((REPO / "config" / "tiny.yaml").read_text())
    contextual = {**TINY_ARCH, "context_layers": 1, "context_ffn_dim": 32}
    raw["models"] = {
        "base": {"type": "base", "arch": TINY_ARCH},
        "base_pm": {"type": "base", "arch": {**TINY_ARCH, "encoder_layers": 2}},
        "tagging": {"type": "tagging", "init_from": "base_pm", "arch": {**TINY_ARCH, "encoder_layers": 2}},
        "novotney_cue": {"type": "novotney_cue", "init_from": "base", "context_encoder": "distilbert-base-uncased",
                         "context_pooling": "cls", "arch": contextual},
        "mtcue": {"type": "mtcue", "init_from": "base", "arch": contextual},
    }
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_pack_fills_batches_like_fairseq():
    """Sorted by the longer side; a batch takes a sentence while sentences x longest <= max_tokens."""
    pairs = [(3, 4), (5, 2), (6, 6), (2, 2), (4, 1)]
    # (2,2) (3,4) (4,1): 3 x 4 = 12; adding (5,2) would make 4 x 5 = 20. Then (5,2) (6,6): 2 x 6 = 12.
    assert pack(pairs, 12) == [[(2, 2), (3, 4), (4, 1)], [(5, 2), (6, 6)]]
    assert pack(pairs, 11) == [[(2, 2), (3, 4)], [(4, 1), (5, 2)], [(6, 6)]]
    with pytest.raises(ValueError, match="does not fit"):
        pack([(13, 2)], 12)


def test_batch_is_padded_as_fairseq_collates_it():
    task = DataFreeTask(30, context_dim=8, doc_columns=2, n_columns=3, context_kind="vectors")
    batch = make_batch([(2, 2), (3, 4), (4, 1)], task, "mtcue", torch.Generator().manual_seed(0))
    n, pad, eos = batch["net_input"], 1, 2
    assert n["src_tokens"].shape == (3, 4) and n["prev_output_tokens"].shape == (3, 4)
    assert padded_tokens(batch) == 12
    assert n["src_tokens"][0, :2].tolist() == [pad, pad] and n["src_tokens"][0, 3] == eos   # left-padded source
    assert n["src_lengths"].tolist() == [2, 3, 4]
    assert batch["target"][0, 1] == eos and batch["target"][0, 2:].tolist() == [pad, pad]    # right-padded target
    assert n["prev_output_tokens"][0, 0] == eos and n["prev_output_tokens"][0, 1] == batch["target"][0, 0]
    assert int(batch["target"].ne(pad).sum()) == 2 + 4 + 1
    assert n["context"].shape == (3, 3, 8) and not n["context_padding_mask"].any()
    task.context_kind = "tags"
    tags = make_batch([(2, 2)], task, "tagging", torch.Generator().manual_seed(0))["net_input"]["context"]
    assert tags.shape == (1, 3) and tags.dtype == torch.long and tags.max() < task.n_tags


def test_ratios_are_divisions_of_the_type_named_models():
    """An ablation of type mtcue listed first does not stand for MTCUE."""
    entries = {"mtcue_no_doc": {"type": "mtcue", "update_s": {"mean": 9.0}},
               "tagging": {"type": "tagging", "update_s": {"mean": 2.0}},
               "mtcue": {"type": "mtcue", "update_s": {"mean": 3.0}},
               "novotney_cue": {"type": "novotney_cue", "update_s": {"mean": 4.5}}}
    r = ratios(entries)
    assert r["mtcue/tagging"]["measured"] == pytest.approx(1.5) and r["mtcue/tagging"]["paper"] == 1.09
    assert r["novotney_cue/mtcue"]["measured"] == pytest.approx(1.5) and r["novotney_cue/mtcue"]["paper"] == 1.59
    assert PAPER_RATIOS == {"mtcue/tagging": 1.09, "novotney_cue/mtcue": 1.59}
    assert ratios({"mtcue": entries["mtcue"]}) == {}


def test_bench_times_every_contextual_model_on_the_same_batches(small_config):
    cfg = cfgmod.load(small_config)
    result = bench_config(cfg, updates=3, warmup=1, max_tokens=60, mean_len=6, max_len=12, vocab_size=100,
                          n_tags=7, device="cpu")
    models = result["models"]
    assert sorted(models) == ["mtcue", "novotney_cue", "tagging"]      # every contextual model, no BASE
    n_columns = len(model_columns(cfg, "mtcue"))
    assert models["tagging"]["context"] == {"kind": "tags", "columns": n_columns, "n_tags": 7}
    assert models["novotney_cue"]["context"] == {"kind": "vectors", "columns": n_columns, "width": 768}
    assert models["mtcue"]["context"] == {"kind": "vectors", "columns": n_columns, "width": 384}
    for e in models.values():
        assert e["timed_updates"] == 3
        assert e["update_s"]["mean"] > 0 and e["fwd_bwd_s"]["mean"] > 0 and e["step_s"]["mean"] > 0
        assert e["update_s"]["mean"] == pytest.approx(e["fwd_bwd_s"]["mean"] + e["step_s"]["mean"])
        # within the budget, and full to within one sentence of the longest length
        assert 60 - 12 < e["padded_tokens_per_update"] <= 60
        assert 0 < e["target_tokens_per_update"] <= e["padded_tokens_per_update"]
    same = {(e["sentences_per_update"], e["padded_tokens_per_update"], e["target_tokens_per_update"])
            for e in models.values()}
    assert len(same) == 1
    r = result["ratios"]
    assert r["mtcue/tagging"]["measured"] == models["mtcue"]["update_s"]["mean"] / models["tagging"]["update_s"]["mean"]
    assert r["novotney_cue/mtcue"]["measured"] == (models["novotney_cue"]["update_s"]["mean"]
                                                   / models["mtcue"]["update_s"]["mean"])
    assert result["batches"]["max_tokens"] == 60 and result["flush_denormal"] is True


def test_cli_writes_json_and_defaults_to_the_config_max_tokens(small_config, tmp_path, capsys):
    out = tmp_path / "cost.json"
    main(["bench-train-cost", "--config", str(small_config), "--models", "mtcue", "--updates", "2", "--warmup", "1",
          "--vocab-size", "100", "--mean-len", "5", "--max-len", "10", "--device", "cpu", "--profile", "1",
          "--out", str(out)])
    result = json.loads(out.read_text())
    assert json.loads(capsys.readouterr().out) == result
    assert list(result["models"]) == ["mtcue"] and result["ratios"] == {}
    assert result["batches"]["max_tokens"] == 512                    # tiny.yaml's training.max_tokens
    assert result["models"]["mtcue"]["padded_tokens_per_update"] <= 512
    top = result["models"]["mtcue"]["top_operators"]
    assert 0 < len(top) <= 10 and all(op["s_per_update"] > 0 for op in top)
    shares = [op["share"] for op in top]
    assert shares == sorted(shares, reverse=True) and sum(shares) <= 1
