"""A control session whose player CPU is taken on purpose must be flagged, with the evidence.

Busy loops at nice -20 (each weighs about 87 x a default task, against the player group's
16 x; testbed/cpusets.py) are pinned to the player's CPU(s) for the whole session. The trial
must end invalid, and its invalid_reason must quote the CPU evidence (metrics/drops.py): with
the decoder-side drops or waits, or, if the player was starved so completely that it timed out
or hung, with that timeout (testbed/players.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from proc_state import alive

from testbed.cpusets import CpuPlanError, online_cpus, plan_cpu_sets

REPO = Path(__file__).resolve().parent.parent
LOOPS_PER_CPU = 2
SPEC = {"scenario": "control", "transport": "user", "cc": "cubic", "sched": "lrf",
        "player": "dashjs", "video_duration_s": 12, "rep": 0, "seed": 1}  # fmt: skip


def _plan():
    try:
        return plan_cpu_sets(online_cpus(), 1)[0]
    except CpuPlanError:
        return None


# With autogroups (kernel.sched_autogroup_enabled), nice only ranks tasks within a session's
# autogroup; each loop therefore starts a session of its own and sets that autogroup's nice.
# A session of its own also leaves the test's process group, so a test run killed from outside
# would leave the loop spinning at nice -20: the loop ends itself once its parent (argv[2]) is
# gone, which it sees as a changed parent PID, every ~10 ms of spinning.
BUSY_LOOP = """
import os, sys
os.sched_setaffinity(0, {int(c) for c in sys.argv[1].split(",")})
os.setsid()
os.setpriority(os.PRIO_PROCESS, 0, -20)
if os.path.exists("/proc/self/autogroup"):
    with open("/proc/self/autogroup", "w") as autogroup:
        autogroup.write("-20")
parent = int(sys.argv[2])
while os.getppid() == parent:
    for _ in range(200_000):
        pass
"""


def _busy_loop(cpus: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", BUSY_LOOP, cpus, str(os.getpid())])


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (nice -20)")
def test_busy_loop_ends_itself_when_its_parent_is_gone() -> None:
    # A parent that starts the loop and exits at once, as a test run killed from outside would.
    start_and_exit = (
        "import os, subprocess, sys\n"
        "loop = subprocess.Popen([sys.executable, '-c', sys.argv[1], '0', str(os.getpid())],\n"
        "                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(loop.pid)\n"
    )
    parent = subprocess.run([sys.executable, "-c", start_and_exit, BUSY_LOOP],
                            capture_output=True, text=True, check=True, timeout=30)  # fmt: skip
    loop_pid = int(parent.stdout)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and alive(loop_pid):
        time.sleep(0.05)
    if alive(loop_pid):
        os.kill(loop_pid, 9)
        pytest.fail(f"busy loop {loop_pid} still spinning 10 s after its parent exited")


@pytest.mark.netns
@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, cgroups, nice -20)")
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
@pytest.mark.skipif(_plan() is None, reason="needs 2 CPUs to give the player its own")
@pytest.mark.timeout(900)
def test_busy_loop_on_the_player_cpu_flags_the_control_trial(tmp_path: Path) -> None:
    plan = _plan()
    assert plan is not None
    cpus = ",".join(str(c) for c in plan.player)
    loops = [_busy_loop(cpus) for _ in range(LOOPS_PER_CPU * len(plan.player))]
    trial_dir = tmp_path / "run" / "trials" / "t"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "testbed.trial", "--spec", json.dumps(SPEC),
             "--trial-dir", str(trial_dir), "--repo", str(REPO)],
            cwd=REPO, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    result = json.loads((trial_dir / "result.json").read_text())
    trial = json.loads((trial_dir / "trial.json").read_text())
    assert trial["cpu_isolation"]["pinned"], trial["cpu_isolation"]
    assert trial["cpu_isolation"]["player_cpus"] == cpus
    assert result["valid"] is False
    reasons = " | ".join(result["invalid_reasons"])
    # "player CPUs 97% busy" or more: metrics/drops.py's saturation threshold.
    evidence = re.search(r"player CPUs (9[7-9]|100)% busy", reasons)
    assert evidence, reasons
    if result["status"] == "ok" and ("decoder-side drops" in reasons or "decode stall" in reasons):
        return  # the player decoded late and said so: drops or waits, with the CPU evidence
    # Starved so completely that it never got going: it timed out (status ok, invalid) or hung
    # past its own timeout (status failed). Accepted only if the reason quotes the saturation.
    timed_out = re.search(r"(timed out|did not exit|crashed)[^|]*the player's CPUs were saturated",
                          reasons)  # fmt: skip
    assert timed_out, (result, done.stderr[-2000:])
