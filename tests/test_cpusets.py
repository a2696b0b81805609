"""testbed/cpusets.py: the CPU plan, the fallbacks, and real cgroups where this machine has them."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from testbed import cpusets
from testbed.cpusets import CpuPlanError, Mechanism, TrialCpus, TrialCpuSets, plan_cpu_sets


def test_plan_two_cpus_one_trial_player_gets_its_own_core() -> None:
    assert plan_cpu_sets(2, 1) == [TrialCpus(player=(1,), testbed=(0,))]


def test_plan_blocks_per_trial_are_disjoint() -> None:
    plans = plan_cpu_sets(8, 2)
    assert plans == [TrialCpus((2, 3), (0, 1)), TrialCpus((6, 7), (4, 5))]
    plans = plan_cpu_sets(list(range(16)), 3)  # 5 CPUs each, CPU 15 unused
    used = [c for p in plans for c in p.player + p.testbed]
    assert len(used) == len(set(used)) == 15
    assert all(len(p.player) == 3 and len(p.testbed) == 2 for p in plans)


def test_plan_refuses_what_it_cannot_isolate() -> None:
    expected = r"2 CPU\(s\) cannot isolate 2 trial\(s\).*at most --jobs 1"
    with pytest.raises(CpuPlanError, match=expected):
        plan_cpu_sets(2, 2)
    with pytest.raises(CpuPlanError, match="1 CPU"):
        plan_cpu_sets(1, 1)
    with pytest.raises(CpuPlanError, match="at least 1"):
        plan_cpu_sets(4, 0)


def test_cpu_list_syntax_round_trips() -> None:
    assert cpusets.format_cpus([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert cpusets.parse_cpus("0-2,5,7-8\n") == [0, 1, 2, 5, 7, 8]
    assert cpusets.format_cpus((3,)) == "3"


def test_too_many_jobs_runs_unpinned_and_says_why() -> None:
    sets = TrialCpuSets.create(slot=1, jobs=2, cpus=[0, 1])
    assert not sets.pinned
    assert sets.describe()["reason"].startswith("unpinned, because 2 CPU(s) cannot isolate 2")
    assert sets.describe()["player_cpus"] is None


def test_no_controller_falls_back_to_affinity_with_reason(tmp_path: Path) -> None:
    mech = cpusets.detect(tmp_path)  # an empty folder: neither v1 nor v2
    assert mech.kind == "affinity" and "neither" in mech.why_not_cgroups
    sets = TrialCpuSets.create(slot=0, jobs=1, cpus=[0, 1], mechanism=mech)
    assert sets.pinned and sets.mechanism == "affinity"
    assert "because neither" in sets.reason
    assert sets.usage_ns("player") is None  # no group accounting


def test_v2_tree_without_cpuset_is_detected(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu io memory pids\n")
    mech = cpusets.detect(tmp_path)
    assert mech.kind == "affinity" and "offers no cpuset" in mech.why_not_cgroups


def test_v1_layout_in_a_fake_tree(tmp_path: Path) -> None:
    for ctl in ("cpuset", "cpuacct"):
        (tmp_path / ctl).mkdir()
    (tmp_path / "cpuset" / "cpuset.cpus").write_text("0-3\n")
    (tmp_path / "cpuset" / "cpuset.mems").write_text("0\n")
    (tmp_path / "cpuacct" / "cpuacct.usage").write_text("0\n")
    mech = cpusets.detect(tmp_path)
    assert mech == Mechanism("cgroup-v1", tmp_path / "cpuset", tmp_path / "cpuacct")
    # A plain folder does not create the control files a real cgroup has; make them as the
    # kernel would, then check what the code wrote into them.
    original_mkdir = Path.mkdir

    def kernel_mkdir(self: Path, *a: object, **k: object) -> None:
        original_mkdir(self, *a, **k)
        for name in ("cpuset.cpus", "cpuset.mems", "cgroup.procs", "cpuacct.usage"):
            (self / name).write_text("")

    Path.mkdir = kernel_mkdir  # type: ignore[method-assign]
    try:
        sets = TrialCpuSets.create(slot=0, jobs=1, cpus=[0, 1, 2, 3], mechanism=mech)
    finally:
        Path.mkdir = original_mkdir  # type: ignore[method-assign]
    trial = tmp_path / "cpuset" / "mptcp-testbed" / f"trial-{os.getpid()}"
    assert (trial / "player" / "cpuset.cpus").read_text() == "2-3"
    assert (trial / "testbed" / "cpuset.cpus").read_text() == "0-1"
    assert (trial / "player" / "cpuset.mems").read_text() == "0"
    assert sets.describe()["player_cpus"] == "2-3" and sets.mechanism == "cgroup-v1"
    sets.place_player(12345)
    assert (trial / "player" / "cgroup.procs").read_text() == "12345"
    acct = tmp_path / "cpuacct" / "mptcp-testbed" / f"trial-{os.getpid()}" / "player"
    assert (acct / "cgroup.procs").read_text() == "12345"
    (acct / "cpuacct.usage").write_text("2500000000\n")
    assert sets.usage_ns("player") == 2_500_000_000


REAL_V1 = Path("/sys/fs/cgroup/cpuset/cpuset.cpus")


@pytest.mark.skipif(
    os.geteuid() != 0 or not REAL_V1.is_file() or len(cpusets.online_cpus()) < 2,
    reason="needs root, cgroup v1 cpuset and 2 CPUs",
)
def test_real_v1_groups_pin_account_and_go_away() -> None:
    sets = TrialCpuSets.create(slot=0, jobs=1)
    assert sets.pinned and sets.mechanism == "cgroup-v1", sets.reason
    child = subprocess.Popen(["sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
    try:
        sets.place_player(child.pid)
        assert child.pid in sets.pids("player")
        assert os.sched_getaffinity(child.pid) == set(sets.cpus.player)  # type: ignore[union-attr]
        child.wait(60)
        time.sleep(0.1)
        used = sets.usage_ns("player")
        assert used is not None and used > 50_000_000  # the busy loop's CPU time was counted
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        groups = [g for ctls in sets.groups.values() for g in ctls.values()]
        sets.close()
    assert not any(g.exists() for g in groups)
