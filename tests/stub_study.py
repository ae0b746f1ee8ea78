"""Make a study look finished without running it: every output of the DAG as an empty file (or
folder, for directory() outputs), then Snakemake's own `--touch` run, which records each job's
params, input and code as a real run would. A dry run with a changed config then shows exactly
what Snakemake would rerun (tests/test_workflow_targets.py), in seconds, with no training.

    python tests/stub_study.py SNAKEFILE CONFIGFILE WORKDIR

Uses Snakemake's Python API (pinned in envs/requirements.lock): the command line cannot tell
which outputs are folders.
"""
import sys
from pathlib import Path

from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings


def stub(snakefile: Path, configfile: Path, workdir: Path) -> None:
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(ResourceSettings(cores=1), ConfigSettings(configfiles=[configfile]),
                                    snakefile=snakefile, workdir=workdir)
        dag_api = workflow_api.dag(DAGSettings(forceall=True))
        workflow = workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        for job in workflow.dag.jobs:
            for f in job.output:
                path = workdir / f
                if f.is_directory:
                    path.mkdir(parents=True, exist_ok=True)
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.touch()
        dag_api.execute_workflow(pseudo_executor="touch")


if __name__ == "__main__":
    snakefile, configfile, workdir = (Path(a).absolute() for a in sys.argv[1:4])
    stub(snakefile, configfile, workdir)
