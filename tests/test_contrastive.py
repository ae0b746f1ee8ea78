"""Contrastive verdicts and accuracies (mtcue.evaluation.contrastive) against hand-set scores and against
ContraPro's own scorer's logic."""
import json
from collections import defaultdict
from operator import gt

import pytest

from mtcue.corpus import META_FIELDS
from mtcue.evaluation.contrastive import evaluate
from mtcue.suites import contrapro_distance, read_suite

# ContraPro-style examples: (src pronoun, ref pronoun, ante distance, [(log-prob sum, tokens) of the reference,
# then of each error]).
CONTRAPRO = [
    ("it", "sie", 0, [(-1.0, 2), (-2.0, 2), (-3.0, 2)]),   # right
    ("it", "er", 1, [(-2.0, 4), (-1.5, 2), (-3.0, 3)]),    # wrong by sum; right by mean (-0.5 > -0.75)
    ("It", "es", 5, [(-1.0, 2), (-1.0, 2), (-4.0, 2)]),    # tie: wrong
    ("it", "sie", 2, [(-3.0, 3), (-3.5, 3), (-3.1, 3)]),   # right
    ("it", "er", 4, [(-2.0, 2), (-2.5, 2), (-2.1, 2)]),    # right
]


def _examples():
    return [{"id": f"c{i}", "doc_id": "d", "text": {"en": "x"}, "previous": {"en": []}, "meta": {},
             "candidates": ["ref", "err1", "err2"], "correct": 0,
             "group": {"category": f"{src.lower()}:{ref.lower()}", "distance": contrapro_distance(dist)}}
            for i, (src, ref, dist, _) in enumerate(CONTRAPRO)]


def _contrapro_count_errors(scores_in_file_order):
    """ContraPro's evaluate.py count_errors (--maximize: log-probabilities), transcribed: the reference's score,
    then each error's; correct when the reference is better (gt) than every error."""
    scores = iter(scores_in_file_order)
    by_category = defaultdict(lambda: defaultdict(int))
    by_distance = defaultdict(lambda: defaultdict(int))
    for src, ref, dist, cands in CONTRAPRO:
        score = next(scores)
        category = src.lower() + ":" + ref.lower()
        ante = ">3" if dist > 3 else dist
        by_category[category]["total"] += 1
        by_distance[str(ante)]["total"] += 1
        all_better = True
        for _ in cands[1:]:
            if not gt(score, next(scores)):
                all_better = False
        if all_better:
            by_category[category]["correct"] += 1
            by_distance[str(ante)]["correct"] += 1
    return by_category, by_distance


def test_contrapro_scorer_agrees():
    result = evaluate(_examples(), [c for *_, c in CONTRAPRO])
    by_category, by_distance = _contrapro_count_errors([s for *_, c in CONTRAPRO for s, _ in c])
    assert [r["right"] for r in result["examples"]] == [True, False, False, True, True]
    for ours, theirs in (("category", by_category), ("distance", by_distance)):
        assert set(result["groups"][ours]) == set(theirs)
        for value, counts in theirs.items():
            assert result["groups"][ours][value]["n"] == counts["total"]
            assert result["groups"][ours][value]["accuracy"] == counts["correct"] / counts["total"]
    assert sum(c["correct"] for c in by_category.values()) / 5 == result["accuracy"]


def test_hand_counted():
    result = evaluate(_examples(), [c for *_, c in CONTRAPRO])
    assert (result["accuracy"], result["n"], result["ties"]) == (0.6, 5, 1)
    # per-token mean: example 2 turns right (-2/4 = -0.5 beats -1.5/2 = -0.75)
    assert result["mean"] == {"accuracy": 0.8, "ties": 1}
    assert result["groups"]["distance"][">3"] == {"accuracy": 0.5, "n": 2, "ties": 1,
                                                  "mean": {"accuracy": 0.5, "ties": 1}}
    assert result["groups"]["category"]["it:er"]["accuracy"] == 0.5
    assert result["groups"]["category"]["it:er"]["mean"]["accuracy"] == 1.0


def test_correct_not_first_and_ties_with_lower_candidates():
    ex = {"id": "v", "candidates": ["a", "b", "c", "d"], "correct": 2, "group": {"set": "deixis"}}
    # the correct one ties with a weaker candidate only: still strictly best? no: equal to -1 is not above it
    result = evaluate([ex, ex], [[(-3.0, 1), (-1.0, 1), (-1.0, 1), (-5.0, 1)],
                                 [(-3.0, 1), (-2.0, 1), (-1.0, 1), (-1.5, 1)]])
    assert [r["right"] for r in result["examples"]] == [False, True]
    assert [r["tie"] for r in result["examples"]] == [True, False]


GOOD = {"id": "1", "doc_id": "d", "direction": "en-de", "text": {"en": "x"}, "previous": {"en": []},
        "meta": dict.fromkeys(META_FIELDS), "cues": [], "candidates": ["a", "b"], "correct": 0, "rule": "strict"}


def write_suite(path, *examples):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in examples))
    return path


@pytest.mark.parametrize("bad, message", [
    ({"candidates": ["only one"], "correct": 0}, "at least two"),
    ({"candidates": ["a", "b"], "correct": 2}, "index of a candidate"),
    ({"candidates": ["a", "b"], "correct": True}, "index of a candidate"),
    # what passed this check and then broke the scoring (issue 33, item 12)
    ({"meta": {}}, "'meta' must have exactly the fields genre, "),
    ({"meta": "Drama"}, "'meta' must have exactly the fields"),
    ({"text": {"de": "x"}, "previous": {"de": []}}, r"'text' has languages \['de'\], expected \['en'\]"),
    ({"text": "x"}, r"'text' must map exactly one language code \(the source\)"),
    ({"previous": ["y"]}, "'previous' must have one list per language of 'text'"),
    ({"direction": "en-fr"}, "an en-fr example, but line 1 is en-de"),
    ({"id": "1"}, "id '1' again .first on line 1.: each example once"),  # counted twice before (item 6)
    ({"rule": "loose"}, "'rule' must be one of strict, first_among_tied, got 'loose'"),
    ({"rule": ["strict"]}, r"'rule' must be one of strict, first_among_tied, got \['strict'\]"),
    ({"rule": "first_among_tied"}, "rule 'first_among_tied', but line 1's is 'strict': a suite is judged by one"),
])
def test_bad_examples_named(tmp_path, bad, message):
    path = write_suite(tmp_path / "suite.jsonl", GOOD, {**GOOD, "id": "2", **bad})
    with pytest.raises(ValueError, match=f"suite.jsonl:2: .*{message}"):
        read_suite(path)


def test_a_line_nested_too_deeply_is_named(tmp_path):
    path = write_suite(tmp_path / "suite.jsonl", GOOD)
    path.write_text(path.read_text() + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ValueError, match=r"suite\.jsonl:2: JSON nested too deeply to read"):  # RecursionError before
        read_suite(path)


def test_a_suite_says_its_language_pair_or_sits_in_its_folder(tmp_path):
    unnamed = {k: v for k, v in GOOD.items() if k != "direction"}
    assert read_suite(write_suite(tmp_path / "suite.jsonl", GOOD))[0]["direction"] == "en-de"
    folder = tmp_path / "results" / "eval" / "contrastive" / "en-fr" / "lopes.jsonl"
    assert [e["direction"] for e in read_suite(write_suite(folder, unnamed, {**unnamed, "id": "2"}))] == ["en-fr"] * 2
    with pytest.raises(ValueError, match="suite.jsonl:1: the suite names no language pair"):
        read_suite(write_suite(tmp_path / "suite.jsonl", unnamed))
    with pytest.raises(ValueError, match="lopes.jsonl: a suite of en-fr, but the model translates en-de"):
        read_suite(folder, "en-de")


class FakeTranslator:
    """Translator.load's stand-in: an en-de model that prefers each example's first candidate."""
    direction = "en-de"

    def score_samples(self, samples, candidates, batch_size):
        assert [s["text"] for s in samples] == [{"en": "x"}] * len(samples)  # the source only
        return [[(-1.0 - k, 2) for k in range(len(c))] for c in candidates]


def test_score_contrastive_refuses_another_language_pair(tmp_path, monkeypatch):
    from mtcue.cli import main
    from mtcue.models.translator import Translator

    monkeypatch.setattr(Translator, "load", classmethod(lambda cls, model_dir: FakeTranslator()))
    suite = write_suite(tmp_path / "suite.jsonl", {**GOOD, "correct": 1}, {**GOOD, "id": "2"}, {**GOOD, "id": "3"})
    score = ["score-contrastive", "--model-dir", "m", "--suite"]
    assert main([*score, str(suite), "--out", str(tmp_path / "r.json")]) == 0
    record = json.loads((tmp_path / "r.json").read_text())
    assert (record["direction"], record["n"], record["accuracy"]) == ("en-de", 3, 2 / 3)
    french = write_suite(tmp_path / "fr.jsonl", *({**GOOD, "id": i, "direction": "en-fr"} for i in "123"))
    with pytest.raises(ValueError, match=r"fr.jsonl: a suite of en-fr, but the model translates en-de"):
        from mtcue.models.contrastive import score_suite

        score_suite("m", french)
    assert main([*score, str(french), "--out", str(tmp_path / "f.json")]) == 1
    assert not (tmp_path / "f.json").exists()


def test_score_count_mismatch():
    with pytest.raises(ValueError, match="3 candidates but 2 scores"):
        evaluate(_examples()[:1], [[(-1.0, 1), (-2.0, 1)]])


def test_table_rows_from_a_hand_set_record(tmp_path):
    from mtcue.experiments.contrastive.table import write_contrastive_table

    result = evaluate(_examples(), [c for *_, c in CONTRAPRO])
    record = {"kind": "contrastive", "model": "base", "direction": "en-de", "suite": "contrapro",
              "needs_target_context": False, "study": "t", **result}
    write_contrastive_table([record], tmp_path / "c.csv", tmp_path / "c.md")
    import pandas as pd

    csv = pd.read_csv(tmp_path / "c.csv")
    assert list(csv.columns) == ["direction", "model", "suite", "group", "accuracy", "n", "ties", "vs_base",
                                 "vs_base_low", "vs_base_high", "source", "measure"]
    ours = csv[csv["source"] == "this study"].set_index("group")
    assert ours.loc["all", "accuracy"] == 0.6 and ours.loc["all", "n"] == 5 and ours.loc["all", "ties"] == 1
    assert ours.loc["distance=>3", "accuracy"] == 0.5
    paper = csv[(csv["source"] != "this study") & (csv["model"] == "Sentence-level")]
    assert paper["accuracy"].tolist() == [0.4367, 0.7592] and paper["suite"].tolist() == ["contrapro", "lopes"]
    # the shortening paper's authors score with fairseq's SequenceScorer (mean over tokens); ours are sums
    assert set(paper["measure"]) == {"per-token mean log-probability"}
    assert set(ours["measure"]) == {"summed log-probability"}
    md = (tmp_path / "c.md").read_text()
    assert "| BASE | 60.0 (1 ties) |" in md and "43.67" in md and (tmp_path / "c.html").is_file()


def test_paper_config_scores_the_real_suites():
    from conftest import dry_run

    run = dry_run("table_contrastive", "--configfile", "config/paper.yaml")
    assert run.returncode == 0, run.stderr[-2000:]
    for suite in ("contrapro", "lopes", "voita2019_deixis", "voita2019_lex_cohesion", "voita2019_ellipsis_infl",
                  "voita2019_ellipsis_vp"):
        direction = {"contrapro": "en-de", "lopes": "en-fr"}.get(suite, "en-ru")
        assert f"results/records/contrastive/{direction}/mtcue.{suite}.json" in run.stdout, suite
        assert f"results/eval/contrastive/{direction}/{suite}.jsonl" in run.stdout
    assert "consistency_testsets/deixis_test.json" in run.stdout  # downloaded like the other sets
    assert "synthetic.jsonl" not in run.stdout


def test_mlflow_metrics_of_a_contrastive_record():
    from mtcue.reporting.run_contents import _evaluation

    record = {"kind": "contrastive", "suite": "synthetic", "accuracy": 0.5,
              "groups": {"phenomenon": {"pronoun": {"accuracy": 0.25}, "formality": {"accuracy": 0.75}},
                         "distance": {"1": {"accuracy": 1.0}}}}
    assert _evaluation(record, {}, {}) == {"contrastive_synthetic": 0.5, "contrastive_synthetic_pronoun": 0.25,
                                           "contrastive_synthetic_formality": 0.75}


@pytest.mark.parametrize("pair", ["en-de", "en-ru"])
def test_the_synthetic_suite_passes_the_suite_check_and_says_its_pair(tmp_path, pair):
    from mtcue.data.synth.contrastive import write_suite as write_synthetic

    write_synthetic(pair, 20, 1, tmp_path / "synthetic.jsonl")
    examples = read_suite(tmp_path / "synthetic.jsonl", pair)
    assert len(examples) > 10 and {e["direction"] for e in examples} == {pair} and {e["rule"] for e in examples} == {
        "strict"}
    with pytest.raises(ValueError, match=f"a suite of {pair}, but the model translates en-fr"):
        read_suite(tmp_path / "synthetic.jsonl", "en-fr")


@pytest.mark.parametrize("options, message", [
    (["--pair", "ende", "--docs", "2"], "unknown language pair 'ende'"),  # "not enough values to unpack" before
    (["--pair", "en-de", "--docs", "0"], "argument --docs: '0' is not a whole number of at least 1"),
    (["--pair", "en-de", "--docs", "2", "--per-phenomenon", "0"], "argument --per-phenomenon: '0' is not a whole"),
])
def test_a_synthetic_suite_of_no_pair_or_no_example_is_refused(tmp_path, caplog, capsys, options, message):
    from mtcue.cli import main

    try:
        code = main(["contrastive-suite", "--name", "synthetic", *options, "--out", str(tmp_path / "s.jsonl")])
    except SystemExit as stopped:  # argparse
        code = stopped.code
    assert code in (1, 2) and message in caplog.text + capsys.readouterr().err
    assert not (tmp_path / "s.jsonl").exists()


def test_a_synthetic_suite_without_examples_is_not_written(tmp_path):
    from mtcue.data.synth.contrastive import write_suite as write_synthetic

    with pytest.raises(ValueError, match=r"s\.jsonl: the first 2 test documents of en-de give no example"):
        write_synthetic("en-de", 2, 1, tmp_path / "s.jsonl", per_phenomenon=0)
    assert not (tmp_path / "s.jsonl").exists()


def _record(model, scores, suite="contrapro"):
    return {"kind": "contrastive", "model": model, "direction": "en-de", "suite": suite, "needs_target_context": False,
            "study": "t", **evaluate(_examples(), scores)}


def test_every_difference_from_base_has_a_paired_interval(tmp_path):
    from mtcue.experiments.contrastive.table import differences, write_contrastive_table

    right, wrong = [(-1.0, 2), (-2.0, 2), (-3.0, 2)], [(-3.0, 2), (-2.0, 2), (-1.0, 2)]
    base = _record("base", [c for *_, c in CONTRAPRO])          # right on c0, c3, c4: 60%
    always = _record("voita_context", [right] * 5)              # right on all five
    d = differences([base, always])
    # +40 points overall; in a resample the difference is the share of c1 and c2 drawn, which can be 0 or 1
    assert d[("en-de", "voita_context", "contrapro", "all")]["difference"] == pytest.approx(0.4)
    assert 0.0 <= d[("en-de", "voita_context", "contrapro", "all")]["low"] < 0.4 < \
        d[("en-de", "voita_context", "contrapro", "all")]["high"] <= 1.0
    # distance >3: c2 (base wrong, a tie) and c4 (base right): +50 points; distance 0: c0, both right: 0 exactly
    assert d[("en-de", "voita_context", "contrapro", "distance=>3")]["difference"] == pytest.approx(0.5)
    zero = d[("en-de", "voita_context", "contrapro", "distance=0")]
    assert (zero["difference"], zero["low"], zero["high"]) == (0.0, 0.0, 0.0)
    # Right where BASE is always wrong: +100 in every resample.
    never = _record("base", [wrong] * 5, "lopes")
    d = differences([never, {**_record("concat", [right] * 5, "lopes")}])
    assert (d[("en-de", "concat", "lopes", "all")]["low"], d[("en-de", "concat", "lopes", "all")]["high"]) == (1.0, 1.0)
    assert ("en-de", "base", "lopes", "all") not in d

    from mtcue.reporting.kit import Runs
    from table_links import paper_links, unlinked_numbers

    runs = Runs.of_records([base, always], tmp_path / "tables" / "c.html")
    write_contrastive_table([base, always], tmp_path / "tables" / "c.csv", tmp_path / "tables" / "c.md", runs)
    page = (tmp_path / "tables" / "c.html").read_text()
    assert unlinked_numbers(page) == [] and paper_links(page) == []
    assert f'<a href="../mlflow/{base["study"]}.html#en-de/voita_context">100.0 (+40.0' in page
    tmp_path = tmp_path / "tables"
    import pandas as pd

    csv = pd.read_csv(tmp_path / "c.csv")
    ours = csv[(csv["source"] == "this study") & (csv["group"] == "all")].set_index("model")
    assert ours.loc["voita_context", "vs_base"] == pytest.approx(0.4) and pd.isna(ours.loc["base", "vs_base"])
    md = (tmp_path / "c.md").read_text()
    low, high = (100 * ours.loc["voita_context", k] for k in ("vs_base_low", "vs_base_high"))
    assert f"| VOITA-CONTEXT | 100.0 (+40.0 [{low:+.1f}, {high:+.1f}]) |" in md
    assert "paired-bootstrap interval" in md


def test_differences_need_the_same_examples():
    from mtcue.experiments.contrastive.table import differences

    base = _record("base", [c for *_, c in CONTRAPRO])
    other = _record("concat", [c for *_, c in CONTRAPRO])
    other["examples"] = other["examples"][:4]
    with pytest.raises(ValueError, match="concat and base were scored on different examples"):
        differences([base, other])


def _evaluate_consistency(losses, true_ind):
    """Voita et al.'s evaluate_consistency.py's verdict, transcribed: the argmin of the losses (numpy's: the first
    of tied minima) is the true index."""
    import numpy as np

    return int(np.argmin(losses)) == true_ind


def test_each_rule_agrees_with_its_official_scorer_on_ties():
    import numpy as np

    from mtcue.evaluation.contrastive import FIRST_AMONG_TIED, STRICT, verdict

    rng = np.random.default_rng(3)
    cases = [([-1.0, -1.0, -2.0], 0), ([-1.0, -1.0, -2.0], 1), ([-2.0, -1.0, -1.0], 2), ([-3.0, -1.0, -1.0, -1.0], 3),
             ([-1.0, -1.0], 0), ([-1.0, -2.0], 1)]
    cases += [(list(rng.integers(-3, 0, size=int(rng.integers(2, 5))).astype(float)), 0) for _ in range(200)]
    cases += [(s, int(rng.integers(0, len(s)))) for s, _ in cases[6:]]
    for scores, correct in cases:
        right, tie = verdict(scores, correct, FIRST_AMONG_TIED)
        assert right == _evaluate_consistency([-s for s in scores], correct), (scores, correct)
        others = [s for k, s in enumerate(scores) if k != correct]
        assert tie == (scores[correct] == max(others))
        # ContraPro's: gt against every error
        assert verdict(scores, correct, STRICT) == (all(gt(scores[correct], s) for s in others), tie)
    assert verdict([-1.0, -1.0, -2.0], 0, FIRST_AMONG_TIED) == (True, True)
    assert verdict([-1.0, -1.0, -2.0], 1, FIRST_AMONG_TIED) == (False, True)


def test_a_voita_suite_counts_a_tie_first_among_the_tied_right_and_counts_ties_apart():
    from mtcue.evaluation.contrastive import FIRST_AMONG_TIED

    examples = [{"id": f"v{i}", "candidates": ["a", "b", "c"], "correct": c, "group": {"set": "ellipsis_vp"}}
                for i, c in enumerate((0, 1, 2))]
    tied = [(-1.0, 1), (-1.0, 1), (-5.0, 1)]
    result = evaluate(examples, [tied, tied, [(-2.0, 1), (-3.0, 1), (-1.0, 1)]], FIRST_AMONG_TIED)
    assert result["rule"] == FIRST_AMONG_TIED
    assert [e["right"] for e in result["examples"]] == [True, False, True]
    assert result["accuracy"] == pytest.approx(2 / 3) and result["ties"] == 2
    strict = evaluate(examples, [tied, tied, [(-2.0, 1), (-3.0, 1), (-1.0, 1)]])
    assert strict["rule"] == "strict" and strict["accuracy"] == pytest.approx(1 / 3) and strict["ties"] == 2


class TiedRussian(FakeTranslator):
    """An en-ru model that gives every candidate the same score."""
    direction = "en-ru"

    def score_samples(self, samples, candidates, batch_size):
        return [[(-2.0, 2)] * len(c) for c in candidates]


def test_the_rule_is_the_suites_own_whatever_its_file_is_called(tmp_path, monkeypatch):
    """A Voita et al. set saved as deixis300.jsonl was judged by ContraPro's rule (from its name): every tie wrong,
    0.0 where Voita et al.'s scorer gives 1.0. The converter writes the rule into the suite; the scorer reads it."""
    from mtcue.cli import main
    from mtcue.data.contrastive_suites import voita2019
    from mtcue.models.translator import Translator

    from test_contrastive_suites import VOITA

    monkeypatch.setattr(Translator, "load", classmethod(lambda cls, model_dir: TiedRussian()))
    (tmp_path / "deixis_test.json").write_text(json.dumps([VOITA[0]] * 3, ensure_ascii=False))
    voita2019(tmp_path / "deixis_test.json", "voita2019_deixis", tmp_path / "deixis300.jsonl")
    assert main(["score-contrastive", "--model-dir", "m", "--suite", str(tmp_path / "deixis300.jsonl"),
                 "--out", str(tmp_path / "r.json")]) == 0
    record = json.loads((tmp_path / "r.json").read_text())
    assert (record["suite"], record["rule"], record["accuracy"], record["ties"]) == ("deixis300", "first_among_tied",
                                                                                      1.0, 3)
    assert record["needs_target_context"] is True  # from the suite's content too, not from its file's name
    voita2019(tmp_path / "deixis_test.json", "voita2019_ellipsis_vp", tmp_path / "voita2019_deixis.jsonl")
    assert main(["score-contrastive", "--model-dir", "m", "--suite", str(tmp_path / "voita2019_deixis.jsonl"),
                 "--out", str(tmp_path / "r2.json")]) == 0
    assert json.loads((tmp_path / "r2.json").read_text())["needs_target_context"] is False


def test_a_contrastive_record_from_before_suites_carried_their_rule_is_refused(tmp_path):
    from mtcue.records import RecordError, read_record

    record = {"kind": "contrastive", "model": "base", "direction": "en-de", "suite": "contrapro",
              "needs_target_context": False, "study": "t", "config_hash": "h", "git_commit": "unknown",
              **evaluate(_examples(), [c for *_, c in CONTRAPRO])}
    del record["rule"]
    (tmp_path / "base.contrapro.json").write_text(json.dumps(record))
    with pytest.raises(RecordError, match=r"base\.contrapro\.json: contrastive record lacks required key 'rule' "
                                          r"\(from an older version\? delete it and rerun the step that writes it\)"):
        read_record(tmp_path / "base.contrapro.json")


def test_a_suite_without_its_rule_is_refused_saying_to_rebuild_it(tmp_path, monkeypatch, caplog):
    from mtcue.cli import main
    from mtcue.models.translator import Translator

    monkeypatch.setattr(Translator, "load", classmethod(lambda cls, model_dir: FakeTranslator()))
    unruled = {k: v for k, v in GOOD.items() if k != "rule"}  # as written before suites carried their rule
    old = write_suite(tmp_path / "voita2019_deixis.jsonl", unruled, {**unruled, "id": "2"})
    with pytest.raises(ValueError, match=r"voita2019_deixis.jsonl:1: the suite records no verdict rule .*: rebuild "
                                         r".*voita2019_deixis.jsonl with `mtcue contrastive-suite`"):
        read_suite(old)
    assert main(["score-contrastive", "--model-dir", "m", "--suite", str(old), "--out", str(tmp_path / "r.json")]) == 1
    assert "records no verdict rule" in caplog.text and not (tmp_path / "r.json").exists()


def test_identical_candidates_are_scored_once_and_share_the_score(tmp_path, monkeypatch):
    """The official ellipsis sets repeat the correct candidate; scored apart, a duplicate's score moves with the
    batch, so whether it ties would depend on batching. The stand-in gives every scored string its own score."""
    from mtcue.models.contrastive import score_suite
    from mtcue.models.translator import Translator

    scored = []

    class Counting(FakeTranslator):
        def score_samples(self, samples, candidates, batch_size):
            scored.append(candidates)
            return [[(-1.0 - 0.001 * len(scored) - k, 2) for k in range(len(c))] for c in candidates]

    monkeypatch.setattr(Translator, "load", classmethod(lambda cls, model_dir: Counting()))
    suite = write_suite(tmp_path / "suite.jsonl", {**GOOD, "candidates": ["b", "a", "b", "c", "a"], "correct": 0},
                        {**GOOD, "id": "2", "candidates": ["x", "y"], "correct": 1})
    _, examples, scores = score_suite("m", suite)
    assert scored == [[["b", "a", "c"], ["x", "y"]]]  # each distinct string once
    assert scores[0] == [(-1.001, 2), (-2.001, 2), (-1.001, 2), (-3.001, 2), (-2.001, 2)]
    assert scores[1] == [(-1.001, 2), (-2.001, 2)] and len(examples) == 2
