"""A run on one machine (workflow/rules/local.smk): Snakemake's job-rate limiter's one-second timers, which
otherwise multiply with every finished job, are stopped (snakemake#2967, #3744); steps run cold unless the run
opts into the warm start (`make demo` does)."""
import os
import subprocess

import pytest

from conftest import REPO, SNAKEMAKE

JOBS = 8
WORKFLOW = f"""
rule all:
    input: expand("step/{{i}}.txt", i=range({JOBS}))

rule step:
    output: "step/{{i}}.txt"
    shell: "sleep 1; echo ${{{{MTCUE_WARM:-unset}}}} > {{output}}"
"""


def scheduling_passes(tmp_path, include: str) -> int:
    """How many times Snakemake's main loop looked for jobs to run ("Ready jobs" in its debug log)."""
    (tmp_path / "Snakefile").write_text(include + WORKFLOW, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "MTCUE_WARM"}
    run = subprocess.run([SNAKEMAKE, "--cores", "1", "--verbose", "all"], cwd=tmp_path, capture_output=True, text=True,
                         env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stderr.count("Ready jobs")


@pytest.mark.parametrize("included", [False, True])
def test_the_loop_wakes_once_per_finished_job(tmp_path, included):
    include = f'include: "{REPO / "workflow" / "rules" / "local.smk"}"\n' if included else ""
    passes = scheduling_passes(tmp_path, include)
    warm = {(tmp_path / "step" / f"{i}.txt").read_text().strip() for i in range(JOBS)}
    if included:  # the start, then one pass per finished job; the steps run cold (MTCUE_WARM not set)
        assert passes <= JOBS + 2
        assert warm == {"unset"}
    else:  # the control: after the k-th job, k timers each wake the loop once a second: about 1 + 2 + ... + 8
        assert passes >= 3 * JOBS
        assert warm == {"unset"}
