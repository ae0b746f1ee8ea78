"""The Python API is quiet: fairseq's INFO lines and library warnings are kept out of the user's output
during its calls (mtcue.models.translator._quiet), without touching the root logger's configuration or
the user's own logging. In a fresh interpreter each, as a user's script starts."""
import subprocess
import sys

UNCONFIGURED = """
import logging, warnings
from mtcue.models.translator import _quiet
with _quiet():
    import mtcue.models.plugin  # imports fairseq_cli.train, which runs logging.basicConfig (INFO, stdout)
    logging.getLogger("fairseq.tasks.fairseq_task").info("creating new batches for epoch 1")
    warnings.warn("a library's warning")
    logging.getLogger("mtcue.models.translator").warning("input line 1 is cut")
print(logging.getLogger().handlers, logging.getLogger().level)
"""

USERS_LOGGING = """
import logging, sys, warnings
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s: %(message)s")
from mtcue.models.translator import _quiet
with _quiet():
    logging.getLogger("fairseq.data.iterators").info("can_reuse_epoch_itr = False")
    logging.getLogger("fairseq.data.iterators").warning("a fairseq warning")
    logging.getLogger("notebook").info("the user's own line")
logging.getLogger("fairseq.data.iterators").info("after the call")
"""


def run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_an_api_call_leaves_an_unconfigured_root_logger_unconfigured():
    done = run(UNCONFIGURED)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "[] 30\n"  # no handler left behind by fairseq's basicConfig, level WARNING
    # ours still reaches the user, and nothing else
    assert len(done.stderr.splitlines()) == 1 and done.stderr.endswith("input line 1 is cut\n")
    # Without the scope, the same import leaves fairseq's handler on the root logger.
    bare = run("import logging, mtcue.models.plugin; print(len(logging.getLogger().handlers))")
    assert bare.returncode == 0 and bare.stdout == "1\n"


def test_the_users_logging_keeps_its_lines_and_fairseq_is_quiet_only_during_the_call():
    done = run(USERS_LOGGING)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["fairseq.data.iterators: a fairseq warning", "notebook: the user's own line",
                                        "fairseq.data.iterators: after the call"]
