"""Voita et al. (2018): the token context store, VOITA-CONTEXT and CONCAT (tiny CPU models)."""
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from fairseq.data import Dictionary, LanguagePairDataset
from fairseq.sequence_generator import SequenceGenerator

import mtcue.models.plugin  # noqa: F401  (registers task and models)
from mtcue.context.store import ContextStoreError
from mtcue.context.token_store import TokenStore, build_token_store, encode_rows, neighbour_texts, slot_names
from mtcue.corpus import META_FIELDS
from mtcue.evaluation.attention import agreement_table, heuristics, measure, most_attended_word, piece_words
from mtcue.models.params import DataFreeTask, build_model
from mtcue.models.plugin.context_dataset import TokenContextDataset
from mtcue.models.plugin.pretrained import is_context_key
from mtcue.models.plugin.voita.voita_context_model import GatedContextLayer
from mtcue.options import with_provenance
from mtcue.plan.models import model_spec
from mtcue.experiments.voita2018.plan import VOITA2018
from mtcue.records import write_record
from test_plugin import save_fairseq_checkpoint

TINY = {"encoder_embed_dim": 16, "encoder_ffn_embed_dim": 32, "decoder_ffn_embed_dim": 32,
        "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_layers": 3, "decoder_layers": 2,
        "dropout": 0.0}
TOKEN_MODELS = ["voita_context", "concat"]
REPO = Path(__file__).resolve().parents[1]


def tiny(model_type, task=None, **arch):
    torch.manual_seed(0)
    return build_model(model_type, {**TINY, **arch}, task or DataFreeTask(40)).eval()


def tiny_batch(task, batch_size=3, length=6, context_length=5, seed=1):
    g = torch.Generator().manual_seed(seed)
    d = task.source_dictionary
    tokens = torch.randint(d.nspecial, len(d), (batch_size, length), generator=g)
    tokens[:, -1] = d.eos()
    context = torch.randint(d.nspecial, len(d), (batch_size, context_length), generator=g)
    context[:, 0], context[:, -1] = d.bos(), d.eos()
    context[-1, :3] = d.pad()  # the last sample's context is shorter (left padding)
    return {"src_tokens": tokens, "src_lengths": torch.full((batch_size,), length),
            "prev_output_tokens": tokens.roll(1, dims=1), "context": context, "context_padding_mask": context.eq(d.pad())}


# ---- the store ----------------------------------------------------------------------------------

def sample(i, doc, text, previous):
    return {"id": f"s{i}", "doc_id": doc, "text": {"en": text, "de": text.upper()}, "previous": {"en": previous,
            "de": [p.upper() for p in previous]}, "meta": dict.fromkeys(META_FIELDS), "cues": [], "labels": {}}


# Document d1: a, b, (scene gap) c, d; document d2: e, f. The corpus's `previous` already resets at the gap.
CORPUS = [sample(0, "d1", "a", []), sample(1, "d1", "b", ["a"]), sample(2, "d1", "c", []),
          sample(3, "d1", "d", ["c"]), sample(4, "d2", "e", []), sample(5, "d2", "f", ["e"])]


def test_neighbours_follow_document_boundaries_and_gaps():
    rows = neighbour_texts(CORPUS, "en", slot_names(2, True))
    assert rows == [[None, None, "b"], ["a", None, None], [None, None, "d"], ["c", None, None],
                    [None, None, "f"], ["e", None, None]]


def test_encode_rows_offsets_point_at_each_line():
    rows = [[None, "xy"], ["x", None], [None, None]]
    tokens, offsets = encode_rows(rows, lambda text: [ord(c) - ord("w") for c in text])
    assert tokens.tolist() == [1, 2, 1]
    assert offsets.tolist() == [[[0, 0], [0, 2]], [[2, 1], [0, 0]], [[0, 0], [0, 0]]]


def test_build_token_store_is_aligned_with_the_corpus(tmp_path):
    import sentencepiece as spm

    corpus = tmp_path / "train.jsonl"
    corpus.write_text("".join(json.dumps(s) + "\n" for s in CORPUS))
    text = tmp_path / "text.txt"
    text.write_text("\n".join("a b c d e f".split() * 20) + "\n")
    spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(tmp_path / "spm"), vocab_size=7,
                                   model_type="word", bos_id=-1, eos_id=-1, unk_id=0, minloglevel=2)
    dictionary = Dictionary()
    for piece in "▁a ▁b ▁c ▁d ▁e ▁f".split():
        dictionary.add_symbol(piece)
    (tmp_path / "bin").mkdir()
    dictionary.save(str(tmp_path / "bin" / "dict.en.txt"))
    build_token_store({"train": corpus}, "en-de", tmp_path / "spm.model", tmp_path / "bin", 1, True, tmp_path / "st")
    store = TokenStore(tmp_path / "st")
    assert store.slots == ["prev1", "next1"]
    tokens, offsets = store.split("train")
    line = {i: [dictionary[t] for t in tokens[s:s + n]] for i, (s, n) in enumerate(offsets[:, 0]) if n}
    assert line == {1: ["▁a"], 3: ["▁c"], 5: ["▁e"]}
    following = {i: [dictionary[t] for t in tokens[s:s + n]] for i, (s, n) in enumerate(offsets[:, 1]) if n}
    assert following == {0: ["▁b"], 2: ["▁d"], 4: ["▁f"]}
    manifest = json.loads((tmp_path / "st" / "manifest.json").read_text())
    assert manifest["splits"] == {"train": 6} and manifest["present"] == {"train": {"prev1": 3, "next1": 3}}
    with pytest.raises(ContextStoreError, match="no slot 'prev2'"):
        store.slot("prev2")
    with pytest.raises(ContextStoreError, match="no 'valid' split"):
        store.split("valid")


def test_collater_gives_marker_line_eos_left_padded_by_sample_id():
    d = Dictionary()
    for w in "abcdefgh":
        d.add_symbol(w)
    lengths = [2, 6, 3]
    src = [torch.tensor([d.index("a")] * n + [d.eos()]) for n in lengths]
    pairs = LanguagePairDataset(src, [len(s) for s in src], d, src, [len(s) for s in src], d)
    tokens = np.array([d.index("c"), d.index("d"), d.index("e")], dtype=np.int32)
    offsets = np.array([[[0, 2]], [[0, 0]], [[2, 1]]])  # sample 1 has no previous line
    dataset = TokenContextDataset(pairs, tokens, offsets, 0, d.bos(), d.eos(), d.pad())
    batch = dataset.collater([dataset[i] for i in range(3)])
    ids = batch["id"].tolist()
    expected = {0: [d.bos(), d.index("c"), d.index("d"), d.eos()], 1: [d.pad(), d.pad(), d.bos(), d.eos()],
                2: [d.pad(), d.bos(), d.index("e"), d.eos()]}
    for position, i in enumerate(ids):
        assert batch["net_input"]["context"][position].tolist() == expected[i]
        assert batch["net_input"]["context_padding_mask"][position].tolist() == [t == d.pad() for t in expected[i]]
    with pytest.raises(ValueError, match="3 rows but the binarised split has 2"):
        TokenContextDataset(torch.utils.data.Subset(pairs, [0, 1]), tokens, offsets, 0, 0, 2, 1)


# ---- the models ---------------------------------------------------------------------------------

def test_gate_merges_self_and_context_attention_as_voita_et_al():
    """g = sigmoid(W [c_s; c_c] + b), c = g * c_s + (1 - g) * c_c, worked out by hand for d = 2."""
    from argparse import Namespace

    from fairseq.models.transformer import base_architecture

    args = Namespace(encoder_embed_dim=2, encoder_attention_heads=1, encoder_ffn_embed_dim=4)
    base_architecture(args)
    layer = GatedContextLayer(args)
    with torch.no_grad():
        layer.context_gate.weight.copy_(torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]]))
        layer.context_gate.bias.copy_(torch.tensor([0.0, -1.0]))
    own, other = torch.tensor([[0.5, 3.0]]), torch.tensor([[1.0, 0.25]])
    g = [1 / (1 + math.exp(-0.5)), 1 / (1 + math.exp(-(2 * 0.25 - 1)))]
    expected = [g[0] * 0.5 + (1 - g[0]) * 1.0, g[1] * 3.0 + (1 - g[1]) * 0.25]
    torch.testing.assert_close(layer.gate(own, other), torch.tensor([expected]))


def test_context_encoder_shares_all_but_the_last_layer():
    task = DataFreeTask(40)
    model = tiny("voita_context", task)
    encoder = model.encoder
    calls = {}
    for name, module in [*((f"layer{i}", m) for i, m in enumerate(encoder.layers)), ("context", encoder.context_layer)]:
        module.register_forward_hook(lambda m, i, o, name=name: calls.__setitem__(name, calls.get(name, 0) + 1))
    batch = tiny_batch(task)
    out = encoder(batch["src_tokens"], batch["src_lengths"], batch["context"], batch["context_padding_mask"])
    # the first two layers run on the context and the source; the last source layer and the context's own once
    assert calls == {"layer0": 2, "layer1": 2, "layer2": 1, "context": 1}
    assert isinstance(encoder.layers[-1], GatedContextLayer) and encoder.context_layer is not encoder.layers[-1]
    assert out["encoder_out"][0].shape == (6, 3, 16)  # source length x batch x d: the decoder sees the source only
    # the context encoder's states are its shared layers and then its own layer
    x, mask, _ = encoder.shared_layers(batch["context"])
    states, _ = encoder.encode_context(batch["context"])
    torch.testing.assert_close(states, encoder.context_layer(x, encoder_padding_mask=mask))


def test_concat_adds_a_segment_embedding_per_token():
    task = DataFreeTask(40)
    model = tiny("concat", task)
    encoder = model.encoder
    batch = tiny_batch(task)
    out = encoder(batch["src_tokens"], batch["src_lengths"], batch["context"], batch["context_padding_mask"])
    assert out["encoder_out"][0].shape == (5 + 6, 3, 16)
    embedded = out["encoder_embedding"][0]
    tokens = torch.cat([batch["context"], batch["src_tokens"]], dim=1)
    E, S = encoder.embed_tokens.weight, encoder.context_segments.weight
    b = 0
    for j in range(tokens.shape[1]):
        segment = S[0] if j < 5 else S[1]
        torch.testing.assert_close(embedded[b, j], math.sqrt(16) * (E[tokens[b, j]] + segment))
    assert out["encoder_padding_mask"][0][-1, :3].all() and not out["encoder_padding_mask"][0][0].any()


def test_concat_reads_c_sentences_farthest_first_as_the_compact_concatenation():
    """[B, C, L] slots (nearest first, each left-padded) give the logits of one context sequence written by hand
    in document order without the padding between sentences: that padding is masked and takes no position."""
    task = DataFreeTask(40)
    d = task.source_dictionary
    model = tiny("concat", task)
    src = torch.tensor([[11, 12, 13, d.eos()]])
    prev1, prev2 = [d.bos(), 5, 6, d.eos()], [d.bos(), 7, 8, 9, d.eos()]
    stacked = torch.tensor([[[d.pad(), *prev1], prev2]])  # [1, 2, 5]: prev1, prev2
    compact = torch.tensor([prev2 + prev1])  # by hand: <s> 7 8 9 </s> <s> 5 6 </s>
    prev_output = torch.tensor([[d.eos(), 20, 21, 22]])
    logits, _ = model(src, torch.tensor([4]), prev_output, context=stacked, context_padding_mask=stacked.eq(d.pad()))
    expected, _ = model(src, torch.tensor([4]), prev_output, context=compact, context_padding_mask=compact.eq(d.pad()))
    torch.testing.assert_close(logits, expected)
    swapped, _ = model(src, torch.tensor([4]), prev_output, context=torch.tensor([prev1 + prev2]),
                       context_padding_mask=torch.zeros(1, 9, dtype=torch.bool))
    assert not torch.allclose(swapped, expected)  # the order matters: prev2 stands first


@pytest.mark.parametrize("model_type", TOKEN_MODELS)
def test_logits_depend_on_the_context_sentence(model_type):
    task = DataFreeTask(40)
    model = tiny(model_type, task)
    batch = tiny_batch(task)
    logits, _ = model(**batch)
    other = batch["context"].clone()
    other[0, 2] = other[0, 2] % 30 + 5
    changed, _ = model(**{**batch, "context": other})
    assert not torch.allclose(changed[0], logits[0]) and torch.allclose(changed[1:], logits[1:], atol=1e-6)


@pytest.mark.parametrize("model_type", TOKEN_MODELS)
def test_beam_search_scores_equal_teacher_forced_scores(model_type):
    task = DataFreeTask(40)
    assert_beam_scores_are_teacher_forced(tiny(model_type, task), task, tiny_batch(task))


def assert_beam_scores_are_teacher_forced(model, task, batch):
    """Incremental decoding (cached attention, beams reordered) gives each hypothesis the scores a full
    teacher-forced pass gives its tokens."""
    net_input = {k: v for k, v in batch.items() if k != "prev_output_tokens"}
    hypos = SequenceGenerator([model], task.target_dictionary, beam_size=2, max_len_b=6).forward(
        {"net_input": net_input})
    eos = task.target_dictionary.eos()
    for i, beams in enumerate(hypos):
        for hypo in beams:
            tokens = hypo["tokens"]
            prev = torch.cat([tokens.new_tensor([eos]), tokens[:-1]])[None]
            logits, _ = model(prev_output_tokens=prev, **{k: v[i:i + 1] for k, v in net_input.items()})
            lprobs = F.log_softmax(logits[0], dim=-1).gather(1, tokens[:, None])[:, 0]
            torch.testing.assert_close(hypo["positional_scores"], lprobs, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("model_type", TOKEN_MODELS)
def test_every_base_tensor_loads_and_only_context_modules_are_new(tmp_path, model_type):
    task = DataFreeTask(40)
    torch.manual_seed(1)
    base = build_model("base", TINY, task)
    path = save_fairseq_checkpoint(base, tmp_path / "base.pt")
    model = tiny(model_type, task, pretrained_base=str(path), pretrained_report=str(tmp_path / "r.json"))
    report = json.loads((tmp_path / "r.json").read_text())
    own = model.state_dict()
    assert all(torch.equal(own[k], v) for k, v in base.state_dict().items())
    new = {k.rsplit(".", 1)[0] for k in report["new"]}
    assert all(is_context_key(k) for k in report["new"])
    if model_type == "concat":
        assert new == {"encoder.context_segments"}
    else:
        assert {k.split(".")[1] if k.split(".")[1] == "context_layer" else k.split(".")[3] for k in new} == {
            "context_layer", "context_attn", "context_gate"}


# ---- the attention analysis (Table 7) -------------------------------------------------------------

def test_piece_words_marks_punctuation_and_continuation_pieces():
    assert piece_words(["▁The", "▁heart", "s", ".", "▁is"]) == [0, 1, 1, -1, 2]


def test_word_positions_ignore_case_punctuation_and_clitics():
    from mtcue.evaluation.attention import word_positions

    assert word_positions("It's on the table, it is.", "it") == [0, 4]
    assert word_positions("The letter's gone.", "letter") == [1]


def test_most_attended_word_skips_marker_eos_and_punctuation():
    # columns: marker, ▁the, ▁bo, ok, ",", ▁lamp, </s>; the marker and "," get the most attention
    attention = np.array([[0.50, 0.05, 0.10, 0.04, 0.20, 0.08, 0.03],
                          [0.10, 0.10, 0.00, 0.40, 0.10, 0.20, 0.10]])
    words = [-1, 0, 1, 1, -1, 2, -1]
    assert most_attended_word(attention[:1], [0], words) == 1          # ▁bo (0.10) over ▁lamp (0.08)
    assert most_attended_word(attention, [0, 1], words) == 1           # mean of both rows: ok 0.22
    assert most_attended_word(attention[1:], [0], words) == 1
    attention[0, 5] = 0.2
    assert most_attended_word(attention[:1], [0], words) == 2


def test_heuristics_and_table():
    assert heuristics([4, 1, 7], {4}) == {"random": 1 / 3, "first": 0.0, "last": 0.0}
    assert heuristics([4, 1], {1}) == {"random": 0.5, "first": 1.0, "last": 0.0}
    table = agreement_table([{"pronoun": "it", "attention": True, "random": 0.5, "first": 1.0, "last": 0.0},
                             {"pronoun": "it", "attention": False, "random": 0.25, "first": 0.0, "last": 1.0},
                             {"pronoun": "she", "attention": True, "random": 0.5, "first": 0.0, "last": 1.0}])
    assert table["it"] == {"n": 2, "attention": 0.5, "random": 0.375, "first": 0.5, "last": 0.5}
    assert table["all"]["n"] == 3 and table["all"]["attention"] == pytest.approx(2 / 3)


def test_measure_selects_distance_one_examples_with_several_nouns():
    def example(i, text, line, pronoun, antecedent, nouns, distance=1, phenomenon="pronoun"):
        return {"id": i, "text": text, "previous": {"en": [line, "older line"]}, "candidates": ["x", "y"], "correct": 0,
                "group": {"phenomenon": phenomenon, "pronoun": "er", "distance": distance},
                "anaphor": {"pronoun": pronoun, "antecedent": antecedent, "nouns": nouns}}

    suite = [example("a", "Where is it?", "The lamp is by the table.", "it", "lamp", ["lamp", "table"]),
             example("b", "It broke.", "I saw the dog and the cup.", "It", "cup", ["dog", "cup"]),
             example("c", "It is red.", "The car is new.", "it", "car", ["car"]),               # one noun
             example("d", "It is red.", "The car and the key.", "it", "car", ["car", "key"], distance=2),
             example("e", "Sie ist da.", "The car and the key.", "it", "car", ["car", "key"], phenomenon="formality")]
    pieces = lambda text: [p for w in text.split() for p in (["▁" + w[:-1], w[-1]] if w[-1] in ".?" else ["▁" + w])]  # noqa: E731

    def attend(source, context):
        # every source row attends most to the last context word (before "." and </s>)
        a = np.full((len(source) + 1, len(context) + 2), 0.01)
        a[:, len(context) - 1] = 0.9
        return a

    result = measure(suite, "en", pieces, attend)
    assert result["examples"] == 2
    assert measure(suite, "en", pieces, attend, min_nouns=1)["examples"] == 3  # c too (Table 6)
    # a: last word "table" is not the antecedent lamp; b: last word "cup" is
    assert result["pronouns"]["it"] == {"n": 2, "attention": 0.5, "random": 0.5, "first": 0.5, "last": 0.5}


def test_attention_on_the_antecedents_determiner_or_possessive_agrees():
    """Voita et al. 5.3.2: the antecedent is a noun phrase, "usually a determiner or a possessive pronoun followed
    by a noun", and attention agrees when its top token "falls within the antecedent span"."""
    from mtcue.evaluation.attention import antecedent_span

    assert antecedent_span("I gave the key to my sister.", "key") == {2, 3}
    assert antecedent_span("Have you seen my phone?", "phone") == {3, 4}
    assert antecedent_span("Keys are here.", "keys") == {0}
    assert antecedent_span("The key, the sister and the key.", "key") == {0, 1, 5, 6}

    def example(i, line, antecedent):
        return {"id": i, "text": "Where is it?", "previous": {"en": [line]}, "candidates": ["x", "y"], "correct": 0,
                "group": {"phenomenon": "pronoun", "pronoun": "er", "distance": 1},
                "anaphor": {"pronoun": "it", "antecedent": antecedent, "nouns": ["key", "sister"]}}

    suite = [example("a", "I gave the key to my sister.", "key")]
    pieces = lambda text: ["▁" + w for w in text.split()]  # noqa: E731

    def attend_to(word):
        def attend(source, context):
            a = np.full((len(source) + 1, len(context) + 2), 0.01)
            a[:, 1 + word] = 0.9  # column 0 is the marker
            return a
        return attend

    for word, agrees in ((2, True), (3, True), (5, False), (6, False)):  # the, key / my, sister.
        assert measure(suite, "en", pieces, attend_to(word))["pronouns"]["it"]["attention"] == float(agrees), word


# ---- a tiny real training, then the in-memory API and the attention analysis ------------------------

def tiny_corpus(path, n_docs, seed):
    """Documents of three lines; the pronoun of the third line ("it"/"he") follows the first line's noun."""
    rng = np.random.default_rng(seed)
    nouns = {"lamp": ("Lampe", "sie"), "dog": ("Hund", "er"), "cup": ("Tasse", "sie"), "car": ("Wagen", "er")}
    lines = []
    for d in range(n_docs):
        a, b = rng.choice(list(nouns), 2, replace=False)
        doc = [(f"The {a} and the {b} are here.", f"Die {nouns[a][0]} und der {nouns[b][0]} sind hier."),
               (f"I see the {a}.", f"Ich sehe die {nouns[a][0]}."),
               ("Where is it?", f"Wo ist {nouns[a][1]}?")]
        for i, (en, de) in enumerate(doc):
            previous = [doc[j] for j in range(i - 1, -1, -1)]
            lines.append({"id": f"en-de.x.{d:03d}{i}", "doc_id": f"d{d}", "text": {"en": en, "de": de},
                          "previous": {"en": [p[0] for p in previous], "de": [p[1] for p in previous]},
                          "meta": dict.fromkeys(META_FIELDS), "cues": [], "labels": {}})
    path.write_text("".join(json.dumps(s) + "\n" for s in lines))
    return path


@pytest.mark.slow
def test_tiny_training_from_base_then_translate_score_and_attend(tmp_path):
    from mtcue import config as cfgmod
    from mtcue.corpus import read_corpus
    from mtcue.data.prepare import binarise, encode_split, train_spm
    from mtcue.evaluation.attention import measure
    from mtcue.evaluation.context_usage import WITHOUT_CONTEXT, measure_model
    from mtcue.models.train import train
    from mtcue.models.translator import Translator

    results = tmp_path / "results"
    corpora = {split: tiny_corpus(tmp_path / f"{split}.jsonl", n, seed)
               for split, n, seed in (("train", 40, 0), ("valid", 4, 1), ("test", 4, 2))}
    train_spm(corpora["train"], "en-de", results / "spm" / "en-de.model", 60)
    for split, path in corpora.items():
        encode_split(results / "spm" / "en-de.model", path, "en-de", results / "prepared" / split)
    binarise(results / "prepared", "en-de", results / "bin" / "en-de")
    build_token_store(corpora, "en-de", results / "spm" / "en-de.model", results / "bin" / "en-de", 2, True,
                      results / "tokens" / "en-de")
    arch = {"embed_dim": 16, "heads": 2, "encoder_layers": 2, "encoder_ffn_dim": 32, "decoder_layers": 1,
            "decoder_ffn_dim": 32}
    config = cfgmod.validate({
        "study": "tiny", "directions": ["en-de"], "context": {"doc_slots": 2},
        "training": {"lr": 0.003, "warmup_updates": 5, "max_tokens": 400, "max_epoch": 1, "patience": 1},
        "models": {"base": {"type": "base", "arch": arch},
                   **{m: {"type": m, "init_from": "base", "arch": arch} for m in TOKEN_MODELS}},
        "experiments": {"quality": {"models": ["base"]}, "formality": {"directions": []}}})
    for model in ["base", *TOKEN_MODELS]:
        spec = model_spec(config, model, "en-de")
        out = results / "models" / "en-de" / model / "checkpoint_best.pt"
        record = train(spec, "en-de", results / "bin" / "en-de", tmp_path / "ckpt" / model, out,
                       context_dir=None if model == "base" else results / "tokens" / "en-de",
                       init_checkpoint=None if model == "base" else results / "models" / "en-de" / "base" /
                       "checkpoint_best.pt")
        (results / "records" / "train" / "en-de").mkdir(parents=True, exist_ok=True)
        write_record(results / "records" / "train" / "en-de" / f"{model}.json",
                     {"kind": "train", **with_provenance(record, "demo")})
    init = json.loads((tmp_path / "ckpt" / "voita_context" / "init_report.json").read_text())
    assert not init["missing_base_keys"] and init["new"]

    for model in TOKEN_MODELS:
        translator = Translator.load(results / "models" / "en-de" / model, device="cpu")
        hyps = translator.translate(["Where is it?"] * 2, previous=[["I see the dog."], ["I see the lamp."]], beam=2)
        assert len(hyps) == 2 and all(isinstance(h, str) for h in hyps)
        with_dog = translator.score("Where is it?", ["Wo ist er?", "Wo ist sie?"], previous=["I see the dog."])
        with_cup = translator.score("Where is it?", ["Wo ist er?", "Wo ist sie?"], previous=["I see the cup."])
        assert len(with_dog) == 2 and with_dog != with_cup  # the context line reaches the scores
    # Context usage (CXMI) of the real models: BASE reads no context, exactly 0 in every sentence; the
    # token-context models' scores move where a sentence has a previous line to take away.
    test = list(read_corpus(corpora["test"]))
    for model in ["base", *TOKEN_MODELS]:
        direction, usage, without = measure_model(results / "models" / "en-de" / model, test)
        assert direction == "en-de" and usage["n"] == len(test) == 12
        assert [len(t) for t in usage["token_cxmi"]] == [len(translator.pieces(s["text"]["de"])) + 1 for s in test]
        if model == "base":
            assert usage["sentence_cxmi"] == [0.0] * 12 and usage["cxmi"] == 0.0 and without == WITHOUT_CONTEXT[None]
            assert {x for t in usage["token_cxmi"] for x in t} == {0.0}
        else:
            moved = [x != 0.0 for x, s in zip(usage["sentence_cxmi"], test) if s["previous"]["en"]]
            assert moved and all(moved) and without == WITHOUT_CONTEXT["tokens"], model
    suite = [{"id": "s0", "doc_id": "d", "text": "Where is it?", "previous": {"en": ["The dog and the cup are here."]},
              "meta": dict.fromkeys(META_FIELDS), "cues": [], "candidates": ["Wo ist er?", "Wo ist sie?"],
              "correct": 0, "group": {"phenomenon": "pronoun", "pronoun": "er", "distance": 1},
              "anaphor": {"pronoun": "it", "antecedent": "dog", "nouns": ["dog", "cup"]}}]
    translator = Translator.load(results / "models" / "en-de" / "voita_context", device="cpu")
    result = measure(suite, "en", translator.pieces, translator.context_attention)
    assert result["examples"] == 1 and result["pronouns"]["it"]["random"] == 0.5
    source, context = translator.pieces("Where is it?"), translator.pieces("The dog.")
    attention = translator.context_attention(source, context)
    # one row per source piece and </s>, one column per context piece, <s> and </s>; each row a distribution
    assert attention.shape == (len(source) + 1, len(context) + 2)
    assert np.allclose(attention.sum(axis=1), 1, atol=1e-5)
    with pytest.raises(ValueError, match="'concat' model has no context attention"):
        Translator.load(results / "models" / "en-de" / "concat", device="cpu").context_attention(source, context)


# ---- config, table, DAG ---------------------------------------------------------------------------

def demo_config():
    from mtcue import config as cfgmod

    return cfgmod.load(REPO / "config" / "config.yaml")


def test_demo_trains_six_fine_tunes_and_the_next_sentence_model_in_en_ru_only():
    from mtcue import config as cfgmod

    c = demo_config()
    new = [(d, m) for d, m in VOITA2018.models(c) if m != "base"]
    assert sorted(new) == sorted([(d, m) for d in ("en-ru", "en-de", "en-fr") for m in ("concat", "voita_context")]
                                 + [("en-ru", "voita_context_next")])
    spec = model_spec(c, "voita_context_next", "en-ru")
    assert spec["init_from"] == "base" and spec["context"]["slot"] == "next1"
    assert spec["training"]["max_epoch"] == c["models"]["mtcue"]["training"]["max_epoch"]  # the demo's fine-tune
    from mtcue.models import fairseq_args as fa
    args = fa.task_args(spec, "en-ru", "bin", "tokens")
    assert args[args.index("--context-slot") + 1] == "next1" and "--context-columns" not in args
    assert [r["label"] for r in VOITA2018.rows(c)] == [
        "baseline (context-agnostic Transformer)", "concatenation (previous sentence)",
        "context encoder (previous sentence)", "context encoder (random context)", "context encoder (next sentence)"]


def test_table7_is_measured_where_the_synthetic_suite_marks_antecedents():
    """Read off the config, never the disk: on the synthetic corpus the attention record of each en->xx
    previous-sentence VOITA-CONTEXT model; on the paper's data none, and the reason the table gives."""
    from mtcue import config as cfgmod
    from mtcue.experiments.voita2018.plan import attention_unavailable

    demo, paper = demo_config(), cfgmod.load(REPO / "config" / "paper.yaml")
    assert attention_unavailable(demo) == "" and VOITA2018.inputs(demo)["attention"] == [
        f"results/records/attention/{d}/voita_context.json" for d in ("en-de", "en-fr", "en-ru")]
    assert "pronoun antecedents" in attention_unavailable(paper) and VOITA2018.inputs(paper)["attention"] == []


@pytest.mark.parametrize("change, message", [
    (lambda c: c["models"]["mtcue"].update(context_slot="next1"), "models.mtcue.context_slot"),
    (lambda c: c["models"]["concat"].update(context_columns=["doc"]), "models.concat.context_columns"),
    (lambda c: c["experiments"]["voita2018"].update(random_test=["mtcue"]), "experiments.voita2018.random_test"),
    (lambda c: c["experiments"]["voita2018"].update(directions=["en-xx"]), "experiments.voita2018.directions"),
])
def test_bad_voita2018_config_is_refused(change, message):
    from mtcue import config as cfgmod

    raw = cfgmod.read_yaml(REPO / "config" / "config.yaml")
    change(raw)
    with pytest.raises(cfgmod.ConfigError, match=message.replace(".", r"\.")):
        cfgmod.validate(raw)


def test_table_puts_ours_beside_the_seeds(tmp_path):
    import pandas as pd

    from mtcue import config as cfgmod
    from mtcue.reporting.kit import Runs
    from mtcue.experiments.voita2018.table import write_voita2018_table

    def score(model, bleu):
        return {"model": model, "direction": "en-ru", "bleu": bleu, "study": "demo"}

    rows = VOITA2018.rows(demo_config())
    attention = {"model": "voita_context", "direction": "en-ru", "study": "demo",
                 "pronouns": {"all": {"n": 4, "attention": 0.75, "random": 0.5, "first": 0.25, "last": 0.5}},
                 "table6": {"pronouns": {"all": {"n": 9, "attention": 0.5, "random": 1.0, "first": 1.0, "last": 1.0}}}}
    scores = [score("base", 20.0), score("concat", 20.5), score("voita_context", 21.25)]
    random = [score("voita_context", 19.5)]
    from table_links import paper_links, unlinked_numbers

    tmp_path = tmp_path / "tables"
    runs = Runs.of_records([*scores, *random, attention], tmp_path / "t.html")
    write_voita2018_table(rows, scores, random, [attention], tmp_path / "t.csv", tmp_path / "t.md", runs=runs)
    page = (tmp_path / "t.html").read_text()
    assert unlinked_numbers(page) == [] and paper_links(page) == []
    assert '<a href="../mlflow/demo.html#en-ru/voita_context">19.50</a>' in page  # random context: the same model
    assert '<a href="../mlflow/demo.html#en-ru/voita_context">75.0</a>' in page  # Table 7's agreement
    csv = pd.read_csv(tmp_path / "t.csv").set_index(["table", "direction", "row", "metric"])
    df = csv["value"]
    assert csv["run"][("bleu", "en-ru", "context encoder (random context)", "bleu")] == "en-ru/voita_context"
    assert csv["run"][("bleu", "en-ru", "baseline (context-agnostic Transformer)", "bleu")] == "en-ru/base"
    assert csv["run"][("attention", "en-ru", "all", "attention")] == "en-ru/voita_context"
    assert pd.isna(csv["run"][("bleu", "paper en-ru", "context encoder (previous sentence)", "bleu")])
    assert df[("bleu", "en-ru", "context encoder (previous sentence)", "bleu")] == 21.25
    assert df[("bleu", "en-ru", "context encoder (random context)", "bleu")] == 19.5
    assert np.isnan(df[("bleu", "en-ru", "context encoder (next sentence)", "bleu")])
    assert df[("bleu", "paper en-ru", "context encoder (previous sentence)", "bleu")] == 30.14
    assert df[("attention", "en-ru", "all", "attention")] == 75.0
    assert df[("attention", "paper en-ru", "it", "attention")] == 58
    assert df[("attention_any_nouns", "en-ru", "all", "attention")] == 50.0
    assert df[("attention_any_nouns", "paper en-ru", "it", "attention")] == 69
    md = (tmp_path / "t.md").read_text()
    assert "30.14" in md and "21.25" in md and (tmp_path / "t.html").is_file()


def test_demo_dag_builds_the_token_stores_fine_tunes_and_table():
    from conftest import dry_run

    run = dry_run("results/tables/voita2018.csv", "--configfile", str(REPO / "config" / "config.yaml"))
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    for direction in ("en-ru", "en-de", "en-fr"):
        assert f"--out results/tokens/{direction} " in out
        assert f"results/records/score_random_context/{direction}/voita_context.test.json" in out
        for model in ("concat", "voita_context"):
            assert f"results/models/{direction}/{model}/checkpoint_best.pt" in out
    assert "results/models/en-ru/voita_context_next/checkpoint_best.pt" in out
    assert "results/models/en-de/voita_context_next/" not in out
    assert '"slot": "next1"' in out  # the spec of the next-sentence model
    assert '"random": "shuffle", "slot": "prev1"' in out  # random context at test: the translation's spec only
    # the contrastive rules write the synthetic suites: Table 7 is measured on each en->xx previous-sentence model
    assert sorted(re.findall(r"mtcue attention-agreement --model-dir (\S+)", out)) == [
        f"results/models/{d}/voita_context" for d in ("en-de", "en-fr", "en-ru")]


def test_attention_analysis_runs_on_each_en_xx_previous_sentence_model_given_the_suite(tmp_path):
    from conftest import dry_run

    for direction in ("en-ru", "en-de", "en-fr"):  # the contrastive suites, in the fixed format
        suite = tmp_path / "results" / "eval" / "contrastive" / direction / "synthetic.jsonl"
        suite.parent.mkdir(parents=True)
        suite.write_text("{}\n")
    run = dry_run("results/tables/voita2018.csv", "--configfile", str(REPO / "config" / "config.yaml"),
                  workdir=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    commands = [line for line in run.stdout.splitlines() if "mtcue attention-agreement" in line]
    assert sorted(c.split("--model-dir ")[1].split()[0] for c in commands) == [
        f"results/models/{d}/voita_context" for d in ("en-de", "en-fr", "en-ru")]
    assert "--attention-records results/records/attention/" in run.stdout


def test_training_cost_batches_give_token_models_a_context_sentence():
    from mtcue.models.train_cost import make_batch

    task = DataFreeTask(40)
    task.context_kind = "tokens"
    batch = make_batch([(3, 2), (5, 4)], task, "voita_context", torch.Generator().manual_seed(0))["net_input"]
    d = task.source_dictionary
    context, mask = batch["context"], batch["context_padding_mask"]
    assert context.shape == (2, 6) and mask.tolist() == [[True] * 2 + [False] * 4, [False] * 6]  # <s>, 2 words, </s>
    assert context[:, -1].tolist() == [d.eos()] * 2 and context[0, 2] == context[1, 0] == d.bos()
    tiny("voita_context", task)(**batch)  # the model reads it
