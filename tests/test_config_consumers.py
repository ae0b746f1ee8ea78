"""The config schema against the steps that consume it: for every `generation` key and every
experiment key, values at and just beyond the boundary. A value validation accepts is one the
consumer accepts (fairseq-generate itself, the plan functions, the model reading the context); a
value just beyond is refused by validation with the key named, and where the limit is fairseq's,
fairseq is shown to refuse it too."""
import copy
import math
import random
import subprocess
import sys

import pytest
import torch

from mtcue import config as cfg
from mtcue.models import fairseq_args as fa
from mtcue.models.translate import translate
from mtcue.experiments.fewshot.plan import FEWSHOT
from mtcue.experiments.memory_growth.plan import MEMORY_GROWTH
from mtcue.plan.models import model_spec, trained_models
from mtcue.experiments.voita2018.plan import VOITA2018

ARCH = {"embed_dim": 16, "heads": 2, "encoder_layers": 1, "encoder_ffn_dim": 32, "decoder_layers": 1,
        "decoder_ffn_dim": 32}
BASE_CONFIG = {"study": "t", "directions": ["en-de"], "models": {"base": {"type": "base", "arch": ARCH}}}
# Split -> source lines: `test` is one empty line, a source of one token (</s>), the shortest fairseq can
# get (the max_len_a + max_len_b >= 1 boundary); `valid` long lines (the overflow of max_len_a).
SPLITS = {"train": 20, "valid": 3, "test": 1}


def _fairseq(tool: str, *args) -> None:
    done = subprocess.run([sys.executable, "-m", f"fairseq_cli.{tool}", *map(str, args)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A BASE model with random weights saved as fairseq's trainer saves it, over binarised en-de data."""
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from omegaconf import OmegaConf

    tmp = tmp_path_factory.mktemp("generation")
    rng = random.Random(0)
    words = [f"w{i}" for i in range(24)]
    lengths = {"train": 5, "valid": 30, "test": 0}
    for split, n in SPLITS.items():
        for lang in ("en", "de"):
            lines = [" ".join(rng.choices(words, k=lengths[split])) for _ in range(n)]
            (tmp / f"{split}.{lang}").write_text("\n".join(lines) + "\n")
    _fairseq("preprocess", "--source-lang", "en", "--target-lang", "de", "--trainpref", tmp / "train",
             "--validpref", tmp / "valid", "--testpref", tmp / "test", "--destdir", tmp / "bin",
             "--joined-dictionary", "--workers", "1")
    spec = model_spec(cfg.validate(BASE_CONFIG), "base", "en-de")
    args = options.parse_args_and_arch(options.get_training_parser(), input_args=[
        *fa.task_args(spec, "en-de", tmp / "bin", None), *fa.arch_args(spec)])
    train_cfg = convert_namespace_to_omegaconf(args)
    torch.manual_seed(0)
    weights = tasks.setup_task(train_cfg.task).build_model(train_cfg.model).state_dict()
    # the config as fairseq's Trainer.state_dict saves it: a plain container (OmegaConf.to_container)
    torch.save({"args": None, "cfg": OmegaConf.to_container(train_cfg, resolve=True, enum_to_str=True),
                "model": weights,
                "optimizer_history": [{"criterion_name": "CrossEntropyCriterion", "optimizer_name": "Adam",
                                       "lr_scheduler_state": {}, "num_updates": 0}],
                "extra_state": {"train_iterator": {"epoch": 1}}, "last_optimizer_state": None}, tmp / "ck.pt")
    return {"spec": spec, "bin": tmp / "bin", "checkpoint": tmp / "ck.pt", "out": tmp / "hyps.txt"}


def generate(model, settings: dict, split: str) -> int:
    """fairseq-generate through the translate step, on the generation arguments the project builds."""
    return translate(model["spec"], "en-de", model["bin"], model["checkpoint"], split, SPLITS[split], model["out"],
                     settings)


DEFAULTS = cfg.generation_settings({})
# (settings, accepted, the key an error names, whether fairseq refuses the settings too)
GENERATION = [
    ({"beam": 1}, True, None, False),
    ({"beam": 0}, False, "beam", True),            # a reshape error in SequenceGenerator
    ({"beam": 2.0}, False, "beam", True),          # argparse: invalid int value: '2.0'
    ({"batch_size": 1}, True, None, False),
    ({"batch_size": 0}, False, "batch_size", False),
    ({"max_len_a": 0, "max_len_b": 1}, True, None, False),
    ({"max_len_a": 0, "max_len_b": 0}, False, "max_len_a + max_len_b", True),   # min_len <= max_len asserted
    ({"max_len_a": 0, "max_len_b": -3}, False, "max_len_a + max_len_b", True),
    ({"max_len_a": 1.2, "max_len_b": 0}, True, None, False),
    ({"max_len_a": 1.2, "max_len_b": -1}, False, "max_len_a + max_len_b", True),
    ({"max_len_a": 0.5, "max_len_b": 0.5}, False, "max_len_b", True),
    ({"max_len_a": 1024, "max_len_b": 1024}, True, None, False),
    ({"max_len_a": 1024.5}, False, "max_len_a", False),
    ({"max_len_a": 1e308}, False, "max_len_a", True),      # int(inf): OverflowError
    ({"max_len_a": math.nan}, False, "max_len_a", True),   # int(nan): ValueError
    ({"max_len_a": -0.1, "max_len_b": 100}, False, "max_len_a", False),
    ({"max_len_b": 1025}, False, "max_len_b", False),
    ({"max_len_b": 10.0}, False, "max_len_b", True),       # argparse: invalid int value: '10.0'
    ({"beams": 5}, False, "beams", False),
]


@pytest.mark.parametrize("settings, accepted, key, fairseq_refuses", GENERATION, ids=map(str, GENERATION))
def test_generation_settings_validation_accepts_are_what_fairseq_generate_accepts(model, settings, accepted, key,
                                                                                  fairseq_refuses):
    config = {**BASE_CONFIG, "generation": settings}
    if accepted:
        full = cfg.generation_settings(settings)
        assert cfg.validate(config)["generation"] == full
        assert generate(model, full, "test") == 1 and generate(model, full, "valid") == 3
        return
    for check in (lambda: cfg.generation_settings(settings), lambda: cfg.validate(config)):
        with pytest.raises(cfg.ConfigError) as err:
            check()
        assert key in str(err.value)
    if fairseq_refuses:  # the limit is fairseq's: it fails on these settings in one of the splits
        with pytest.raises((SystemExit, Exception)):
            for split in ("test", "valid"):
                generate(model, {**DEFAULTS, **settings}, split)


def test_generation_errors_name_the_key_and_the_option():
    with pytest.raises(cfg.ConfigError, match=r"^--generation: beam: 0 is less than the minimum of 1"):
        cfg.generation_settings({"beam": 0})
    with pytest.raises(cfg.ConfigError, match=r"^config: invalid configuration\n  generation.beam: 2.0 is not of "
                                              r"type 'integer'"):
        cfg.validate({**BASE_CONFIG, "generation": {"beam": 2.0}})


# ---- experiment keys ---------------------------------------------------------------------------

TOY = {"embed_dim": 16, "heads": 2, "encoder_layers": 2, "encoder_ffn_dim": 16, "decoder_layers": 1,
       "decoder_ffn_dim": 16}
STUDY = {
    "study": "t", "directions": ["en-de", "en-fr", "de-en"],
    "models": {"base": {"type": "base", "arch": TOY},
               "concat": {"type": "concat", "init_from": "base", "arch": TOY},
               "voita_context": {"type": "voita_context", "init_from": "base", "arch": TOY},
               "caching_tokens": {"type": "caching_tokens", "init_from": "base", "arch": TOY},
               "style_token": {"type": "style_token", "init_from": "base", "arch": TOY},
               "mtcue": {"type": "mtcue", "init_from": "base", "arch": {**TOY, "context_layers": 1}}},
    "experiments": {
        "quality": {"models": ["base"]},
        "voita2018": {"directions": ["en-de", "en-fr"], "models": ["base", "concat", "voita_context"],
                      "only": {"concat": ["en-de"]}, "random_test": ["voita_context"]},
        "shortening": {"directions": ["en-de"], "models": ["base", "caching_tokens"], "context_sizes": [1, 2],
                       "only": {"caching_tokens_c2": ["en-de"]}},
        "style": {"directions": ["en-de", "en-fr"], "models": ["style_token"], "only": {"style_token": ["en-fr"]}},
        "memory_growth": {"models": {"short": "caching_tokens_c2", "concat": "concat"}, "context_sentences": 3,
                          "sentences": 1, "length": 4},
    },
}


def study(path: str, value) -> dict:
    """STUDY with experiments.`path` (dotted) set to `value`."""
    raw = copy.deepcopy(STUDY)
    *parents, last = path.split(".")
    node = raw["experiments"]
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return raw


def trained(c: dict, experiment: str) -> set[tuple[str, str]]:
    return {cell for cell, experiments in trained_models(c).items() if experiment in experiments}


def only_kept(c: dict, experiment: str, name: str, directions: list[str]) -> None:
    """The model of an `only` entry is trained in exactly those directions (none is dropped)."""
    assert {d for d, m in trained(c, experiment) if m == name} == set(directions)


def random_test_reads_random_context(c: dict) -> None:
    """translate_test_context (voita2018.smk) gives each random_test model its spec with shuffled context:
    fairseq's arguments must carry it."""
    for direction, model in VOITA2018.models(c):
        if model in c["experiments"]["voita2018"]["random_test"]:
            spec = model_spec(c, model, direction)
            spec["context"]["random"] = "shuffle"
            args = fa.task_args(spec, direction, "bin", "store")
            assert args[args.index("--random-context") + 1] == "shuffle"


def fewshot_reads_the_attribute_sentences(c: dict) -> None:
    """The EAMT22 settings give the attribute sentences (cues) as context: each few-shot fine-tuning reads them."""
    variants = [(d, m) for d, m in trained(c, "fewshot") if m in FEWSHOT.models(c)]
    assert variants
    for direction, model in variants:
        args = fa.task_args(model_spec(c, model, direction), direction, "bin", "store")
        assert "cue1" in args[args.index("--context-columns") + 1].split(","), model


def memory_plan_covers(c: dict) -> None:
    plan = MEMORY_GROWTH.plan(c)
    n = c["experiments"]["memory_growth"]["context_sentences"]
    assert all(len(models) == n for models in plan["curves"].values())


# (experiments key, value, accepted, what the error names, the consumer's check of an accepted value)
EXPERIMENTS = [
    ("voita2018.only.concat", ["en-fr"], True, None, lambda c: only_kept(c, "voita2018", "concat", ["en-fr"])),
    ("voita2018.only.concat", ["de-en"], False, "experiments.voita2018.only.concat: ['de-en'] are not directions "
     "of the experiment (experiments.voita2018.directions: ['en-de', 'en-fr'])", None),
    ("voita2018.only.concat", ["en-fr", "en-es"], False, "experiments.voita2018.only.concat: ['en-es']", None),
    ("voita2018.only.concat", [], False, "experiments.voita2018.only.concat", None),
    ("shortening.only.caching_tokens_c2", ["en-de"], True, None,
     lambda c: only_kept(c, "shortening", "caching_tokens_c2", ["en-de"])),
    ("shortening.only.caching_tokens_c2", ["en-fr"], False, "experiments.shortening.only.caching_tokens_c2: "
     "['en-fr'] are not directions of the experiment (experiments.shortening.directions: ['en-de'])", None),
    ("style.only.style_token", ["en-de", "en-fr"], True, None,
     lambda c: only_kept(c, "style", "style_token", ["en-de", "en-fr"])),
    ("style.only.style_token", ["de-en"], False, "experiments.style.only.style_token: ['de-en'] are not directions "
     "of the experiment (experiments.style.directions: ['en-de', 'en-fr'])", None),
    ("voita2018.random_test", ["voita_context", "concat"], True, None, random_test_reads_random_context),
    ("voita2018.random_test", ["base"], False, "experiments.voita2018.random_test: ['base'] read no context", None),
    ("memory_growth.context_sentences", 1024, True, None, memory_plan_covers),
    ("memory_growth.context_sentences", 1025, False, "experiments.memory_growth.context_sentences", None),
    ("memory_growth.context_sentences", 100000, False, "experiments.memory_growth.context_sentences", None),
    ("memory_growth.context_sentences", 0, False, "experiments.memory_growth.context_sentences", None),
    ("memory_growth.length", 1023, True, None, lambda c: MEMORY_GROWTH.plan(c)["batch"]["length"] == 1023),
    ("memory_growth.length", 1024, False, "experiments.memory_growth.length", None),
    ("memory_growth.length", 1, False, "experiments.memory_growth.length", None),
    ("memory_growth.sentences", 0, False, "experiments.memory_growth.sentences", None),
    ("memory_growth.sentences", 8.0, False, "experiments.memory_growth.sentences", None),
    ("shortening.context_sizes", [2, 5], True, None, lambda c: ("en-de", "caching_tokens_c5") in trained(c, "shortening")),
    ("shortening.context_sizes", [2, 6], False, "experiments.shortening.context_sizes", None),
    ("style.levels", [1, 5], True, None, lambda c: c["experiments"]["style"]["levels"] == [1, 5]),
    ("style.levels", [1, 6], False, "experiments.style.levels", None),
    ("style.levels", [2, 5], False, "experiments.style.levels", None),
    ("fewshot", {"directions": ["en-de"], "models": ["mtcue"], "settings": {"zero": 0, "one": 1}}, True, None,
     fewshot_reads_the_attribute_sentences),
    ("fewshot", {"directions": ["en-de"], "models": ["concat"], "settings": {"one": 1}}, False,
     "experiments.fewshot.models: 'concat' reads no context columns", None),
    ("fewshot", {"directions": ["en-de"], "models": ["mtcue"], "settings": {"one": -1}}, False,
     "experiments.fewshot.settings.one", None),
    ("side_information.baseline", "concat", False, "experiments.side_information.baseline", None),
    ("style.mapping", {"informal": 0, "formal": 5, "unlabelled": 3}, False, "experiments.style.mapping.informal",
     None),
    ("ablation.zeroshot.formality", "en-xx1", False, "experiments.ablation.zeroshot.formality", None),
    ("ablation.seeds", 0, False, "experiments.ablation.seeds", None),
    ("ablation.seeds", 2.0, False, "experiments.ablation.seeds", None),
    ("fewshot.seeds", 0, False, "experiments.fewshot.seeds", None),
    ("quality.models", [], False, "experiments.quality.models", None),
    ("formality.directions", ["de-en"], False, "experiments.formality.directions", None),
    ("side_information.directions", ["en-pl"], False, "experiments.side_information.directions", None),
]


@pytest.mark.parametrize("path, value, accepted, named, consumer", EXPERIMENTS,
                         ids=[f"{p}={v}" for p, v, *_ in EXPERIMENTS])
def test_experiment_keys_validation_accepts_what_the_plan_consumes(path, value, accepted, named, consumer):
    raw = study(path, value)
    if not accepted:
        with pytest.raises(cfg.ConfigError) as err:
            cfg.validate(raw)
        assert named in str(err.value)
        return
    from fairseq import options

    import mtcue.models.plugin  # noqa: F401  (registers the contextual models and tasks)

    c = cfg.validate(raw)
    for direction, model in trained_models(c):   # fairseq-train's parser takes every planned model
        spec = model_spec(c, model, direction)
        args = options.parse_args_and_arch(options.get_training_parser(), input_args=[
            *fa.task_args(spec, direction, "bin", "store"), *fa.arch_args(spec), *fa.optimisation_args(spec, False)])
        assert args.arch == fa.FAIRSEQ_ARCH[spec["type"]]
    assert consumer(c) is not False


def test_the_study_plans_the_shipped_only_entries_as_given():
    """Today's STUDY: the `only` entries keep their model, in exactly their directions."""
    c = cfg.validate(copy.deepcopy(STUDY))
    only_kept(c, "voita2018", "concat", ["en-de"])
    only_kept(c, "style", "style_token", ["en-fr"])
    only_kept(c, "shortening", "caching_tokens_c2", ["en-de"])


def test_memory_growth_limits_are_the_models_and_fairseqs():
    """context_sentences <= 1024: a shortening model reads 1024 sentences and refuses 1025 (its segment
    table); length <= 1023: forcing 1024 tokens, fairseq's SequenceGenerator refuses (the decoder's 1024
    positions less one)."""
    from fairseq.sequence_generator import SequenceGenerator

    from mtcue.models.params import DataFreeTask, build_model, dummy_batch

    arch = {"encoder_embed_dim": 8, "encoder_ffn_embed_dim": 8, "decoder_ffn_embed_dim": 8,
            "encoder_attention_heads": 1, "decoder_attention_heads": 1, "encoder_layers": 1, "decoder_layers": 1}
    task = DataFreeTask(20)
    schema = cfg.schema()["properties"]["experiments"]["properties"]["memory_growth"]["properties"]
    most = schema["context_sentences"]["maximum"]
    model = build_model("caching_tokens", {**arch, "context_sentences": most}, task).eval()
    with torch.no_grad():
        model(**dummy_batch("caching_tokens", task, 1, 2, context_sentences=most))
        with pytest.raises(ValueError, match="1025 context sentences"):
            model(**dummy_batch("caching_tokens", task, 1, 2, context_sentences=most + 1))
    base = build_model("base", arch, task).eval()
    length = schema["length"]["maximum"]
    sample = {"net_input": {"src_tokens": torch.tensor([[4, 2]]), "src_lengths": torch.tensor([2])}}
    with pytest.raises(AssertionError, match="min_len cannot be larger than max_len"):
        SequenceGenerator([base], task.target_dictionary, beam_size=1, max_len_a=0, max_len_b=length + 1,
                          min_len=length + 1).generate([base], sample)


# ---- command-line options ----------------------------------------------------------------------

def _options(*names: str):
    """(step, option) for every step of `mtcue` that has one of `names`."""
    from mtcue.cli import _parser

    steps = next(a for a in _parser()._actions if a.dest == "step").choices
    return [(step, option) for step, sub in steps.items() for action in sub._actions
            for option in action.option_strings if option in names]


COUNTS = _options("--batch-size", "--bootstrap-samples")


def test_every_count_option_is_found():
    assert len({s for s, o in COUNTS if o == "--bootstrap-samples"}) >= 6
    assert len({s for s, o in COUNTS if o == "--batch-size"}) >= 5


@pytest.mark.parametrize("step, option", COUNTS)
def test_a_count_of_zero_is_refused_naming_the_option(step, option, capsys):
    from mtcue.cli import _parser

    sub = next(a for a in _parser()._actions if a.dest == "step").choices[step]
    required = [a for a in sub._actions if a.required and a.option_strings]
    args = [x for a in required for x in (a.option_strings[0], "x")]
    assert getattr(sub.parse_args([*args, option, "1"]), option.lstrip("-").replace("-", "_")) == 1
    with pytest.raises(SystemExit):
        sub.parse_args([*args, option, "0"])
    assert f"argument {option}: '0' is not a whole number of at least 1" in capsys.readouterr().err


ALPHAS = _options("--alpha")


@pytest.mark.parametrize("step, option", ALPHAS)
@pytest.mark.parametrize("value", ["0", "1", "-0.05", "five"])
def test_an_alpha_outside_the_schemas_range_is_refused_naming_the_option(step, option, value, capsys):
    from mtcue.cli import _parser

    sub = next(a for a in _parser()._actions if a.dest == "step").choices[step]
    required = [a for a in sub._actions if a.required and a.option_strings]
    args = [x for a in required for x in (a.option_strings[0], "x")]
    assert getattr(sub.parse_args([*args, option, "0.01"]), "alpha") == 0.01
    with pytest.raises(SystemExit):
        sub.parse_args([*args, option, value])
    assert f"argument {option}: '{value}' is not a significance level (0 < alpha <= 0.5" in capsys.readouterr().err
    assert len({s for s, _o in ALPHAS}) >= 5

def test_the_bootstrap_needs_a_resample():
    """What --bootstrap-samples 0 gave: no resample, a p-value of NaN; one resample gives a p-value."""
    from mtcue.evaluation.score import paired_bootstrap

    stats = [[3, 4, 2, 1, 2, 1, 0, 0, 0, 0, 5, 5, 5]] * 4  # not the layout of BLEU's statistics: any numbers
    score = lambda s: float(s[0])  # noqa: E731
    assert paired_bootstrap(stats, stats, score, n=1)["p_value"] == 1.0
    with pytest.warns(RuntimeWarning):
        assert math.isnan(paired_bootstrap(stats, stats, score, n=0)["p_value"])
