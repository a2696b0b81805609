"""A single-node Slurm cluster in a temporary folder, for tests (Debian's packages).

munged, slurmctld and slurmd run as root with a generated munge key and slurm.conf under
the given folder, on free TCP ports of loopback; clients find it through SLURM_CONF. No
cgroup plugin, no accounting database: proctrack/linuxproc, task/none, and `scontrol show
job` keeps finished jobs for MinJobAge (600 s). `stop()` ends the daemons by the PIDs in
their pid files and waits for them.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")
START_TIMEOUT_S = 30.0


def missing_binaries() -> list[str]:
    return [b for b in (*DAEMONS, *CLIENTS) if shutil.which(b) is None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmCluster:
    def __init__(self, folder: Path, cpus: int | None = None) -> None:
        self.dir = folder
        self.cpus = cpus or os.cpu_count() or 1
        self.conf = folder / "slurm.conf"
        self.pid_files = {
            "munged": folder / "munge" / "munged.pid",
            "slurmctld": folder / "slurmctld.pid",
            "slurmd": folder / "slurmd.pid",
        }

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def _write_conf(self) -> None:
        host = socket.gethostname().split(".")[0]
        d = self.dir
        self.conf.write_text(
            f"""ClusterName=testbed
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={d / "munge" / "munge.sock"}
CredType=cred/munge
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
StateSaveLocation={d / "state"}
SlurmdSpoolDir={d / "spool"}
SlurmctldPidFile={self.pid_files["slurmctld"]}
SlurmdPidFile={self.pid_files["slurmd"]}
SlurmctldLogFile={d / "log" / "slurmctld.log"}
SlurmdLogFile={d / "log" / "slurmd.log"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
MinJobAge=600
KillWait=10
NodeName={host} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN
PartitionName=testbed Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""
        )

    def start(self) -> None:
        for sub in ("munge", "state", "spool", "log"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "munge").chmod(0o700)
        key = self.dir / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self._write_conf()
        subprocess.run(
            ["munged", f"--key-file={key}", f"--socket={self.dir / 'munge' / 'munge.sock'}",
             f"--pid-file={self.pid_files['munged']}", f"--seed-file={self.dir / 'munge' / 'seed'}",
             f"--log-file={self.dir / 'log' / 'munged.log'}", "--force"],
            check=True, capture_output=True,
        )  # fmt: skip
        subprocess.run(["slurmctld", "-f", str(self.conf)], check=True, capture_output=True)
        subprocess.run(["slurmd", "-f", str(self.conf)], check=True, capture_output=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            out = subprocess.run(
                ["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True
            )
            if out.returncode == 0 and out.stdout.strip() == "idle":
                return
            time.sleep(0.5)
        raise RuntimeError(
            f"Slurm node not idle within {START_TIMEOUT_S} s; logs in {self.dir}/log"
        )

    def _pid(self, daemon: str) -> int | None:
        try:
            return int(self.pid_files[daemon].read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop(self) -> None:
        subprocess.run(["scancel", "--full", "--user=root"], env=self.env, capture_output=True)
        for daemon in ("slurmd", "slurmctld", "munged"):
            pid = self._pid(daemon)
            if pid is None:
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.2)
            else:
                os.kill(pid, signal.SIGKILL)

    def pids(self) -> list[int]:
        return [p for p in (self._pid(d) for d in DAEMONS) if p is not None]
