"""The warm server (mtcue.warm): a step handed to it behaves as the command run by itself: the same
standard streams, exit status and error message, and a stopped command stops its step."""
import ast
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import REPO, SNAKEMAKE

MTCUE = str(Path(SNAKEMAKE).parent / "mtcue")
PYTHON = str(Path(SNAKEMAKE).parent / "python3")  # the interpreter of `mtcue` (part of the socket's key)
# A step that imports mlflow (when it starts; the server has not imported it) and then fails on its records.
TRACK = ["track", "--study", "s", "--uri", "sqlite:///mlflow.db", "--records", "no-such-record.json"]
# A quick step that succeeds (`--help` never goes to a server: it must answer while one is stopped).
STEP = ["check-config", str(REPO / "config" / "config.yaml")]
MAY_READ = "Snakemake may read it"  # what STEP says


@pytest.fixture
def env():
    """A private temporary folder (the server's socket lives there); the server is stopped after."""
    tmp = tempfile.mkdtemp(prefix="warm-", dir="/tmp")
    yield {**os.environ, "TMPDIR": tmp, "PYTHONPATH": str(REPO / "src")}
    for pid in _processes(tmp):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(tmp)


def _processes(tmp: str) -> list[int]:
    """The servers and their children: processes running `python -P -m mtcue.warm_server <socket in tmp>`."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mtcue.warm_server" in cmdline and any(arg.startswith(tmp.encode()) for arg in cmdline):
            pids.append(int(proc.name))
    return pids


def mtcue(args, env, warm, **kwargs):
    return subprocess.run([MTCUE, *args], env={**env, "MTCUE_WARM": "1" if warm else "0"}, capture_output=True,
                          text=True, timeout=180, **kwargs)


def without_times(text: str) -> str:
    return re.sub(r"^\S+ \S+ ", "", text, flags=re.M)


def test_a_warm_step_matches_the_command(env):
    for args, stdin in ((STEP, None), (["translate-text", "--model-dir", "no-such-model"], "Hello.\n")):
        cold, warm = mtcue(args, env, False, input=stdin), mtcue(args, env, True, input=stdin)
        assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
        assert without_times(warm.stderr) == without_times(cold.stderr)
    assert cold.returncode == 1 and "no-such-model" in cold.stderr
    assert len(_processes(env["TMPDIR"])) == 1  # one server, started by the first step, serves them all


# How long a loaded machine may take to start a step or end a process: generous, since what the timing tests prove
# is that it happens (a step that never ends fails them all the same), not how fast.
PATIENCE_S = 120


def _parent(pid: int) -> int | None:
    try:
        return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _a_step_of(server: int, tmp: str) -> int:
    """The step the server forked (a child of that server, not a second server), once it runs."""
    steps = []
    _wait_for(lambda: steps.extend(p for p in _processes(tmp) if _parent(p) == server) or steps, "the step never started")
    return steps[0]


def _translate_text(env) -> subprocess.Popen:
    """translate-text waits for its standard input, which stays open (never closed before the test ends: at its end
    the step would fail on its own): the step runs until it is stopped."""
    return subprocess.Popen([MTCUE, "translate-text", "--model-dir", "no-such-model"], env={**env, "MTCUE_WARM": "1"},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_stopping_the_command_stops_its_step(env):
    mtcue(STEP, env, True)  # the server is up
    [server] = _processes(env["TMPDIR"])
    command = _translate_text(env)
    step = _a_step_of(server, env["TMPDIR"])
    command.send_signal(signal.SIGTERM)
    assert command.wait(timeout=PATIENCE_S) == 128 + signal.SIGTERM
    _wait_for(lambda: _processes(env["TMPDIR"]) == [server], "the step outlived its command")
    assert _parent(step) is None  # gone, and the server serves on
    command.stdin.close()


def test_a_step_ends_with_its_server(env):
    mtcue(STEP, env, True)
    [server] = _processes(env["TMPDIR"])
    command = _translate_text(env)
    _a_step_of(server, env["TMPDIR"])
    os.kill(server, signal.SIGKILL)
    assert command.wait(timeout=PATIENCE_S) == 1  # its standard input still open: the step did not end by itself
    assert "warm server went away" in command.stderr.read()
    _wait_for(lambda: not _processes(env["TMPDIR"]), "the step outlived its server")
    command.stdin.close()


def test_only_this_user_reaches_the_server(tmp_path):
    """The socket lives in a folder only its user may enter, and the server serves only its user: a step
    runs with the environment its command sends (PYTHONPATH included)."""
    import socket
    import stat

    from mtcue import warm, warm_server

    folder = tmp_path / "warm"
    assert warm.private_folder(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o755)  # a folder others may enter is refused, so the step runs cold
    assert not warm.private_folder(folder)
    ours, theirs = socket.socketpair(socket.AF_UNIX)
    assert warm_server.same_user(ours)
    ours.close()
    theirs.close()


def socket_of(env) -> Path:
    """The socket of the server of a warm command run with `env` from here."""
    code = "from mtcue import warm; print(warm.socket_path())"
    return Path(subprocess.run([PYTHON, "-c", code], env={**env, "MTCUE_WARM": "1"}, capture_output=True, text=True,
                               check=True).stdout.strip())


def test_the_server_imports_nothing_from_the_folder_it_started_in(env, tmp_path):
    """`cd proj && mtcue check-config ...`, then `mtcue track ...` there: proj/mlflow.py is not imported, as a cold
    `mtcue` does not import it."""
    proj, ran = tmp_path / "proj", tmp_path / "ran"
    proj.mkdir()
    (proj / "mlflow.py").write_text(f"open({str(ran)!r}, 'a').write('payload ran\\n')\n", encoding="utf-8")
    assert mtcue(STEP, env, True, cwd=proj).returncode == 0  # the server starts in proj
    for warm in (True, False):
        mtcue(TRACK, env, warm, cwd=proj)
    assert not ran.exists()
    # The control: with the folder on the import path (as `python -m` puts it there), the payload runs.
    subprocess.run([PYTHON, "-m", "mtcue.cli", *TRACK], cwd=proj, env={**env, "MTCUE_WARM": "0"}, capture_output=True,
                   timeout=180)
    assert ran.read_text() == "payload ran\n"


# Stands in for a step's own code (`track` imports it as mlflow): what it sees of the environment it was
# imported in (the hub client and torch read theirs at import) and the umask.
PROBE = """import json, os, huggingface_hub.constants as hub, torch
mask = os.umask(0)
os.umask(mask)
with open({seen!r}, "a") as out:
    out.write(json.dumps({{"offline": hub.HF_HUB_OFFLINE, "hf_home": hub.HF_HOME, "threads": torch.get_num_threads(),
                          "umask": mask}}) + "\\n")
"""


def test_a_warm_step_runs_with_its_commands_environment_and_umask(env, tmp_path):
    """A server started by a command of another environment and umask does not serve the step: the step's
    files, modes and what its code reads at import are those of the step run cold."""
    probe, seen = tmp_path / "probe", tmp_path / "seen.jsonl"
    probe.mkdir()
    (probe / "mlflow.py").write_text(PROBE.format(seen=str(seen)), encoding="utf-8")
    env = {**env, "PYTHONPATH": f"{probe}:{env['PYTHONPATH']}"}
    assert mtcue(STEP, env, True, umask=0o022).returncode == 0  # a server with that command's environment
    step_env = {**env, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "OMP_NUM_THREADS": "1"}
    written = {}
    for warm in (True, False):
        out = tmp_path / f"warm-{warm}" / "test.jsonl"
        run = mtcue(["generate", "--pair", "en-de", "--split", "test", "--docs", "2", "--out", str(out)], step_env,
                    warm, umask=0o077)
        assert run.returncode == 0 and "running the step cold" not in run.stderr
        mtcue(TRACK, step_env, warm, umask=0o077)
        written[warm] = (oct(stat.S_IMODE(out.stat().st_mode)), out.read_text(encoding="utf-8"))
    warm_seen, cold_seen = [json.loads(line) for line in seen.read_text(encoding="utf-8").splitlines()]
    assert cold_seen == {"offline": True, "hf_home": str(tmp_path / "hf"), "threads": 1, "umask": 0o077}
    assert warm_seen == cold_seen
    assert written[True] == written[False] and written[True][0] == "0o600"
    assert len(_processes(env["TMPDIR"])) == 2  # a server per environment and umask


def test_files_take_the_umask_the_process_has_when_writing(tmp_path):
    """A warm step's umask is set after mtcue.io was imported (by the server)."""
    from mtcue.io import atomic_write_text

    before = os.umask(0o077)
    try:
        atomic_write_text(tmp_path / "private.txt", "secret\n")
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "private.txt").stat().st_mode) == 0o600


def test_one_server_serves_a_local_snakemake_run(env, tmp_path):
    """The jobs of one local run that opts into the warm start (`make demo` sets MTCUE_WARM=1) get the same
    environment (the thread variables follow a rule's threads, 1 in every rule of the demo): the socket's key
    gives them one server."""
    (tmp_path / "Snakefile").write_text(f"""include: "{REPO / 'workflow' / 'rules' / 'local.smk'}"
rule all:
    input: expand("help/{{i}}.txt", i=range(3))

rule step:
    output: "help/{{i}}.txt"
    shell: "{MTCUE} {' '.join(STEP)} 2> {{output}}"
""", encoding="utf-8")
    run = subprocess.run([SNAKEMAKE, "--cores", "2", "all"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**env, "MTCUE_WARM": "1"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert all(MAY_READ in (tmp_path / "help" / f"{i}.txt").read_text() for i in range(3))
    assert len(_processes(env["TMPDIR"])) == 1


def test_a_connection_without_a_request_harms_no_step(env):
    """A command with a closed standard stream (`mtcue check-config ... <&-`), a connection closed at once and one
    that sends nothing: the server serves the next step as before."""
    assert mtcue(STEP, env, True).returncode == 0
    [server] = _processes(env["TMPDIR"])
    closed = subprocess.run(["sh", "-c", f'exec "{MTCUE}" {" ".join(STEP)} <&-'], env={**env, "MTCUE_WARM": "1"},
                            capture_output=True, text=True, timeout=180)
    assert closed.returncode == 0 and MAY_READ in closed.stderr
    path = socket_of(env)
    with socket.socket(socket.AF_UNIX) as hangup:
        hangup.connect(str(path))
    with socket.socket(socket.AF_UNIX) as silent:
        silent.connect(str(path))
        served = mtcue(STEP, env, True)
    assert served.returncode == 0 and MAY_READ in served.stderr
    assert _processes(env["TMPDIR"]) == [server]


def test_a_stopped_command_ends_when_the_server_gives_no_status(env):
    """SIGTERM to a command whose server never answers: it passes the stop on, waits STOP_GRACE_S for the
    status, then ends."""
    path = socket_of(env)
    path.parent.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        command = subprocess.Popen([MTCUE, *STEP], env={**env, "MTCUE_WARM": "1"}, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            server.settimeout(60)
            conn, _ = server.accept()
            conn.recv(4)  # its request is coming: the command waits for the status
            time.sleep(1)
            command.send_signal(signal.SIGTERM)
            _, err = command.communicate(timeout=30)
        finally:
            command.kill()
        assert conn.recv(1 << 20).endswith(b"T")  # the stop, after the rest of the request
        conn.close()
    assert command.returncode == 128 + signal.SIGTERM
    assert "the step reported no status within 5 s of the stop" in err


@pytest.mark.parametrize("trouble", ["long TMPDIR", "server exits"])
def test_a_server_that_cannot_start_leaves_the_step_cold_at_once(env, trouble):
    if trouble == "long TMPDIR":  # no Unix socket path is that long
        deep = Path(env["TMPDIR"]) / ("d" * 120)
        deep.mkdir()
        env, said = {**env, "TMPDIR": str(deep)}, "is longer than a Unix socket allows"
    else:  # the hub client refuses it when the server imports sentence-transformers
        env, said = {**env, "HF_HUB_ETAG_TIMEOUT": "soon"}, "the warm server exited at start with status 1"
    start = time.monotonic()
    warm = mtcue(STEP, env, True)
    assert time.monotonic() - start < 90  # not START_TIMEOUT_S (120 s) of silence
    cold = mtcue(STEP, env, False)
    assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout) and cold.returncode == 0
    [line] = [line for line in warm.stderr.splitlines() if line.startswith("mtcue: ")]
    assert said in line and line.endswith("; running the step cold")


def test_the_command_side_imports_nothing_of_mtcue():
    """cli imports mtcue.warm; mtcue.warm_server, whose children run cli.main, is imported by nobody: no
    import circle."""
    tree = ast.parse((REPO / "src" / "mtcue" / "warm.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {name for name in imported if name.split(".")[0] == "mtcue"}


def test_help_answers_while_a_server_is_stopped(env):
    """A server stopped (SIGSTOP) accepts connections into its backlog and answers nothing: a step's command
    waits for it to go on, but `--help` is printed by the command itself."""
    path = socket_of(env)
    path.parent.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX) as stopped:
        stopped.bind(str(path))
        stopped.listen()  # never accepts, as a stopped server
        for args in (["--help"], ["train", "--help"]):
            shown = subprocess.run([MTCUE, *args], env={**env, "MTCUE_WARM": "1"}, capture_output=True, text=True,
                                   timeout=60)
            assert shown.returncode == 0 and shown.stdout.startswith("usage: mtcue")


def test_commands_of_another_nice_level_affinity_or_limit_get_a_server_apart(monkeypatch):
    """A server hands a step its own nice level, affinity and limits (a forked child inherits them): a command
    that differs in any must not be served by it."""
    import resource

    from mtcue import warm

    first = warm.socket_path()
    level = os.getpriority(os.PRIO_PROCESS, 0)
    with monkeypatch.context() as patched:  # another level, whatever this one's (at 19, `nice` raises it no more)
        patched.setattr(os, "getpriority", lambda *_: level - 1 if level == 19 else level + 1)
        assert warm.socket_path() != first
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    cpus = os.sched_getaffinity(0)
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0 if soft else 1, hard))  # `ulimit -c`
        assert warm.socket_path() != first
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))
        assert warm.socket_path() == first
        if len(cpus) > 1:  # `taskset`
            os.sched_setaffinity(0, {min(cpus)})
            assert warm.socket_path() != first
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))
        os.sched_setaffinity(0, cpus)
    assert warm.socket_path() == first
    if level == 19:  # the most a process can be niced: `nice -n 5` would leave the level as it is
        return
    niced = subprocess.run(["nice", "-n", str(min(5, 19 - level)), PYTHON, "-c", "from mtcue import warm; print(warm.socket_path())"],
                           capture_output=True, text=True, timeout=60)
    plain = subprocess.run([PYTHON, "-c", "from mtcue import warm; print(warm.socket_path())"],
                           capture_output=True, text=True, timeout=60)
    assert niced.stdout != plain.stdout and plain.stdout.endswith(".sock\n")
