"""The fast layer (`make check`): conftest marks a test slow from the names it uses, at any depth."""
import conftest


def _runs_the_study():
    return conftest.dry_run("-n")


def _calls_a_helper_that_runs_the_study():
    return [_runs_the_study() for _ in range(1)]  # inside a comprehension: a code object of its own


def _names_snakemake():
    return conftest.SNAKEMAKE


def _rehearses_the_study(rehearsal):
    return rehearsal.rehearse(dry_run=True)


def _plans_every_job_in_process(workflow):
    workflow._build_dag()
    return workflow.dag.jobs


def _loads_comet(tmp_path):
    from mtcue.rehearsal.stand_ins import comet_stand_in

    return comet_stand_in(tmp_path, "minilm")


def _counts_words():
    return len("a b".split())


def test_a_test_running_snakemake_itself_or_through_a_helper_is_slow_and_one_that_does_not_is_not():
    helpers = globals()  # looked up by string, so that this test itself is not marked through them
    assert conftest._uses_slow_name(helpers["_runs_the_study"], set())
    assert conftest._uses_slow_name(helpers["_calls_a_helper_that_runs_the_study"], set())
    assert conftest._uses_slow_name(helpers["_names_snakemake"], set())
    assert not conftest._uses_slow_name(helpers["_counts_words"], set())


def test_the_rehearsal_a_dag_built_in_process_and_a_comet_model_are_slow_too():
    helpers = globals()
    for name in ("_rehearses_the_study", "_plans_every_job_in_process", "_loads_comet"):
        assert conftest._uses_slow_name(helpers[name], set()), name
