"""`mtcue critical-path`: the critical path, total work and list-scheduled wall time of a study, on small
DAGs worked out by hand and on a stubbed study's real DAG with made-up benchmark files."""
import json
import os
import random
import subprocess
import sys

import pytest

from conftest import REPO, SNAKEMAKE
from mtcue.reporting.critical_path import benchmark_seconds, job_name, projection, study_dag
from mtcue.schedule import Job, critical_path, list_schedule, remaining, total_work

# A diamond a -> (b, c) -> d, a chain e -> f and an independent g; times in seconds.
DIAMOND_CHAIN_SINGLE = [
    Job("a", 2), Job("b", 3, ("a",)), Job("c", 1, ("a",)), Job("d", 2, ("b", "c")),
    Job("e", 1), Job("f", 3, ("e",)),
    Job("g", 6),
]


def test_critical_path_and_total_work_by_hand():
    # a-b-d = 7 beats g = 6, e-f = 4 and a-c-d = 5; the work is every time added up.
    assert critical_path(DIAMOND_CHAIN_SINGLE) == (7, ["a", "b", "d"])
    assert total_work(DIAMOND_CHAIN_SINGLE) == 2 + 3 + 1 + 2 + 1 + 3 + 6 == 18
    assert remaining(DIAMOND_CHAIN_SINGLE) == {"a": 7, "b": 5, "c": 3, "d": 2, "e": 4, "f": 3, "g": 6}


@pytest.mark.parametrize("cores, wall", [
    (1, 18),  # one core is never idle: the total work
    # t=0 a, g (priorities 7, 6 over e's 4); t=2 b; t=5 e; t=6 c, f; t=7 d; f and d end at 9
    (2, 9),
    # t=0 a, g, e; t=1 f; t=2 b, c; t=5 d, ends at 7: the critical path
    (4, 7),
])
def test_list_schedule_by_hand(cores, wall):
    assert list_schedule(DIAMOND_CHAIN_SINGLE, cores) == wall


def test_the_longest_remaining_path_goes_first():
    # Name order would start a and b first and finish z2 at 5; z1's longer path puts it first: 4.
    jobs = [Job("a", 1), Job("b", 1), Job("z1", 1), Job("z2", 3, ("z1",))]
    assert list_schedule(jobs, 2) == 4


def test_a_job_takes_its_threads_cores_up_to_all_of_them():
    jobs = [Job("x", 3, threads=2), Job("y", 1), Job("z", 1)]
    assert total_work(jobs) == 8
    assert list_schedule(jobs, 1) == 5  # x on the one core there is
    assert list_schedule(jobs, 2) == 4  # x alone on both cores, then y and z side by side
    assert list_schedule(jobs, 4) == 3
    assert projection(jobs, (1, 2, 4))["lower_bound_s"] == {"1": 5, "2": 4, "4": 3}


def test_an_empty_study_and_zero_second_jobs():
    assert list_schedule([], 2) == 0 and critical_path([]) == (0, [])
    jobs = [Job("a", 0), Job("b", 2, ("a",)), Job("all", 0, ("b",))]
    assert critical_path(jobs) == (2, ["a", "b", "all"]) and list_schedule(jobs, 2) == 2


def test_random_dags_keep_within_the_bounds():
    """No schedule beats max(critical path, work / cores); a list schedule is within work / cores + critical path
    (Graham's bound) and one core does the whole work."""
    rng = random.Random(28)
    for _ in range(200):
        n = rng.randint(1, 25)
        jobs = [Job(str(i), rng.choice([0, 0.5, 1, 2, 7, 30]), tuple(str(d) for d in range(i) if rng.random() < 0.15))
                for i in range(n)]
        cp, work = critical_path(jobs)[0], total_work(jobs)
        assert list_schedule(jobs, 1) == pytest.approx(work)
        for cores in (2, 3, 8):
            wall = list_schedule(jobs, cores)
            assert max(cp, work / cores) - 1e-9 <= wall <= work / cores + cp + 1e-9


def test_a_chain_is_a_path_and_its_times_add_up_to_the_critical_path():
    rng = random.Random(4)
    for _ in range(50):
        jobs = [Job(str(i), rng.randint(0, 9), tuple(str(d) for d in range(i) if rng.random() < 0.3))
                for i in range(12)]
        seconds, chain = critical_path(jobs)
        by_name = {j.name: j for j in jobs}
        assert not by_name[chain[0]].deps
        assert all(prev in by_name[nxt].deps for prev, nxt in zip(chain, chain[1:]))
        assert sum(by_name[n].time for n in chain) == seconds


def test_a_cycle_or_an_unknown_dependency_is_an_error():
    with pytest.raises(ValueError, match="cycle"):
        critical_path([Job("a", 1, ("b",)), Job("b", 1, ("a",))])
    with pytest.raises(ValueError, match=r"not jobs: \['x'\]"):
        list_schedule([Job("a", 1, ("x",))], 2)


def test_job_names_and_benchmark_files(tmp_path):
    assert job_name("train", {"direction": "en-de", "model": "base"}) == "train en-de/base"
    assert job_name("all", {}) == "all"
    tsv = tmp_path / "b.tsv"
    tsv.write_text("s\th:m:s\tmax_rss\n1.5\t0:00:01\t3\n2.25\t0:00:02\t3\n")  # two repeats of the job
    assert benchmark_seconds(tsv) == 3.75


@pytest.mark.parametrize("text, where", [
    ("h:m:s\tmax_rss\n0:00:01\t3\n", "b.tsv:1: no column 's' (columns: h:m:s, max_rss)"),
    ("s\th:m:s\n1.5\t0:00:01\nNA\t0:00:01\n", "b.tsv:3: column 's' is 'NA'"),
    ("s\th:m:s\n-1.5\t0:00:01\n", "b.tsv:2: column 's' is '-1.5'"),
    ("s\th:m:s\ninf\t0:00:01\n", "b.tsv:2: column 's' is 'inf'"),
    ("s\th:m:s\n\t0:00:01\n", "b.tsv:2: column 's' is ''"),
    ("s\th:m:s\n", "b.tsv: no row below its header"),
    ("", "b.tsv: empty"),
])
def test_a_damaged_benchmark_file_is_named_with_its_line_and_column(tmp_path, text, where):
    tsv = tmp_path / "b.tsv"
    tsv.write_text(text)
    with pytest.raises(ValueError) as err:
        benchmark_seconds(tsv)
    assert str(err.value).startswith(f"{tmp_path}/{where}"), str(err.value)


# ---- a stubbed study ---------------------------------------------------------------------------------


def _seconds(name: str) -> float:
    """A made-up job time, different per job and the same on every run."""
    return float(sum(map(ord, name)) % 97 + 1)


@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    """config/tiny.yaml's study made to look finished (tests/stub_study.py), a benchmark file of made-up
    time for every job but one, and its DAG {job name: dependency names} from Snakemake's API."""
    workdir, config = tmp_path_factory.mktemp("stub"), REPO / "config" / "tiny.yaml"
    done = subprocess.run([sys.executable, str(REPO / "tests" / "stub_study.py"), str(REPO / "Snakefile"),
                           str(config), str(workdir)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    dag = study_dag(REPO / "Snakefile", [config])
    deps = {job.name: set(job.deps) for job in dag}
    benchmarks = {job.name: job.benchmark for job in dag if job.benchmark}
    skipped = sorted(benchmarks)[0]  # a job that has not run yet: its file is missing
    for name, path in benchmarks.items():
        if name != skipped:
            (workdir / path).parent.mkdir(parents=True, exist_ok=True)
            (workdir / path).write_text(f"s\th:m:s\n{_seconds(name)}\t0:00:01\n")
    return workdir, config, deps, benchmarks, skipped


def _longest(deps: dict[str, set[str]], seconds: dict[str, float]) -> float:
    """The longest chain of times ending at any job, by plain recursion over the dependencies."""
    memo = {}

    def ending_at(name):
        if name not in memo:
            memo[name] = seconds[name] + max((ending_at(d) for d in deps[name]), default=0)
        return memo[name]
    return max(ending_at(n) for n in deps)


def test_the_step_on_a_finished_study_lists_every_job_and_a_real_chain(stub):
    from mtcue.cli import main

    workdir, config, deps, benchmarks, skipped = stub
    out = workdir / "out" / "critical_path.json"
    assert main(["critical-path", "--snakefile", str(REPO / "Snakefile"), "--configfile", str(config),
                 "--study", str(workdir), "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert {"total_work_s", "critical_path_s", "chain", "projected_wall_s"} <= set(result)
    assert set(result["projected_wall_s"]) == {"2", "4", "8", "16"}
    assert result["jobs"] == len(deps) > 20  # forced: every job, though the study is finished
    assert result["unmeasured_jobs"] == ["all"] and result["missing_benchmarks"] == [skipped]
    seconds = {n: _seconds(n) if n in benchmarks and n != skipped else 0.0 for n in deps}
    assert result["total_work_s"] == pytest.approx(sum(seconds.values()))
    chain = result["chain"]
    assert all(prev in deps[nxt] for prev, nxt in zip(chain, chain[1:])), chain  # each reads the one before
    assert not deps[chain[0]] and chain[-1] == "all"
    assert result["critical_path_s"] == pytest.approx(sum(seconds[n] for n in chain))
    assert result["critical_path_s"] == pytest.approx(_longest(deps, seconds))
    for cores, wall in result["projected_wall_s"].items():
        assert wall >= result["lower_bound_s"][cores] >= max(result["critical_path_s"],
                                                              result["total_work_s"] / int(cores)) - 0.01


def test_the_rule_runs_alone_on_a_finished_study(stub):
    """`snakemake results/benchmarks/critical_path.json` after a study runs that one job and writes the JSON."""
    workdir, config, deps, benchmarks, skipped = stub
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
                           "--configfile", str(config), "--cores", "1", "results/benchmarks/critical_path.json"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 of 1 steps (100%) done" in done.stderr, done.stderr[-3000:]
    result = json.loads((workdir / "results" / "benchmarks" / "critical_path.json").read_text())
    assert result["jobs"] == len(deps) and result["chain"][-1] == "all"
