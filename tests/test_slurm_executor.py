"""`--executor slurm`: the job array, progress, failures with Slurm's reason, resume.

The unit tests feed the parser Slurm's real output formats; the slow tests bring up a
single-node Slurm cluster from Debian's packages in a temporary folder (tests/slurm_cluster.py)
and run real trials through it.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from slurm_cluster import SlurmCluster, missing_binaries
from test_topology_fakes import REPO, needs_root

from testbed import slurm
from testbed.spec import TrialSpec

RUN_TRIALS = str(REPO / "run_trials.sh")
# The control trials of transport `none` time a few bulk transfers (testbed/probe.py, 3 s
# each by default); what these tests check does not depend on their length.
SHORT_TRANSFERS = {"TESTBED_CONTROL_TRANSFER_S": "0.5"}


def _completed(stdout: str, code: int = 0) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess([], code, stdout=stdout, stderr="")


def test_sacct_lines_become_task_states(monkeypatch):
    out = (
        "17_0|COMPLETED|0:0|None\n17_1|CANCELLED by 0|0:15|None\n17_2|FAILED|1:0|NonZeroExitCode\n"
    )
    monkeypatch.setattr(slurm, "_run", lambda argv, timeout_s=60: _completed(out))
    states = slurm._sacct_states("17")
    assert states[0].state == "COMPLETED"
    assert states[1].state == "CANCELLED" and states[1].exit_code == "0:15"
    assert states[2].reason == "NonZeroExitCode"


def test_scontrol_lines_become_task_states(monkeypatch):
    out = (
        "JobId=21 ArrayJobId=20 ArrayTaskId=1 JobName=x JobState=CANCELLED Reason=None "
        "ExitCode=0:15\n"
        "JobId=20 ArrayJobId=20 ArrayTaskId=0 JobName=x JobState=COMPLETED Reason=None "
        "ExitCode=0:0\n"
    )
    monkeypatch.setattr(slurm, "_run", lambda argv, timeout_s=60: _completed(out))
    states = slurm._scontrol_states("20")
    assert states == {
        1: slurm.TaskState("CANCELLED", "None", "0:15"),
        0: slurm.TaskState("COMPLETED", "None", "0:0"),
    }


def test_squeue_counts_running_and_pending(monkeypatch):
    out = "0 RUNNING\n1 RUNNING\n2 PENDING\n3 PENDING\n4 PENDING\n"
    monkeypatch.setattr(slurm, "_run", lambda argv, timeout_s=60: _completed(out))
    status = slurm.queue_status("9")
    assert (status.running, status.pending) == (2, 3)


def _spec(rep: int, player: str | None = None) -> TrialSpec:
    if player is None:
        return TrialSpec("control", "none", None, None, None, 0, rep, 1)
    return TrialSpec("control", "user", "cubic", "lrf", player, 0, rep, 1)


def test_failed_task_without_result_is_recorded_with_slurms_reason(tmp_path, monkeypatch):
    specs = [_spec(0), _spec(1)]
    ids = [s.trial_id() for s in specs]
    ok_dir = tmp_path / "trials" / ids[0]
    ok_dir.mkdir(parents=True)
    (ok_dir / "result.json").write_text(json.dumps({"status": "ok", "trial_id": ids[0]}))
    states = {0: slurm.TaskState("COMPLETED", "None", "0:0"),
              1: slurm.TaskState("CANCELLED", "None", "0:15")}  # fmt: skip
    monkeypatch.setattr(slurm, "final_states", lambda job: states)
    assert slurm.record_failures(tmp_path, "33", ids) == [ids[1]]
    result = json.loads((tmp_path / "trials" / ids[1] / "result.json").read_text())
    assert result["status"] == "failed" and result["resubmit"] is True
    assert "33_1 ended CANCELLED" in result["reason"] and "0:15" in result["reason"]
    # The resubmission takes exactly the failed one.
    assert slurm.pending_ids(tmp_path, specs) == ([ids[1]], 1)


def test_streaming_trials_get_two_cpus_transfers_one():
    assert slurm.cpus_per_trial([_spec(0)]) == 1
    assert slurm.cpus_per_trial([_spec(0), _spec(0, "dashjs")]) == 2


def test_options_that_need_slurm_or_a_run_exit_2(tmp_path):
    env = {**os.environ, "SLURM_CONF": str(tmp_path / "nowhere.conf")}
    for argv in (["--detach"], ["--trial-id", "x"], ["--slurm-opt=--time=5"]):
        proc = subprocess.run([RUN_TRIALS, *argv], capture_output=True, text=True, env=env)
        assert proc.returncode == 2, (argv, proc.stderr)
    proc = subprocess.run(
        [RUN_TRIALS, "--executor", "slurm", "--transport", "none", "--out", str(tmp_path / "r")],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "slurm" in proc.stderr.lower()
    assert not (tmp_path / "r").exists()  # refused before anything was created


# ---- a real single-node cluster --------------------------------------------------------


@pytest.fixture
def cluster(tmp_path_factory):
    missing = missing_binaries()
    if missing:
        pytest.skip(
            f"Slurm not installed (missing {' '.join(missing)}); scripts/setup.sh installs it"
        )
    c = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        c.start()
        yield c
    finally:
        c.stop()
    for pid in c.pids():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _run_trials(cluster: SlurmCluster, *argv: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [RUN_TRIALS, "--executor", "slurm", *argv],
        capture_output=True, text=True, env={**cluster.env, **SHORT_TRANSFERS}, timeout=900, **kw,
    )  # fmt: skip


def _summary(run: Path) -> list[dict]:
    with open(run / "summary.csv") as f:
        return list(csv.DictReader(f))


def _submissions(run: Path) -> list[dict]:
    path = run / "slurm" / "submissions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@needs_root
@pytest.mark.slow
@pytest.mark.netns
def test_matrix_on_a_slurm_cluster_gives_the_local_summary_and_resumes(cluster, tmp_path):
    run = tmp_path / "slurm-run"
    matrix = ["--transport", "none,user", "--scenario", "control", "--video-duration", "4"]
    proc = _run_trials(cluster, *matrix, "--out", str(run))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "slurm job" in proc.stderr and "submitted slurm job array" in proc.stdout
    rows = _summary(run)
    ids = {r["trial_id"] for r in rows}
    dry = subprocess.run([RUN_TRIALS, *matrix, "--dry-run"], capture_output=True, text=True)
    assert ids == {line.strip() for line in dry.stdout.splitlines()[1:]}
    assert all(r["status"] == "ok" for r in rows), rows
    # The same trial run locally gives a summary with the same columns.
    local = tmp_path / "local-run"
    subprocess.run(
        [RUN_TRIALS, "--transport", "none", "--scenario", "control", "--out", str(local)],
        check=True, capture_output=True, timeout=600, env={**os.environ, **SHORT_TRANSFERS},
    )  # fmt: skip
    local_row = _summary(local)[0]
    slurm_row = next(r for r in rows if r["trial_id"] == local_row["trial_id"])
    assert set(local_row) <= set(rows[0])
    for column in ("status", "valid", "scenario", "transport"):
        assert slurm_row[column] == local_row[column], column
    # Resubmitting runs nothing.
    again = _run_trials(cluster, *matrix, "--out", str(run))
    assert again.returncode == 0
    assert "nothing to submit" in again.stdout
    assert len(_submissions(run)) == 1


@needs_root
@pytest.mark.slow
@pytest.mark.netns
def test_a_killed_array_task_fails_with_slurms_reason_and_only_it_reruns(cluster, tmp_path):
    run = tmp_path / "kill-run"
    matrix = ["--transport", "none", "--scenario", "control", "--reps", "3", "--out", str(run)]
    proc = subprocess.Popen(
        [RUN_TRIALS, "--executor", "slurm", *matrix],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        job = victim = None
        while time.monotonic() < deadline and victim is None:
            subs = _submissions(run)
            if subs:
                job = subs[0]["job_id"]
                out = subprocess.run(["squeue", "-h", "-r", "-j", job, "-o", "%K %T"],
                                     capture_output=True, text=True, env=cluster.env)  # fmt: skip
                running = [int(line.split()[0]) for line in out.stdout.splitlines()
                           if line.split()[1] == "RUNNING"]  # fmt: skip
                trial = subs[0]["trials"][running[0]] if running else None
                if trial and (run / "trials" / trial / "logs").is_dir():
                    time.sleep(2)  # well inside the trial
                    victim = running[0]
                    subprocess.run(["scancel", f"{job}_{victim}"], env=cluster.env, check=True)
            time.sleep(0.5)
        assert victim is not None, "no array task was seen running"
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, stdout + stderr
    victim_id = _submissions(run)[0]["trials"][victim]
    results = {
        p.name: json.loads((p / "result.json").read_text()) for p in (run / "trials").iterdir()
    }
    assert results[victim_id]["status"] == "failed"
    assert "CANCELLED" in results[victim_id]["reason"]
    others = [r for tid, r in results.items() if tid != victim_id]
    assert len(others) == 2 and all(r["status"] == "ok" for r in others)
    # Resubmitting re-runs only the killed trial.
    again = subprocess.run(
        [RUN_TRIALS, "--executor", "slurm", *matrix],
        capture_output=True, text=True, env=cluster.env, timeout=600,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert _submissions(run)[-1]["trials"] == [victim_id]
    assert json.loads((run / "trials" / victim_id / "result.json").read_text())["status"] == "ok"
