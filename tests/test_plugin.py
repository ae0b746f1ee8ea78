"""The fairseq plugin (src/mtcue/models/plugin) and parameter counting, on tiny CPU models."""
import json
import math
import os
import random
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from fairseq import utils
from fairseq.data import Dictionary, LanguagePairDataset
from fairseq.models.transformer import TransformerEncoder
from fairseq.modules import MultiheadAttention
from fairseq.sequence_generator import SequenceGenerator

import mtcue.models.plugin  # noqa: F401  (registers task and model)
from mtcue import config as cfg
from mtcue.context.store import ContextStore, ContextStoreError
from mtcue.models.params import DataFreeTask, build_model, count_config
from mtcue.models.plugin.context_dataset import ContextDataset
from mtcue.models.plugin.mtcue.parallel_attention import (
    ParallelCrossAttention,
    SourceAndContext,
)
from mtcue.models.plugin.pretrained import PretrainedLoadError, is_context_key
from mtcue.models.plugin.qk_norm_attention import QKNormAttention, default_qk_scale

REPO = Path(__file__).resolve().parents[1]
PLUGIN_DIR = REPO / "src" / "mtcue" / "models" / "plugin"
TINY = {"encoder_embed_dim": 16, "encoder_ffn_embed_dim": 32, "decoder_ffn_embed_dim": 32,
        "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_layers": 2, "decoder_layers": 2,
        "dropout": 0.0}
TINY_CONTEXTUAL = {
    "mtcue": {**TINY, "context_layers": 2, "context_dropout": 0.0},
    "novotney_cue": {**TINY, "context_layers": 2, "context_dropout": 0.0},
    "tagging": {**TINY, "context_dropout": 0.0},
}
CONTEXTUAL = list(TINY_CONTEXTUAL)
CONTEXT_DIM, DOC_COLUMNS, N_COLUMNS, N_TAGS = 8, 3, 5, 7


def tiny_task(vocab_size=40):
    return DataFreeTask(vocab_size, CONTEXT_DIM, DOC_COLUMNS, N_COLUMNS, n_tags=N_TAGS)


def tiny_model(model_type="mtcue", task=None, **arch):
    """A tiny model of a contextual type; `task` becomes that type's context kind."""
    torch.manual_seed(0)
    model = build_model(model_type, {**TINY_CONTEXTUAL[model_type], **arch}, task or tiny_task())
    return model.eval()


def tiny_mtcue(task=None, **arch):
    return tiny_model("mtcue", task, **arch)


def other_context(batch, task, where):
    """The batch's context with the entries at `where` (an index or bool mask) changed."""
    context = batch["context"].clone()
    if task.context_kind == "tags":
        context[where] = context[where] % (N_TAGS - 1) + 1   # another known tag
    else:
        context[where] += 1.0
    return {**batch, "context": context}


def tiny_batch(task, batch_size=3, length=6, seed=1):
    """Context per the task's kind: vectors [B, S, dim] or tag ids [B, S] (0 where masked, as the collater does)."""
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(task.source_dictionary.nspecial, len(task.source_dictionary), (batch_size, length),
                           generator=g)
    tokens[:, -1] = task.source_dictionary.eos()
    mask = torch.zeros(batch_size, task.n_columns, dtype=torch.bool)
    mask[0, 1] = mask[0, 4] = True   # sample 0 misses two contexts
    mask[-1] = True                  # the last sample has no context at all
    if task.context_kind == "tags":
        context = torch.randint(1, task.n_tags, (batch_size, task.n_columns), generator=g).masked_fill(mask, 0)
    else:
        context = torch.randn(batch_size, task.n_columns, task.context_dim, generator=g)
    return {"src_tokens": tokens, "src_lengths": torch.full((batch_size,), length),
            "prev_output_tokens": tokens.roll(1, dims=1), "context": context, "context_padding_mask": mask}


# ---- QK-norm attention ------------------------------------------------------------------------

def reference_qk_norm_attention(m, query, key, mask):
    """The definition, written out per batch element and head."""
    T, B, C = query.shape
    H, d = m.num_heads, C // m.num_heads
    q, k, v = m.q_proj(query), m.k_proj(key), m.v_proj(key)
    out = torch.zeros(T, B, C)
    for b in range(B):
        for h in range(H):
            cols = slice(h * d, (h + 1) * d)
            qh = q[:, b, cols] / q[:, b, cols].norm(dim=-1, keepdim=True)
            kh = k[:, b, cols] / k[:, b, cols].norm(dim=-1, keepdim=True)
            scores = m.qk_scale * qh @ kh.T
            scores[:, mask[b]] = float("-inf")
            out[:, b, cols] = scores.softmax(dim=-1) @ v[:, b, cols]
    return m.out_proj(out)


def test_qk_norm_attention_matches_its_definition():
    torch.manual_seed(0)
    m = QKNormAttention(16, 4, scale_init=3.0).eval()
    query, key = torch.randn(3, 2, 16), torch.randn(5, 2, 16)
    mask = torch.tensor([[False, False, True, False, True], [False] * 5])
    out, _ = m(query, key, key, key_padding_mask=mask)
    torch.testing.assert_close(out, reference_qk_norm_attention(m, query, key, mask))


def test_qk_norm_attention_ignores_the_scale_of_queries_and_keys():
    torch.manual_seed(0)
    m = QKNormAttention(16, 4, scale_init=5.0).eval()
    x = torch.randn(4, 2, 16)
    before, _ = m(x, x, x)
    with torch.no_grad():
        for proj, factor in ((m.q_proj, 7.0), (m.k_proj, 0.05)):
            proj.weight.mul_(factor)
            proj.bias.mul_(factor)
    after, _ = m(x, x, x)
    torch.testing.assert_close(after, before)
    # ... while the learned scale g does matter
    with torch.no_grad():
        m.qk_scale.fill_(1.0)
    assert not torch.allclose(m(x, x, x)[0], before)


def test_qk_norm_attention_survives_rows_of_padding_only():
    torch.manual_seed(0)
    m = QKNormAttention(16, 2, scale_init=2.0)
    x = torch.randn(3, 2, 16, requires_grad=True)
    mask = torch.tensor([[True, True, True], [False, True, False]])
    out, _ = m(x, x, x, key_padding_mask=mask)
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(x.grad).all()
    torch.testing.assert_close(out[:, 0], m.out_proj.bias.expand(3, 16))   # attends to nothing


def test_default_qk_scale_follows_henry_et_al():
    assert default_qk_scale(13) == pytest.approx(math.log2(13 * 13 - 13))
    assert math.isfinite(default_qk_scale(1))


# ---- context encoder ---------------------------------------------------------------------------

def test_positional_embeddings_reach_document_columns_only():
    model = tiny_mtcue()
    encoder = model.encoder.context_encoder
    context = torch.randn(2, N_COLUMNS, CONTEXT_DIM)
    before = encoder.forward_embedding(context)
    with torch.no_grad():
        encoder.embed_positions.weight.add_(torch.randn_like(encoder.embed_positions.weight))
    after = encoder.forward_embedding(context)
    assert not torch.isclose(after[:, :DOC_COLUMNS], before[:, :DOC_COLUMNS]).any()
    torch.testing.assert_close(after[:, DOC_COLUMNS:], before[:, DOC_COLUMNS:])
    # a run that selects fewer document columns (here: only doc0) positions only those
    encoder.set_doc_columns(1)
    fewer = encoder.forward_embedding(context)
    torch.testing.assert_close(fewer[:, 0], after[:, 0])
    torch.testing.assert_close(fewer[:, 1:], 4.0 * encoder.project(context)[:, 1:])   # sqrt(16)
    with pytest.raises(ValueError, match="document positions"):
        encoder.set_doc_columns(DOC_COLUMNS + 1)


@pytest.mark.parametrize("model_type", ["mtcue", "novotney_cue"])
def test_context_vectors_enter_as_sqrt_d_times_a_bias_free_projection(model_type):
    """The authors' context encoder: x = sqrt(d) * (W v + POS(j)), `lin_proj` without bias (their
    `embed_scale`). Hand-set W, v and positions, d = 16 (sqrt(d) = 4)."""
    model = tiny_model(model_type)
    encoder = model.encoder.context_encoder
    assert encoder.project.bias is None and "project.bias" not in dict(encoder.named_parameters())
    with torch.no_grad():
        encoder.project.weight.zero_()
        encoder.project.weight[0, 0] = 1.0      # out 0 = v0
        encoder.project.weight[1, 2] = -2.0     # out 1 = -2 v2
        encoder.project.weight[15, 7] = 0.5     # out 15 = v7 / 2
        encoder.embed_positions.weight.zero_()
        encoder.embed_positions.weight[:, 3] = torch.arange(1.0, DOC_COLUMNS + 1)   # POS(j) = (j + 1) e_3
    v = torch.zeros(1, N_COLUMNS, CONTEXT_DIM)
    v[0, :, 0] = torch.arange(1.0, N_COLUMNS + 1)   # column c: v0 = c + 1, v2 = 1, v7 = 2
    v[0, :, 2], v[0, :, 7] = 1.0, 2.0
    expected = torch.zeros(1, N_COLUMNS, 16)
    for c in range(N_COLUMNS):
        expected[0, c, 0], expected[0, c, 1], expected[0, c, 15] = 4 * (c + 1), 4 * -2.0, 4 * 1.0
        if c < DOC_COLUMNS:                          # document slots only
            expected[0, c, 3] = 4 * (c + 1)
    torch.testing.assert_close(encoder.forward_embedding(v), expected)
    # and this is what the first context layer reads (dropout is 0 in the tiny model)
    seen = []
    encoder.layers[0].register_forward_hook(lambda module, inputs, output: seen.append(inputs[0]))
    encoder(v, torch.zeros(1, N_COLUMNS, dtype=torch.bool))
    torch.testing.assert_close(seen[0], expected.transpose(0, 1))


def test_novotney_cue_context_encoder_uses_qk_norm_as_the_authors():
    """The authors' `novotney_cue` architecture sets qknorm=True for its context encoder (the paper is
    silent); its scale starts, as MTCUE's, at log2(L^2 - L) for L = 5 context columns."""
    layers = tiny_model("novotney_cue").encoder.context_encoder.layers
    assert len(layers) == 2 and all(isinstance(layer.self_attn, QKNormAttention) for layer in layers)
    assert [layer.self_attn.qk_scale.item() for layer in layers] == pytest.approx([math.log2(20)] * 2)
    plain = tiny_model("novotney_cue", no_qk_norm=True).encoder.context_encoder.layers
    assert all(type(layer.self_attn) is MultiheadAttention for layer in plain)


@pytest.mark.parametrize("model_type", CONTEXTUAL)
def test_a_sample_without_context_gives_finite_outputs_and_gradients(model_type):
    task = tiny_task()
    model = tiny_model(model_type, task).train()
    batch = tiny_batch(task)
    logits, _ = model(**batch)
    logits.sum().backward()
    assert torch.isfinite(logits).all()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


# ---- the whole model -------------------------------------------------------------------------

@pytest.mark.parametrize("model_type", CONTEXTUAL)
def test_logits_depend_on_present_context_only(model_type):
    """The issue's check that no model ignores its context: changing a context a sample has changes
    that sample's output (and no other's); changing masked entries changes nothing."""
    task = tiny_task()
    model = tiny_model(model_type, task)
    batch = tiny_batch(task)
    logits, _ = model(**batch)

    changed, _ = model(**other_context(batch, task, (1, 2)))   # a context sample 1 has
    assert not torch.allclose(changed[1], logits[1], atol=1e-4)
    torch.testing.assert_close(changed[0], logits[0])           # other samples are unaffected

    same, _ = model(**other_context(batch, task, batch["context_padding_mask"]))  # masked entries only
    torch.testing.assert_close(same, logits)


@pytest.mark.parametrize("model_type", CONTEXTUAL)
def test_half_precision_model_takes_float32_context(model_type):
    """Batches carry float32 context (or int64 tags); under --fp16 the model's weights are half."""
    task = tiny_task()
    model = tiny_model(model_type, task).half()
    logits, _ = model(**tiny_batch(task))
    assert logits.dtype == torch.float16 and torch.isfinite(logits).all()


def test_parallel_attention_sums_source_and_context_attention():
    """T' = w * (S' + C'), with C' = 0 for a sample that has no context."""
    torch.manual_seed(0)
    attn = ParallelCrossAttention(16, 2, weight=0.5, encoder_decoder_attention=True).eval()
    query, source, context = torch.randn(4, 3, 16), torch.randn(5, 3, 16), torch.randn(2, 3, 16)
    source_mask = torch.zeros(3, 5, dtype=torch.bool)
    context_mask = torch.tensor([[False, True], [False, False], [True, True]])
    out, _ = attn(query, SourceAndContext(source, context), SourceAndContext(source, context),
                  SourceAndContext(source_mask, context_mask), static_kv=True)
    s, _ = MultiheadAttention.forward(attn, query, source, source, source_mask, static_kv=True)
    c, _ = attn.context_attn(query, context, context, context_mask, static_kv=True)
    torch.testing.assert_close(out[:, :2], 0.5 * (s[:, :2] + c[:, :2]))
    torch.testing.assert_close(out[:, 2], 0.5 * s[:, 2])


def test_reorder_encoder_out_reorders_the_context_too():
    task = tiny_task()
    model = tiny_mtcue(task)
    batch = tiny_batch(task)
    out = model.encoder(batch["src_tokens"], batch["src_lengths"], batch["context"], batch["context_padding_mask"])
    order = torch.tensor([2, 0, 0, 1])
    reordered = model.encoder.reorder_encoder_out(out, order)
    torch.testing.assert_close(reordered["context_out"][0], out["context_out"][0][:, order])
    assert torch.equal(reordered["context_padding_mask"][0], out["context_padding_mask"][0][order])
    torch.testing.assert_close(reordered["encoder_out"][0], out["encoder_out"][0][:, order])


@pytest.mark.parametrize("model_type", CONTEXTUAL)
def test_beam_search_scores_equal_teacher_forced_scores(model_type):
    """Incremental decoding (cached context attention, beam reordering) must give the scores of a
    plain forward pass over the chosen hypotheses."""
    task = tiny_task()
    model = tiny_model(model_type, task)
    batch = tiny_batch(task)
    net_input = {k: v for k, v in batch.items() if k != "prev_output_tokens"}
    generator = SequenceGenerator([model], task.target_dictionary, beam_size=2, max_len_b=6)
    hypos = generator.forward({"net_input": net_input})
    eos = task.target_dictionary.eos()
    for i, beams in enumerate(hypos):
        for hypo in beams:
            tokens = hypo["tokens"]
            prev = torch.cat([tokens.new_tensor([eos]), tokens[:-1]])[None]
            sample = {key: value[i:i + 1] for key, value in net_input.items()}
            logits, _ = model(prev_output_tokens=prev, **sample)
            lprobs = F.log_softmax(logits[0], dim=-1).gather(1, tokens[:, None])[:, 0]
            torch.testing.assert_close(hypo["positional_scores"], lprobs, atol=1e-4, rtol=1e-4)


def test_baselines_prepend_their_context_states_to_the_source():
    """TAGGING prepends one embedding per column, NOVOTNEY-CUE one vector: the mean of its context
    encoder's states over the columns a sample has; a sample without context has it masked."""
    task = tiny_task()
    tagging = tiny_model("tagging", task)
    batch = tiny_batch(task)
    args = batch["src_tokens"], batch["src_lengths"], batch["context"], batch["context_padding_mask"]
    out = tagging.encoder(*args)
    source = TransformerEncoder.forward(tagging.encoder, batch["src_tokens"], batch["src_lengths"])
    weight = tagging.encoder.context_tags.weight   # tags embedded as fairseq embeds tokens: x sqrt(d)
    tags = math.sqrt(weight.shape[1]) * F.embedding(batch["context"], weight).transpose(0, 1)
    torch.testing.assert_close(out["encoder_out"][0], torch.cat([tags, source["encoder_out"][0]]))
    assert torch.equal(out["encoder_padding_mask"][0],
                       torch.cat([batch["context_padding_mask"], source["encoder_padding_mask"][0]], dim=1))

    task = tiny_task()
    novotney = tiny_model("novotney_cue", task)
    batch = tiny_batch(task)
    out = novotney.encoder(batch["src_tokens"], batch["src_lengths"], batch["context"], batch["context_padding_mask"])
    states, _ = novotney.encoder.context_encoder(batch["context"], batch["context_padding_mask"])
    for b in range(2):
        present = ~batch["context_padding_mask"][b]
        torch.testing.assert_close(out["encoder_out"][0][0, b], states[present, b].mean(0))
    assert out["encoder_padding_mask"][0][:, 0].tolist() == [False, False, True]


@pytest.mark.parametrize("model_type, kind", [("tagging", "vectors"), ("mtcue", "tags"), ("novotney_cue", None)])
def test_a_model_given_the_wrong_context_store_says_so(model_type, kind):
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    task = tiny_task()
    task.context_kind = kind
    args = Namespace(arch=model_type, share_all_embeddings=True, **TINY_CONTEXTUAL[model_type])
    ARCH_CONFIG_REGISTRY[model_type](args)
    with pytest.raises(ValueError, match=f"--arch {model_type} reads a"):
        ARCH_MODEL_REGISTRY[model_type].build_model(args, task)


# ---- data ----------------------------------------------------------------------------------------

def write_store(directory, splits, columns=("doc0", "doc1", "doc2", "genre", "year"), doc_columns=3,
                dim=CONTEXT_DIM, n_vectors=10, seed=0):
    """A store per docs/formats.md section 2 with random vectors; splits = {name: n_samples}."""
    rng = np.random.default_rng(seed)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    np.save(directory / "vectors.npy", rng.standard_normal((n_vectors, dim)).astype(np.float32))
    for split, n in splits.items():
        index = rng.integers(-1, n_vectors, size=(n, len(columns))).astype(np.int32)
        index[0] = -1   # one sample without any context
        np.save(directory / f"{split}.index.npy", index)
    (directory / "manifest.json").write_text(json.dumps({
        "model": "random", "dim": dim, "dtype": "float32", "n_vectors": n_vectors, "columns": list(columns),
        "doc_columns": doc_columns, "normalize": False, "splits": splits}))
    return directory


def test_collater_attaches_each_samples_own_context(tmp_path):
    store = ContextStore(write_store(tmp_path / "store", {"train": 5}))
    dictionary = Dictionary()
    for w in "abcdefgh":
        dictionary.add_symbol(w)
    lengths = [2, 6, 3, 5, 1]   # the collater will sort by these
    src = [torch.tensor([dictionary.index("a")] * n + [dictionary.eos()]) for n in lengths]
    tgt = [torch.tensor([dictionary.index("b")] * 2 + [dictionary.eos()]) for _ in lengths]
    pairs = LanguagePairDataset(src, [len(s) for s in src], dictionary, tgt, [len(t) for t in tgt], dictionary)
    columns = [0, 1, 4]
    dataset = ContextDataset(pairs, store.index("train"), store.vectors, columns)
    batch = dataset.collater([dataset[i] for i in range(5)])
    ids = batch["id"].tolist()
    assert ids != sorted(ids)   # re-sorted by source length
    rows = store.index("train")
    for position, sample_id in enumerate(ids):
        for j, column in enumerate(columns):
            row = rows[sample_id, column]
            assert batch["net_input"]["context_padding_mask"][position, j] == (row < 0)
            expected = np.zeros(CONTEXT_DIM, np.float32) if row < 0 else store.vectors[row]
            np.testing.assert_array_equal(batch["net_input"]["context"][position, j].numpy(), expected)
    assert batch["net_input"]["context_padding_mask"][ids.index(0)].all()


def test_collater_passes_tag_ids_for_a_tag_store(tmp_path):
    directory = tmp_path / "tags"
    directory.mkdir()
    index = np.array([[-1, 3, 0], [2, -1, -1]], np.int32)
    np.save(directory / "train.index.npy", index)
    (directory / "manifest.json").write_text(json.dumps({
        "kind": "tags", "n_tags": 4, "columns": ["doc0", "doc1", "genre"], "doc_columns": 2, "splits": {"train": 2}}))
    store = ContextStore(directory)
    assert store.vectors is None and store.n_tags == 4
    dictionary = Dictionary()
    src = [torch.tensor([dictionary.eos()])] * 2
    pairs = LanguagePairDataset(src, [1, 1], dictionary, src, [1, 1], dictionary)
    batch = ContextDataset(pairs, store.index("train"), store.vectors).collater([pairs[0], pairs[1]])
    order = batch["id"].tolist()
    assert batch["net_input"]["context"].dtype == torch.int64
    assert batch["net_input"]["context"].tolist() == [[[0, 3, 0], [2, 0, 0]][i] for i in order]
    assert batch["net_input"]["context_padding_mask"].tolist() == [(index[i] < 0).tolist() for i in order]
    np.save(directory / "train.index.npy", np.array([[4, 0, 0], [0, 0, 0]], np.int32))
    with pytest.raises(ContextStoreError, match=r"entries must lie in \[-1, 4\)"):
        ContextStore(directory).index("train")


def test_store_errors_name_the_file(tmp_path):
    with pytest.raises(ContextStoreError, match="manifest.json"):
        ContextStore(tmp_path)
    directory = write_store(tmp_path / "s", {"train": 4})
    np.save(directory / "valid.index.npy", np.zeros((4, 2), np.int32))
    store = ContextStore(directory)
    with pytest.raises(ContextStoreError, match="valid.index.npy"):
        store.index("valid")                 # 2 columns, manifest has 5
    with pytest.raises(ContextStoreError, match="test.index.npy"):
        store.index("test")                  # missing split
    with pytest.raises(ValueError, match="train.index.npy has 4 rows"):
        ContextDataset(list(range(3)), store.index("train"), store.vectors, name=str(directory / "train.index.npy"))
    assert store.select_columns(["year", "doc0", "doc1"]) == ([0, 1, 4], 2)
    with pytest.raises(ContextStoreError, match="prefix"):
        store.select_columns(["doc1", "genre"])
    with pytest.raises(ContextStoreError, match="unknown"):
        store.select_columns(["plot"])


# ---- initialisation from BASE -------------------------------------------------------------------

def save_fairseq_checkpoint(model, path):
    """The layout fairseq's trainer writes (checkpoint_utils.load_checkpoint_to_cpu reads it)."""
    torch.save({"args": None, "cfg": None, "model": model.state_dict(),
                "optimizer_history": [{"criterion_name": "CrossEntropyCriterion", "optimizer_name": "Adam",
                                       "lr_scheduler_state": {}, "num_updates": 0}],
                "extra_state": {"train_iterator": {"epoch": 1}}, "last_optimizer_state": None}, path)
    return path


NEW_MODULES = {  # model type -> (new encoder modules, whether the decoder gets a context attention)
    "mtcue": ({"context_encoder"}, True),
    "novotney_cue": ({"context_encoder"}, False),
    "tagging": ({"context_tags", "context_known_tags"}, False),
}


@pytest.mark.parametrize("model_type", CONTEXTUAL)
def test_pretrained_base_loads_every_non_context_tensor(tmp_path, model_type):
    task = tiny_task()
    torch.manual_seed(1)
    base = build_model("base", TINY, task)
    ckpt = save_fairseq_checkpoint(base, tmp_path / "base.pt")
    report_path = tmp_path / "report.json"
    model = tiny_model(model_type, task, pretrained_base=str(ckpt), pretrained_report=str(report_path))
    own = model.state_dict()
    for key, tensor in base.state_dict().items():
        assert torch.equal(own[key], tensor), key
    report = json.loads(report_path.read_text())
    encoder_modules, decoder_attention = NEW_MODULES[model_type]
    assert report["new"] and all(is_context_key(k) for k in report["new"])
    assert {k.split(".")[1] for k in report["new"] if k.startswith("encoder.")} == encoder_modules
    assert any(".encoder_attn.context_attn." in k for k in report["new"]) == decoder_attention
    assert not report["unused_base_keys"] and not report["shape_mismatch"]
    assert len(report["loaded"]) == len(base.state_dict())
    # weights restored from the model's own checkpoint (e.g. fairseq-generate) skip BASE altogether
    task.building_from_checkpoint = True
    tiny_model(model_type, task, pretrained_base=str(tmp_path / "gone.pt"))


@pytest.mark.parametrize("damage", ["missing", "shape"])
def test_pretrained_base_that_does_not_fit_fails_naming_the_key(tmp_path, damage):
    task = tiny_task()
    base = build_model("base", TINY, task)
    state = base.state_dict()
    key = "encoder.layers.1.fc1.weight"
    if damage == "missing":
        del state[key]
    else:
        state[key] = torch.zeros(3, 3)
    base.state_dict = lambda: state
    ckpt = save_fairseq_checkpoint(base, tmp_path / "base.pt")
    with pytest.raises(PretrainedLoadError, match=key.replace(".", r"\.")):
        tiny_mtcue(task, pretrained_base=str(ckpt))


# ---- plugin loading and parameter counts --------------------------------------------------------

def test_user_dir_import_after_package_import_reuses_the_registration():
    utils.import_user_module(Namespace(user_dir=str(PLUGIN_DIR)))
    assert sys.modules["plugin"] is sys.modules["mtcue.models.plugin"]
    # issue 33.1: the plugin leaves torch.load's safe default on (it used to switch it off for everyone)
    assert "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" not in os.environ


def test_paper_config_parameter_counts():
    """Reference notes: BASE 60.96M, BASE-PM 94.57M, NOVOTNEY-CUE 80.28M (768-d DistilBERT vectors) and
    MTCue 86.38M effective parameters (32,864 shared vocabulary, 6 document slots, 12 columns);
    TAGGING is BASE-PM plus one 512-d vector per tag (the authors' 94.77M had 384-d random vectors
    and a projection instead)."""
    counts = count_config(cfg.load(REPO / "config" / "paper.yaml"), 32864, n_tags=1000)
    base = 60_964_864
    layer = 3_152_384           # one context encoder layer: attention 4 x (512^2 + 512), FFN, 2 layer norms
    # MTCUE = BASE + bias-free 384 -> 512 projection + 6 slot embeddings + 6 layers with a QK-norm
    # scale each + 6 decoder context attentions of 4 x (512^2 + 512)
    mtcue_total = base + 384 * 512 + 6 * 512 + 6 * (layer + 1) + 6 * 4 * (512 * 512 + 512)
    assert mtcue_total == 86_382_598
    assert {name: c["total"] for name, c in counts.items()} == {
        "base": base, "base_pm": 94_566_400, "tagging": 94_566_400 + 1000 * 512,
        # NOVOTNEY-CUE: BASE + the same encoder (QK-norm included) over 768-d vectors; no decoder attention
        "novotney_cue": base + 768 * 512 + 6 * 512 + 6 * (layer + 1), "mtcue": mtcue_total,
        # Table 6's ablations, from MTCUE's modules: 6 context layers of 3,152,385; 6 slot
        # embeddings of 512 (none without document columns); 6 QK-norm scales. The discrete
        # ablation reads 384-d random vectors through the same projection.
        "mtcue_no_context_encoder": mtcue_total - 6 * (layer + 1),
        "mtcue_discrete": mtcue_total,
        "mtcue_no_positions": mtcue_total - 6 * 512, "mtcue_no_doc": mtcue_total - 6 * 512,
        "mtcue_no_qk_norm": mtcue_total - 6,
        "mtcue_no_metadata": mtcue_total, "mtcue_random_context": mtcue_total,
        "mtcue_shuffled_context": mtcue_total,
        # Voita et al. (2018): BASE plus the context encoder's own last layer (4 x (512 x 512 + 512) attention,
        # 2 x 1,024 layer norms, 512 x 2,048 + 2,048 + 2,048 x 512 + 512 FFN = 3,152,384), the last source
        # layer's context attention (1,050,624) and gate (1,024 x 512 + 512); CONCAT: two segment vectors.
        "voita_context": 60_964_864 + 3_152_384 + 1_050_624 + 524_800,
        "voita_context_next": 60_964_864 + 3_152_384 + 1_050_624 + 524_800,
        "concat": 60_964_864 + 2 * 512,
        # Sequence shortening (test_shortening_models.py pins these against Mąka et al.'s Table 5): six decoder
        # context attentions with layer norms (6 x 1,051,648) and the 1,025-row segment table; Caching
        # Sentence's gate 6 x 513; the shortening's attention back (1,051,648) and positions (pooling 1,025
        # rows; grouping / selecting K + 1), linear pooling's 1,024 -> 512 map, the categorising FFN
        # 512 -> 512 -> K; the multi-encoder's own 6 encoder layers.
        **{name: 60_964_864 + 6 * 1_051_648 + 1025 * 512 + extra for name, extra in {
            "caching_tokens": 0, "caching_sentence": 6 * 513,
            "pool_mean": 1_051_648 + 1025 * 512, "pool_max": 1_051_648 + 1025 * 512,
            "pool_linear": 1_051_648 + 1025 * 512 + 1024 * 512 + 512,
            "grouping": 1_051_648 + 512 * 512 + 512 + 512 * 9 + 9 + 10 * 512,
            "selecting": 1_051_648 + 512 * 512 + 512 + 512 * 10 + 10 + 11 * 512}.items()},
        "multi_encoder": 60_964_864 + 6 * layer,
        # Jeong et al.'s style control: style_token, five more embedding rows; style_dim, per decoder layer a new
        # query row (512 + 1) and key and value rows (513 + 1) per head (8), key and value columns (512 each),
        # the output projection's column per head (512 x 8)
        **dict.fromkeys(["style_token", "style_token_freeze_encoder", "style_token_freeze_all"], base + 5 * 512),
        **dict.fromkeys(["style_dim", "style_dim_normal_init", "style_dim_freeze_encoder",
                         "style_dim_freeze_encoder_normal_init"],
                        base + 6 * (8 * 513 + 2 * 8 * 514 + 2 * 512 + 512 * 8)),
        # Hoang et al.: 2 + 2 layers of transformer base (encoder layer 3,152,384; decoder layer that plus a
        # cross-attention and its norm, 4,204,032) over the shared 32,864 x 512 embeddings; then per variant
        # 1,000 label embeddings of 512 (target prefix: one more, the "none" label), of H_s with the output
        # layer's bias-free H_s x 32,864 projection, or the classifier's 512 x 1,000 + 1,000
        "si_base": (si_base := 32864 * 512 + 2 * 3_152_384 + 2 * 4_204_032),
        "si_src_prefix": si_base + 1000 * 512, "si_src_suffix": si_base + 1000 * 512,
        "si_trg_prefix": si_base + 1001 * 512,
        **{f"si_output_layer_h{h}": si_base + 1000 * h + h * 32864 for h in (64, 128, 256, 512)},
        **{f"si_mtl_l{lam}": si_base + 512 * 1000 + 1000 for lam in ("0001", "001", "01", "1")}}
    assert si_base == 31_539_200
    mtl = {name for name in counts if name.startswith("si_mtl")}
    assert all(c["total"] == c["effective"] and not c["unused"] for name, c in counts.items() if name not in mtl)
    # the classifier trains but does not translate
    assert all(counts[name]["effective"] == si_base for name in mtl)
    mtcue = counts["mtcue"]
    assert mtcue["by_module"]["encoder.context_encoder"] == 384 * 512 + 6 * 512 + 6 * (layer + 1)
    assert mtcue["by_module"]["decoder.context_attn"] == 6 * 4 * (512 * 512 + 512)
    assert counts["novotney_cue"]["by_module"]["encoder.context_encoder"] == 768 * 512 + 6 * 512 + 6 * (layer + 1)


# ---- end to end through fairseq's command lines ------------------------------------------------

def fairseq(tool, *args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"}  # fairseq's loads stay safe
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-m", f"fairseq_cli.{tool}", *map(str, args)], cwd=cwd, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


@pytest.mark.slow
def test_train_from_base_and_generate_end_to_end(tmp_path):
    rng = random.Random(0)
    words = [f"w{i}" for i in range(20)]
    sizes = {"train": 30, "valid": 6, "test": 7}
    for split, n in sizes.items():
        for lang in ("en", "de"):
            lines = [" ".join(rng.choices(words, k=rng.randint(2, 7))) for _ in range(n)]
            (tmp_path / f"{split}.{lang}").write_text("\n".join(lines) + "\n")
    data = tmp_path / "bin"
    fairseq("preprocess", "--source-lang", "en", "--target-lang", "de", "--trainpref", tmp_path / "train",
            "--validpref", tmp_path / "valid", "--testpref", tmp_path / "test", "--destdir", data,
            "--joined-dictionary", "--workers", "1", cwd=REPO)
    store = write_store(tmp_path / "store", sizes)

    sizes_args = ["--share-all-embeddings", "--encoder-embed-dim", 16, "--decoder-embed-dim", 16,
                  "--encoder-ffn-embed-dim", 32, "--decoder-ffn-embed-dim", 32, "--encoder-layers", 1,
                  "--decoder-layers", 1, "--encoder-attention-heads", 2, "--decoder-attention-heads", 2]
    train_args = ["--optimizer", "adam", "--lr", 1e-3, "--max-epoch", 1, "--batch-size", 8, "--cpu",
                  "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", 0.1,
                  "--no-epoch-checkpoints", "--no-progress-bar", "--num-workers", 0, "--seed", 1]
    # fairseq 0.12 drops a last batch smaller than --required-batch-size-multiple (default 8):
    # fairseq issues #5036 and #5351.
    common = [data, "--user-dir", PLUGIN_DIR, "--source-lang", "en", "--target-lang", "de",
              "--required-batch-size-multiple", 1]
    fairseq("train", *common, "--task", "translation", "--arch", "transformer", *sizes_args, *train_args,
            "--save-dir", tmp_path / "base", cwd=REPO)
    # a BASE trained on from BASE (the fine-tuned systems' control, mtcue.models.train): fairseq's own
    # --finetune-from-model, its weights with a fresh optimiser, schedule and epoch counter
    log = fairseq("train", *common, "--task", "translation", "--arch", "transformer", *sizes_args, *train_args,
                  "--finetune-from-model", tmp_path / "base" / "checkpoint_last.pt", "--save-dir", tmp_path / "again",
                  cwd=REPO)
    assert f"loading pretrained model from {tmp_path / 'base' / 'checkpoint_last.pt'}" in log
    assert "end of epoch 1 " in log and (tmp_path / "again" / "checkpoint_last.pt").is_file()

    contextual = ["--task", "contextual_translation", "--context-dir", store]
    log = fairseq("train", *common, *contextual, "--arch", "mtcue", *sizes_args, "--context-layers", 1,
                  "--context-attention-heads", 2, "--context-ffn-embed-dim", 32, *train_args,
                  "--pretrained-base", tmp_path / "base" / "checkpoint_last.pt",
                  "--pretrained-report", tmp_path / "mtcue" / "init.json", "--save-dir", tmp_path / "mtcue",
                  cwd=REPO)
    report = json.loads((tmp_path / "mtcue" / "init.json").read_text())
    assert report["loaded"] and all(is_context_key(k) for k in report["new"])
    assert f"initialised from {tmp_path / 'base' / 'checkpoint_last.pt'}: " in log

    out = fairseq("generate", *common, *contextual, "--path", tmp_path / "mtcue" / "checkpoint_last.pt",
                  "--gen-subset", "test", "--beam", 2, "--batch-size", 4, "--cpu", cwd=REPO)
    hypotheses = [line for line in out.splitlines() if line.startswith("H-")]
    assert sorted(int(line.split("\t")[0][2:]) for line in hypotheses) == list(range(sizes["test"]))
