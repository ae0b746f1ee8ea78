"""Snakemake's main loop on one machine: workflow/rules/scheduler.smk stops the job-rate limiter's
one-second timers, which otherwise multiply with every finished job (snakemake#2967, #3744)."""
import subprocess

import pytest

from conftest import REPO, SNAKEMAKE

JOBS = 8
WORKFLOW = f"""
rule all:
    input: expand("step/{{i}}.txt", i=range({JOBS}))

rule step:
    output: "step/{{i}}.txt"
    shell: "sleep 1; echo {{wildcards.i}} > {{output}}"
"""


def scheduling_passes(tmp_path, include: str) -> int:
    """How many times Snakemake's main loop looked for jobs to run ("Ready jobs" in its debug log)."""
    (tmp_path / "Snakefile").write_text(include + WORKFLOW, encoding="utf-8")
    run = subprocess.run([SNAKEMAKE, "--cores", "1", "--verbose", "all"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stderr.count("Ready jobs")


@pytest.mark.parametrize("included", [False, True])
def test_the_loop_wakes_once_per_finished_job(tmp_path, included):
    include = f'include: "{REPO / "workflow" / "rules" / "scheduler.smk"}"\n' if included else ""
    passes = scheduling_passes(tmp_path, include)
    if included:  # the start, then one pass per finished job
        assert passes <= JOBS + 2
    else:  # the control: after the k-th job, k timers each wake the loop once a second: about 1 + 2 + ... + 8
        assert passes >= 3 * JOBS
