"""Table 6: every ablation switch really turns its part off, the DAG trains the ablation models only
where the ablation study runs, and the table compares each row with the full model."""
import copy
import json
import math
import re
from argparse import Namespace

import numpy as np
import pytest
import torch
import yaml
from fairseq.data import Dictionary, LanguagePairDataset
from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY
from fairseq.modules import MultiheadAttention
from test_plugin import (
    CONTEXT_DIM,
    DOC_COLUMNS,
    N_COLUMNS,
    TINY_CONTEXTUAL,
    tiny_batch,
    tiny_model,
    tiny_task,
    write_store,
)
from test_tables import BAD, GOOD, NEAR, rec
from test_workflow_config import dry_run

from conftest import REPO
from mtcue import config as cfg
from mtcue.cli import main
from mtcue.context.store import ContextStore
from mtcue.models import fairseq_args as fa
from mtcue.models.params import count_config
from mtcue.models.plugin.context_dataset import ContextDataset, other_samples
from mtcue.models.plugin.qk_norm_attention import QKNormAttention
from mtcue.experiments.side_information.plan import SIDE_INFORMATION
from mtcue.experiments.ablation.plan import ABLATION
from mtcue.plan.models import model_spec
from mtcue.records import write_record
from mtcue.experiments.ablation.table import ablation_display, ablation_table
from mtcue.study import seed_name, store_columns

ABLATIONS = ["mtcue_no_context_encoder", "mtcue_no_positions", "mtcue_discrete", "mtcue_no_metadata",
             "mtcue_no_doc", "mtcue_random_context", "mtcue_no_qk_norm", "mtcue_shuffled_context"]
PAPER_ROWS = ["Full MTCUE", "no context encoder", "no pos. embeddings", "no MINILM-V2", "no metadata",
              "no doclevel data", "random context", "no context (non-contextual Transformer)"]


def demo():
    return cfg.load(REPO / "config" / "config.yaml")


def n_params(module):
    return sum(p.numel() for p in module.parameters())


# ---- each switch, through the config, changes the model by exactly its part ---------------------

def test_ablation_parameter_counts_drop_by_the_removed_part():
    """Counted from the demo config through the same fairseq arguments that training uses (d = 64,
    FFN 128, 2 context layers over 384-d vectors, 6 document slots, 12 columns of doc + metadata)."""
    c = demo()
    n_tags = 700
    counts = {name: c["total"] for name, c in count_config(c, 2000, n_tags).items()}
    d, ffn, layers = 64, 128, 2
    layer = 4 * (d * d + d) + (d * ffn + ffn) + (ffn * d + d) + 2 * 2 * d   # attention, FFN, 2 layer norms
    full = counts["mtcue"]
    assert full - counts["mtcue_no_context_encoder"] == layers * (layer + 1)    # + each layer's QK-norm scale
    assert full - counts["mtcue_no_positions"] == 6 * d                          # POS(0..5)
    assert full - counts["mtcue_no_doc"] == 6 * d                                # no document column left
    assert full - counts["mtcue_no_qk_norm"] == layers                           # one scale per layer
    data_switches = ["mtcue_discrete", "mtcue_no_metadata", "mtcue_random_context", "mtcue_shuffled_context"]
    assert [counts[m] for m in data_switches] == [full] * 4


def test_no_context_encoder_sends_the_projection_straight_to_the_decoder():
    task = tiny_task()
    model = tiny_model("mtcue", task, context_layers=0)
    encoder = model.encoder.context_encoder
    assert len(encoder.layers) == 0
    batch = tiny_batch(task)
    out = model.encoder(batch["src_tokens"], batch["src_lengths"], batch["context"], batch["context_padding_mask"])
    projected = encoder.project(batch["context"])
    projected[:, :DOC_COLUMNS] += encoder.embed_positions.weight[:DOC_COLUMNS]
    torch.testing.assert_close(out["context_out"][0], 4.0 * projected.transpose(0, 1))   # sqrt(16)


def test_no_positions_adds_none_and_ignores_the_order_of_previous_lines():
    task = tiny_task()
    model = tiny_model("mtcue", task, no_context_positions=True)
    encoder = model.encoder.context_encoder
    assert encoder.embed_positions is None and "embed_positions" not in dict(model.named_modules())
    context = torch.randn(2, N_COLUMNS, CONTEXT_DIM)
    torch.testing.assert_close(encoder.forward_embedding(context), 4.0 * encoder.project(context))
    # Without positions the encoder cannot tell document slots apart: swapping doc1 and doc2 swaps
    # their states and changes nothing else. With positions it changes them.
    swap = [0, 2, 1, *range(DOC_COLUMNS, N_COLUMNS)]
    mask = torch.zeros(2, N_COLUMNS, dtype=torch.bool)
    states, _ = encoder(context, mask)
    swapped, _ = encoder(context[:, swap], mask)
    torch.testing.assert_close(swapped, states[swap])
    positioned = tiny_model("mtcue", task).encoder.context_encoder
    states, _ = positioned(context, mask)
    swapped, _ = positioned(context[:, swap], mask)
    assert not torch.allclose(swapped[0], states[0], atol=1e-4)


def test_context_kind_tags_reads_tag_ids_through_the_same_context_encoder():
    task = tiny_task()
    model = tiny_model("mtcue", task, context_kind="tags")
    vectors = tiny_model("mtcue", tiny_task())
    encoder = model.encoder.context_encoder
    assert encoder.project is None and encoder.embed_tags.weight.shape == (task.n_tags, 16)
    assert task.context_kind == "tags"
    # everything after the input embedding is MTCUE's context encoder
    shapes = {k: v.shape for k, v in vectors.state_dict().items() if ".context_encoder.project." not in k}
    assert {k: v.shape for k, v in model.state_dict().items() if "embed_tags" not in k} == shapes
    batch = tiny_batch(task)
    ids = batch["context"]
    expected = 4.0 * encoder.embed_tags.weight[ids]                 # sqrt(16), as fairseq embeds tokens
    expected[:, :DOC_COLUMNS] += encoder.embed_positions.weight[:DOC_COLUMNS]
    torch.testing.assert_close(encoder.forward_embedding(ids), expected)
    # a vector store is refused: no sentence embedding reaches this model
    args = Namespace(arch="mtcue", share_all_embeddings=True, **TINY_CONTEXTUAL["mtcue"], context_kind="tags")
    ARCH_CONFIG_REGISTRY["mtcue"](args)
    with pytest.raises(ValueError, match="reads a 'tags' context store"):
        ARCH_MODEL_REGISTRY["mtcue"].build_model(args, tiny_task())


def test_no_qk_norm_changes_the_attention_and_the_outputs():
    """The authors' switch left QK-norm on; this one builds standard attention without the scale."""
    task = tiny_task()
    qk = tiny_model("mtcue", task)
    plain = tiny_model("mtcue", task, no_qk_norm=True)
    attention = [layer.self_attn for layer in plain.encoder.context_encoder.layers]
    assert attention and all(type(a) is MultiheadAttention for a in attention)
    assert all(isinstance(layer.self_attn, QKNormAttention) for layer in qk.encoder.context_encoder.layers)
    assert not [n for n, _ in plain.named_parameters() if "qk_scale" in n]
    assert plain.encoder.context_encoder.layers[0].self_attn.scaling == pytest.approx((16 // 2) ** -0.5)
    # the same weights (all but the scales) give another attention and other outputs
    missing, unexpected = plain.load_state_dict(qk.state_dict(), strict=False)
    assert not missing and unexpected and all("qk_scale" in k for k in unexpected)
    batch = tiny_batch(task)
    x = torch.randn(N_COLUMNS, 2, 16)
    _, w_qk = qk.encoder.context_encoder.layers[0].self_attn(x, x, x, need_weights=True)
    _, w_plain = plain.encoder.context_encoder.layers[0].self_attn(x, x, x, need_weights=True)
    assert not torch.allclose(w_qk, w_plain, atol=1e-3)
    assert not torch.allclose(qk(**batch)[0], plain(**batch)[0], atol=1e-3)
    with pytest.raises(ValueError, match="--no-qk-norm"):
        tiny_model("mtcue", task, no_qk_norm=True, qk_norm_scale_init=3.0)


@pytest.mark.parametrize("model, kept", [
    ("mtcue_no_metadata", [f"doc{i}" for i in range(6)]),
    ("mtcue_no_doc", ["genre", "pg_rating", "writers", "year", "country", "plot"]),   # not even doc0
])
def test_column_ablations_never_see_the_removed_columns(tmp_path, model, kept):
    """Their batches hold exactly the kept columns: changing the removed ones changes nothing."""
    c = demo()
    spec = model_spec(c, model, "en-de")
    assert spec["context"]["columns"] == kept
    args = fa.task_args(spec, "en-de", "bin", "store")
    assert args[args.index("--context-columns") + 1] == ",".join(kept)
    columns = store_columns(c)
    store = ContextStore(write_store(tmp_path, {"train": 6}, columns=columns, doc_columns=6))
    selected, docs = store.select_columns(kept)
    assert docs == sum(k.startswith("doc") for k in kept)
    index = np.array(store.index("train"))
    removed = [i for i in range(len(columns)) if i not in selected]
    changed = index.copy()
    changed[:, removed] = (changed[:, removed] + 3) % 10
    batches = [context_batch(ContextDataset(pairs(6), i, store.vectors, selected)) for i in (index, changed)]
    assert batches[0].shape[1] == len(kept)
    torch.testing.assert_close(batches[0], batches[1])


@pytest.mark.parametrize("no_context", ["one sample", "every sample"])
def test_without_document_columns_a_sample_with_no_context_at_all_gives_no_nan(no_context):
    """mtcue_no_doc reads metadata only, so a film without metadata leaves a sample with no context
    at all (a whole batch of them is possible): attention must not softmax over nothing."""
    from mtcue.models.params import DataFreeTask

    task = DataFreeTask(40, CONTEXT_DIM, doc_columns=0, n_columns=3)
    model = tiny_model("mtcue", task).train()
    assert model.encoder.context_encoder.embed_positions is None
    tokens = torch.randint(task.source_dictionary.nspecial, 40, (4, 6))
    mask = torch.zeros(4, 3, dtype=torch.bool)
    mask[0 if no_context == "one sample" else slice(None)] = True
    batch = {"src_tokens": tokens, "src_lengths": torch.full((4,), 6), "prev_output_tokens": tokens.roll(1, 1),
             "context": torch.randn(4, 3, CONTEXT_DIM).masked_fill(mask[..., None], 0.0), "context_padding_mask": mask}
    logits = model(**batch)[0]
    logits.sum().backward()
    assert torch.isfinite(logits).all()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
    # such a sample translates as if the context were absent: its context changes nothing
    model.eval()
    changed = {**batch, "context": batch["context"] + mask[..., None].float()}
    torch.testing.assert_close(model(**changed)[0][mask.all(1)], model(**batch)[0][mask.all(1)])


def pairs(n):
    dictionary = Dictionary()
    src = [torch.tensor([dictionary.eos()])] * n
    return LanguagePairDataset(src, [1] * n, dictionary, src, [1] * n, dictionary)


def context_batch(dataset):
    batch = dataset.collater([dataset[i] for i in range(len(dataset))])
    return batch["net_input"]["context"][batch["id"].argsort()]


# ---- random context ----------------------------------------------------------------------------

def test_shuffled_context_reads_every_row_once_never_its_own():
    rows = other_samples(50, seed=1, epoch=1)
    assert sorted(rows) == list(range(50)) and not (rows == np.arange(50)).any()
    assert (rows == other_samples(50, seed=1, epoch=1)).all()        # seeded
    assert not (rows == other_samples(50, seed=1, epoch=2)).all()    # redrawn each training epoch
    assert not (rows == other_samples(50, seed=2, epoch=1)).all()


def test_shuffled_context_dataset_gives_each_sample_another_samples_whole_row(tmp_path):
    store = ContextStore(write_store(tmp_path, {"train": 8}))
    index = np.array(store.index("train"))
    dataset = ContextDataset(pairs(8), index, store.vectors, random="shuffle", random_seed=3)
    own = context_batch(ContextDataset(pairs(8), index, store.vectors))
    for epoch in (1, 2):
        dataset.set_epoch(epoch)
        rows = other_samples(8, 3, epoch)
        shuffled = context_batch(dataset)
        torch.testing.assert_close(shuffled, own[torch.from_numpy(rows)])
    # evaluation: fairseq's validation and generation iterate epoch 1, so the draw is fixed
    dataset.set_epoch(1)
    torch.testing.assert_close(context_batch(dataset), own[torch.from_numpy(other_samples(8, 3, 1))])
    spec = model_spec(demo(), "mtcue_shuffled_context", "en-de")
    args = fa.task_args(spec, "en-de", "bin", "store")
    assert args[args.index("--random-context") + 1] == "shuffle"
    assert args[args.index("--random-context-seed") + 1] == str(spec["seed"])
    assert "--random-context" not in fa.task_args(model_spec(demo(), "mtcue", "en-de"), "en-de", "b", "s")


def noise_batch(dataset, ids):
    """(context, padding mask) of the samples `ids` collated alone, in id order."""
    batch = dataset.collater([dataset[i] for i in ids])
    order = batch["id"].argsort()
    return batch["net_input"]["context"][order], batch["net_input"]["context_padding_mask"][order]


def test_random_context_replaces_every_present_vector_by_the_authors_noise(tmp_path):
    """The authors' `torch.randn_like(x) * 0.1` on every present vector: N(0, 0.1^2), independent of
    the real vectors; missing columns stay padding. A sample's noise depends on (seed, epoch, sample)
    only: not on its batch, the same in a retry, redrawn the next epoch."""
    n = 60
    store = ContextStore(write_store(tmp_path, {"train": n}, dim=64))
    index = np.array(store.index("train"))
    dataset = ContextDataset(pairs(n), index, store.vectors, random="noise", random_seed=3)
    own, own_mask = noise_batch(ContextDataset(pairs(n), index, store.vectors), range(n))
    noise, mask = noise_batch(dataset, range(n))
    assert torch.equal(mask, own_mask) and torch.equal(mask, torch.from_numpy(index < 0))
    assert (noise[mask] == 0).all()
    present = noise[~mask]                                   # [n present vectors, 64]
    assert present.shape[0] > 150
    assert abs(present.mean().item()) < 0.01                 # hand bounds: 0.1 / sqrt(~10k values) = 0.001
    assert present.std().item() == pytest.approx(0.1, rel=0.05)
    real = own[~own_mask]
    correlation = np.corrcoef(present.flatten().numpy(), real.flatten().numpy())[0, 1]
    assert abs(correlation) < 0.05                           # nothing of the real vectors is left
    # per (seed, epoch, sample): the same alone or in another batch, and in a fresh dataset (a retry)
    again = ContextDataset(pairs(n), index, store.vectors, random="noise", random_seed=3)
    torch.testing.assert_close(noise_batch(again, [5, 1])[0], noise[[1, 5]])
    dataset.set_epoch(2)
    assert not torch.allclose(noise_batch(dataset, range(n))[0][~mask], present)
    dataset.set_epoch(1)
    torch.testing.assert_close(noise_batch(dataset, range(n))[0], noise)
    other_seed = ContextDataset(pairs(n), index, store.vectors, random="noise", random_seed=4)
    assert not torch.allclose(noise_batch(other_seed, range(n))[0][~mask], present)
    spec = model_spec(demo(), "mtcue_random_context", "en-de")
    args = fa.task_args(spec, "en-de", "bin", "store")
    assert args[args.index("--random-context") + 1] == "noise"
    with pytest.raises(ValueError, match="tag store"):
        ContextDataset(pairs(n), index, None, random="noise")


# ---- config ------------------------------------------------------------------------------------

SWITCHED = {  # ablation -> the spec entries in which it differs from MTCUE's
    "mtcue_no_context_encoder": {"arch.context_layers"},
    "mtcue_no_positions": {"arch.context_positions"},
    "mtcue_discrete": {"context.encoder"},
    "mtcue_no_metadata": {"context.columns"},
    "mtcue_no_doc": {"context.columns"},
    "mtcue_random_context": {"context.random"},
    "mtcue_no_qk_norm": {"arch.qk_norm"},
    "mtcue_shuffled_context": {"context.random"},
}


def test_ablation_models_are_mtcue_with_one_switch_each():
    c = demo()

    def flat(spec):
        return {f"{group}.{k}": v for group in ("arch", "context") for k, v in spec[group].items()} | {
            k: spec[k] for k in ("type", "init_from", "training", "seed")}

    full = flat(model_spec(c, "mtcue", "en-de"))
    for name, switched in SWITCHED.items():
        spec = flat(model_spec(c, name, "en-de"))
        assert {k for k in full.keys() | spec.keys() if full.get(k) != spec.get(k)} == switched, name
    assert model_spec(c, "mtcue_discrete", "en-de")["context"]["encoder"] == "random-384"
    randoms = [model_spec(c, m, "en-de")["context"]["random"]
               for m in ("mtcue_random_context", "mtcue_shuffled_context")]
    assert randoms == ["noise", "shuffle"]
    rows = c["experiments"]["ablation"]["rows"]
    assert list(rows) == PAPER_ROWS and rows["Full MTCUE"] == "mtcue" and rows[PAPER_ROWS[-1]] == "base"
    # The demo runs the paper's rows; paper.yaml also the two it has not (after them, same models).
    paper = cfg.load(REPO / "config" / "paper.yaml")
    assert paper["experiments"]["ablation"]["rows"] == {**rows, "no QK-norm": "mtcue_no_qk_norm",
                          "shuffled context (not in the paper)": "mtcue_shuffled_context"}
    assert paper["experiments"]["ablation"]["directions"] == ["en-de", "en-fr", "en-pl"]


@pytest.mark.parametrize("model, change, message", [
    ("tagging", {"context_kind": "vectors"}, r"models\.tagging\.context_kind: a 'tagging' model has no context encoder"),
    ("base", {"random_context": "shuffle"}, r"models\.base\.random_context: a 'base' model reads no context"),
    ("base", {"arch": {"qk_norm": False}}, r"models\.base\.arch: qk_norm .* a 'base' model has none"),
    ("tagging", {"random_context": "noise"}, r"models\.tagging\.random_context: noise replaces context vectors"),
    ("mtcue", {"arch": {"qk_norm": False, "qk_norm_scale_init": 3.0}}, r"qk_norm_scale_init: set, but qk_norm"),
    ("tagging", {"arch": {"context_positions": False}}, r"tagging\.arch\.context_positions"),
    ("tagging", {"context_encoder": "x"}, r"tagging\.context_encoder: .* reads no context vectors"),
])
def test_a_switch_the_model_cannot_act_on_is_an_error(model, change, message):
    raw = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for key, value in change.items():
        if key == "arch":
            raw["models"][model]["arch"] = {**raw["models"][model]["arch"], **value}
        else:
            raw["models"][model][key] = value
    with pytest.raises(cfg.ConfigError, match=message):
        cfg.validate(raw)


def test_ablation_section_names_known_models_and_directions():
    raw = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    bad = copy.deepcopy(raw)
    bad["experiments"]["ablation"]["rows"]["no cues"] = "mtcue_no_cues"
    with pytest.raises(cfg.ConfigError, match=r"experiments\.ablation\.rows: \['mtcue_no_cues'\] are not models"):
        cfg.validate(bad)
    bad = copy.deepcopy(raw)
    bad["directions"] = ["de-en"]
    bad["experiments"]["fewshot"]["directions"] = []
    with pytest.raises(cfg.ConfigError, match=r"experiments\.ablation\.directions: \['en-de'\] are not in"):
        cfg.validate(bad)


def test_zeroshot_columns_read_records_only_where_they_are_written():
    c = demo()
    unavailable = {k: v["unavailable"] for k, v in ABLATION.zeroshot(c).items()}
    assert unavailable["formality"] is None  # the demo's Table 5 runs in en-de, where the ablations are
    c["experiments"]["formality"]["directions"] = []
    assert "no formality experiment" in ABLATION.zeroshot(c)["formality"]["unavailable"]
    assert unavailable["eamt22"] == "the ablation models are not trained in en-pl (experiments.ablation.directions: en-de)"
    c["experiments"]["fewshot"]["directions"] = []
    assert "no fewshot experiment" in ABLATION.zeroshot(c)["eamt22"]["unavailable"]
    c["experiments"]["formality"] = {"directions": ["en-de", "en-ru"]}   # as the formality experiment will add
    c["experiments"]["fewshot"]["directions"] = ["en-pl"]
    zeroshot = ABLATION.zeroshot(c)
    assert zeroshot["formality"] == {"direction": "en-de", "unavailable": None}
    assert zeroshot["eamt22"]["unavailable"] == ("the ablation models are not trained in en-pl "
                                                 "(experiments.ablation.directions: en-de)")
    c["experiments"]["ablation"]["directions"] = ["en-de", "en-pl"]
    assert ABLATION.zeroshot(c)["eamt22"]["unavailable"] is None


# ---- the DAG -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, directions", [("config.yaml", {"en-de"}), ("paper.yaml", {"en-de", "en-fr", "en-pl"})])
def test_ablation_models_train_only_in_the_ablation_directions(name, directions):
    run = dry_run("--configfile", f"config/{name}")
    assert run.returncode == 0, run.stderr[-2000:]
    trained = set(re.findall(r"mtcue train --spec '.*?' --direction (\S+) .*?--checkpoint-dir results/checkpoints/"
                             r"\S+/(\S+) ", run.stdout))
    rows = set(cfg.load(REPO / "config" / name)["experiments"]["ablation"]["rows"].values())
    assert rows - {"base", "mtcue"} == set(ABLATIONS) - ({"mtcue_no_qk_norm", "mtcue_shuffled_context"}
                                                         if name == "config.yaml" else set())
    for model in rows - {"base", "mtcue"}:
        assert {d for d, m in trained if m == model} == directions, model
    assert {d for d, m in trained if m == "mtcue"} == set(cfg.load(REPO / "config" / name)["directions"])
    assert "results/tables/table6_ablation.md" in run.stdout
    # no MINILM-V2's random-vector store: built where the ablation runs only, without a GPU, read by it alone
    embed = re.search(r"rule embed_random-384\.mean:\n    input: .*\n    output: (.*)\n[\s\S]*?resources: (.*)\n",
                      run.stdout)
    assert set(re.findall(r"results/embed/(\S+?)/random-384\.mean", embed.group(1))) == directions
    assert "gpu" not in embed.group(2)  # no GPU asked (a GPU step asks gpu=1)
    readers = set(re.findall(r"--context-dir results/embed/(\S+)/random-384\.mean .*?--checkpoint-dir "
                             r"results/checkpoints/\S+/(\S+) ", run.stdout))
    seeds = cfg.load(REPO / "config" / name)["experiments"]["ablation"]["seeds"]
    assert readers == {(d, seed_name("mtcue_discrete", s)) for d in directions for s in range(1, seeds + 1)}
    # validation-split scores: the ablation's (and the side-information grid points', which choose their point)
    grid = set(SIDE_INFORMATION.grid_models(cfg.load(REPO / "config" / name)))
    scored = {(d, m) for d, m in re.findall(r"results/records/score/(\S+)/(\S+)\.valid\.json", run.stdout)
              if m not in grid}
    runs = {seed_name(m, s) for m in rows - {"base"} for s in range(1, seeds + 1)}
    assert {m for _, m in scored} == {*runs, "base"} and {d for d, _ in scored} == directions


# ---- Table 6 -----------------------------------------------------------------------------------

ROWS = {"Full MTCUE": "mtcue", "no metadata": "mtcue_no_metadata", "no QK-norm": "mtcue_no_qk_norm",
        "no context (non-contextual Transformer)": "base"}
SCORES = [rec("mtcue", "en-de", GOOD, 0.9, "valid"), rec("mtcue_no_metadata", "en-de", NEAR, 0.8, "valid"),
          rec("mtcue_no_qk_norm", "en-de", GOOD, 0.9, "valid"), rec("base", "en-de", BAD, 0.5, "valid")]
ZEROSHOT = {"formality": [{"kind": "formality", "model": m, "direction": "en-de", "formal": f, "informal": i,
                           "average": (f + i) / 2, "best_prompt": {"formal": "f0", "informal": "i0"}, "prompts": [],
                           "config_hash": "c", "git_commit": "g", "study": "demo"}
                          for m, f, i in [("mtcue", 1.0, 0.9), ("mtcue_no_metadata", 0.9, 0.7),
                                          ("mtcue_no_qk_norm", 1.0, 0.8), ("base", 1.0, 0.0)]]}
EAMT22_REASON = "the ablation models are not trained in en-pl"


def table(scores=SCORES, **kwargs):
    options = dict(zeroshot=ZEROSHOT, zeroshot_directions={"formality": "en-de", "eamt22": "en-pl"},
                   unavailable={"eamt22": EAMT22_REASON})
    return ablation_table(ROWS, scores, **{**options, **kwargs})


def test_each_row_against_the_full_model():
    df = table()
    assert list(df.index) == list(ROWS.items())
    bleu = {r["model"]: r["bleu"] for r in SCORES}
    phenomena = {r["model"]: r["phenomena"]["all"]["accuracy"] for r in SCORES}
    for label, model in ROWS.items():
        row = df.loc[(label, model)]
        assert row[("en-de", "BLEU")] == bleu[model]
        assert row[("en-de", "BLEU Δ")] == pytest.approx(bleu[model] - bleu["mtcue"])
        assert row[("en-de", "phenomena % Δ")] == pytest.approx(100 * (phenomena[model] - phenomena["mtcue"]))
    assert math.isnan(df.loc[("Full MTCUE", "mtcue"), ("en-de", "BLEU p")])
    # NEAR differs from GOOD in one segment (p = (7/8)^8 = 0.34 > 0.05, test_tables), BAD everywhere
    assert df.loc[("no metadata", "mtcue_no_metadata"), ("en-de", "BLEU p")] > 0.05
    assert df.loc[("no context (non-contextual Transformer)", "base"), ("en-de", "BLEU p")] <= 0.05
    assert df.loc[("no QK-norm", "mtcue_no_qk_norm"), ("en-de", "BLEU p")] == 1.0   # identical output
    assert df[("IWSLT22 formality en-de", "accuracy %")].tolist() == pytest.approx([95.0, 80.0, 90.0, 50.0])
    assert df[("IWSLT22 formality en-de", "Δ")].tolist() == pytest.approx([0.0, -15.0, -5.0, -45.0])
    assert df[("EAMT22 en-pl", "accuracy %")].isna().all()
    # the paper's row by label; a row the paper does not have stays empty
    assert df.loc[("no metadata", "mtcue_no_metadata"), ("paper", "COMET en-de")] == 45.23
    assert df.loc[("Full MTCUE", "mtcue"), ("paper", "IWSLT22 formality")] == 100.0
    assert df.loc[("no context (non-contextual Transformer)", "base"), ("paper", "EAMT22")] == 67.53
    assert df.loc[("no QK-norm", "mtcue_no_qk_norm"), "paper"].isna().all()
    display = ablation_display(df, 0.05)
    assert display.loc["no context (non-contextual Transformer)", "en-de BLEU"].endswith(")†")
    assert display.loc["no metadata", "en-de BLEU"].endswith(")")
    assert display.loc["Full MTCUE", "en-de BLEU"] == f"{bleu['mtcue']:.2f}"


def test_seeded_rows_show_mean_and_sample_sd_over_their_runs():
    # mtcue_no_metadata run twice: seed 2 scores like BAD; BASE (trained from scratch) runs once.
    second = rec("mtcue_no_metadata_seed2", "en-de", BAD, 0.5, "valid")
    second_f = dict(ZEROSHOT["formality"][1], model="mtcue_no_metadata_seed2", average=0.6)
    seeds = {"mtcue_no_metadata": ["mtcue_no_metadata", "mtcue_no_metadata_seed2"]}
    df = table([*SCORES, second], zeroshot={"formality": [*ZEROSHOT["formality"], second_f]}, seeds=seeds)
    one = table()
    row, full = ("no metadata", "mtcue_no_metadata"), ("Full MTCUE", "mtcue")
    assert df[("", "n_seeds")].tolist() == [1, 2, 1, 1]
    a, b = one.loc[row, ("en-de", "BLEU")], second["bleu"]
    assert df.loc[row, ("en-de", "BLEU")] == pytest.approx((a + b) / 2)
    assert df.loc[row, ("en-de", "BLEU sd")] == pytest.approx(abs(a - b) / math.sqrt(2))   # n-1 = 1
    assert df.loc[row, ("en-de", "BLEU Δ")] == pytest.approx((a + b) / 2 - one.loc[full, ("en-de", "BLEU")])
    assert df.loc[row, ("en-de", "phenomena %")] == pytest.approx(100 * (0.8 + 0.5) / 2)
    # formality averages (0.9 + 0.7) / 2 = 0.8 and 0.6: mean 70, sd 10 / sqrt(2) * 2 = 14.14; Δ to 95
    assert df.loc[row, ("IWSLT22 formality en-de", "accuracy %")] == pytest.approx(70.0)
    assert df.loc[row, ("IWSLT22 formality en-de", "accuracy % sd")] == pytest.approx(20 / math.sqrt(2))
    assert df.loc[row, ("IWSLT22 formality en-de", "Δ")] == pytest.approx(-25.0)
    assert math.isnan(df.loc[full, ("en-de", "BLEU sd")])
    assert df.loc[row, ("en-de", "BLEU p")] == one.loc[row, ("en-de", "BLEU p")]   # the first runs
    assert ablation_display(df, 0.05).loc["no metadata", "IWSLT22 formality en-de accuracy %"] == \
        "70.00 ± 14.14 (-25.00)"


def test_a_zeroshot_column_is_never_silently_empty():
    with pytest.raises(ValueError, match="no eamt22 records and no reason"):
        table(unavailable={})
    with pytest.raises(ValueError, match=r"no formality record in en-de for \['base'\]"):
        table(zeroshot={"formality": ZEROSHOT["formality"][:3]})
    bad = [dict(r, average=95.0) for r in ZEROSHOT["formality"]]   # a percentage where a fraction belongs
    with pytest.raises(ValueError, match=r"'average' must be an accuracy in \[0, 1\]"):
        table(zeroshot={"formality": bad})
    # A record where nothing was judged (no output showed either register): n/a, not an error.
    unjudged = [dict(r, average=None) if r["model"] == "base" else r for r in ZEROSHOT["formality"]]
    assert table(zeroshot={"formality": unjudged})[("IWSLT22 formality en-de", "accuracy %")].isna().tolist() == \
        [False, False, False, True]
    with pytest.raises(ValueError, match=r"no valid score record in en-de for \['base'\]"):
        table(SCORES[:3])


def test_table_command_writes_csv_and_markdown(tmp_path):
    paths = []
    for r in SCORES:
        paths.append(tmp_path / f"{r['model']}.valid.json")
        write_record(paths[-1], r)
    formality = []
    for r in ZEROSHOT["formality"]:
        formality.append(tmp_path / f"{r['model']}.formality.json")
        write_record(formality[-1], r)
    csv, md = tmp_path / "t6.csv", tmp_path / "t6.md"
    assert main(["table-ablation", "--rows", json.dumps(ROWS), "--records", *map(str, paths),
                 "--formality-records", *map(str, formality), "--zeroshot-direction", "formality=en-de",
                 "--zeroshot-direction", "eamt22=en-pl", "--unavailable", f"eamt22={EAMT22_REASON}",
                 "--csv", str(csv), "--md", str(md), "--html", str(md.with_suffix(".html"))]) == 0
    header = csv.read_text().splitlines()[0].split(",")
    assert header[:6] == ["ablation", "model", "n_seeds", "en-de BLEU", "en-de BLEU sd", "en-de BLEU Δ"]
    text = md.read_text()
    assert f"EAMT22 en-pl: n/a, {EAMT22_REASON}." in text
    assert "not in the paper: no QK-norm" in text
    assert "| no metadata | mtcue_no_metadata |" in text
    assert main(["table-ablation", "--rows", json.dumps(ROWS), "--records", *map(str, paths),
                 "--csv", str(csv), "--md", str(md),
                 "--html", str(md.with_suffix(".html"))]) == 1   # zero-shot columns without records or reasons


def test_the_zeroshot_eamt22_column_reads_the_validation_split():
    """Table 6's zero-shot columns are measured on the validation sets (paper, Table 6): on the paper's data
    EAMT22's dev.json, scored for every row model."""
    run = dry_run("results/tables/table6_ablation.csv", "--configfile", "config/paper.yaml")
    assert run.returncode == 0, run.stderr[-2000:]
    scored = dict(re.findall(r"mtcue score-eamt22 --hyps results/hyps/eamt22/en-pl/(\S+)\.txt --corpus (\S+) ",
                             run.stdout))
    rows = cfg.load(REPO / "config" / "paper.yaml")["experiments"]["ablation"]["rows"].values()
    assert {m: scored.get(f"{m}.valid") for m in rows} == {m: "results/eval/eamt22/en-pl/valid.jsonl" for m in rows}
    assert re.search(r"mtcue table-ablation .*--eamt22-records results/records/eamt22/en-pl/mtcue\.valid\.json",
                     run.stdout)
