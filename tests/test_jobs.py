"""`--jobs N|auto`: as many trials side by side as the CPUs can isolate, and no more."""

from __future__ import annotations

import os
import subprocess

import pytest
from test_topology_fakes import REPO

from testbed.cpusets import CpuPlanError, choose_jobs, plan_cpu_sets

RUN_TRIALS = str(REPO / "run_trials.sh")


@pytest.mark.parametrize(
    ("cpus", "streaming", "expected"),
    [(2, True, 1), (2, False, 2), (1, True, 1), (3, True, 1), (8, True, 4), (8, False, 8)],
)
def test_auto_is_the_most_the_cpus_isolate(cpus, streaming, expected):
    jobs, why = choose_jobs(None, streaming, cpus)
    assert jobs == expected
    assert f"{cpus} CPU(s)" in why
    if streaming and cpus >= 2:  # and the CPU planner agrees it can isolate that many
        assert len(plan_cpu_sets(cpus, jobs)) == jobs
        with pytest.raises(CpuPlanError):
            plan_cpu_sets(cpus, jobs + 1)


def test_a_larger_n_is_refused_with_the_reason():
    with pytest.raises(CpuPlanError, match="--jobs 2 cannot keep trials isolated.*at most 1"):
        choose_jobs(2, True, 2)
    assert choose_jobs(2, False, 2)[0] == 2
    assert choose_jobs(4, True, 8)[0] == 4
    with pytest.raises(CpuPlanError):
        choose_jobs(3, False, 2)


def _dry_run(cpus: int, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TESTBED_CPUS": str(cpus)}
    return subprocess.run(
        [RUN_TRIALS, "--scenario", "control", "--dry-run", *argv],
        capture_output=True, text=True, env=env,
    )  # fmt: skip


def test_cli_auto_says_why_and_refuses_what_it_cannot_isolate():
    here = _dry_run(2, "--transport", "user", "--jobs", "auto")
    assert here.returncode == 0 and ", 1 at a time:" in here.stdout
    assert "--jobs auto: 1 at a time" in here.stderr and "player" in here.stderr
    transfers = _dry_run(2, "--transport", "none", "--jobs", "auto")
    assert ", 2 at a time:" in transfers.stdout
    big = _dry_run(16, "--transport", "user", "--jobs", "auto")
    assert ", 8 at a time:" in big.stdout
    refused = _dry_run(2, "--transport", "user", "--jobs", "2")
    assert refused.returncode == 2 and "cannot keep trials isolated" in refused.stderr
