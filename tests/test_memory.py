"""Memory growth with the number of context sentences (mtcue.models.memory): the CPU peak measured on
hand-made allocations, growth with the context for a model that concatenates it, the CSV, the plan
from the config, the figure and the rule in the DAG."""
import copy
import json

import pytest
import torch

from conftest import REPO, dry_run
from mtcue import config as cfgmod
from mtcue.models import memory
from mtcue.experiments.memory_growth.plan import MEMORY_GROWTH

CPU = torch.device("cpu")
MIB = 2 ** 20


def test_the_cpu_peak_is_what_was_held_at_once_above_the_start():
    held = torch.empty(50 * MIB // 4)  # allocated before: not counted

    def work():
        a = torch.empty(64 * MIB // 4)  # 64 MiB of float32
        b = torch.empty(32 * MIB // 4)
        del a  # 96 MiB held at once, then 32
        c = torch.empty(16 * MIB // 4)  # 48 MiB: below the peak
        return b, c

    assert memory.peak_bytes(work, CPU) == 96 * MIB
    assert held.numel()


def test_the_cpu_peak_counts_operators_and_gradients():
    x = torch.randn(512, 1024, requires_grad=True)  # 2 MiB, before

    def step():
        y = x * 3.0  # 2 MiB kept for nothing (a constant factor), then x.grad: 2 MiB
        y.sum().backward()

    peak = memory.peak_bytes(step, CPU)
    # y (2 MiB) and x.grad (2 MiB) at once, plus the backward's scalar and expanded ones (a few bytes)
    assert 4 * MIB <= peak < 4 * MIB + 4096
    assert memory.peak_bytes(lambda: None, CPU) == 0


def test_on_a_gpu_the_peak_is_cudas_after_a_reset_less_what_was_there(monkeypatch):
    """No GPU here: torch.cuda's counters stand in, as a device with 300 MiB allocated that peaks at 420."""
    calls = []
    state = {"allocated": 300 * MIB, "peak": 999 * MIB}

    def reset(device):
        calls.append("reset")
        state["peak"] = state["allocated"]

    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append("sync"))
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", reset)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: state["allocated"])
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda device=None: state["peak"])

    def work():
        calls.append("work")
        state["peak"] = 420 * MIB

    assert memory.peak_bytes(work, torch.device("cuda")) == 120 * MIB
    assert calls == ["sync", "reset", "work", "sync"]


TOY = {"embed_dim": 32, "heads": 2, "encoder_layers": 1, "encoder_ffn_dim": 64, "decoder_layers": 1,
       "decoder_ffn_dim": 64}
CONFIG = {
    "study": "memory", "directions": ["en-de"], "spm": {"vocab_size": 200},
    "models": {
        "base": {"type": "base", "arch": TOY},
        "concat": {"type": "concat", "init_from": "base", "arch": TOY},
        "mtcue": {"type": "mtcue", "init_from": "base", "arch": {**TOY, "context_layers": 1, "context_ffn_dim": 64}},
    },
    "generation": {"beam": 2},
    "experiments": {"memory_growth": {"models": {"concat": "concat", "cue": ["mtcue", "mtcue"]},
                                      "context_sentences": 3, "sentences": 2, "length": 6}},
}


def test_the_plan_uses_the_largest_trained_context_beyond_it():
    plan = MEMORY_GROWTH.plan(cfgmod.validate(copy.deepcopy(CONFIG)))
    assert plan["curves"] == {"concat": ["concat"] * 3, "cue": ["mtcue", "mtcue", "mtcue"]}
    assert set(plan["specs"]) == {"concat", "mtcue"} and plan["beam"] == 2 and plan["vocab_size"] == 200
    assert plan["batch"] == {"sentences": 2, "length": 6}
    none = copy.deepcopy(CONFIG)
    none["experiments"]["memory_growth"]["models"] = {}
    assert MEMORY_GROWTH.plan(cfgmod.validate(none)) is None


@pytest.mark.parametrize("models, wrong", [({"x": "absent"}, "'absent' is not a model"),
                                           ({"x": ["concat", "base"]}, "'base' reads no document context")])
def test_a_curve_of_an_unknown_or_sentence_level_model_is_an_error_naming_it(models, wrong):
    bad = copy.deepcopy(CONFIG)
    bad["experiments"]["memory_growth"]["models"] = models
    with pytest.raises(cfgmod.ConfigError, match=f"experiments.memory_growth.models.x: {wrong}"):
        cfgmod.validate(bad)


@pytest.fixture(scope="module")
def rows():
    return memory.measure(MEMORY_GROWTH.plan(cfgmod.validate(copy.deepcopy(CONFIG))), "cpu")


def peaks(rows, model, phase):
    return [r["peak_mib"] for r in sorted(rows, key=lambda r: r["context_sentences"])
            if r["model"] == model and r["phase"] == phase]


def test_concatenated_context_grows_both_phases_strictly(rows):
    for phase in memory.PHASES:
        concat = peaks(rows, "concat", phase)
        assert len(concat) == 3 and all(a < b for a, b in zip(concat, concat[1:])), (phase, concat)
    # Decoding keeps the encoder's states (2 sentences x beam 2 x 1 layer's cached keys and values):
    # each context sentence adds its 7 positions to them, 4 x 7 x 32 floats x 2 (keys, values) at least.
    decode = peaks(rows, "concat", "decode")
    assert decode[1] - decode[0] >= 4 * 7 * 32 * 4 * 2 / MIB


def test_every_curve_and_phase_is_measured_once_and_written_as_the_csv_says(rows, tmp_path):
    assert {(r["model"], r["context_sentences"], r["phase"]) for r in rows} == {
        (m, c, p) for m in ("concat", "cue") for c in (1, 2, 3) for p in ("decode", "train")}
    assert len(rows) == 12 and all(r["peak_mib"] > 0 for r in rows)
    path = memory.write_csv(rows, tmp_path / "memory_growth.csv")
    assert path.read_text().splitlines()[0] == "model,context_sentences,phase,peak_mib"
    assert memory.read_csv(path) == rows
    (tmp_path / "bad.csv").write_text("model,c,phase,peak_mib\n")
    with pytest.raises(ValueError, match="bad.csv: columns"):
        memory.read_csv(tmp_path / "bad.csv")


def test_the_figure_draws_a_line_per_model_in_each_phase(rows):
    fig = memory.figure(rows)
    decode, train = fig.axes[:2]
    lines = {line.get_label(): list(line.get_ydata()) for line in decode.get_lines()}
    assert lines == {"CONCAT": peaks(rows, "concat", "decode"), "CUE": peaks(rows, "cue", "decode")}
    assert [line.get_label() for line in train.get_lines()] == ["CONCAT", "CUE"]


def test_the_demo_measures_memory_growth_without_training():
    done = dry_run("memory_growth", "--configfile", str(REPO / "config" / "config.yaml"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "rule memory_growth:" in done.stdout and "mtcue memory-growth --plan" in done.stdout
    assert "rule train:" not in done.stdout
    everything = dry_run("--configfile", str(REPO / "config" / "config.yaml"))
    assert "results/figures/memory_growth.svg" in everything.stdout


def test_the_demo_draws_the_shortening_papers_figure4_models():
    """The shortening paper's Figure 4: single- and multi-encoder, Caching Tokens, average and linear pooling,
    Grouping and Selecting (it leaves out Caching Sentence and max pooling); each shortening curve reads its
    C = 1 run, then its C = 2 run (the largest the demo trains) beyond."""
    plan = MEMORY_GROWTH.plan(cfgmod.load(REPO / "config" / "config.yaml"))
    for family in ("multi_encoder", "caching_tokens", "pool_mean", "pool_linear", "grouping", "selecting"):
        assert plan["curves"][family] == [f"{family}_c1"] + [f"{family}_c2"] * 7, family
    assert plan["curves"]["concat"] == ["concat"] * 8
    assert plan["specs"]["pool_linear_c2"]["arch"]["shortening_groups"] == 2


def test_multi_encoder_and_linear_pooling_read_stacked_sentences_and_grow_in_decoding():
    toy = copy.deepcopy(CONFIG)
    toy["models"] |= {"multi_encoder": {"type": "multi_encoder", "arch": TOY},
                      "pool_linear": {"type": "pool_linear", "arch": TOY}}
    toy["experiments"]["memory_growth"]["models"] = {"multi_encoder": "multi_encoder", "pool_linear": "pool_linear"}
    rows = memory.measure(MEMORY_GROWTH.plan(cfgmod.validate(toy)), "cpu")
    for model in ("multi_encoder", "pool_linear"):
        decode = peaks(rows, model, "decode")
        assert len(decode) == 3 and all(a < b for a, b in zip(decode, decode[1:])), (model, decode)


def test_paper_figure_has_the_shortening_familys_curves():
    """The shortening paper's Figure 4 at paper scale: caching, pooling, grouping, selecting and multi-encoder
    beside the document-level models, each c = 1..3 its run trained with c sentences, the C = 3 run beyond."""
    from mtcue.study import SHORTENING_TYPES

    plan = MEMORY_GROWTH.plan(cfgmod.load(REPO / "config" / "paper.yaml"))
    family = {"caching_tokens", "caching_sentence", "pool_mean", "pool_max", "pool_linear", "grouping", "selecting",
              "multi_encoder"}
    assert family <= set(plan["curves"]) and {"mtcue", "concat"} <= set(plan["curves"])
    for label in family:
        assert plan["curves"][label] == [f"{label}_c{min(c, 3)}" for c in range(1, 9)]
        assert plan["specs"][f"{label}_c3"]["type"] in SHORTENING_TYPES
        assert plan["specs"][f"{label}_c2"]["arch"]["context_sentences"] == 2


def test_token_context_is_concatenated_or_stacked_sentence_by_sentence():
    from mtcue.models.params import DataFreeTask

    task = DataFreeTask(50)
    d = task.source_dictionary
    gen = torch.Generator().manual_seed(0)
    flat = memory.make_batch(None, task, "tokens", 3, 2, 5, gen)["net_input"]
    stacked = memory.make_batch(None, task, "tokens", 3, 2, 5, torch.Generator().manual_seed(0), stacked=True)
    stacked = stacked["net_input"]
    # three `<s> 4 words </s>` sentences: 18 tokens in a row, or 3 x 6 (the shortening family's slots)
    assert flat["context"].shape == (2, 18) and stacked["context"].shape == (2, 3, 6)
    assert torch.equal(stacked["context"].reshape(2, 18), flat["context"])
    assert (flat["context"][:, ::6] == d.bos()).all() and (flat["context"][:, 5::6] == d.eos()).all()
    assert not flat["context_padding_mask"].any() and stacked["context_padding_mask"].shape == (2, 3, 6)
    # the shortening family's sentences carry no marker: `4 words </s>`, a source sentence's 5 pieces
    bare = memory.make_batch(None, task, "tokens", 3, 2, 5, torch.Generator().manual_seed(0), stacked=True,
                             marker=False)["net_input"]["context"]
    assert bare.shape == (2, 3, 5) and (bare[..., -1] == d.eos()).all() and not (bare == d.bos()).any()


def test_an_output_path_holding_a_users_file_is_refused_before_measuring(tmp_path, caplog):
    from mtcue.cli import main

    notes, drawing = tmp_path / "notes.txt", tmp_path / "drawing.svg"
    notes.write_text("mine\n")
    # content that looks like the step's output proves nothing: only the step's own record beside it
    drawing.write_text('<svg xmlns="http://www.w3.org/2000/svg"><!-- my drawing --></svg>\n')
    memory.write_csv([{"model": "concat", "context_sentences": 1, "phase": "decode", "peak_mib": 1.0}],
                     tmp_path / "lookalike.csv")
    plan = '{"models": {"nope": {}}}'  # measuring would fail: the outputs are refused first
    for csv_path, svg_path, named in ((notes, tmp_path / "m.svg", notes), (tmp_path / "m.csv", drawing, drawing),
                                      (tmp_path / "lookalike.csv", tmp_path / "m.svg", tmp_path / "lookalike.csv"),
                                      (tmp_path, tmp_path / "m.svg", tmp_path)):
        caplog.clear()
        assert main(["memory-growth", "--plan", plan, "--csv", str(csv_path), "--svg", str(svg_path)]) == 1
        assert f"{named}: exists and no mtcue step wrote it" in caplog.text or f"{named}: is a folder" in caplog.text
    assert notes.read_text() == "mine\n" and "my drawing" in drawing.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["drawing.svg", "lookalike.csv", "notes.txt"]




def _plan() -> dict:
    return MEMORY_GROWTH.plan(cfgmod.load(REPO / "config" / "config.yaml"))


@pytest.mark.parametrize("case", ["unknown_model", "unknown_type", "no_curves", "not_an_object"])
def test_a_plan_naming_an_unknown_model_is_a_clear_error(case, tmp_path, caplog):
    from mtcue.cli import main

    plan = _plan()
    label = next(iter(plan["curves"]))
    if case == "unknown_model":
        plan["curves"][label] = ["nope"]
        message = f"--plan: curve '{label}' names the model 'nope', which has no spec in the plan (specs: "
    elif case == "unknown_type":
        name = plan["curves"][label][0]
        plan["specs"][name]["type"] = "nope"
        message = f"--plan: the spec of '{name}' has the model type 'nope', not one of ["
    elif case == "no_curves":
        del plan["curves"]
        message = "--plan: lacks 'curves' (give what MemoryGrowth.plan writes: batch, beam, curves, seed, specs"
    else:
        plan = [plan]
        message = "--plan: lacks 'batch'"
    csv_path, svg_path = tmp_path / "m.csv", tmp_path / "m.svg"
    assert main(["memory-growth", "--plan", json.dumps(plan), "--csv", str(csv_path), "--svg", str(svg_path)]) == 1
    assert message in caplog.text
    assert list(tmp_path.iterdir()) == []


def test_a_device_without_a_gpu_is_a_clear_error(tmp_path, monkeypatch, caplog):
    from mtcue.cli import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for device, message in (("cuda", "--device cuda: no GPU is visible to torch here; use --device cpu"),
                            ("gpu", "--device gpu: not a torch device (cpu, cuda, cuda:N)")):
        caplog.clear()
        assert main(["memory-growth", "--plan", json.dumps(_plan()), "--device", device, "--csv",
                     str(tmp_path / "m.csv"), "--svg", str(tmp_path / "m.svg")]) == 1
        assert f"memory-growth failed: {message}" in caplog.text
    assert list(tmp_path.iterdir()) == []


def test_the_demo_figure_keeps_its_labels_on_the_canvas_and_gives_each_curve_its_own_style(tmp_path):
    """The demo's ten curves: the legend wraps to the figure's width (one row ran past both edges), and no
    two curves share a colour or a marker (three colours served two curves each)."""
    from mtcue.plots import save_svg
    from svg_canvas import labels_off_canvas

    curves = MEMORY_GROWTH.plan(cfgmod.load(REPO / "config" / "config.yaml"))["curves"]
    rows = [{"model": m, "context_sentences": c, "phase": p, "peak_mib": 1.0 + i * c}
            for i, m in enumerate(curves) for c in range(1, 9) for p in memory.PHASES]
    fig = memory.figure(rows)
    assert labels_off_canvas(save_svg(fig, tmp_path / "memory_growth.svg").read_text()) == []
    for ax in fig.axes:
        colours, markers = zip(*((line.get_color(), line.get_marker()) for line in ax.get_lines()))
        assert len(colours) == len(curves) == 10 and len(set(colours)) == len(set(markers)) == 10
