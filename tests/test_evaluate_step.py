"""`mtcue evaluate`: a trained model's evaluation steps run one after another in one process."""
import json

import pytest

from conftest import make_sample
from mtcue import cli
from mtcue.evaluation.evaluate import EVALUATION_STEPS, parse_tasks, run


def test_the_tasks_are_evaluation_steps_command_lines():
    assert parse_tasks('[["score", "--hyps", "h.txt"], ["comet"]]') == [["score", "--hyps", "h.txt"], ["comet"]]
    for text, problem in (("[", "not valid JSON"), ("[]", "a JSON list of command lines"),
                          ('{"score": 1}', "a JSON list of command lines"),
                          ('[["score", 3]]', "task 1 is not a command line"),
                          ('[["score"], []]', "task 2 is not a command line"),
                          ('[["score"], ["train", "--spec", "{}"]]', "task 2 runs 'train', not an evaluation step")):
        with pytest.raises(ValueError, match=problem):
            parse_tasks(text)


def test_every_evaluation_step_is_a_step_of_the_cli():
    steps = cli._parser()._subparsers._group_actions[0].choices
    assert EVALUATION_STEPS <= set(steps) and "evaluate" in steps


def test_the_first_failed_task_stops_the_rest_and_gives_its_status():
    ran = []

    def step(argv):
        ran.append(argv[0])
        return 3 if argv[0] == "comet" else 0

    assert run([["translate"], ["score"]], step) == 0 and ran == ["translate", "score"]
    ran.clear()
    assert run([["translate"], ["comet"], ["score"]], step) == 3 and ran == ["translate", "comet"]


def test_the_step_runs_each_task_as_its_own_command(tmp_path, write_corpus):
    """Two score tasks through the real CLI: each record is the one `mtcue score` writes (but its time)."""
    corpus = write_corpus([make_sample(i) for i in range(3)])
    hyps = tmp_path / "h.txt"
    hyps.write_text("Hast du den Brief gesehen?\n" * 3)

    def score(out):
        return ["score", "--hyps", str(hyps), "--corpus", str(corpus), "--direction", "en-de", "--model", "base",
                "--split", "test", "--study", "s", "--config-hash", "h", "--out", str(out)]

    assert cli.main(score(tmp_path / "alone.json")) == 0
    tasks = json.dumps([score(tmp_path / "a.json"), score(tmp_path / "b.json")])
    assert cli.main(["evaluate", "--tasks", tasks]) == 0
    alone = json.loads((tmp_path / "alone.json").read_text())
    for name in ("a.json", "b.json"):
        record = json.loads((tmp_path / name).read_text())
        assert {**record, "created": None} == {**alone, "created": None}
    # a failing task: the step fails, and the tasks after it write nothing
    bad = score(tmp_path / "c.json")
    bad[bad.index("--corpus") + 1] = str(tmp_path / "missing.jsonl")
    assert cli.main(["evaluate", "--tasks", json.dumps([bad, score(tmp_path / "d.json")])]) == 1
    assert not (tmp_path / "c.json").exists() and not (tmp_path / "d.json").exists()
