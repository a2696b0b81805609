"""`run_trials.sh --executor slurm`: run a matrix as one Slurm job array.

The submitting host expands the matrix as for a local run and writes the run folder's
`run.json` (every spec). It then submits ONE job array with one task per pending trial;
task i runs exactly one trial with `run_trials.sh --out RUN_DIR --trial-id ID`, on
whichever node Slurm gives it. The run folder must therefore be on storage every node
sees at the same path (a shared file system), and every node needs the repository at the
same path, set up once (`scripts/setup.sh`) and root for network namespaces (see the
README, "Running on a Slurm cluster").

Nothing else is a daemon of ours: progress comes from `squeue` (running, pending) and the
trial folders (done, failed); when the array has left the queue, a trial whose task did not
leave a successful result is recorded as failed with the state and reason Slurm gives
(`sacct` where accounting is enabled, else `scontrol show job`, which keeps finished jobs
for MinJobAge). Such a result is marked `"resubmit": true`, so submitting the same command
again re-runs only those trials (a trial that failed on its own, with its own result, is
finished, as in a local run).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from common.files import write_json_atomically
from testbed.spec import TrialSpec

SLURM_DIR = "slurm"
POLL_S = 5.0
JOB_NAME = "mptcp-testbed"
# CPUs one trial needs to itself: a streaming trial gives its player one core and the
# testbed's own processes (linkemu, mpproxy, nginx) another (the per-trial CPU sets of a
# local run); the control transfer has no player.
CPUS_STREAMING = 2
CPUS_TRANSFER = 1
# Array task states after which the task will not run again.
FINAL_OK = {"COMPLETED"}


class SlurmError(Exception):
    """Slurm is not usable or refused the job; the message says what and why."""


def cpus_per_trial(specs: list[TrialSpec]) -> int:
    return CPUS_STREAMING if any(s.player is not None for s in specs) else CPUS_TRANSFER


def _run(argv: list[str], timeout_s: float = 60.0) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except FileNotFoundError as exc:
        raise SlurmError(
            f"{argv[0]} not found: --executor slurm needs the Slurm client commands "
            "(sbatch, squeue, scontrol) on this host"
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise SlurmError(f"`{' '.join(argv)}` did not answer within {timeout_s:.0f} s") from exc


def check_available() -> None:
    for tool in ("sbatch", "squeue", "scontrol"):
        if shutil.which(tool) is None:
            raise SlurmError(
                f"{tool} not found: --executor slurm needs the Slurm client commands on this "
                "host (Debian: apt-get install slurm-client) and a reachable controller"
            )
    conf = os.environ.get("SLURM_CONF")
    if conf and not Path(conf).is_file():
        raise SlurmError(f"SLURM_CONF names {conf}, which is not a file")
    ping = _run(["scontrol", "ping"], timeout_s=20)
    if ping.returncode != 0 or "UP" not in ping.stdout:
        raise SlurmError(
            "no Slurm controller answers `scontrol ping` "
            f"({(ping.stdout + ping.stderr).strip() or 'no output'}); is SLURM_CONF set?"
        )


def write_batch_script(run_dir: Path, repo: Path, ids: list[str]) -> tuple[Path, Path]:
    """The list of trial ids of this submission and the script each array task runs."""
    sdir = run_dir / SLURM_DIR
    (sdir / "logs").mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    id_list = sdir / f"trials-{stamp}.txt"
    id_list.write_text("".join(f"{i}\n" for i in ids))
    script = sdir / f"task-{stamp}.sh"
    script.write_text(
        "#!/usr/bin/env bash\n"
        "# One array task = one trial (written by run_trials.sh --executor slurm).\n"
        "set -euo pipefail\n"
        f'id=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" {shlex.quote(str(id_list))})\n'
        'echo "array task $SLURM_ARRAY_JOB_ID/$SLURM_ARRAY_TASK_ID on $(hostname): trial $id"\n'
        f"exec {shlex.quote(str(repo / 'run_trials.sh'))} "
        f'--out {shlex.quote(str(run_dir.resolve()))} --trial-id "$id"\n'
    )
    script.chmod(0o755)
    return id_list, script


def submit(
    run_dir: Path, repo: Path, specs: list[TrialSpec], ids: list[str], slurm_opts: list[str]
) -> str:
    """Submit one array for `ids`; returns the array job id."""
    id_list, script = write_batch_script(run_dir, repo, ids)
    argv = [
        "sbatch",
        "--parsable",
        f"--job-name={JOB_NAME}",
        f"--array=0-{len(ids) - 1}",
        f"--cpus-per-task={cpus_per_trial(specs)}",
        f"--output={run_dir.resolve() / SLURM_DIR / 'logs' / '%A_%a.out'}",
        f"--chdir={repo}",
        *slurm_opts,
        str(script),
    ]
    proc = _run(argv)
    if proc.returncode != 0:
        raise SlurmError(f"sbatch refused the job array: {proc.stderr.strip() or proc.stdout}")
    job_id = proc.stdout.strip().split(";")[0]
    record = {
        "job_id": job_id,
        "submitted_unix_s": time.time(),
        "sbatch_argv": argv,
        "trials": ids,
        "id_list": str(id_list),
    }
    with open(run_dir / SLURM_DIR / "submissions.jsonl", "a") as out:
        out.write(json.dumps(record) + "\n")
    return job_id


@dataclass
class TaskState:
    state: str
    reason: str = ""
    exit_code: str = ""


@dataclass
class ArrayStatus:
    queued: dict[int, str] = field(default_factory=dict)  # task index -> PENDING/RUNNING/...

    @property
    def running(self) -> int:
        return sum(1 for s in self.queued.values() if s in ("RUNNING", "COMPLETING"))

    @property
    def pending(self) -> int:
        return sum(1 for s in self.queued.values() if s in ("PENDING", "CONFIGURING"))


def queue_status(job_id: str) -> ArrayStatus:
    """Tasks of the array still in the queue (`squeue`, one line per array task)."""
    proc = _run(["squeue", "-h", "-r", "-j", job_id, "-o", "%K %T"])
    status = ArrayStatus()
    if proc.returncode != 0:  # the job has left the queue entirely (or Slurm forgot it)
        return status
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            status.queued[int(parts[0])] = parts[1]
    return status


def final_states(job_id: str) -> dict[int, TaskState]:
    """How each array task ended: sacct where accounting works, else scontrol."""
    states = _sacct_states(job_id)
    return states if states else _scontrol_states(job_id)


def _sacct_states(job_id: str) -> dict[int, TaskState]:
    proc = _run(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State,ExitCode,Reason"])
    states: dict[int, TaskState] = {}
    if proc.returncode != 0:
        return states
    for line in proc.stdout.splitlines():
        parts = line.split("|")
        if len(parts) >= 3 and "_" in parts[0]:
            task = parts[0].split("_", 1)[1]
            if task.isdigit():
                reason = parts[3] if len(parts) > 3 else ""
                states[int(task)] = TaskState(parts[1].split()[0], reason, parts[2])
    return states


def _scontrol_states(job_id: str) -> dict[int, TaskState]:
    proc = _run(["scontrol", "show", "job", job_id, "-o"])
    states: dict[int, TaskState] = {}
    if proc.returncode != 0:
        return states
    for line in proc.stdout.splitlines():
        fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        task = fields.get("ArrayTaskId", "")
        if task.isdigit():
            states[int(task)] = TaskState(
                fields.get("JobState", "UNKNOWN"),
                fields.get("Reason", ""),
                fields.get("ExitCode", ""),
            )
    return states


def _read_result(trial_dir: Path) -> dict | None:
    try:
        return json.loads((trial_dir / "result.json").read_text())
    except (OSError, ValueError):
        return None


def record_failures(run_dir: Path, job_id: str, ids: list[str]) -> list[str]:
    """After the array ended: a trial whose task did not end well and left no ok result is
    failed, with Slurm's words; returns the ids recorded so."""
    states = final_states(job_id)
    recorded = []
    for index, trial_id in enumerate(ids):
        trial_dir = run_dir / "trials" / trial_id
        result = _read_result(trial_dir)
        task = states.get(index, TaskState("UNKNOWN", "Slurm no longer knows this task"))
        if result is not None and result.get("status") == "ok":
            continue
        if task.state in FINAL_OK and result is not None:
            continue  # the trial failed on its own and said why: a finished trial
        reason = (
            f"slurm array task {job_id}_{index} ended {task.state}"
            + (f" (reason {task.reason})" if task.reason and task.reason != "None" else "")
            + (f", exit code {task.exit_code}" if task.exit_code else "")
            + f"; its output: {run_dir / SLURM_DIR / 'logs' / f'{job_id}_{index}.out'}"
        )
        failed = dict(result or {})
        failed.update(
            {
                "schema": failed.get("schema", 1),
                "trial_id": trial_id,
                "status": "failed",
                "reason": reason
                + (
                    f"; the trial said: {result['reason']}"
                    if result and result.get("reason")
                    else ""
                ),
                "valid": False,
                "invalid_reasons": [f"failed: {reason}"],
                "resubmit": True,
                "slurm": {
                    "job_id": job_id,
                    "task": index,
                    "state": task.state,
                    "reason": task.reason,
                    "exit_code": task.exit_code,
                },  # fmt: skip
            }
        )
        failed.setdefault("subflows_with_data", None)
        trial_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomically(trial_dir / "result.json", failed)
        recorded.append(trial_id)
    return recorded


def _counts(run_dir: Path, ids: list[str]) -> tuple[int, int]:
    done = failed = 0
    for trial_id in ids:
        result = _read_result(run_dir / "trials" / trial_id)
        if result is None:
            continue
        if result.get("status") == "ok":
            done += 1
        else:
            failed += 1
    return done, failed


def monitor(run_dir: Path, job_id: str, ids: list[str], total: int, before_ok: int) -> int:
    """Show progress until the array has left the queue; returns failed trial count."""
    started = time.monotonic()
    while True:
        status = queue_status(job_id)
        done, failed = _counts(run_dir, ids)
        line = (
            f"slurm job {job_id}: {before_ok + done}/{total} trials done, {failed} failed, "
            f"{status.running} running, {status.pending} pending "
            f"({int(time.monotonic() - started)} s)"
        )
        print(line, file=sys.stderr, flush=True)
        if not status.queued:
            break
        time.sleep(POLL_S)
    recorded = record_failures(run_dir, job_id, ids)
    for trial_id in recorded:
        print(f"{trial_id}: failed: {_read_result(run_dir / 'trials' / trial_id)['reason']}")
    _, failed = _counts(run_dir, ids)
    return failed


def pending_ids(run_dir: Path, specs: list[TrialSpec]) -> tuple[list[str], int]:
    """Trials to submit (no result, or a result marked for resubmission) and how many are
    already finished ok."""
    ids, ok = [], 0
    for spec in specs:
        result = _read_result(run_dir / "trials" / spec.trial_id())
        if result is None or result.get("resubmit"):
            ids.append(spec.trial_id())
        elif result.get("status") == "ok":
            ok += 1
    return ids, ok


def run_slurm(
    specs: list[TrialSpec],
    run_dir: Path,
    repo: Path,
    *,
    slurm_opts: list[str],
    detach: bool,
    write_manifest,
) -> int:
    """Submit what is pending, then follow it (or return at once with `detach`)."""
    try:
        check_available()
    except SlurmError as exc:
        print(f"run_trials.sh --executor slurm: {exc}", file=sys.stderr)
        return 2
    run_dir.mkdir(parents=True, exist_ok=True)
    write_manifest()
    ids, ok = pending_ids(run_dir, specs)
    print(
        f"run {run_dir}: {len(specs)} trials, {len(specs) - len(ids)} already finished, "
        f"{len(ids)} to submit",
        flush=True,
    )
    if not ids:
        print("nothing to submit: every trial has a result; for a fresh run give --out <name>")
        return build_report_quietly(run_dir)
    for trial_id in ids:  # a resubmitted trial starts from scratch
        stale = run_dir / "trials" / trial_id
        if stale.exists():
            shutil.rmtree(stale)
    try:
        job_id = submit(run_dir, repo, specs, ids, slurm_opts)
    except SlurmError as exc:
        print(f"run_trials.sh --executor slurm: {exc}", file=sys.stderr)
        return 2
    print(f"submitted slurm job array {job_id} ({len(ids)} tasks)", flush=True)
    if detach:
        print(
            f"detached; follow it with squeue -j {job_id}, then build the report with "
            f"./run_trials.sh --report {run_dir} (or re-run this command to resume)"
        )
        return 0
    failed = monitor(run_dir, job_id, ids, len(specs), ok)
    build_report_quietly(run_dir)
    return 0 if failed == 0 else 1


def build_report_quietly(run_dir: Path) -> int:
    from testbed.matrix import build_report

    return build_report(run_dir)
