"""Jeong et al.'s style control (style_token, style_dim): the models, their task, levels, scoring."""
import json
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from fairseq.data import Dictionary, LanguagePairDataset
from fairseq.sequence_generator import SequenceGenerator

import mtcue.models.plugin  # noqa: F401  (registers task and models)
from mtcue.models.params import DataFreeTask, build_model
from mtcue.models.plugin.style.style_task import StyleDataset
from mtcue.plan.models import model_spec, trained_models
from mtcue.experiments.style.plan import STYLE
from mtcue.options import with_provenance
from mtcue.records import write_record
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
    assert torch.equal(got, want)  # exactly, not approximately: the style-control paper's claim


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


def style_step_losses(child, steps=1, zero_partners=False):
    """`steps` SGD steps of the style weights on a fixed batch; returns {name: weight before} and the weights.
    `zero_partners`: also zero the new key and value rows (every new weight 0: the style-control paper's zero
    init taken literally)."""
    if zero_partners:
        for layer in child.decoder.layers:
            for linear in (layer.encoder_attn.style_k, layer.encoder_attn.style_v):
                torch.nn.init.zeros_(linear.weight)
    new = {n: p for n, p in child.named_parameters() if ".style_" in n}
    start = {n: p.detach().clone() for n, p in new.items()}
    b = fixed_batch()
    target = torch.randint(4, 40, (3, 6), generator=torch.Generator().manual_seed(5))
    optimiser = torch.optim.SGD(new.values(), lr=0.1)
    for _ in range(steps):
        optimiser.zero_grad()
        logits, _ = child(**b, style=torch.tensor([-2.0, 0.0, 2.0]))
        F.cross_entropy(logits.flatten(0, 1), target.flatten()).backward()
        optimiser.step()
    return start, new


def kind(name):
    return name.split(".style_")[1].replace(".weight", "").replace(".bias", " bias")


def changes(start, new):
    """{part: largest change over the layers}, the key row's style-input column apart from its d others."""
    out = {}
    for name, p in new.items():
        delta = (p - start[name]).abs()
        parts = {"k": delta[:, :-1], "k style column": delta[:, -1]} if kind(name) == "k" else {kind(name): delta}
        for part, d in parts.items():
            out[part] = max(out.get(part, 0.0), d.max().item())
    return out


# Key terms constant over the source positions: the style value is the same at every position of a sentence,
# so style * style_k_col, the new key row's bias and its style-input column shift all of a query's scores
# alike and cancel in the softmax (as the parent's own k_proj bias does). Their gradient is analytically 0;
# what reaches them is rounding (< 1e-8 here against > 1e-5 for a weight that learns).
CANNOT_LEARN = {"k_col", "k bias", "k style column"}
LEARNED, ROUNDING = 1e-6, 1e-8


def test_all_zero_new_weights_would_pass_each_other_no_gradient(tmp_path):
    """Of each product of two new weights (new query x new key in the scores, new value x its output
    column) both factors zero: each gets an identically zero gradient, so only the column into the old
    value dimensions learns (its key twin cannot: CANNOT_LEARN)."""
    _, child = parent_and_child(tmp_path)
    start, new = style_step_losses(child, steps=2, zero_partners=True)
    moved = changes(start, new)
    assert {part for part, c in moved.items() if c > LEARNED} == {"v_col"}
    assert all(c < ROUNDING for part, c in moved.items() if part != "v_col")


@pytest.mark.parametrize("init", ["zero", "normal"])
def test_style_dim_new_weights_that_learn_are_the_same_at_zero_and_normal_init(tmp_path, init):
    """At zero init the parent's function (test above) and, within two updates, every new weight learns
    that can: all but CANNOT_LEARN, whose gradient is 0 at any init (and in the style-control paper's
    widening too, whose keys read the same constant style channel)."""
    _, child = parent_and_child(tmp_path, init=init)
    start, new = style_step_losses(child, steps=2)
    moved = changes(start, new)
    assert {part for part, c in moved.items() if c > LEARNED} == {
        "q", "q bias", "k", "v", "v bias", "v_col", "out_col"}
    assert {part for part, c in moved.items() if c < ROUNDING} == CANNOT_LEARN


def test_style_cross_attention_is_multi_head_attention_one_dimension_wider_per_head(tmp_path):
    """StyleCrossAttention against attention written from scratch with widened matrices: per head, the
    parent's rows then one new row (query, key, value), reading the encoder side as [h; s] and the decoder
    side as [x; 0]; the output projection the parent's columns of each head then its new one; scores
    scaled by the parent's head width."""
    _, child = parent_and_child(tmp_path, init="normal")
    attn = child.decoder.layers[0].encoder_attn
    d, heads, width = 16, 4, 4
    g = torch.Generator().manual_seed(3)
    query, encoded = torch.randn(5, 2, d, generator=g), torch.randn(7, 2, d, generator=g)
    style = torch.tensor([-2.0, 2.0])
    key = torch.cat([encoded, style.view(1, 2, 1).expand(7, 2, 1)], dim=-1)
    with torch.no_grad():
        got, _ = attn(query, key, key)

        def widened(old, new, column):
            """[heads * (width + 1), d + 1] weight and bias: head h's rows of `old` (the style column
            `column`, else 0) then row h of `new` (a new row reading d inputs gets a 0 for the style)."""
            rows, biases = [], []
            for h in range(heads):
                part = slice(h * width, (h + 1) * width)
                extra = column[part, None] if column is not None else torch.zeros(width, 1)
                rows += [torch.cat([old.weight[part], extra], dim=1),
                         new.weight[h:h + 1] if new.weight.shape[1] == d + 1 else torch.cat(
                             [new.weight[h:h + 1], torch.zeros(1, 1)], dim=1)]
                biases += [old.bias[part], new.bias[h:h + 1]]
            return torch.cat(rows), torch.cat(biases)

        def project(x, weight_bias):
            weight, bias = weight_bias
            return (x @ weight.t() + bias).view(x.shape[0], 2, heads, width + 1)

        q = project(torch.cat([query, torch.zeros(5, 2, 1)], dim=-1), widened(attn.q_proj, attn.style_q, None))
        k = project(key, widened(attn.k_proj, attn.style_k, attn.style_k_col))
        v = project(key, widened(attn.v_proj, attn.style_v, attn.style_v_col))
        weights = (torch.einsum("tbhe,sbhe->bhts", q, k) * width ** -0.5).softmax(dim=-1)
        heads_out = torch.einsum("bhts,sbhe->tbhe", weights, v).reshape(5, 2, heads * (width + 1))
        out = torch.cat([torch.cat([attn.out_proj.weight[:, h * width:(h + 1) * width], attn.style_out_col[:, h:h + 1]],
                                   dim=1) for h in range(heads)], dim=1)
        torch.testing.assert_close(got, heads_out @ out.t() + attn.out_proj.bias)


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

    from mtcue.models.plugin.style.style_task import StyleTranslationTask

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


# ---- the style store, scoring, config, table and figure ----------------------------------------------

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
MAPPING = {"informal": 1, "formal": 5, "unlabelled": 3}


def labelled(i, gold):
    from conftest import make_sample

    sample = make_sample(i)
    if gold:
        sample["labels"] = {"de": {"formality": {"gold": gold, "markers": {"formal": ["Sie"], "informal": ["du"]}}}}
    return sample


def test_levels_map_each_lines_register_label(write_corpus, tmp_path):
    from mtcue.context.style_levels import build_style_store, line_levels

    corpus = write_corpus([labelled(0, "formal"), labelled(1, None), labelled(2, "informal"), labelled(3, "formal")])
    assert line_levels(corpus, "en-de", MAPPING).tolist() == [5, 3, 1, 5]
    assert line_levels(corpus, "en-de", {"informal": 2, "formal": 4, "unlabelled": 3}).tolist() == [4, 3, 2, 4]
    manifest = build_style_store({"train": corpus}, "en-de", MAPPING, tmp_path / "style")
    assert manifest["lines_per_level"]["train"] == {"1": 1, "3": 1, "5": 2}
    assert np.load(tmp_path / "style" / "train.npy").tolist() == [5, 3, 1, 5]
    with pytest.raises(ValueError, match="unlabelled"):
        line_levels(corpus, "en-de", {"informal": 1, "formal": 5})
    bare = write_corpus([labelled(0, None), labelled(1, None)], name="bare.jsonl")
    with pytest.raises(ValueError, match="bare.jsonl: no line has a formality label for 'de'"):
        line_levels(bare, "en-de", MAPPING)


def test_an_unknown_label_is_refused_with_file_and_line(write_corpus):
    from mtcue.context.style_levels import line_levels

    corpus = write_corpus([labelled(0, "formal"), labelled(1, "polite")])
    with pytest.raises(ValueError, match=r"c\.jsonl:2: formality label 'polite'"):
        line_levels(corpus, "en-de", MAPPING)


@pytest.mark.parametrize("lang, text, score", [
    ("de", "Hast du deinen Pass gesehen?", -3),               # du's verb, pronoun and possessive
    ("de", "Haben Sie Ihren Pass gesehen?", 2),              # Sie and Ihr- after the first word
    ("de", "Sie hat es gesehen.", 0),                        # sentence-initial Sie: also "she"
    ("de", "Er macht es, und ihr Mann weiß es.", 0),         # "macht" (er) and "ihr" (her): not address
    ("de", "Können Sie mir helfen, oder du?", 0),            # one of each: neither
    ("ru", "Ты видел твою сумку?", -2),
    ("ru", "Вы знаете, где ваш паспорт?", 3),                # вы, знаете, ваш
    ("ru", "Привет.", 0),
])
def test_formality_score_counts_formal_minus_informal_address_forms(lang, text, score):
    from mtcue.context.style_levels import formality_score, score_level

    assert formality_score(text, lang) == score
    assert score_level(score) == min(max(score, -2), 2) + 3


def test_address_levels_need_no_labels_and_flatten_the_training_split_only(write_corpus, tmp_path):
    """An unlabelled corpus: refused as labels, levelled by address forms; training keeps at most `bin_cap` lines
    of each score bin (here 1; the scores -3, -1, 0 and 2 fall in bins of their own), the valid split every line;
    at Jeong et al.'s cap of 10K a toy corpus keeps every line."""
    from conftest import make_sample

    from mtcue.context.style_levels import NOT_SAMPLED, build_style_store

    texts = ["Hast du deinen Pass?", "Ist das deine Tasche?", "Ist das dein Buch?", "Das ist gut.", "Es regnet.",
             "Haben Sie Ihren Pass?"]   # scores -3, -1, -1, 0, 0, 2: levels 1, 2, 2, 3, 3, 5
    train = write_corpus([make_sample(i, de=t) for i, t in enumerate(texts)], name="train.jsonl")
    valid = write_corpus([make_sample(i, de=t) for i, t in enumerate(texts)], name="valid.jsonl")
    with pytest.raises(ValueError, match="no line has a formality label"):
        build_style_store({"train": train}, "en-de", MAPPING, tmp_path / "labels")
    manifest = build_style_store({"train": train, "valid": valid}, "en-de", None, tmp_path / "style", seed=3,
                                 bin_cap=1)
    levels = np.load(tmp_path / "style" / "train.npy")
    assert levels[0] == 1 and levels[5] == 5 and sorted(levels[1:3]) == [NOT_SAMPLED, 2]
    assert sorted(levels[3:5]) == [NOT_SAMPLED, 3]
    assert manifest["lines_per_level"]["train"] == {"0": 2, "1": 1, "2": 1, "3": 1, "5": 1}
    assert np.load(tmp_path / "style" / "valid.npy").tolist() == [1, 2, 2, 3, 3, 5]
    assert manifest["levels_from"] == "address" and not (tmp_path / "labels").exists()
    build_style_store({"train": train}, "en-de", None, tmp_path / "capped", seed=3)
    assert np.load(tmp_path / "capped" / "train.npy").tolist() == [1, 2, 2, 3, 3, 5]


def test_flattening_caps_each_of_100_score_bins_as_jeong_et_al_do():
    """Scores over [0, 1]: 100 bins 0.01 wide, the last closed (1.0 joins 0.99..). With a cap of 2 the bins
    holding 3 lines (0.00.., 0.99..1.0) keep 2 of them each, the others every line: not every level cut to
    the rarest one's count, nor bins any wider (0.011 is alone in its bin, not with 0.00..)."""
    from mtcue.context.style_levels import flatten

    scores = np.array([0.0, 0.004, 0.006, 0.011, 0.305, 0.5, 0.505, 0.995, 1.0, 0.999])
    keep = flatten(scores, seed=5, cap=2)
    assert keep[[3, 4, 5, 6]].all() and keep[[0, 1, 2]].sum() == 2 and keep[[7, 8, 9]].sum() == 2
    assert keep.sum() == 8
    assert (flatten(scores, seed=5, cap=2) == keep).all()
    assert flatten(scores, seed=5, cap=3).all()
    assert flatten(np.array([2, 2, 2]), seed=5, cap=1).sum() == 1   # one score: one bin
    assert flatten(np.array([], dtype=np.int64), seed=5).tolist() == []


def test_training_never_batches_a_line_the_flattening_left_out():
    from mtcue.context.style_levels import NOT_SAMPLED

    d = Dictionary()
    tokens = [torch.tensor([4, 2]), torch.tensor([5, 2]), torch.tensor([6, 2])]
    pairs = LanguagePairDataset(tokens, np.array([2, 2, 2]), d, tokens, np.array([2, 2, 2]), d, shuffle=False)
    task = token_task(40)
    dataset = task.with_style(pairs, np.array([5, NOT_SAMPLED, 1]))
    assert task.filter_indices_by_size(np.arange(3), dataset).tolist() == [0, 2]
    with pytest.raises(ValueError, match="line 2 has style level 6"):
        task.with_style(pairs, np.array([5, 6, 1]))


def test_address_levels_agree_with_iwslt22_references(tmp_path):
    """Hand-scored: 3 sources, the third's references show no address (both level 3): formal references
    2/3 formal, informal 2/3 informal, 2/3 of the pairs ordered formal above informal."""
    from mtcue.context.style_levels import reference_agreement
    from mtcue.data.evalsets import iwslt22_files

    lines = [["Do you play?", "Have you seen it?", "Nice weather."],
             ["Spielen Sie?", "Haben Sie es gesehen?", "Schönes Wetter."],
             ["Spielst du?", "Hast du es gesehen?", "Schönes Wetter."]]
    for name, content in zip(iwslt22_files("en-de"), lines):
        (tmp_path / name).write_text("\n".join(content) + "\n")
    record = reference_agreement(tmp_path, "en-de")
    assert record["n"] == 3 and record["ordered"] == pytest.approx(2 / 3, abs=1e-4)
    assert record["formal"] == {"formal": 0.6667, "neither": 0.3333, "informal": 0.0}
    assert record["informal"] == {"formal": 0.0, "neither": 0.3333, "informal": 0.6667}


def test_paper_style_levels_come_from_address_scores_with_their_agreement():
    from mtcue import config as cfgmod
    paper = cfgmod.load(REPO / "config" / "paper.yaml")
    assert paper["experiments"]["style"]["levels_from"] == "address"
    assert STYLE.targets(paper).others == ["results/records/style_agreement/en-de.json",
                                        "results/records/style_agreement/en-ru.json"]
    assert STYLE.targets(cfgmod.load(REPO / "config" / "config.yaml")).others == []


def test_score_style_takes_level_5_as_formal_and_level_1_as_informal(tmp_path):
    from mtcue.evaluation.formality import FormalityTestSet, score_style

    formal = tmp_path / "f.annotated.de"
    informal = tmp_path / "i.annotated.de"
    formal.write_text("[F]Sind Sie[/F] da?\n[F]Ihnen[/F] gehts gut\nDanke.\n")
    informal.write_text("[F]Bist du[/F] da?\n[F]dir[/F] gehts gut\nDanke.\n")
    test_set = FormalityTestSet.from_references(formal, informal)
    outputs = {1: ["Bist du da?", "dir gehts gut", "Danke."],      # I, I, N
               3: ["Sind Sie da?", "dir gehts gut", "Danke."],     # F, I, N
               5: ["Sind Sie da?", "Ihnen gehts gut", "Danke."]}   # F, F, N
    paths = {}
    for level, lines in outputs.items():
        paths[level] = tmp_path / f"level{level}.txt"
        paths[level].write_text("\n".join(lines) + "\n")
    plain = [tmp_path / "f.de", tmp_path / "i.de"]
    plain[0].write_text("Sind Sie da?\nIhnen gehts gut\nDanke.\n")
    plain[1].write_text("Bist du da?\ndir gehts gut\nDanke.\n")
    record = score_style(paths, test_set, plain)
    assert record["formal"] == 1.0 and record["informal"] == 1.0 and record["control"] == "supervised"
    assert [(e["level"], e["formal_accuracy"]) for e in record["levels"]] == [(1, 0.0), (3, 0.5), (5, 1.0)]
    # every output line is one of its two references: meaning fully kept at every level, whatever the register
    assert [e["meaning_chrf"] for e in record["levels"]] == [100.0, 100.0, 100.0]
    assert record["best_prompt"] == {"formal": "level5", "informal": "level1"}
    with pytest.raises(ValueError, match="levels 1 and 5"):
        score_style({3: paths[3], 5: paths[5]}, test_set, plain)


def test_meaning_chrf_is_the_mean_sentence_chrf_against_the_better_reference():
    from mtcue.evaluation.formality import meaning_chrf

    # By hand (chrF2, whitespace dropped): "ab" against "ac": unigrams P = R = 1/2, bigrams P = R = 0, no
    # longer n-grams, so mean P = mean R = 1/4 and F2 = 5 PR / (4P + R) = 1/4 -> 25; against "ab": 100.
    assert meaning_chrf(["ab"], [["ac"]], "h") == pytest.approx(25.0)
    # the better of the two references per line, then the mean over lines: (25 + 100) / 2
    assert meaning_chrf(["ab", "ab"], [["ac", "xy"], ["zz", "ab"]], "h") == pytest.approx(62.5)
    with pytest.raises(ValueError, match="h: 2 hypotheses, references of \\[1\\] lines"):
        meaning_chrf(["ab", "ab"], [["ac"]], "h")


def demo_config():
    from mtcue import config as cfgmod

    return cfgmod.load(REPO / "config" / "config.yaml")


def test_demo_fine_tunes_eight_style_models_from_base():
    from mtcue import config as cfgmod
    from mtcue.models import fairseq_args as fa

    c = demo_config()
    pairs = STYLE.models(c)
    assert len(pairs) == 8 and sorted(d for d, _m in pairs).count("en-ru") == 2
    assert {m for d, m in pairs if d == "en-ru"} == {"style_token", "style_dim"}
    spec = model_spec(c, "style_token_freeze_all", "en-de")
    assert spec["init_from"] == "base" and spec["style"]["freeze"] == "encoder_decoder"
    assert spec["training"]["max_epoch"] <= 6 and spec["training"]["weight_decay"] == 0.001
    args = fa.task_args(spec, "en-de", "bin", "results/style/en-de") + fa.arch_args(spec)
    assert args[args.index("--task") + 1] == "style_translation" and args[args.index("--style-mode") + 1] == "token"
    assert args[args.index("--style-dir") + 1] == "results/style/en-de"
    assert args[args.index("--style-freeze") + 1] == "encoder_decoder"
    dim = model_spec(c, "style_dim_normal_init", "en-de")
    assert dim["style"]["init"] == "normal" and "style" not in model_spec(c, "base", "en-de")
    assert ("en-de", "style_dim") in trained_models(c)


def test_paper_config_names_a_parent_checkpoint_and_the_seeds_settings():
    from mtcue import config as cfgmod
    from mtcue.models import fairseq_args as fa

    c = cfgmod.load(REPO / "config" / "paper.yaml")
    spec = model_spec(c, "style_token", "en-de")
    assert spec["training"]["lr"] == 1e-4 and spec["training"]["weight_decay"] == 1e-3
    args = fa.optimisation_args(spec, use_cuda=True)
    assert args[args.index("--batch-size") + 1] == "16"
    assert {d for d, _m in STYLE.models(c)} == {"en-de", "en-ru"}


@pytest.mark.parametrize("change, message", [
    (lambda c: c["models"]["base"].update(style_freeze="encoder"), "models.base.style_freeze"),
    (lambda c: c["models"]["style_token"].update(style_init="normal"), "models.style_token.style_init"),
    (lambda c: c["models"]["style_dim"].pop("init_from"), "models.style_dim: a style model fine-tunes a parent"),
    (lambda c: c["models"]["style_dim"].update(parent_checkpoint="x.pt"), "models.style_dim: a style model"),
    (lambda c: c["experiments"]["style"].update(models=["mtcue"]), "experiments.style.models"),
    (lambda c: c["experiments"]["style"].update(levels=[2, 3, 4]), "experiments.style.levels"),
    (lambda c: c["experiments"]["style"].update(directions=["en-xx"]), "experiments.style.directions"),
])
def test_bad_style_config_is_refused(change, message):
    from mtcue import config as cfgmod

    raw = cfgmod.read_yaml(REPO / "config" / "config.yaml")
    change(raw)
    with pytest.raises(cfgmod.ConfigError, match=message.replace(".", r"\.")):
        cfgmod.validate(raw)


def style_record(model, direction, levels):
    """A supervised record whose level outputs show `levels` {level: (formal, informal) lines}."""
    def labels(f, i):
        return "F" * f + "I" * i
    entries = [{"level": n, "counts": {"FORMAL": f, "INFORMAL": i, "NEUTRAL": 0, "OTHER": 0},
                "formal_accuracy": f / (f + i), "meaning_chrf": 60.0 - n} for n, (f, i) in sorted(levels.items())]
    f5, i5 = levels[5]
    f1, i1 = levels[1]
    prompts = [{"id": "level5", "attribute": "formal", "text": "style level 5", "labels": labels(f5, i5),
                "accuracy": f5 / (f5 + i5)},
               {"id": "level1", "attribute": "informal", "text": "style level 1", "labels": labels(f1, i1)[::-1],
                "accuracy": i1 / (f1 + i1)}]
    return {"kind": "formality", "model": model, "direction": direction, "formal": f5 / (f5 + i5),
            "informal": i1 / (f1 + i1), "average": None, "best_prompt": {"formal": "level5", "informal": "level1"},
            "prompts": prompts, "by_kind": {}, "chosen_on": None, "control": "supervised", "levels": entries,
            "lines": f5 + i5, "test_set": "t"}


def test_table5_marks_the_style_rows_supervised_with_their_level_outputs():
    from mtcue.experiments.formality.table import formality_table

    record = style_record("style_dim", "en-de", {1: (1, 3), 3: (2, 2), 5: (3, 1)})
    table = formality_table([record], ["style_dim"])
    row = table.loc[("STYLE-DIM (supervised)", "unseen")]
    assert row[("en-de", "formal")] == 75.0 and row[("en-de", "informal")] == 75.0


def test_level_sweep_csv_has_the_issues_columns_and_says_whether_it_rises(tmp_path):
    import pandas as pd

    from mtcue.experiments.style.figure import monotonic, write_style_levels
    from svg_canvas import labels_off_canvas

    records = [style_record("style_dim", "en-de", {1: (1, 3), 3: (2, 2), 5: (3, 1)}),
               style_record("style_token", "en-de", {1: (1, 3), 3: (3, 1), 5: (2, 2)})]
    frame = write_style_levels(records, tmp_path / "s.csv", tmp_path / "s.svg")
    read = pd.read_csv(tmp_path / "s.csv")
    assert list(read.columns) == ["direction", "model", "level", "formal_accuracy", "meaning_chrf"]
    assert read[read["model"] == "style_dim"]["formal_accuracy"].tolist() == [25.0, 50.0, 75.0]
    assert read[read["model"] == "style_dim"]["meaning_chrf"].tolist() == [59.0, 57.0, 55.0]
    assert monotonic(frame) == {("en-de", "style_dim"): True, ("en-de", "style_token"): False}
    svg = (tmp_path / "s.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "meaning preservation (chrF)" in svg and "formal accuracy (%)" in svg
    assert labels_off_canvas(svg) == []


def test_workflow_trains_translates_and_draws_the_style_models():
    from conftest import dry_run, evaluation_commands

    out = dry_run("results/figures/style_levels.svg", "results/tables/table5_formality.csv",
                  "--configfile", str(REPO / "config" / "config.yaml"))
    assert out.returncode == 0, out.stderr
    for rule, n in (("style_store", 2), ("style_levels", 1)):
        assert re.search(rf"^{rule}\s+{n}$", out.stdout, re.M), rule
    steps = evaluation_commands(out.stdout)  # each trained model's evaluation is one job of these steps
    assert len(re.findall(r"^mtcue translate-levels ", steps, re.M)) == 8
    assert len(re.findall(r"^mtcue score-formality --style-levels ", steps, re.M)) == 8
    assert "mtcue translate-levels --model-dir results/models/en-ru/style_dim" in steps
    assert ("--meaning-references results/eval/iwslt22/en-de/formality-control.test.en-de.formal.de "
            "results/eval/iwslt22/en-de/formality-control.test.en-de.informal.de") in steps
    assert "--init-checkpoint results/models/en-de/base/checkpoint_best.pt" in out.stdout


def test_mlflow_logs_the_supervised_records_level_accuracies():
    from mtcue.reporting.run_contents import _evaluation

    record = style_record("style_dim", "en-de", {1: (1, 3), 3: (2, 2), 5: (3, 1)})
    record.update(split="test", average=0.75, formal_mean=0.75, informal_mean=0.75)
    metrics = _evaluation(record, {}, {})
    assert metrics["formality_formal"] == 0.75 and metrics["formality_level3_formal"] == 0.5
    assert metrics["formality_level1_formal"] == 0.25 and metrics["formality_level3_meaning_chrf"] == 57.0


def test_style_dim_beam_search_scores_equal_teacher_forced_scores(tmp_path):
    """The cached keys and values of incremental decoding, reordered with the beams, give the scores of a
    full forward pass."""
    _, model = parent_and_child(tmp_path, init="normal")
    task = DataFreeTask(40)
    batch = fixed_batch()
    net_input = {"src_tokens": batch["src_tokens"], "src_lengths": batch["src_lengths"],
                 "style": torch.tensor([-2.0, 0.0, 2.0])}
    hypos = SequenceGenerator([model], task.target_dictionary, beam_size=3, max_len_b=6).forward(
        {"net_input": net_input})
    for i, beams in enumerate(hypos):
        for hypo in beams:
            tokens = hypo["tokens"]
            prev = torch.cat([tokens.new_tensor([2]), tokens[:-1]])[None]
            logits, _ = model(prev_output_tokens=prev, **{k: v[i:i + 1] for k, v in net_input.items()})
            lprobs = F.log_softmax(logits[0], dim=-1).gather(1, tokens[:, None])[:, 0]
            torch.testing.assert_close(hypo["positional_scores"], lprobs, atol=1e-4, rtol=1e-4)


def test_style_dim_cache_follows_the_beams_new_order(tmp_path):
    _, model = parent_and_child(tmp_path, init="normal")
    attention = model.decoder.layers[0].encoder_attn
    state = {}
    attention.set_incremental_state(state, "kv", {"k": torch.arange(3.0)[:, None], "v": torch.arange(3.0)[:, None]})
    state = attention.reorder_incremental_state(state, torch.tensor([2, 0]))  # sentence 1 finished
    assert attention.get_incremental_state(state, "kv")["k"][:, 0].tolist() == [2.0, 0.0]


def test_a_style_model_built_for_its_checkpoint_reads_and_writes_nothing_of_its_parent(tmp_path):
    """fairseq builds the model a checkpoint loads into with from_checkpoint=True (Translator.load,
    fairseq-generate): the checkpoint's weights replace the parent's, so --pretrained-base (a path in the study
    that trained it) is not read, and its report (results/checkpoints/.../init_report.json) not rewritten."""
    from argparse import Namespace

    from fairseq.models import ARCH_CONFIG_REGISTRY

    from mtcue.models.plugin.pretrained import PretrainedLoadError

    task = token_task()
    task.cfg.eval_bleu = False
    report = tmp_path / "init_report.json"
    args = Namespace(arch="style_token", share_all_embeddings=True, **TINY, pretrained_report=str(report),
                     pretrained_base=str(tmp_path / "elsewhere" / "checkpoint_best.pt"))
    ARCH_CONFIG_REGISTRY["style_token"](args)
    model = task.build_model(args, from_checkpoint=True)
    assert model.encoder.embed_tokens.weight.shape[0] == 45 and not report.exists()
    assert not task.building_from_checkpoint
    with pytest.raises((PretrainedLoadError, FileNotFoundError, OSError)):  # training still starts from the parent
        task.build_model(args)


@pytest.mark.slow
def test_a_style_model_copied_out_of_its_study_loads_translates_and_writes_nothing(tmp_path, monkeypatch):
    """A tiny BASE and a style_token fine-tuned from it, trained from the study root as the workflow does
    (--pretrained-base and its report relative to it); the study then copied elsewhere and the original
    removed: the copy loads from another working folder and translates, and no file of it changes."""
    import shutil
    from pathlib import Path

    from mtcue import config as cfgmod
    from mtcue.data.prepare import binarise, encode_split, train_spm
    from mtcue.models.train import train
    from mtcue.models.translator import Translator
    from test_voita2018 import tiny_corpus

    study = tmp_path / "study"
    results = study / "results"
    sizes = {"train": (40, 0), "valid": (4, 1), "test": (4, 2)}  # documents of three lines
    corpora = {split: tiny_corpus(tmp_path / f"{split}.jsonl", n, seed) for split, (n, seed) in sizes.items()}
    train_spm(corpora["train"], "en-de", results / "spm" / "en-de.model", 60)
    for split, path in corpora.items():
        encode_split(results / "spm" / "en-de.model", path, "en-de", results / "prepared" / split)
    binarise(results / "prepared", "en-de", results / "bin" / "en-de")
    (results / "style" / "en-de").mkdir(parents=True)
    for split, (n, _) in sizes.items():
        np.save(results / "style" / "en-de" / f"{split}.npy", np.arange(3 * n) % 5 + 1)
    arch = {"embed_dim": 16, "heads": 2, "encoder_layers": 1, "encoder_ffn_dim": 32, "decoder_layers": 1,
            "decoder_ffn_dim": 32}
    config = cfgmod.validate({
        "study": "tiny", "directions": ["en-de"],
        "training": {"lr": 0.003, "warmup_updates": 5, "max_tokens": 400, "max_epoch": 1, "patience": 1},
        "models": {"base": {"type": "base", "arch": arch},
                   "style_token": {"type": "style_token", "init_from": "base", "arch": arch}},
        "experiments": {"quality": {"models": ["base"]}, "formality": {"directions": []}}})
    monkeypatch.chdir(study)
    for model in ("base", "style_token"):
        spec = model_spec(config, model, "en-de")
        parent = model != "base"
        record = train(spec, "en-de", Path("results/bin/en-de"), Path("results/checkpoints/en-de") / model,
                       Path("results/models/en-de") / model / "checkpoint_best.pt",
                       context_dir=Path("results/style/en-de") if parent else None,
                       init_checkpoint=Path("results/models/en-de/base/checkpoint_best.pt") if parent else None)
        (results / "records" / "train" / "en-de").mkdir(parents=True, exist_ok=True)
        write_record(results / "records" / "train" / "en-de" / f"{model}.json",
                     {"kind": "train", **with_provenance(record, "demo")})

    def files():
        return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in tmp_path.rglob("*") if p.is_file()}
    assert (results / "checkpoints" / "en-de" / "style_token" / "init_report.json").is_file()
    before = files()
    Translator.load(Path("results/models/en-de/style_token"), device="cpu")  # in its study: its report untouched
    assert files() == before
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(study, copy)
    shutil.rmtree(study)
    monkeypatch.chdir(tmp_path)
    before = files()
    translator = Translator.load(copy / "results" / "models" / "en-de" / "style_token", device="cpu")
    hyps = translator.translate(["Where is it?", "I see the dog."], beam=2)
    assert len(hyps) == 2 and all(isinstance(h, str) for h in hyps)
    assert files() == before
