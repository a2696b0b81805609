"""The host's allowed-CC list: add for a trial, restore exactly, repair after a crash."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from kernel_config.host_cc import HostAllowedCC


def host(tmp_path: Path, allowed: str = "reno bbr") -> HostAllowedCC:
    sysctl = tmp_path / "tcp_allowed_congestion_control"
    sysctl.write_text(allowed + "\n")
    return HostAllowedCC(sysctl=sysctl, state_dir=tmp_path / "run")


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_allow_then_release_restores_the_list(tmp_path: Path) -> None:
    cc = host(tmp_path)
    assert cc.allow("cubic", 1, "trial-a") is True
    assert cc.current() == ["reno", "bbr", "cubic"]
    state = json.loads(cc.state_path.read_text())
    assert state["added"] == ["cubic"] and state["original"] == "reno bbr"
    assert cc.release(1, "trial-a") == ["cubic"]
    assert cc.current() == ["reno", "bbr"]
    assert not cc.state_path.exists()


def test_second_holder_keeps_it_until_the_last_release(tmp_path: Path) -> None:
    cc = host(tmp_path)
    me = os.getpid()
    cc.allow("cubic", me, "trial-a")
    assert cc.allow("cubic", me, "trial-b") is False  # already there, but now held twice
    assert cc.release(me, "trial-a") == []
    assert "cubic" in cc.current()
    assert cc.release(me, "trial-b") == ["cubic"]


def test_already_allowed_cc_is_left_alone(tmp_path: Path) -> None:
    cc = host(tmp_path, "reno bbr cubic")
    assert cc.allow("cubic", 1, "t") is False
    assert not cc.state_path.exists()
    assert cc.release(1, "t") == [] and cc.current() == ["reno", "bbr", "cubic"]


def test_sweep_restores_after_a_crashed_holder(tmp_path: Path) -> None:
    cc = host(tmp_path)
    cc.allow("cubic", dead_pid(), "crashed-trial")
    cc.sysctl.write_text("reno bbr cubic vegas\n")  # someone else added vegas meanwhile
    assert cc.sweep() == ["cubic"]
    assert cc.current() == ["reno", "bbr", "vegas"]  # only what the testbed added goes
