"""What a paper run costs (docs/paper-scale.md): GPU hours per experiment from the paper's Table 3."""
import dataclasses

import pytest
import yaml

from conftest import REPO
from mtcue import config as cfgmod
from mtcue import study
from mtcue.plan import gpu_hours
from mtcue.study import ConfigError

PROFILE = yaml.safe_load((REPO / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())


@pytest.fixture(scope="module")
def paper():
    return cfgmod.load(REPO / "config" / "paper.yaml")


def test_table3_anchors_are_the_papers():
    assert gpu_hours.table3() == {"tagging": {"gpu_h_per_epoch": 0.74, "epochs_to_best": 6.13},
                                  "novotney_cue": {"gpu_h_per_epoch": 1.29, "epochs_to_best": 9.13},
                                  "mtcue": {"gpu_h_per_epoch": 0.81, "epochs_to_best": 9.38}}


def test_a_training_costs_its_hours_per_epoch_times_its_epochs(paper):
    """Hand-computed at d = 512, FFN 2048, 6 + 6 layers, 32,000 pieces: a layer's weights 4 d^2 + 2 d FFN =
    3,145,728; BASE 6 x 3,145,728 + 6 x (3,145,728 + 4 d^2) + 512 x 32,000 = 60,424,192; MTCUE adds its
    context encoder (6 x 3,145,728) and context attention (6 x 4 d^2): 85,590,016."""
    spec = lambda m: gpu_hours.model_spec(paper, m, "en-de")
    assert gpu_hours.train_weights(spec("base"), 32000) == 60_424_192
    assert gpu_hours.train_weights(spec("mtcue"), 32000) == 85_590_016
    # CONCAT: the source encoder once more for its one context sentence
    assert gpu_hours.train_weights(spec("concat"), 32000) == 60_424_192 + 6 * 3_145_728
    mtcue = gpu_hours.training_cost(paper, "mtcue", "en-de")  # fine-tuned: Table 3's 9.38 epochs + patience 5
    assert (mtcue["source"], mtcue["epochs"], mtcue["from_scratch"]) == ("table3", 14.38, False)
    assert mtcue["gpu_h"] == pytest.approx(0.81 * 14.38) and mtcue["gpu_h_max"] == pytest.approx(0.81 * 100)
    base = gpu_hours.training_cost(paper, "base", "en-de")  # from scratch: its 75 epochs, scaled from MTCUE
    assert base["source"] == "scaled" and base["from_scratch"] and base["epochs"] == 75
    assert base["gpu_h_per_epoch"] == pytest.approx(0.81 * 60_424_192 / 85_590_016)
    style = gpu_hours.training_cost(paper, "style_token", "en-de")  # 9.38 + 10 patience, cut at max_epoch 10
    assert style["epochs"] == 10
    # its batches of 16 sentences: Table 1's mean 11.325 M sentences / 16 x 0.02 s, not its weights' 0.57 GPU-h
    assert style["gpu_h_per_epoch"] == pytest.approx(11.325e6 / 16 * 0.02 / 3600)


def test_the_study_counts_every_training_once_and_each_experiments(paper):
    hours = gpu_hours.study_gpu_hours(paper)
    rows = {r["experiment"]: r for r in hours["rows"]}
    assert hours["total"]["trainings"] == len(gpu_hours.trained_models(paper)) == 249
    # side information: 8 directions x (si_base + 11 grid points and variants + TAGGING, MTCUE) = 112
    assert rows["side_information"]["trainings"] == 8 * 14 and rows["style"]["trainings"] == 14
    assert rows["shortening"]["from_scratch"] == 2 * 8 * 3 + 2  # the family at 3 sizes, and BASE in en-de, en-fr
    assert hours["total"]["gpu_h"] == pytest.approx(sum(c["gpu_h"] for c in hours["per_training"].values()))
    assert hours["total"]["gpu_h"] < sum(r["gpu_h"] for r in hours["rows"])  # shared trainings counted once
    ratios = gpu_hours.anchor_ratios(paper)
    assert ratios["novotney_cue/mtcue"]["paper"] == pytest.approx(1.29 / 0.81)
    # the weights' ratios lie in bench-train-cost's measured ranges (docs/benchmarks.md), not at the paper's
    assert 0.85 <= ratios["mtcue/tagging"]["weights"] <= 1.00 and 0.92 <= ratios["novotney_cue/mtcue"]["weights"] <= 0.95


def test_the_docs_table_is_the_generated_one(paper):
    assert gpu_hours.gpu_hours_markdown(paper) in (REPO / "docs" / "paper-scale.md").read_text()


def two_models(tmp_path) -> dict:
    """BASE and MTCUE fine-tuned from it, at d = 10, FFN 20, one layer each, 1,000 pieces."""
    arch = {"embed_dim": 10, "heads": 2, "encoder_layers": 1, "encoder_ffn_dim": 20, "decoder_layers": 1,
            "decoder_ffn_dim": 20}
    training = {"max_epoch": 40, "patience": 5}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({
        "study": "hand", "directions": ["en-de"], "spm": {"vocab_size": 1000},
        "models": {"base": {"type": "base", "arch": arch, "training": training},
                   "mtcue": {"type": "mtcue", "init_from": "base", "training": training,
                             "arch": {**arch, "context_layers": 1, "context_ffn_dim": 20}}},
        "experiments": {"quality": {"models": ["base", "mtcue"]}}}))
    return cfgmod.load(tmp_path / "c.yaml")


def test_a_two_model_study_by_hand(tmp_path):
    """d = 10, FFN 20, one layer each, 1,000 pieces: a layer 4 d^2 + 2 d FFN = 800; BASE 800 + (800 + 4 d^2)
    + 10 x 1,000 = 12,000 weights, MTCUE + 800 (context encoder) + 400 (context attention) = 13,200. MTCUE
    (Table 3): 0.81 GPU-h per epoch x (9.38 + patience 5) = 11.6478 expected, x 40 = 32.4 at most; BASE from
    scratch: 0.81 x 12,000 / 13,200 = 0.7364 per epoch x 40 epochs = 29.4545. Formality reads every quality
    model (its default), so its row is quality's."""
    cfg = two_models(tmp_path)
    cost = gpu_hours.study_gpu_hours(cfg)["per_training"]
    assert cost[("en-de", "base")]["gpu_h"] == pytest.approx(29.4545, abs=1e-4)
    assert (cost[("en-de", "mtcue")]["gpu_h"], cost[("en-de", "mtcue")]["gpu_h_max"]) == pytest.approx((11.6478, 32.4))
    assert gpu_hours.gpu_hours_markdown(cfg) == """\
| experiment | trainings | of them from scratch | GPU-h, expected | GPU-h, at most (max_epoch) |
| --- | ---: | ---: | ---: | ---: |
| Tables 3-4 (quality) | 2 | 1 | 41 | 62 |
| Table 5 (IWSLT22 formality) | 2 | 1 | 41 | 62 |
| **every training once** | **2** | **1** | **41** | **62** |

- Dearest single training, expected: base (en-de), 0.74 GPU-h per epoch, 29.5 GPU-h expected (40 epochs), 29.5 at most (40 epochs).
- Dearest single training, at most: mtcue (en-de), 0.81 GPU-h per epoch, 11.6 GPU-h expected (14.38 epochs), 32.4 at most (40 epochs).
"""


@pytest.mark.parametrize("attention, weights, gpu_h", [(True, 13_200, 11.6478), (False, 12_800, 11.2948)])
def test_a_new_family_is_priced_by_its_types_context_attention(tmp_path, monkeypatch, attention, weights, gpu_h):
    """A type of a new family with MTCUE's context encoder, fine-tuned from BASE at the sizes above: with MTCUE's
    context attention (`ModelType.context_attention`) it has MTCUE's 13,200 weights, so MTCUE's 0.81 GPU-h per
    epoch x 14.38 epochs = 11.6478 GPU-h; without it 12,800 weights (no 4 d^2 = 400 of attention), 0.81 x 12,800
    / 13,200 = 0.78545 per epoch, 11.2948 GPU-h. The price follows the type's row, not its name."""
    monkeypatch.setitem(study.MODEL_TYPES, "probe",
                        dataclasses.replace(study.MODEL_TYPES["mtcue"], family="probe", context_attention=attention))
    monkeypatch.setitem(study.CONTEXT_KIND, "probe", "vectors")
    cfg = two_models(tmp_path)
    cfg["models"]["probe"] = {**cfg["models"]["mtcue"], "type": "probe"}
    assert gpu_hours.train_weights(gpu_hours.model_spec(cfg, "probe", "en-de"), 1000) == weights
    cost = gpu_hours.training_cost(cfg, "probe", "en-de")
    assert (cost["source"], cost["epochs"]) == ("scaled", 14.38)
    assert (cost["gpu_h_per_epoch"], cost["gpu_h"]) == pytest.approx((0.81 * weights / 13_200, gpu_h), abs=1e-4)


def test_the_calendar_of_a_chain_on_two_gpus_by_hand():
    """BASE (10 h) alone on 2 GPUs, then its three fine-tunings (4 h each) on 2: MTCUE and NOVOTNEY-CUE
    (first by name) at 10-14 h, TAGGING at 14-18 h. 18 h, above the critical path (14 h) and the GPU-hours
    over the GPUs (22 / 2 = 11 h); on 1 GPU 22 h, on 4 the critical path."""
    hours = {"base": 10.0, "mtcue": 4.0, "novotney_cue": 4.0, "tagging": 4.0}
    cal = gpu_hours.calendar(hours, {"mtcue": "base", "novotney_cue": "base", "tagging": "base"}, (1, 2, 4))
    assert cal == {"gpu_h": 22.0, "critical_path_h": 14.0, "chain": ["base", "mtcue"],
                   "wall_h": {1: 22.0, 2: 18.0, 4: 14.0}}


def test_the_calendar_counts_evaluations_and_the_jobs_at_once_by_hand():
    """The chain above with each model's evaluation (1 h, after its training) and at most 2 jobs at once: on 4
    GPUs as on 2. BASE 0-10 h; MTCUE and NOVOTNEY-CUE (the longest rest first) 10-14 h; TAGGING 14-18 h beside the
    evaluations of BASE, MTCUE and NOVOTNEY-CUE (14-17 h); TAGGING's 18-19 h. Without the cap, 4 GPUs finish at the
    critical path, BASE -> MTCUE -> its evaluation (15 h)."""
    hours = {"base": 10.0, "mtcue": 4.0, "novotney_cue": 4.0, "tagging": 4.0}
    parents = {"mtcue": "base", "novotney_cue": "base", "tagging": "base"}
    hours |= {f"eval {m}": 1.0 for m in list(hours)}
    parents |= {f"eval {m}": m for m in ("base", "mtcue", "novotney_cue", "tagging")}
    cal = gpu_hours.calendar(hours, parents, (2, 4), jobs=2)
    assert (cal["gpu_h"], cal["critical_path_h"], cal["chain"]) == (26.0, 15.0, ["base", "mtcue", "eval mtcue"])
    assert cal["wall_h"] == {2: 19.0, 4: 19.0}
    assert gpu_hours.calendar(hours, parents, (4,))["wall_h"] == {4: 15.0}


def test_the_study_calendar_schedules_every_training_after_its_parent(paper):
    cal = gpu_hours.study_calendar(paper, (8, 64))
    hours = gpu_hours.study_gpu_hours(paper)["total"]
    for column in ("gpu_h", "gpu_h_max"):
        c = cal[column]
        assert c["gpu_h"] == pytest.approx(hours[column])
        for g in (8, 64):  # no schedule beats the critical path or the GPU-hours spread over every GPU
            assert c["wall_h"][g] >= max(c["critical_path_h"], c["gpu_h"] / g) - 1e-9
    # expected, the dearest single training is longer than any chain; at most, a chain of parents is
    every = gpu_hours.study_gpu_hours(paper)
    assert cal["gpu_h"]["chain"] == ["caching_sentence_c3 (en-de)"]
    assert cal["gpu_h"]["critical_path_h"] == pytest.approx(every["longest"]["gpu_h"])
    chain = [("en-pl", "base_pm"), ("en-pl", "tagging"), ("en-pl", "tagging_fewshot_1")]
    assert cal["gpu_h_max"]["chain"] == [f"{m} ({d})" for d, m in chain]
    assert cal["gpu_h_max"]["critical_path_h"] == pytest.approx(sum(every["per_training"][k]["gpu_h_max"] for k in chain))


def test_the_docs_calendar_is_the_generated_one(paper, capsys):
    from mtcue.cli import main

    from mtcue.plan.evaluation import evaluations
    from mtcue.plan.resources import evaluation_hours

    assert main(["gpu-hours", "--config", str(REPO / "config" / "paper.yaml"), "--gpus", "8", "16", "32", "64"]) == 0
    printed = capsys.readouterr().out
    # every training's evaluation job after it, and the profile's 32 jobs at once
    steps = evaluations(paper)
    evaluation = {(d, m): evaluation_hours(paper, steps.get((d, m)), m, d) for d, m in gpu_hours.trained_models(paper)}
    calendar = gpu_hours.calendar_markdown(paper, (8, 16, 32, 64), evaluation, PROFILE["jobs"])
    assert printed == gpu_hours.gpu_hours_markdown(paper) + "\n" + calendar
    assert calendar in (REPO / "docs" / "paper-scale.md").read_text()
    # 32 jobs at once: 64 GPUs finish no sooner than 32
    assert "| 32 | 10.4 days (251 h) | 99% |" in calendar and "| 64 | 10.4 days (251 h) | 49% |" in calendar


def test_one_tables_cost_is_its_experiments_trainings_and_their_parents(paper):
    """Table 4 costs its experiment's row of the study table (the five models in eight directions, BASE and
    BASE-PM among them: no parent from elsewhere); Figure 4's few-shot variants start from TAGGING and MTCUE,
    which start from BASE-PM and BASE: parents its own row does not count."""
    rows = {r["experiment"]: r for r in gpu_hours.study_gpu_hours(paper)["rows"]}
    assert gpu_hours.target_trainings(paper, ["table4_quality"]) == \
        gpu_hours.target_trainings(paper, ["results/tables/table4_quality.csv"]) == \
        gpu_hours.target_trainings(paper, ["quality"])
    lines = gpu_hours.target_markdown(paper, ["table4_quality"]).splitlines()
    assert lines[2] == (f"| table4_quality | {rows['quality']['trainings']} | 0 | {rows['quality']['gpu_h']:,.0f} "
                        f"| {rows['quality']['gpu_h_max']:,.0f} |") == "| table4_quality | 40 | 0 | 1,182 | 3,149 |"
    assert lines[3] == "| the whole study | 249 | | 7,895 | 13,400 |"
    fewshot = gpu_hours.target_trainings(paper, ["figure4_eamt22_fewshot"])
    assert len(fewshot) > rows["fewshot"]["trainings"] and ("en-pl", "base_pm") in fewshot
    both = gpu_hours.target_trainings(paper, ["table4_quality", "table6_ablation"])
    assert set(both) == set(gpu_hours.target_trainings(paper, ["table4_quality"])) | \
        set(gpu_hours.target_trainings(paper, ["table6_ablation"]))
    with pytest.raises(ConfigError, match=r"--target table9: .*table4_quality"):
        gpu_hours.target_trainings(paper, ["table9"])


def test_the_docs_one_table_cost_is_the_generated_one(paper, capsys):
    from mtcue.cli import main
    from mtcue.plan.evaluation import evaluations
    from mtcue.plan.resources import evaluation_hours

    assert main(["gpu-hours", "--config", str(REPO / "config" / "paper.yaml"), "--target", "table4_quality",
                 "--gpus", "8", "16", "32", "64"]) == 0
    printed = capsys.readouterr().out
    table = gpu_hours.target_markdown(paper, ["table4_quality"])
    trained = gpu_hours.target_trainings(paper, ["table4_quality"])
    steps = evaluations(paper)  # each training's evaluation job after it
    evaluation = {(d, m): evaluation_hours(paper, steps.get((d, m)), m, d) for d, m in trained}
    calendar = gpu_hours.calendar_markdown(paper, (8, 16, 32, 64), evaluation, PROFILE["jobs"], ["table4_quality"])
    assert printed == table + "\n" + calendar
    assert table + "\n" + calendar in (REPO / "docs" / "paper-scale.md").read_text()
    # the calendar of Table 4 alone: its critical path is BASE-PM then TAGGING and its evaluation (en-de's, which
    # Table 5 and the contrastive suite add to), not the study's shortening runs
    assert ("- Critical path, expected: 3.1 days (75 h), base_pm (en-de) -> tagging (en-de) -> evaluation of tagging "
            "(en-de)") in calendar
