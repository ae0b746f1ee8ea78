"""The sequence-shortening model family (issue 27): caching, pooling, grouping, selecting and the
multi-encoder baseline over the token store's previous sentences; its experiment and table."""
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from fairseq.data import Dictionary, LanguagePairDataset

import mtcue.models.plugin  # noqa: F401  (registers task and models)
from mtcue import config as cfgmod
from mtcue.config import ConfigError
from mtcue.models.params import DataFreeTask, build_model
from mtcue.models.plugin.context_dataset import TokenContextDataset
from mtcue.models.plugin.pretrained import is_context_key
from mtcue.models.plugin.shortening.shortening_base import true_mean
from mtcue.plan.models import model_spec, trained_models
from mtcue.experiments.shortening.plan import SHORTENING
from mtcue.study import SHORTENING_TYPES
from test_plugin import save_fairseq_checkpoint
from test_voita2018 import assert_beam_scores_are_teacher_forced

TINY = {"encoder_embed_dim": 16, "encoder_ffn_embed_dim": 32, "decoder_ffn_embed_dim": 32,
        "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_layers": 2, "decoder_layers": 2,
        "dropout": 0.0, "shortening_groups": 3}
REPO = Path(__file__).resolve().parents[1]


def tiny(model_type, c, task=None, **arch):
    torch.manual_seed(0)
    return build_model(model_type, {**TINY, "context_sentences": c, **arch}, task or DataFreeTask(40)).eval()


def batch(task, c, b=3, length=6, context_length=5, seed=1):
    """Sources and c context sentences ([B, c, L], nearest first) `<s> ... </s>`, left-padded; the
    last sample's nearest context sentence shorter."""
    g = torch.Generator().manual_seed(seed)
    d = task.source_dictionary
    tokens = torch.randint(d.nspecial, len(d), (b, length), generator=g)
    tokens[:, -1] = d.eos()
    context = torch.randint(d.nspecial, len(d), (b, c, context_length), generator=g)
    context[:, :, 0], context[:, :, -1] = d.bos(), d.eos()
    context[-1, 0, :2] = d.pad()
    context[-1, 0, 2] = d.bos()
    return {"src_tokens": tokens, "src_lengths": torch.full((b,), length), "prev_output_tokens": tokens.roll(1, dims=1),
            "context": context, "context_padding_mask": context.eq(d.pad())}


@pytest.mark.parametrize("model_type", SHORTENING_TYPES)
@pytest.mark.parametrize("c", [1, 2])
def test_every_model_translates_from_its_context_sentences(model_type, c):
    task = DataFreeTask(40)
    model = tiny(model_type, c, task)
    x = batch(task, c)
    logits, _ = model(**x)
    assert logits.shape == (3, 6, 40) and torch.isfinite(logits).all()
    # Each context sentence matters, and only to its own sample.
    for j in range(c):
        other = x["context"].clone()
        other[0, j, 2] = other[0, j, 2] % 30 + 5
        changed, _ = model(**{**x, "context": other})
        assert not torch.allclose(changed[0], logits[0], atol=1e-6), (model_type, j)
        assert torch.allclose(changed[1:], logits[1:], atol=1e-6)


@pytest.mark.parametrize("model_type,length", [("caching_sentence", lambda t, l, k: 3),
                                               ("pool_max", lambda t, l, k: -(-t // 2) + 2 * -(-l // 2)),
                                               ("grouping", lambda t, l, k: 3 * k),
                                               ("selecting", lambda t, l, k: 3 * k)])
def test_the_current_sentence_joins_the_aggregating_models_context(model_type, length):
    task = DataFreeTask(40)
    model = tiny(model_type, 2, task, shortening_groups=2 if model_type == "pool_max" else 3)
    x = batch(task, 2)
    out = model.encoder(x["src_tokens"], x["src_lengths"], context=x["context"],
                        context_padding_mask=x["context_padding_mask"])
    k = 2 if model_type == "pool_max" else 3
    assert out["context_out"][0].shape == (length(6, 5, k), 3, 16)
    # Segment 0 the current sentence's encoder states shortened, then each context sentence's encoded alone.
    enc = model.encoder
    current = enc.context_shorten(out["encoder_out"][0], out["encoder_padding_mask"][0])
    parts = [current, *(enc.context_shorten(*enc.encode(x["context"][:, j])) for j in range(2))]
    assert current[0].abs().amin(dim=-1).gt(0).all()  # states, not zeros
    torch.testing.assert_close(out["context_out"][0],
                               torch.cat([g + enc.context_segments.weight[s] for s, (g, _) in enumerate(parts)]))
    assert out["context_padding_mask"][0].tolist() == torch.cat([m for _, m in parts], dim=1).tolist()


def test_caching_tokens_reads_the_context_sentences_states_only():
    """Caching Tokens does not aggregate, so the current sentence is no part of its context (the shortening
    paper, section 5: "For all the aggregating models, the current sentence is also used as context"; the
    authors' caching run leaves use_current_context off): its context is each context sentence's states as
    fairseq's encoder gives them alone, plus that sentence's segment row (j for the j-th previous)."""
    from fairseq.models.transformer import TransformerEncoder

    task = DataFreeTask(40)
    model = tiny("caching_tokens", 2, task)
    x = batch(task, 2)
    out = model.encoder(x["src_tokens"], x["src_lengths"], context=x["context"],
                        context_padding_mask=x["context_padding_mask"])
    context = out["context_out"][0]
    assert context.shape == (2 * 5, 3, 16)  # two sentences of 5 positions; the source's 6 are not there
    for j in range(2):
        alone = TransformerEncoder.forward(model.encoder, x["context"][:, j], None)["encoder_out"][0]
        torch.testing.assert_close(context[5 * j:5 * (j + 1)], alone + model.encoder.context_segments.weight[j + 1])
    assert out["context_padding_mask"][0].tolist() == x["context_padding_mask"].reshape(3, 10).tolist()


@pytest.mark.parametrize("model_type", ["caching_tokens", "grouping"])
def test_a_model_trained_with_three_sentences_reads_eight(model_type):
    """The shortening paper's memory curve runs the C = 3 models on 4-8 context sentences."""
    task = DataFreeTask(40)
    model = tiny(model_type, 3, task)
    logits, _ = model(**batch(task, 8))
    assert logits.shape == (3, 6, 40) and torch.isfinite(logits).all()


def test_caching_sentence_means_over_the_true_length():
    # Two sentences of 3 positions, d = 2; the second is left-padded by one.
    h = torch.tensor([[[1.0, 2.0], [100.0, 100.0]],
                      [[3.0, 4.0], [2.0, 6.0]],
                      [[5.0, 9.0], [4.0, 0.0]]])
    mask = torch.tensor([[False, False, False], [True, False, False]])
    mean, mean_mask = true_mean(h, mask)
    # (1+3+5)/3, (2+4+9)/3; (2+4)/2, (6+0)/2: the pad (100) left out and divided by 2, not 3.
    torch.testing.assert_close(mean, torch.tensor([[[3.0, 5.0], [3.0, 3.0]]]))
    assert mean_mask.tolist() == [[False], [False]]


@pytest.mark.parametrize("model_type", ["caching_sentence", "grouping"])
def test_decoder_layer_follows_the_authors_order_and_gate(model_type):
    """The authors' contextual_decoder.py (post-norm): s = LN1(x + SelfAttn(x)); c = LN2(s + CrossAttn(s));
    k = LN3(q + CtxAttn(q)), q = s in parallel (Caching Sentence, the paper's best: parallel with the gate on
    the context branch) and c in series; gate k <- sigmoid(Linear(k)) * k; FFN input c + k in parallel, k in
    series; out = LN4(f + FFN(f))."""
    task = DataFreeTask(40)
    model = tiny(model_type, 1, task)
    layer = model.decoder.layers[0]
    g = torch.Generator().manual_seed(4)
    x, source, context = (torch.randn(n, 2, 16, generator=g) for n in (3, 5, 4))
    layer.context, layer.context_mask = context, None
    got, _, _ = layer(x, encoder_out=source, encoder_padding_mask=None,
                      self_attn_mask=model.decoder.buffered_future_mask(x))

    def block(attention, norm, query, key, mask=None):
        return norm(query + attention(query=query, key=key, value=key, attn_mask=mask, need_weights=False)[0])

    s = block(layer.self_attn, layer.self_attn_layer_norm, x, x, model.decoder.buffered_future_mask(x))
    c = block(layer.encoder_attn, layer.encoder_attn_layer_norm, s, source)
    parallel = model_type == "caching_sentence"
    k = block(layer.context_attn, layer.context_attn_layer_norm, s if parallel else c, context)
    if parallel:
        k = torch.sigmoid(layer.context_gate(k)) * k
    f = c + k if parallel else k
    want = layer.final_layer_norm(f + layer.fc2(torch.relu(layer.fc1(f))))
    torch.testing.assert_close(got, want)
    assert (layer.context_gate is not None) == parallel


def context_parts(model, x, lengths):
    """The encoder's context states split per sentence (current, then nearest first)."""
    out = model.encoder(x["src_tokens"], x["src_lengths"], context=x["context"],
                        context_padding_mask=x["context_padding_mask"])
    return torch.split(out["context_out"][0], lengths, dim=0)


def grads(part, params):
    """d(a random projection of `part`)/d(params); a plain sum would be constant through a layer norm."""
    weights = torch.randn(part.shape, generator=torch.Generator().manual_seed(0))
    return list(torch.autograd.grad((part * weights).sum(), params, allow_unused=True, retain_graph=True))


@pytest.mark.parametrize("model_type,encoder_open,shortening_open,sizes", [
    ("caching_tokens", 0, None, lambda k: [5, 5, 5]),
    ("caching_sentence", 0, None, lambda k: [1, 1, 1, 1]),
    ("pool_mean", 0, 3, lambda k: [3, 3, 3, 3]),
    ("grouping", 2, 2, lambda k: [k] * 4),
    ("selecting", 1, 1, lambda k: [k] * 4),
])
def test_gradient_stops_where_the_seed_stops_it(model_type, encoder_open, shortening_open, sizes):
    """Three context sentences: the encoder gets gradient from the current sentence and the nearest
    `encoder_open` context ones only; the shortening module from the nearest `shortening_open`."""
    task = DataFreeTask(40)
    model = tiny(model_type, 3, task, shortening_groups=2 if model_type.startswith("pool") else 3).train()
    x = batch(task, 3)
    parts = context_parts(model, x, sizes(3))
    encoder = [p for n, p in model.encoder.named_parameters() if n.startswith("layers.")]
    shortener = list(model.encoder.context_shorten.parameters()) if shortening_open is not None else []
    # sentence 0 is the current one (not in Caching Tokens' context), j the j-th previous
    for i, part in enumerate(parts, start=0 if model.encoder.current_as_context else 1):
        # The parts are slices of one concatenation: a stopped gradient arrives as zeros (or None).
        g = [0.0 if t is None else t.abs().sum().item() for t in grads(part, encoder + shortener)]
        to_encoder, to_shortener = g[:len(encoder)], g[len(encoder):]
        open_encoder = i == 0 or i - 1 < encoder_open
        assert (sum(to_encoder) > 0) == open_encoder, (model_type, i)
        if shortener:
            open_shortener = i == 0 or i - 1 < shortening_open
            assert (sum(to_shortener) > 0) == open_shortener, (model_type, i)


def test_multi_encoder_gradient_reaches_its_own_context_encoder_only_from_context():
    task = DataFreeTask(40)
    model = tiny("multi_encoder", 2, task).train()
    x = batch(task, 2)
    out = model.encoder(x["src_tokens"], x["src_lengths"], context=x["context"],
                        context_padding_mask=x["context_padding_mask"])
    states = out["encoder_out"][0]
    own = list(model.encoder.layers.parameters())
    other = list(model.encoder.context_encoder.layers.parameters())
    g = [0.0 if t is None else t.abs().sum().item() for t in grads(states[:10], own + other)]
    # 2 context sentences of 5 first, then the source: their states come from the context encoder only.
    assert sum(g[:len(own)]) == 0 and sum(g[len(own):]) > 0
    assert not any(p is q for p in own for q in other)  # unshared


@pytest.mark.parametrize("model_type", ["caching_tokens", "caching_sentence", "grouping", "multi_encoder"])
def test_beam_search_scores_equal_teacher_forced_scores(model_type):
    """Incremental decoding (cached context attention, beams reordered) gives the full pass's scores."""
    task = DataFreeTask(40)
    assert_beam_scores_are_teacher_forced(tiny(model_type, 2, task), task, batch(task, 2))


@pytest.mark.parametrize("model_type", ["caching_tokens", "grouping", "multi_encoder"])
def test_every_base_tensor_loads_and_only_context_modules_are_new(tmp_path, model_type):
    task = DataFreeTask(40)
    torch.manual_seed(1)
    base = build_model("base", {k: v for k, v in TINY.items() if k != "shortening_groups"}, task)
    path = save_fairseq_checkpoint(base, tmp_path / "base.pt")
    model = tiny(model_type, 2, task, pretrained_base=str(path), pretrained_report=str(tmp_path / "r.json"))
    report = json.loads((tmp_path / "r.json").read_text())
    own = model.state_dict()
    assert all(torch.equal(own[k], v) for k, v in base.state_dict().items())
    assert report["new"] and all(is_context_key(k) for k in report["new"])


def slots_dataset(d, marker_of=lambda d: None, task_cfg=None):
    """Two samples over the token store "c d e f g": sample 0: prev1 = "c d", prev2 missing; sample 1:
    prev1 = "e", prev2 = "f g"; through the task's with_tokens when `task_cfg` is given."""
    src = [torch.tensor([d.index("a"), d.eos()]), torch.tensor([d.index("b"), d.eos()])]
    dataset = LanguagePairDataset(src, [2, 2], d, src, [2, 2], d)
    tokens = np.array([d.index(w) for w in "cdefg"], dtype=np.int32)
    offsets = np.array([[[0, 2], [0, 0]], [[2, 1], [3, 2]]], dtype=np.int64)
    if task_cfg is not None:
        from types import SimpleNamespace

        from mtcue.models.plugin.task import ContextualTranslationTask

        task = SimpleNamespace(cfg=task_cfg, src_dict=d, column_ids=[0, 1])
        return ContextualTranslationTask.with_tokens(task, dataset, tokens, offsets, name="store")
    return TokenContextDataset(dataset, tokens, offsets, [0, 1], marker_of(d), d.eos(), d.pad())


def letters():
    d = Dictionary()
    for w in "abcdefgh":
        d.add_symbol(w)
    return d


def by_sample(wrapped):
    out = wrapped.collater([wrapped[0], wrapped[1]])
    assert out["net_input"]["context_padding_mask"].tolist() == out["net_input"]["context"].eq(1).tolist()
    return dict(zip(out["id"].tolist(), out["net_input"]["context"].tolist()))


def test_collater_gives_each_slot_as_a_sentence_nearest_first_as_the_authors_encode_it():
    """The authors' ContextualListDataset: a context sentence is its tokens + </s>, exactly as a current
    sentence (a missing one just </s>), no marker."""
    d = letters()
    by_id = by_sample(slots_dataset(d))
    p, e = d.pad(), d.eos()
    c, dd, ee, f, g = (d.index(w) for w in "cdefg")
    assert by_id[0] == [[c, dd, e], [p, p, e]]
    assert by_id[1] == [[p, ee, e], [f, g, e]]
    # Voita et al.'s models keep their marker: <s> first
    s = d.bos()
    assert by_sample(slots_dataset(d, lambda d: d.bos()))[1] == [[p, s, ee, e], [s, f, g, e]]


@pytest.mark.parametrize("model,marked", [("grouping_c1", False), ("caching_tokens_c2", False),
                                          ("multi_encoder_c1", False), ("voita_context", True), ("concat", True)])
def test_the_shortening_family_reads_context_sentences_without_the_marker(model, marked):
    """From the config to the batches: the task option that fairseq_args gives each model decides the marker."""
    import argparse

    from fairseq.dataclass.utils import gen_parser_from_dataclass

    from mtcue.models import fairseq_args as fa
    from mtcue.models.plugin.task import ContextualTranslationConfig

    args = fa.task_args(model_spec(demo_config(), model, "en-de"), "en-de", "bin", "store")
    parser = argparse.ArgumentParser()
    gen_parser_from_dataclass(parser, ContextualTranslationConfig())
    cfg, _ = parser.parse_known_args(args)
    d = letters()
    first = by_sample(slots_dataset(d, task_cfg=cfg))[0][0]
    assert first == ([d.bos()] if marked else []) + [d.index("c"), d.index("d"), d.eos()]


# ---- parameter counts of the shortening paper's configuration (its Table 5) ----------------------------------

D, FFN, LAYERS = 512, 2048, 6
# A joint vocabulary of 39,607 entries gives the sentence-level row's 64.42M (the paper's two ~20k SentencePiece
# vocabularies, separate source and target embeddings with the decoder's input and output shared): chosen to fit
# that row, so no absolute count checks anything of the paper; the differences to that row, which no vocabulary
# enters, do.
VOCAB = 39_607
ATTENTION = 4 * (D * D + D)  # q, k, v, out projections with biases
FFN_BLOCK = D * FFN + FFN + FFN * D + D
ENCODER_LAYER = ATTENTION + FFN_BLOCK + 2 * 2 * D  # two layer norms
DECODER_LAYER = 2 * ATTENTION + FFN_BLOCK + 3 * 2 * D
BASE = LAYERS * (ENCODER_LAYER + DECODER_LAYER) + VOCAB * D  # sinusoidal positions: no parameters
CONTEXT_ATTENTION = LAYERS * (ATTENTION + 2 * D)  # a context attention and its layer norm per decoder layer
SEGMENTS = (1024 + 1) * D  # the sentence-indexed segment table: max source positions + 1 rows (authors')
CACHING = BASE + CONTEXT_ATTENTION + SEGMENTS
SHORTENER = ATTENTION + 2 * D  # the attention back to the full sequence and its layer norm
PAPER_TABLE5 = {  # model type (extra arch) -> (hand count, the shortening paper's Table 5 in millions)
    ("base", ()): (BASE, 64.42),
    ("caching_tokens", ()): (CACHING, 71.25),
    ("caching_sentence", ()): (CACHING + LAYERS * (D + 1), 71.26),  # lambda = sigmoid(Linear(h)) per layer
    ("pool_max", (("shortening_groups", 2),)): (CACHING + SHORTENER + (1024 + 1) * D, 72.83),  # its positions
    ("pool_linear", (("shortening_groups", 2),)): (CACHING + SHORTENER + (1024 + 1) * D + 2 * D * D + D, 73.35),
    ("grouping", (("shortening_groups", 9),)): (CACHING + SHORTENER + (D * 512 + 512) + (512 * 9 + 9) + 10 * D,
                                                72.58),  # categorising FFN 512 -> 512 -> K, K + 1 positions
    ("multi_encoder", ()): (BASE + LAYERS * ENCODER_LAYER, 83.33),  # an unshared 6-layer encoder
}


@pytest.mark.parametrize("model_type,extra", list(PAPER_TABLE5))
def test_parameter_counts_of_the_papers_configuration_match_its_table5(model_type, extra):
    """The built model against the hand count of its parts; the hand count's difference to the sentence-level
    model against Table 5's (each of its numbers rounded to 0.01M, so a difference to within 0.01M)."""
    expected, paper = PAPER_TABLE5[(model_type, extra)]
    if model_type != "base":
        assert abs((expected - BASE) / 1e6 - (paper - PAPER_TABLE5[("base", ())][1])) <= 0.01 + 1e-9
    arch = {"encoder_embed_dim": D, "encoder_ffn_embed_dim": FFN, "decoder_ffn_embed_dim": FFN, "encoder_layers": 6,
            "decoder_layers": 6, "encoder_attention_heads": 8, "decoder_attention_heads": 8, **dict(extra)}
    if model_type != "base":
        arch["context_sentences"] = 1
    with torch.device("meta"):  # shapes without memory or initialisation: a count only, in a fraction of the time
        model = build_model(model_type, arch, DataFreeTask(VOCAB))
    assert sum(p.numel() for p in model.parameters()) == expected


# ---- the experiment: config, DAG, table -----------------------------------------------------------

def demo_config():
    return cfgmod.load(REPO / "config" / "config.yaml")


def test_demo_runs_each_model_per_context_size_and_cuts_size_two_to_en_de():
    cfg = demo_config()
    runs = SHORTENING.runs(cfg)
    for family in SHORTENING_TYPES:
        assert ("en-de", f"{family}_c1") in runs and ("en-fr", f"{family}_c1") in runs
        assert ("en-de", f"{family}_c2") in runs and ("en-fr", f"{family}_c2") not in runs
    assert ("en-de", "base") in runs and ("en-fr", "concat") in runs
    # the single-encoder row at C = 2 (the shortening paper's Tables 2-3): one more fine-tuning, in en-de only
    assert ("en-de", "concat_c2") in runs and ("en-fr", "concat_c2") not in runs
    assert len(runs) == 2 * 2 + 8 * 3 + 1
    concat = model_spec(cfg, "concat_c2", "en-de")
    assert concat["context"]["slot"] == "prev1,prev2" and concat["init_from"] == "base"
    assert model_spec(cfg, "concat", "en-de")["context"]["slot"] == "prev1"  # part 1's run, unchanged
    paper = cfgmod.load(REPO / "config" / "paper.yaml")
    assert {r for r in SHORTENING.runs(paper) if r[1].startswith("concat")} == {
        (d, m) for d in ("en-de", "en-fr") for m in ("concat", "concat_c2", "concat_c3")}
    spec = model_spec(cfg, "grouping_c2", "en-de")
    assert spec["context"]["slot"] == "prev1,prev2" and spec["arch"]["context_sentences"] == 2
    from mtcue.models import fairseq_args as fa

    args = fa.arch_args(spec) + fa.task_args(spec, "en-de", "bin", "store")
    assert args[args.index("--context-sentences") + 1] == "2" and args[args.index("--context-slot") + 1] == "prev1,prev2"
    # The runs are trained models of the study, so the contrastive rules score them.
    assert trained_models(cfg)[("en-de", "grouping_c2")] == ["shortening"]


@pytest.mark.parametrize("change,message", [
    (lambda c: c["models"]["voita_context"].update(context_sentences=2), "only the shortening family and concat"),
    (lambda c: c["models"]["concat"].update(context_sentences=2, context_slot="next1"), "reads prev1..prevC"),
    (lambda c: c["experiments"]["shortening"].update(context_sizes=[6]), "context_sizes"),
    (lambda c: c["context"].update(doc_slots=1), "exceed context.doc_slots"),
    (lambda c: c["experiments"]["shortening"]["only"].update(grouping_c3=["en-de"]), "not runs of the experiment"),
    (lambda c: c["models"].update(grouping_c1={"type": "base"}), "context-size runs"),
])
def test_bad_shortening_config_is_refused(change, message):
    raw = cfgmod.read_yaml(REPO / "config" / "config.yaml")
    change(raw)
    with pytest.raises(ConfigError, match=message):
        cfgmod.validate(raw)


def test_k_is_per_pair_at_the_papers_values_and_defaults_in_the_schema_for_shortener_models_only():
    from mtcue.models import fairseq_args as fa

    # The shortening paper, section 5.2: pooling K = 2; 9 groups / 10 selected tokens in en-de, 11 for both in en-fr.
    paper = cfgmod.load(REPO / "config" / "paper.yaml")
    ks = {(m, d): model_spec(paper, f"{m}_c1", d)["arch"]["shortening_groups"]
          for m in ("pool_mean", "pool_linear", "grouping", "selecting") for d in ("en-de", "en-fr")}
    assert ks == {("pool_mean", "en-de"): 2, ("pool_mean", "en-fr"): 2, ("pool_linear", "en-de"): 2,
                  ("pool_linear", "en-fr"): 2, ("grouping", "en-de"): 9, ("grouping", "en-fr"): 11,
                  ("selecting", "en-de"): 10, ("selecting", "en-fr"): 11}
    args = fa.arch_args(model_spec(paper, "grouping_c2", "en-fr"))
    assert args[args.index("--shortening-groups") + 1] == "11"
    raw = cfgmod.read_yaml(REPO / "config" / "config.yaml")
    del raw["models"]["grouping"]["arch"]["shortening_groups"]
    cfg = cfgmod.validate(raw)
    assert model_spec(cfg, "grouping_c1", "en-de")["arch"]["shortening_groups"] == 2  # the schema's x-default
    assert "shortening_groups" not in model_spec(cfg, "caching_tokens_c1", "en-de")["arch"]  # no K: spec unchanged
    raw["models"]["grouping"]["arch"]["shortening_groups"] = {"en-de": 9}
    with pytest.raises(ConfigError, match=r"models\.grouping_c1\.arch\.shortening_groups: no K for en-fr"):
        model_spec(cfgmod.validate(raw), "grouping_c1", "en-fr")
    raw["models"]["caching_tokens"]["arch"] = {"shortening_groups": 3}
    with pytest.raises(ConfigError, match=r"models\.caching_tokens\.arch\.shortening_groups: a 'caching_tokens'"):
        cfgmod.validate(raw)


def test_a_shortener_model_without_k_is_refused_when_built():
    with pytest.raises(ValueError, match="model grouping: give --shortening-groups K"):
        build_model("grouping", {**TINY, "shortening_groups": None}, DataFreeTask(50))


def test_demo_dag_fine_tunes_every_run_and_builds_the_table():
    from conftest import dry_run

    run = dry_run("results/tables/shortening.csv", "results/figures/shortening_groupings.svg",
                  "--configfile", str(REPO / "config" / "config.yaml"))
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    for direction, model in SHORTENING.runs(demo_config()):
        assert f"results/records/score/{direction}/{model}.test.json" in out
        assert f"results/records/contrastive/{direction}/{model}.synthetic.json" in out
    assert "results/models/en-fr/grouping_c2/" not in out
    assert "mtcue table-shortening" in out
    # Figure 3: the C = 1 grouping and selecting runs on the synthetic suite, then the figure (its runs by name)
    for model in ("grouping_c1", "selecting_c1"):
        assert (f"mtcue groupings --model-dir results/models/en-de/{model} --model {model} "
                "--suite results/eval/contrastive/en-de/synthetic.jsonl") in out
    assert "mtcue figure-groupings --records results/records/groupings/en-de/grouping_c1.json" in out
    assert "--run-ids" not in out.split("mtcue figure-groupings")[1].split("\n")[0]


def score(direction, model, bleu):
    return {"kind": "score", "direction": direction, "model": model, "bleu": bleu, "study": "demo", "split": "test"}


def contrastive(direction, model, accuracy, pronoun, by_distance):
    """A record whose per-token mean verdicts (the shortening paper's measure) are the given accuracies; the
    summed ones, which the shortening table must not show, are 1 - those."""
    def cell(a):
        return {"accuracy": 1 - a, "n": 10, "ties": 0, "mean": {"accuracy": a, "ties": 0}}

    return {"kind": "contrastive", "direction": direction, "model": model, "suite": "synthetic", "study": "demo",
            **cell(accuracy), "n": 20,
            "groups": {"phenomenon": {"pronoun": cell(pronoun)}, "distance": {d: cell(a) for d, a in by_distance.items()}}}


def test_table_puts_ours_by_distance_beside_the_seeds_by_the_papers_measure(tmp_path):
    from mtcue.experiments.shortening.table import write_shortening_table

    cells = [{"model": "base", "type": "base", "context_size": 0, "run": "base"},
             {"model": "grouping", "type": "grouping", "context_size": 2, "run": "grouping_c2"},
             {"model": "concat", "type": "concat", "context_size": 2, "run": "concat_c2"}]
    scores = [score("en-de", "base", 30.0), score("en-de", "grouping_c2", 31.5), score("en-de", "concat_c2", 29.0)]
    records = [contrastive("en-de", "base", 0.5, 0.25, {"1": 0.2, "2": 0.3}),
               contrastive("en-de", "grouping_c2", 0.75, 0.6, {"1": 0.7, "2": 0.5})]
    from mtcue.reporting.kit import Runs
    from table_links import paper_links, unlinked_numbers

    tables = tmp_path / "tables"
    write_shortening_table(cells, scores, records, tables / "t.csv", tables / "t.md",
                           Runs.of_records([*scores, *records], tables / "t.html"))
    page = (tables / "t.html").read_text()
    assert unlinked_numbers(page) == [] and paper_links(page) == []
    assert '#en-de/grouping_c2">31.50</a>' in page
    tmp_path = tables
    import pandas as pd

    df = pd.read_csv(tmp_path / "t.csv", keep_default_na=False)
    ours = df[df.source == "this study"].set_index(["row", "metric"])["value"]
    assert ours[("Shortening - Grouping (C=2)", "BLEU")] == 31.5
    # the per-token mean's verdicts (the authors' SequenceScorer score into ContraPro's evaluate.py), not the sum's
    assert ours[("Shortening - Grouping (C=2)", "accuracy")] == 75.0
    assert ours[("Shortening - Grouping (C=2)", "d=2")] == 50.0
    assert ours[("Sentence-level (C=0)", "pronouns")] == 25.0
    measure = df.set_index(["source", "row", "metric"])["measure"]
    assert measure[("this study", "Sentence-level (C=0)", "accuracy")] == "per-token mean log-probability"
    assert measure[("shortening paper (IWSLT17)", "Sentence-level (C=0)", "accuracy")] == \
        "per-token mean log-probability"
    assert measure[("this study", "Sentence-level (C=0)", "BLEU")] == ""
    paper = df[df.source != "this study"].set_index(["row", "metric"])["value"]
    # The shortening paper's en-de Table 2: Grouping with two sentences 28.70 BLEU, 54.51 % on ContraPro.
    assert paper[("Shortening - Grouping (C=2)", "BLEU")] == 28.70
    assert paper[("Shortening - Grouping (C=2)", "accuracy")] == 54.51
    assert paper[("Sentence-level (C=0)", "accuracy")] == 43.67
    # the single-encoder row at C = 2 beside the paper's (Table 2: 27.95 BLEU, 48.18 %)
    assert ours[("Single-encoder (C=2)", "BLEU")] == 29.0
    assert paper[("Single-encoder (C=2)", "BLEU")] == 27.95 and paper[("Single-encoder (C=2)", "accuracy")] == 48.18
    md = (tmp_path / "t.md").read_text()
    assert "54.51" in md and "75.00" in md and (tmp_path / "t.html").is_file()


# ---- the shortening paper's Figure 3: token groupings ------------------------------------------------

@pytest.mark.parametrize("model_type, sums_over", [("grouping", 1), ("selecting", 0)])
def test_figure3_weights_are_those_the_model_shortens_with(model_type, sums_over):
    """The drawn c [pieces + </s>, K] is the one the model's shortener uses: c^T H is its G̃ (before the attention
    back to H); grouping's rows and selecting's columns each sum to 1."""
    from mtcue.models.translator import categorisation

    model = tiny(model_type, 1, shortening_groups=3)
    tokens = torch.tensor([[5, 6, 7, 8, model.encoder.dictionary.eos()]])
    c = categorisation(model, tokens)
    assert c.shape == (5, 3)
    np.testing.assert_allclose(c.sum(axis=sums_over), np.ones(c.shape[1 - sums_over]), atol=1e-6)
    states, padding = model.encoder.encode(tokens)
    shortened, _ = model.encoder.context_shorten.shorten(states, padding)
    torch.testing.assert_close(torch.from_numpy(c).T @ states[:, 0].detach(), shortened[:, 0].detach())
    with pytest.raises(ValueError, match="no Latent Grouping or Selecting to show"):
        categorisation(tiny("caching_tokens", 1), tokens)


def suite_example(i, distance, previous, antecedent=None):
    return {"id": f"x{i}", "text": {"en": "It is here."}, "previous": {"en": previous},
            "group": {"phenomenon": "pronoun", "distance": distance},
            **({"anaphor": {"pronoun": "It", "antecedent": antecedent}} if antecedent else {})}


def test_figure3_shows_the_line_the_first_distance_one_example_refers_back_into():
    from mtcue.evaluation.groupings import measure

    examples = [suite_example(1, 2, ["Hi.", "The lamp broke."], "lamp"), suite_example(2, 1, [], "cup"),
                suite_example(5, 1, ["", "My cup."], "cup"),  # an empty line just before (ContraPro keeps them)
                suite_example(3, "1", ["My cup fell."], "cup"), suite_example(4, 1, ["The box."], "box")]
    weights = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])  # group 3 unused
    seen = []
    record = measure(examples, "en", lambda s: s.split(), lambda p: seen.append(p) or weights, "suite.jsonl")
    assert seen == [["My", "cup", "fell."]] and record["sentence"] == "My cup fell." and record["example"] == "x3"
    assert record["pieces"] == ["My", "cup", "fell.", "</s>"] and record["antecedent"] == "cup"
    assert record["groups"] == 3 and record["used"] == 2 and record["weights"][1] == [0.5, 0.5, 0.0]
    with pytest.raises(ValueError, match="suite.jsonl: no example with its antecedent one line back"):
        measure(examples[:2], "en", str.split, lambda p: weights, "suite.jsonl")


def test_figure3_csv_names_each_weight_and_run_and_the_svg_counts_the_groups_used(tmp_path):
    import pandas as pd

    from mtcue.reporting.groupings import write_groupings
    from mtcue.reporting.kit import Runs
    from svg_canvas import labels_off_canvas

    record = {"kind": "groupings", "direction": "en-de", "model": "grouping_c1", "sentence": "My cup",
              "pieces": ["\u2581My", "\u2581cup", "</s>"], "groups": 2, "used": 1,
              "weights": [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]], "study": "demo"}
    write_groupings([record], Runs.of_records([record]), tmp_path / "g.csv", tmp_path / "g.svg")
    df = pd.read_csv(tmp_path / "g.csv")
    assert len(df) == 3 * 2 and set(df["run"]) == {"en-de/grouping_c1"}
    cup = df[(df["piece"] == "\u2581cup")].set_index("group")["weight"]
    assert cup[1] == 1.0 and cup[2] == 0.0
    assert "en-de, GROUPING-C1: 1 of 2 groups used" in (tmp_path / "g.svg").read_text()
    assert labels_off_canvas((tmp_path / "g.svg").read_text()) == []
    with pytest.raises(ValueError, match="no groupings records"):
        write_groupings([], Runs.of_records([]), tmp_path / "g.csv", tmp_path / "g.svg")


def test_figure3_runs_are_grouping_and_selecting_at_the_smallest_context_size_on_the_directions_suite():
    assert SHORTENING.groupings_runs(demo_config()) == [("en-de", "grouping_c1", "synthetic"),
                                                        ("en-de", "selecting_c1", "synthetic")]
    paper = cfgmod.load(REPO / "config" / "paper.yaml")
    assert SHORTENING.groupings_runs(paper) == [("en-de", "grouping_c1", "contrapro"),
                                                ("en-de", "selecting_c1", "contrapro")]
    assert SHORTENING.inputs(demo_config())["groupings"] == ["results/records/groupings/en-de/grouping_c1.json",
                                                             "results/records/groupings/en-de/selecting_c1.json"]
