"""Jeong et al.'s style control (style_token, style_dim): the models, their task, levels, scoring."""
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from fairseq.data import Dictionary, LanguagePairDataset
from fairseq.sequence_generator import SequenceGenerator

import mtcue.models.plugin  # noqa: F401  (registers task and models)
from mtcue.models.params import DataFreeTask, build_model
from mtcue.models.plugin.style_task import StyleDataset
from test_plugin import save_fairseq_checkpoint

TINY = {"encoder_embed_dim": 16, "encoder_ffn_embed_dim": 32, "decoder_ffn_embed_dim": 32,
        "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_layers": 2, "decoder_layers": 2,
        "dropout": 0.0}


def fixed_batch(vocab=40, batch=3, length=6, seed=1):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(4, vocab, (batch, length), generator=g)
    tokens[:, -1] = 2
    return {"src_tokens": tokens, "src_lengths": torch.full((batch,), length),
            "prev_output_tokens": torch.randint(4, vocab, (batch, length), generator=g)}


def parent_and_child(tmp_path, init="zero", **extra):
    task = DataFreeTask(40)
    torch.manual_seed(1)
    base = build_model("base", TINY, task).eval()
    path = save_fairseq_checkpoint(base, tmp_path / "base.pt")
    torch.manual_seed(2)
    child = build_model("style_dim", {**TINY, "style_init": init, "pretrained_base": str(path),
                                      "pretrained_report": str(tmp_path / "r.json"), **extra}, task).eval()
    return base, child


@pytest.mark.parametrize("style", [-2.0, 0.0, 2.0])
def test_style_dim_at_zero_init_computes_its_parent_exactly(tmp_path, style):
    base, child = parent_and_child(tmp_path)
    batch = fixed_batch()
    want, _ = base(**batch)
    got, _ = child(**batch, style=torch.full((3,), style))
    assert torch.equal(got, want)  # exactly, not approximately: the seed's claim


def test_style_dim_at_normal_init_departs_from_its_parent_and_reads_the_value(tmp_path):
    base, child = parent_and_child(tmp_path, init="normal")
    batch = fixed_batch()
    low, _ = child(**batch, style=torch.full((3,), -2.0))
    high, _ = child(**batch, style=torch.full((3,), 2.0))
    assert not torch.allclose(low, base(**batch)[0], atol=1e-3)
    assert not torch.allclose(low, high, atol=1e-3)
    new = [p for n, p in child.named_parameters() if "style_" in n and n.endswith(("col", "weight"))]
    values = torch.cat([p.detach().flatten() for p in new])
    assert values.abs().max() <= 0.5 and 0.15 < values.std() < 0.3  # N(0, 0.25) cut at +-0.5: std ~0.22


def test_the_seeds_widened_norm_and_scaling_would_break_zero_init_retention():
    """The two ways the seed's widening changes the parent's function although every new weight is 0:
    a layer norm over d + H dimensions whose H new ones are 0, and scores scaled by the widened head."""
    torch.manual_seed(0)
    d, heads = 16, 4
    h = torch.randn(5, d)
    parent = F.layer_norm(h, (d,))
    widened = F.layer_norm(torch.cat([h, torch.zeros(5, heads)], dim=1), (d + heads,))[:, :d]
    # mean and variance over d + H values, H of them 0
    mean = h.sum(1, keepdim=True) / (d + heads)
    var = (((h - mean) ** 2).sum(1, keepdim=True) + heads * mean ** 2) / (d + heads)
    expected = (h - mean) / torch.sqrt(var + 1e-5)
    torch.testing.assert_close(widened, expected)
    assert not torch.allclose(widened, parent, atol=1e-2)
    head_dim = d // heads
    assert (head_dim + 1) ** -0.5 != head_dim ** -0.5  # 1/sqrt(5) vs 1/sqrt(4): softmax temperature changes


def test_style_dim_loads_every_parent_tensor_and_only_style_weights_are_new(tmp_path):
    base, child = parent_and_child(tmp_path)
    report = json.loads((tmp_path / "r.json").read_text())
    own = child.state_dict()
    assert all(torch.equal(own[k], v) for k, v in base.state_dict().items())
    assert report["new"] and all(".style_" in k for k in report["new"])
    heads, d, layers = 4, 16, 2
    # per layer: q row (d + 1 bias) x H, k and v rows ((d + 1) + 1) x H, k and v columns d, output columns d x H
    per_layer = heads * (d + 1) + 2 * heads * (d + 2) + 2 * d + d * heads
    assert report["new_params"] == layers * per_layer


@pytest.mark.parametrize("freeze,trained", [
    ("none", {"encoder", "decoder", "embed", "style"}),
    ("encoder", {"decoder", "embed", "style"}),
    ("encoder_decoder", {"embed", "style"}),
])
def test_freezing_options(tmp_path, freeze, trained):
    _, child = parent_and_child(tmp_path, style_freeze=freeze)

    def part(name):
        return "embed" if "embed_tokens" in name else "style" if "style_" in name else name.split(".")[0]
    assert {part(n) for n, p in child.named_parameters() if p.requires_grad} == trained


def token_task(vocab=40):
    from argparse import Namespace

    from mtcue.models.plugin.style_task import StyleTranslationTask

    d = Dictionary()
    for i in range(vocab - len(d)):
        d.add_symbol(f"w{i}")
    cfg = Namespace(style_mode="token", style_dir=None, style_level=None, left_pad_source=True,
                    left_pad_target=False, data="", source_lang="en", target_lang="de")
    task = StyleTranslationTask(cfg, d, Dictionary.load(_lines(d)))
    task.context_kind = None  # what params.build_model reads of a task
    return task


def _lines(d):
    import io

    return io.StringIO("".join(f"{d[i]} 1\n" for i in range(d.nspecial, len(d))))


def test_style_token_task_adds_five_symbols_after_the_vocabulary():
    task = token_task(40)
    assert task.first_symbol == 40 and len(task.source_dictionary) == len(task.target_dictionary) == 45
    assert [task.target_dictionary[40 + i] for i in range(5)] == [f"<style{i}>" for i in range(1, 6)]


def test_style_dataset_puts_the_level_symbol_right_after_bos_and_values_by_sample_id():
    d = Dictionary()
    for w in "a b c".split():
        d.add_symbol(w)
    src = [torch.tensor([4, 5, 2]), torch.tensor([6, 2])]
    tgt = [torch.tensor([5, 2]), torch.tensor([4, 6, 2])]
    pair = LanguagePairDataset(src, np.array([3, 2]), d, tgt, np.array([2, 3]), d, left_pad_source=True,
                               left_pad_target=False, shuffle=False)
    tokens = StyleDataset(pair, np.array([5, 1]), "token", first_symbol=20, name="t")
    batch = tokens.collater([tokens[0], tokens[1]])
    by_id = {int(i): k for k, i in enumerate(batch["id"])}
    # target [<style5>, b, </s>]; decoder input [</s> (BOS), <style5>, b]
    assert batch["target"][by_id[0]].tolist()[:3] == [24, 5, 2]
    assert batch["net_input"]["prev_output_tokens"][by_id[0]].tolist()[:3] == [2, 24, 5]
    assert batch["style_prefix"][by_id[1]].tolist() == [20]
    values = StyleDataset(pair, np.array([5, 1]), "value", first_symbol=None, name="t")
    batch = values.collater([values[0], values[1]])
    assert batch["net_input"]["style"][by_id[0]] == 2.0 and batch["net_input"]["style"][by_id[1]] == -2.0
    with pytest.raises(ValueError, match="line 2 has style level 7"):
        StyleDataset(pair, np.array([5, 7]), "value", None, name="levels.npy")


def test_style_token_generation_forces_the_level_symbol_and_strips_it():
    task = token_task(40)
    torch.manual_seed(0)
    model = build_model("style_token", TINY, task).eval()
    batch = fixed_batch(vocab=40)
    sample = {"net_input": {k: batch[k] for k in ("src_tokens", "src_lengths")},
              "style_prefix": torch.full((3, 1), 44)}
    generator = task.build_generator([model], type("G", (), {"beam": 2, "max_len_a": 0, "max_len_b": 5,
                                                             "min_len": 1, "unnormalized": False,
                                                             "lenpen": 1, "unkpen": 0, "temperature": 1.0,
                                                             "match_source_len": False, "no_repeat_ngram_size": 0,
                                                             "sampling": False, "sampling_topk": -1,
                                                             "sampling_topp": -1.0, "constraints": None,
                                                             "diverse_beam_groups": -1,
                                                             "diverse_beam_strength": 0.5, "diversity_rate": -1,
                                                             "print_alignment": None, "prefix_size": 0,
                                                             "iter_decode_max_iter": 10, "score_reference": False,
                                                             "retain_iter_history": False,
                                                             "retain_dropout": False})())
    hypos = task.inference_step(generator, [model], sample)
    assert all(h[0]["tokens"][0] == 44 for h in hypos)
    assert 44 in generator.symbols_to_strip_from_output and 40 in generator.symbols_to_strip_from_output


def test_style_token_parent_rows_load_and_the_five_new_rows_are_kept(tmp_path):
    task = token_task(40)
    torch.manual_seed(1)
    base = build_model("base", TINY, DataFreeTask(40))
    path = save_fairseq_checkpoint(base, tmp_path / "base.pt")
    torch.manual_seed(2)
    child = build_model("style_token", {**TINY, "pretrained_base": str(path)}, task)
    emb = child.state_dict()["encoder.embed_tokens.weight"]
    assert emb.shape[0] == 45
    assert torch.equal(emb[:40], base.state_dict()["encoder.embed_tokens.weight"])
    assert emb[40:].abs().sum() > 0
