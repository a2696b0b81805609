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
from pathlib import Path

import pytest

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


pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, cgroups, nice -20)"),
    pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium"),
    pytest.mark.skipif(_plan() is None, reason="needs 2 CPUs to give the player its own"),
    pytest.mark.timeout(900),
]

# With autogroups (kernel.sched_autogroup_enabled), nice only ranks tasks within a session's
# autogroup; each loop therefore starts a session of its own and sets that autogroup's nice.
BUSY_LOOP = """
import os, sys
os.sched_setaffinity(0, {int(c) for c in sys.argv[1].split(",")})
os.setsid()
os.setpriority(os.PRIO_PROCESS, 0, -20)
if os.path.exists("/proc/self/autogroup"):
    with open("/proc/self/autogroup", "w") as autogroup:
        autogroup.write("-20")
while True:
    pass
"""


def test_busy_loop_on_the_player_cpu_flags_the_control_trial(tmp_path: Path) -> None:
    plan = _plan()
    assert plan is not None
    cpus = ",".join(str(c) for c in plan.player)
    loops = [
        subprocess.Popen([sys.executable, "-c", BUSY_LOOP, cpus])
        for _ in range(LOOPS_PER_CPU * len(plan.player))
    ]
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
