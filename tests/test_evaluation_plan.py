"""Each trained model's evaluation from the registered experiments (plan.evaluation): what one `mtcue evaluate`
job of a model writes, and the profiles of models that write the same files."""
from collections import Counter

import pytest

from conftest import REPO
from mtcue import config as cfgmod
from mtcue.data import sources
from mtcue.plan import evaluation as ev


def load(name):
    path = REPO / "config" / name
    return cfgmod.validate(cfgmod.read_yaml(path), source=str(path), checks=[sources.check_urls])


@pytest.fixture(scope="module")
def demo():
    return ev.evaluations(load("config.yaml"))


def test_hand_computed_evaluations_of_the_demo(demo):
    # en-de BASE: Table 4 (test: BLEU, COMET), Table 6 (valid: BLEU, COMET, IWSLT22 zero-shot), Table 5's prompts
    # (none: BASE reads no context, translated once) chosen on the validation set, context usage, the synthetic suite
    assert demo["en-de", "base"] == ev.Evaluation(
        translations=((None, "test"), (None, "valid"), ("formality", None), ("formality_valid", None)),
        records=(("comet", "test"), ("comet", "valid"), ("context_usage", "test"), ("contrastive", "synthetic"),
                 ("formality", None), ("formality", "valid"), ("score", "test"), ("score", "valid")))
    # a de-en model: no contrastive suite (en->xx only), no formality
    assert demo["de-en", "base"] == ev.Evaluation(((None, "test"),),
                                                  (("comet", "test"), ("context_usage", "test"), ("score", "test")))
    # VOITA-CONTEXT: Voita et al.'s random context at test time and its attention (Table 7); no COMET (not Table 4's)
    assert demo["en-de", "voita_context"] == ev.Evaluation(
        ((None, "test"), ("random_context", "test")),
        (("attention", None), ("context_usage", "test"), ("contrastive", "synthetic"), ("score", "test"),
         ("score_random_context", "test")))
    # a few-shot repeat: its EAMT22 score only, from its own translation with the attribute sentences
    assert demo["en-pl", "mtcue_fewshot_1_seed2"] == ev.Evaluation((("eamt22", "test"),), (("eamt22", "test"),))
    # en-pl BASE reads no context: EAMT22 scores its ordinary translation of the test split
    assert demo["en-pl", "base"].translations == ((None, "test"),)
    # the shortening figure's groupings (a figure's record, not a table's)
    assert ("groupings", None) in demo["en-de", "grouping_c1"].records
    assert demo["en-de", "base"].outputs("{direction}", "{model}")[:3] == [
        "results/hyps/{direction}/{model}.test.txt", "results/hyps/{direction}/{model}.valid.txt",
        "results/hyps/formality/{direction}/{model}"]
    assert demo["en-de", "base"].folders("en-de", "base") == {"results/hyps/formality/en-de/base",
                                                              "results/hyps/formality_valid/en-de/base"}


# The rule that wrote a record of a kind (and what it is of) before evaluation was one job per model.
RECORD_RULES = {"contrastive": "score_contrastive", "attention": "attention_agreement", "eamt22": "eamt22_score",
                "style": "style_score"}


def record_rule(kind, of):
    if kind == "formality":
        return "formality_score_valid" if of == "valid" else "formality_score"
    return "score_test_context" if kind.startswith("score_") else RECORD_RULES.get(kind, kind)


def count_steps(evaluations):
    """The evaluation jobs per rule that one job per model replaces (the rules' names, as the plan before)."""
    count = Counter()
    for evaluation in evaluations.values():
        for setting, _split in evaluation.translations:
            count["translate" if setting is None else "translate_test_context" if setting in ev.TEST_CONTEXT
                  else f"{setting}_translate"] += 1
        count.update(record_rule(kind, of) for kind, of in evaluation.records)
    return dict(count)


@pytest.mark.parametrize("name, models, profiles, jobs", [
    # the jobs per rule of `snakemake -n` before evaluation was one job per model (b5f9196)
    ("config.yaml", 136, 25, {"translate": 106, "translate_test_context": 7, "eamt22_translate": 26,
                              "formality_translate": 10, "formality_valid_translate": 27, "style_translate": 8,
                              "score": 106, "score_test_context": 7, "comet": 62, "context_usage": 80,
                              "score_contrastive": 72, "formality_score": 10, "formality_score_valid": 22,
                              "eamt22_score": 27, "style_score": 8, "attention_agreement": 3, "groupings": 2}),
    ("paper.yaml", 249, 41, {"translate": 291, "translate_test_context": 43, "eamt22_translate": 27,
                             "formality_translate": 10, "formality_valid_translate": 12, "style_translate": 14,
                             "score": 291, "score_test_context": 43, "comet": 70, "context_usage": 205,
                             "score_contrastive": 188, "formality_score": 10, "formality_score_valid": 10,
                             "eamt22_score": 27, "style_score": 14, "groupings": 2}),
])
def test_the_evaluations_are_the_separate_steps_of_the_plan_before(name, models, profiles, jobs):
    cfg = load(name)
    evaluations = ev.evaluations(cfg)
    assert len(evaluations) == models and count_steps(evaluations) == jobs
    grouped = ev.profiles(cfg)
    assert len(grouped) == profiles
    assert sorted(run for runs in grouped.values() for run in runs) == sorted(evaluations)
    sizes = [len(runs) for runs in grouped.values()]
    assert sizes == sorted(sizes, reverse=True)
