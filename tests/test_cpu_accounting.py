"""testbed/cpu_accounting.py: cpu.jsonl from a real sampler over a short busy child."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from metrics import schemas
from testbed.cpu_accounting import CpuSampler, chromium_role
from testbed.cpusets import TrialCpuSets


@dataclass
class FakeProcess:
    name: str
    pid: int


def test_sampler_writes_busy_load_and_components(tmp_path: Path) -> None:
    sets = TrialCpuSets(False, "none", "unpinned, because this is a test")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        processes = [FakeProcess("busy-child", busy.pid)]
        sampler = CpuSampler(tmp_path, time.monotonic_ns(), sets, lambda: processes).start()
        time.sleep(1.6)
        sampler.stop()
        sampler.stop()  # idempotent
    finally:
        busy.kill()
        busy.wait()
    assert schemas.check_file(tmp_path / "cpu.jsonl") == []  # docs/schemas/cpu.v1
    lines = [json.loads(x) for x in (tmp_path / "cpu.jsonl").read_text().splitlines()]
    events = [x["event"] for x in lines]
    assert events[0] == "cpu_start" and events[-1] == "cpu_totals"
    assert events.count("cpu_totals") == 1 and "cpu_error" not in events
    samples = [x for x in lines if x["event"] == "cpu_sample"]
    assert len(samples) >= 4  # every 250 ms
    assert all(0.0 <= v <= 1.0 for s in samples for v in s["cpu_busy"].values() if v is not None)
    assert all(len(s["loadavg"]) == 3 for s in samples)
    totals = lines[-1]["components_cpu_s"]
    assert totals["busy-child"] > 0.3  # the busy loop ran for about 1.6 s
    assert "orchestrator" in totals  # this process itself
    assert "groups_cpu_s" not in lines[-1]  # unpinned: no group accounting


def test_chromium_roles_from_command_lines() -> None:
    assert chromium_role(999_999_999) == "other"  # no such process
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        time.sleep(0.2)
        assert chromium_role(proc.pid) == "gstreamer"  # a python process (gst_player.py)
    finally:
        proc.kill()
        proc.wait()
