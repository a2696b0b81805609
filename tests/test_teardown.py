"""Teardown leaves nothing behind (SIGINT, SIGTERM, early emulator death, timeout), and
the stale sweep removes dead owners' namespaces and processes, and only those."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from proc_state import alive
from test_topology_fakes import REPO, make_fake_repo, namespaces, needs_root, stop_gently

from metrics import schemas
from testbed.supervisor import proc_start_ticks
from testbed.topology import STATE_DIR, namespace_names, sweep_stale
from testbed.trial import EMULATOR_BINARY

pytestmark = [pytest.mark.netns, needs_root]

CONTROL_SPEC = {
    "scenario": "control",
    "transport": "none",
    "cc": None,
    "sched": None,
    "player": None,
    "video_duration_s": 0,
    "rep": 0,
    "seed": 1,
}


def _wait_for(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_topology_owner_leaves_nothing(tmp_path, signum):
    proc = subprocess.Popen(
        [sys.executable, "-m", "testbed.topology", "hold", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        info = json.loads(proc.stdout.readline())
        names = set(info["namespaces"].values())
        assert names <= namespaces()
        pids = list(info["pids"].values())
        assert all(alive(p) for p in pids)
        proc.send_signal(signum)
        assert proc.wait(30) == 130
    finally:
        stop_gently(proc)
    assert not names & namespaces()
    assert not any(alive(p) for p in pids)
    assert not (STATE_DIR / f"{info['hex6']}.json").exists()
    # veth ends were created inside the namespaces: none may appear in the root namespace
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert "c-wifi" not in links and "s-lte" not in links


def _start_trial(
    tmp_path: Path, extra_env: dict[str, str], *args: str, repo: Path | None = None
) -> tuple:
    repo = repo or make_fake_repo(tmp_path)
    trial_dir = tmp_path / "run" / "trials" / "t"
    env = dict(os.environ, **extra_env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "testbed.trial", "--spec", json.dumps(CONTROL_SPEC),
         "--trial-dir", str(trial_dir), "--repo", str(repo), *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    return proc, trial_dir


def _events(trial_dir: Path) -> list[dict]:
    path = trial_dir / "testbed.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("emulator", ["stub", "real"])
def test_sigint_to_running_trial_leaves_nothing(tmp_path, emulator):
    repo = None
    if emulator == "real":
        if not (REPO / EMULATOR_BINARY).is_file():
            pytest.skip(f"{EMULATOR_BINARY} is not built")
        repo = REPO
    proc, trial_dir = _start_trial(tmp_path, {"TESTBED_CONTROL_TRANSFER_S": "60"}, repo=repo)
    try:
        # mid-way: the emulator and the probe server run, a transfer is under way
        _wait_for(
            lambda: any(e.get("name") == "probe-server" for e in _events(trial_dir)),
            60,
            "the probe server to start",
        )
        time.sleep(1.0)
        trial = json.loads((trial_dir / "trial.json").read_text())
        names = set(trial["namespaces"].values())
        pids = [e["pid"] for e in _events(trial_dir) if e["event"] == "process_start"]
        assert names <= namespaces() and len(pids) == 2
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130
    finally:
        stop_gently(proc)
    assert not names & namespaces()
    assert not any(alive(p) for p in pids)
    assert not (trial_dir / "result.json").exists()  # unfinished: a re-run redoes it
    assert any(e["event"] == "interrupted" for e in _events(trial_dir))
    # A real trial's logs follow docs/schemas (the stub emulator writes no real log).
    for log in ("testbed.jsonl", "emulator.jsonl") if emulator == "real" else ("testbed.jsonl",):
        assert schemas.check_file(trial_dir / log) == [], log
    hex6 = next(iter(names)).split("-")[1]
    assert not (STATE_DIR / f"{hex6}.json").exists()


def test_emulator_death_fails_the_trial(tmp_path):
    proc, trial_dir = _start_trial(
        tmp_path, {"TESTBED_CONTROL_TRANSFER_S": "60", "STUB_EMULATOR_DIE_AFTER_S": "2"}
    )
    started = time.monotonic()
    assert proc.wait(90) == 1
    assert time.monotonic() - started < 45  # noticed at once, not after the transfers
    result = json.loads((trial_dir / "result.json").read_text())
    assert result["status"] == "failed" and result["valid"] is False
    assert "'emulator' exited early with status 3" in result["reason"]
    names = set(json.loads((trial_dir / "trial.json").read_text())["namespaces"].values())
    assert not names & namespaces()


def test_trial_timeout(tmp_path):
    proc, trial_dir = _start_trial(
        tmp_path, {"TESTBED_CONTROL_TRANSFER_S": "60"}, "--timeout-s", "4"
    )
    assert proc.wait(90) == 1
    result = json.loads((trial_dir / "result.json").read_text())
    assert result["status"] == "failed"
    assert result["reason"].startswith("timeout")
    assert result["wall_duration_s"] < 30


def _fake_state(state_dir: Path, hex6: str, owner_pid: int, owner_ticks, processes) -> None:
    state = {
        "schema": 1,
        "owner_pid": owner_pid,
        "owner_start_ticks": owner_ticks,
        "namespaces": namespace_names(hex6),
        "processes": processes,
    }
    (state_dir / f"{hex6}.json").write_text(json.dumps(state))


def test_sweep_removes_dead_owners_only(tmp_path):
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    dead_hex, reused_hex, live_hex = "f0dead", "f0ee5e", "f011fe"
    created = [ns for h in (dead_hex, reused_hex, live_hex) for ns in namespace_names(h).values()]
    sleeper = None
    try:
        for ns in created:
            subprocess.run(["ip", "netns", "add", ns], check=True)
        # a process inside the dead owner's client namespace, recorded in its state
        sleeper = subprocess.Popen(
            ["ip", "netns", "exec", namespace_names(dead_hex)["client"], "sleep", "300"],
            start_new_session=True,
        )
        # a dead owner: a process that has exited (pid + its real start time)
        gone = subprocess.Popen(["sleep", "0.2"])
        gone_ticks = proc_start_ticks(gone.pid)
        gone.wait()
        sleeper_entry = {
            "name": "x",
            "pid": sleeper.pid,
            "start_ticks": proc_start_ticks(sleeper.pid),
        }
        _fake_state(state_dir, dead_hex, gone.pid, gone_ticks, [sleeper_entry])
        # pid 1 is alive, but not the process that wrote this state (start time differs)
        _fake_state(state_dir, reused_hex, 1, proc_start_ticks(1) + 12345, [])
        # a live owner: this test process
        _fake_state(state_dir, live_hex, os.getpid(), proc_start_ticks(os.getpid()), [])

        removed = sweep_stale(state_dir)

        present = namespaces()
        for hex6 in (dead_hex, reused_hex):
            assert not set(namespace_names(hex6).values()) & present
            assert not (state_dir / f"{hex6}.json").exists()
        assert set(namespace_names(live_hex).values()) <= present
        assert (state_dir / f"{live_hex}.json").exists()
        assert sleeper.wait(10) is not None
        assert any(str(sleeper.pid) in line for line in removed)
    finally:
        if sleeper and sleeper.poll() is None:
            sleeper.kill()
        for ns in created:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_sweep_drops_old_empty_claims_only(tmp_path):
    old_claim, fresh_claim = tmp_path / "aaaaaa.json", tmp_path / "bbbbbb.json"
    foreign = tmp_path / "kernel-cc-allowed.json"  # another component's file: never touched
    for path in (old_claim, fresh_claim, foreign):
        path.touch()
    two_minutes_ago = time.time() - 120
    for path in (old_claim, foreign):
        os.utime(path, (two_minutes_ago, two_minutes_ago))
    removed = sweep_stale(tmp_path)
    assert not old_claim.exists() and fresh_claim.exists() and foreign.exists()
    assert removed == [f"empty state file {old_claim}"]
