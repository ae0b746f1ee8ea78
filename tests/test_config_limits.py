"""What the config loader and schema refuse before anything runs (issue 43): keys that are not text, aliases
that expand without end, values beyond sensible bounds, and values fairseq or numpy would refuse deep inside a
step; each refusal names the file and line, or the key path."""
import time

import numpy as np
import pytest

from conftest import REPO
from mtcue import config as cfg
from mtcue.yaml_loader import MAX_YAML_VALUES, ConfigLoader, expanded_size

BASE = {"study": "t", "directions": ["en-de"], "models": {"base": {"type": "base"}}}
HEAD = "study: t\ndirections: [en-de]\nmodels: {base: {type: base}}\n"


def refused(raw: dict) -> str:
    with pytest.raises(cfg.ConfigError) as err:
        cfg.validate(raw)
    return str(err.value)


# ---- keys that are not text ------------------------------------------------------------------------

def test_an_integer_key_in_a_config_file_is_refused_with_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + 'experiments:\n  fewshot:\n    settings: {zero_shot: 0, 1: 1, "1": 5}\n')
    with pytest.raises(cfg.ConfigError, match=rf"^{path}:6: key 1 is not text \(YAML reads it as int\); write it "
                                              r"in quotes"):
        cfg.load(path)


@pytest.mark.parametrize("key, kind", [("on", "bool"), ("~", "NoneType"), ("1.5", "float")])
def test_other_keys_yaml_reads_as_no_text_are_refused(tmp_path, key, kind):
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + f"context:\n  encoder_per_direction: {{{key}: x}}\n")
    with pytest.raises(cfg.ConfigError, match=rf":5: key .* \(YAML reads it as {kind}\)"):
        cfg.read_yaml(path)


def test_a_name_key_that_is_not_text_is_refused_from_any_source():
    """A config built in code (the rehearsal's merge, Snakemake's --config) never passes the YAML loader."""
    message = refused({**BASE, "experiments": {"fewshot": {"settings": {"zero_shot": 0, 1: 1, "1": 5}}}})
    assert "experiments.fewshot.settings: 1 is not of type 'string'" in message
    assert "models: 7 is not of type 'string'" in refused({**BASE, "models": {7: {"type": "base"}}})


# ---- aliases -----------------------------------------------------------------------------------------

def alias_bomb(levels: int = 9) -> str:
    """Anchors of nine aliases of the one before, under corpus.splits.heldout: 9^levels values."""
    items = ["&a0 [" + ", ".join(["u"] * 9) + "]"]
    items += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return HEAD + "corpus:\n  splits:\n    heldout:\n      en-de: [" + ", ".join(items) + "]\n"


def test_an_alias_bomb_is_refused_at_once_naming_the_file(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())
    assert len(path.read_bytes()) < 700
    start = time.monotonic()
    with pytest.raises(cfg.ConfigError, match=rf"^{path}: its aliases \(\*name\) expand to more than 100,000 values"):
        cfg.load(path)
    assert time.monotonic() - start < 2


def test_a_recursive_alias_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text(HEAD + "corpus: &loop {splits: {heldout: {en-de: [*loop]}}}\n")
    with pytest.raises(cfg.ConfigError, match="expand to more than"):
        cfg.read_yaml(path)


def test_the_shipped_configs_expand_far_below_the_limit():
    sizes = {}
    for name in ("config.yaml", "paper.yaml", "rehearsal.yaml", "tiny.yaml"):
        loader = ConfigLoader((REPO / "config" / name).read_text(encoding="utf-8"))
        sizes[name] = expanded_size(loader.get_single_node(), {})
        loader.dispose()
    assert 1_000 < max(sizes.values()) < MAX_YAML_VALUES / 20, sizes
    # aliases count each time they are used: 4 levels of 9 are 9 + 81 + 729 + 6561 values beside the file's own
    assert expanded_size(ConfigLoader(alias_bomb(4)).get_single_node(), {}) > 9 ** 4


# ---- bounds ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, key", [
    ({"context": {"max_cues": 100_000_000}}, "context.max_cues: 100000000 is greater than the maximum of 16"),
    ({"seed": -1}, "seed: -1 is less than the minimum of 0"),
    ({"seed": 10 ** 23}, "seed: 100000000000000000000000 is greater than the maximum of 2147483647"),
    ({"corpus": {"seed": -5}}, "corpus.seed: -5 is less than the minimum of 0"),
    ({"experiments": {"ablation": {"seeds": 10_000}}}, "experiments.ablation.seeds: 10000 is greater than the "
                                                       "maximum of 100"),
    ({"experiments": {"fewshot": {"seeds": 101}}}, "experiments.fewshot.seeds: 101 is greater than the maximum"),
    ({"generation": {"beam": 1000}}, "generation.beam: 1000 is greater than the maximum of 100"),
    ({"training": {"max_tokens": 1}}, "training.max_tokens: 1 is less than the minimum of 64"),
    ({"models": {"base": {"type": "base", "training": {"max_tokens": 63}}}},
     "models.base.training.max_tokens: 63 is less than the minimum of 64"),
    ({"evaluation": {"bootstrap": {"samples": 10 ** 9}}}, "evaluation.bootstrap.samples: 1000000000 is greater"),
    ({"experiments": {"memory_growth": {"sentences": 513}}}, "experiments.memory_growth.sentences: 513 is greater"),
])
def test_values_beyond_the_bounds_are_refused_naming_the_key(raw, key):
    assert key in refused({**BASE, **raw})


def test_values_at_the_bounds_pass():
    config = cfg.validate({**BASE, "seed": 2 ** 31 - 1, "corpus": {"seed": 0}, "context": {"max_cues": 16},
                           "training": {"max_tokens": 64}, "generation": {"beam": 100},
                           "experiments": {"ablation": {"seeds": 100}}})
    assert (config["seed"], config["context"]["max_cues"], config["experiments"]["ablation"]["seeds"]) == \
        (2 ** 31 - 1, 16, 100)
    assert config["experiments"]["fewshot"]["seeds"] == 1  # the default through the shared definition
    # numpy (fairseq's seeding) takes the largest seed plus the seeded runs, and refuses what is refused here
    np.random.seed(2 ** 31 - 1 + 99)
    for seed in (-1, 2 ** 32):
        with pytest.raises(ValueError):
            np.random.seed(seed)


def test_heads_must_divide_the_width_as_fairseq_asserts():
    from fairseq.modules import MultiheadAttention

    message = refused({**BASE, "models": {"base": {"type": "base", "arch": {"embed_dim": 10, "heads": 3}}}})
    assert "models.base.arch: embed_dim 10 must be a multiple of heads (3)" in message
    with pytest.raises(AssertionError, match="divisible by num_heads"):
        MultiheadAttention(10, 3)
    MultiheadAttention(12, 3)
    cfg.validate({**BASE, "models": {"base": {"type": "base", "arch": {"embed_dim": 12, "heads": 3}}}})


# ---- what Snakemake would run or never finish reading: refused by `mtcue check-config` before it ------------

def test_a_yte_config_runs_nothing_in_the_check_that_goes_before_snakemake(tmp_path, monkeypatch, caplog):
    from yte import process_yaml

    from mtcue.cli import main

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "yte.yaml"
    path.write_text(HEAD + "__use_yte__: true\nseed: ?__import__('pathlib').Path('RAN').write_text('ran')\n")
    assert main(["check-config", str(path)]) == 1
    assert f"check-config failed: {path}:4: __use_yte__ makes the file a YTE template, whose Python Snakemake runs " \
           "as it reads the file" in caplog.text
    assert not (tmp_path / "RAN").exists()
    with pytest.raises(cfg.ConfigError, match=rf"^{path}:4: __use_yte__"):  # and in every loader of the project
        cfg.load(path)
    assert not (tmp_path / "RAN").exists()
    process_yaml(path.read_text())  # the control: what Snakemake does with the file runs its Python
    assert (tmp_path / "RAN").read_text() == "ran"


def test_the_check_refuses_an_alias_bomb_and_deep_nesting_at_once_and_passes_the_shipped_configs(tmp_path, caplog):
    from mtcue.cli import main

    bomb, deep = tmp_path / "bomb.yaml", tmp_path / "deep.yaml"
    bomb.write_text(alias_bomb())
    deep.write_text(HEAD + "corpus: " + "[" * 20_000 + "]" * 20_000 + "\n")
    start = time.monotonic()
    assert main(["check-config", str(REPO / "config" / "config.yaml"), str(bomb)]) == 1
    assert main(["check-config", str(deep)]) == 1
    assert time.monotonic() - start < 5
    assert f"{bomb}: its aliases (*name) expand to more than 100,000 values" in caplog.text
    assert f"{deep}: nested too deeply to read (thousands of levels)" in caplog.text
    caplog.clear()
    caplog.set_level("INFO")
    assert main(["check-config", str(REPO / "config" / "paper.yaml")]) == 0
    assert "config/paper.yaml: study 'paper'" in caplog.text


def test_the_rehearsal_reads_a_yte_study_with_the_check_and_runs_nothing(tmp_path, monkeypatch):
    from mtcue.rehearsal.run import rehearse

    monkeypatch.chdir(tmp_path)
    study = tmp_path / "study.yaml"
    study.write_text(HEAD + "__use_yte__: true\nseed: ?__import__('pathlib').Path('RAN').write_text('ran')\n")
    with pytest.raises(cfg.ConfigError, match=rf"^{study}:4: __use_yte__ makes the file a YTE template"):
        rehearse(REPO, tmp_path / "out", study, REPO / "config" / "rehearsal.yaml")
    assert not (tmp_path / "RAN").exists() and not (tmp_path / "out" / "sources").exists()
