"""testbed/soak.py on a few trials (the documented soak runs 200; docs/ORCHESTRATOR.md): it
samples before the first trial, every N trials and at the end, the runner's figures are
read while it runs, the testbed leaves nothing behind between samples, and the plot is made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from markers import LINKEMU, needs_built, needs_root

REPO = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.netns,
    needs_root,
    needs_built(LINKEMU),
    pytest.mark.timeout(400),
]


def test_a_short_soak_samples_every_n_trials_and_plots(tmp_path: Path) -> None:
    out = tmp_path / "soak"
    state = tmp_path / "state"  # the testbed's state files of this run only
    done = subprocess.run(
        [sys.executable, "-m", "testbed.soak", "--trials", "3", "--every", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=380, cwd=REPO,
        env={**os.environ, "TESTBED_STATE_DIR": str(state)},
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    rows = [json.loads(x) for x in (out / "soak.jsonl").read_text().splitlines()]
    assert [r["trials_done"] for r in rows][0] == 0
    # Every 2nd trial and at the end: after trials 2 and 3, never after trial 1.
    assert {2, 3} <= {r["trials_done"] for r in rows} and 1 not in {
        r["trials_done"] for r in rows
    }, rows
    during = rows[1:-1]
    assert during and all(r["runner_open_files"] and r["runner_rss_kb"] for r in during), rows
    # Between trials (a sample is taken once a trial has finished, before or as the next
    # builds), nothing of the run's own is left over beyond one trial's worth.
    assert all(r["state_files"] <= 1 for r in rows), rows
    assert rows[-1]["state_files"] == 0 and rows[-1]["processes_naming_run"] == 0, rows[-1]
    assert rows[-1]["disk_bytes_per_trial"] > 0
    assert (out / "soak.png").stat().st_size > 10_000
