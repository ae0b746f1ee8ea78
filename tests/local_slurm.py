"""A real single-node SLURM on this machine, for the integration test (tests/test_slurm.py).

Debian's packages (munge, slurmctld, slurmd, slurm-client), started without systemd, as root:
one node `localhost` with every CPU and one fake GPU, a default partition and a second one
(to test per-rule partition overrides). By hand:

    python tests/local_slurm.py up      # install if needed, start munged, slurmctld, slurmd
    python tests/local_slurm.py down    # stop exactly the daemons `up` started (by PID), remove config

Facts this relies on (verified with SLURM 22.05 on Debian 12 by tests/test_slurm.py):
- slurm.conf and gres.conf live in /etc/slurm: the job-step plugin strips SLURM_* variables
  (SLURM_CONF too) before its inner `srun`, so only the compiled-in path works inside jobs.
- A GPU needs a device file: SLURM 22.05 drops a File-less GPU and drains the node. /dev/null
  stands in; jobs then see CUDA_VISIBLE_DEVICES=0 (no CUDA behind it: torch falls back to CPU).
- No accounting daemon, so `sacct` fails: clients must query job states with squeue. Finished
  jobs stay visible to squeue/scontrol for MinJobAge seconds (an hour here).
- The node claims the size of a cluster's GPU node (NODE_CPUS, NODE_MEMORY_MB; slurmd believes
  the configuration: SlurmdParameters=config_overrides), so the profile's requests, unedited, fit
  on a small test machine. Jobs share its real cores.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

PACKAGES = ["munge", "slurmctld", "slurmd", "slurm-client"]
BINARIES = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo", "scancel"]
ETC = Path("/etc/slurm")
# Fixed, not per run: a run killed before its tear-down leaves PID files here for the next one.
STATE = Path("/var/tmp/mtcue-slurm")
LOCK = Path("/var/tmp/mtcue-slurm.lock")
MARK = "# mtcue test cluster (tests/local_slurm.py): removed by `down`"
PARTITION = "mtcue-test"     # the default partition; the profile must find it without being told
OTHER_PARTITION = "mtcue-other"
MUNGE_PID = Path("/run/munge/munged.pid")
DAEMONS = ("slurmd", "slurmctld")  # stopped in this order
NODE_CPUS, NODE_MEMORY_MB = 16, 65536  # a GPU node's size (see the module doc)


def unavailable() -> str | None:
    """Why a SLURM cannot be brought up here, or None."""
    if os.geteuid() != 0:
        return "needs root (installs Debian packages and starts SLURM daemons)"
    missing = [b for b in BINARIES if shutil.which(b) is None]
    if missing and shutil.which("apt-get") is None:
        return f"SLURM is not installed ({', '.join(missing)} missing) and there is no apt-get to install it"
    conf = ETC / "slurm.conf"
    if conf.exists() and MARK not in conf.read_text(errors="replace"):
        return f"{conf} belongs to another SLURM on this machine; not touching it"
    return None


def _run(*cmd: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def install() -> None:
    """Install the packages if a binary is missing (nothing starts: no systemd here)."""
    if all(shutil.which(b) for b in BINARIES):
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    lock_wait = ["-o", "DPkg::Lock::Timeout=300"]
    _run("apt-get", "update", "-q", *lock_wait, env=env)
    _run("apt-get", "install", "-y", "-q", "--no-install-recommends", *lock_wait, *PACKAGES, env=env)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes (its parent may be us and not have reaped it yet).
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def _read_pid(path: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text().strip())
    return None


def _stop(pid: int, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after `timeout` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.1)


def _write_config(state: Path) -> None:
    ETC.mkdir(parents=True, exist_ok=True)
    (ETC / "slurm.conf").write_text(f"""{MARK}
ClusterName=mtcuetest
SlurmctldHost=localhost
SlurmUser=root
AuthType=auth/munge
StateSaveLocation={state}/state
SlurmdSpoolDir={state}/spool
SlurmctldPidFile={state}/run/slurmctld.pid
SlurmdPidFile={state}/run/slurmd.pid
SlurmctldLogFile={state}/log/slurmctld.log
SlurmdLogFile={state}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={state}/log/jobcomp.txt
MpiDefault=none
ReturnToService=2
MinJobAge=3600
GresTypes=gpu
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs={NODE_CPUS} RealMemory={NODE_MEMORY_MB} Gres=gpu:1 State=UNKNOWN
PartitionName={PARTITION} Nodes=localhost Default=YES MaxTime=INFINITE DefMemPerCPU=1024 State=UP
PartitionName={OTHER_PARTITION} Nodes=localhost Default=NO MaxTime=INFINITE DefMemPerCPU=1024 State=UP
""")
    (ETC / "gres.conf").write_text(f"{MARK}\nNodeName=localhost Name=gpu Count=1 File=/dev/null\n")


def _start_munge(state: Path) -> None:
    """Start munged unless one runs already (then it is not ours to stop)."""
    pid = _read_pid(MUNGE_PID)
    if pid is not None and _alive(pid):
        return
    key = Path("/etc/munge/munge.key")
    if not key.exists():  # Debian's package creates one; make one if it did not
        key.write_bytes(os.urandom(1024))
        shutil.chown(key, "munge", "munge")
        key.chmod(0o400)
    MUNGE_PID.parent.mkdir(parents=True, exist_ok=True)
    shutil.chown(MUNGE_PID.parent, "munge", "munge")
    MUNGE_PID.parent.chmod(0o755)
    _run("runuser", "-u", "munge", "--", "munged")  # forks; writes MUNGE_PID
    for _ in range(50):
        if _read_pid(MUNGE_PID):
            break
        time.sleep(0.1)
    (state / "run" / "munged.ours").write_text(str(_read_pid(MUNGE_PID)))


def _wait_idle(timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    states = ""
    while time.monotonic() < deadline:
        states = subprocess.run(["sinfo", "-h", "-o", "%T"], text=True, capture_output=True).stdout.split()
        if states and all(s == "idle" for s in states):
            return
        time.sleep(0.25)
    raise RuntimeError(f"SLURM node not idle after {timeout:.0f} s (sinfo: {states}); see {STATE}/log")


def up(state: Path = STATE) -> None:
    reason = unavailable()
    if reason:
        raise RuntimeError(f"cannot start a test SLURM: {reason}")
    down(state)  # whatever a killed earlier run left behind
    install()
    for sub in ("state", "spool", "log", "run"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    _write_config(state)
    _start_munge(state)
    _run("slurmctld")                 # forks; writes SlurmctldPidFile
    _run("slurmd", "-N", "localhost")  # -N: the node name is not this host's name
    _wait_idle()


def leftovers(state: Path = STATE) -> list[str]:
    """Daemons of ours still running, and any slurmstepd (its jobs' step daemons)."""
    found = [f"{d} (pid {p})" for d in DAEMONS if (p := _read_pid(state / "run" / f"{d}.pid")) and _alive(p)]
    munge = _read_pid(state / "run" / "munged.ours")
    if munge and _alive(munge):
        found.append(f"munged (pid {munge})")
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if (proc / "comm").read_text().strip() == "slurmstepd" and _alive(int(proc.name)):
                    found.append(f"slurmstepd (pid {proc.name})")
    return found


def down(state: Path = STATE) -> None:
    """Cancel every job, stop the daemons `up` started (by PID file), remove config and state."""
    ctld = _read_pid(state / "run" / "slurmctld.pid")
    if ctld and _alive(ctld):
        subprocess.run(["scancel", "--full", f"--user={os.getuid()}"], capture_output=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            out = subprocess.run(["squeue", "-h", "-t", "PD,R,CG,CF,S", "-o", "%i"], capture_output=True, text=True)
            if out.returncode or not out.stdout.strip():
                break
            time.sleep(0.25)
    for daemon in DAEMONS:
        pid = _read_pid(state / "run" / f"{daemon}.pid")
        if pid and _alive(pid):
            _stop(pid)
    munge = _read_pid(state / "run" / "munged.ours")
    if munge and _alive(munge):
        _stop(munge)
    for name in ("slurm.conf", "gres.conf"):
        conf = ETC / name
        if conf.exists() and MARK in conf.read_text(errors="replace"):
            conf.unlink()
    shutil.rmtree(state, ignore_errors=True)


@contextlib.contextmanager
def running(state: Path = STATE, lock_timeout: float = 1800):
    """A started cluster for the duration of the block, always torn down after it.

    One at a time per machine (a lock file; a second test session waits for the first), and
    a SIGTERM (a CI time-out) still tears it down.
    """
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with LOCK.open("w") as lock:
        deadline = time.monotonic() + lock_timeout
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"another test SLURM held {LOCK} for {lock_timeout:.0f} s") from None
                time.sleep(1)
        previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
        try:
            up(state)
            yield state
        finally:
            down(state)
            signal.signal(signal.SIGTERM, previous)


def jobs() -> list[dict]:
    """Every job the controller still knows (finished ones for MinJobAge), as scontrol's fields."""
    out = _run("scontrol", "show", "job", "--oneliner").stdout
    records = []
    for line in out.splitlines():
        if not line.strip() or line.startswith("No jobs"):
            continue
        fields = {}
        key = None
        for token in line.split(" "):
            if "=" in token:
                key, value = token.split("=", 1)
                fields[key] = value
            elif key:  # a value with spaces (e.g. Command=...)
                fields[key] += " " + token
        records.append(fields)
    return records


if __name__ == "__main__":
    action = sys.argv[1] if len(sys.argv) > 1 else "up"
    if action == "up":
        up()
        print(_run("sinfo").stdout)
    elif action == "down":
        down()
        print("leftovers:", leftovers() or "none")
    elif action == "jobs":
        print(json.dumps(jobs(), indent=1))
    else:
        sys.exit(f"usage: {sys.argv[0]} up|down|jobs")
