"""`--reps auto` on the emulated engine: Ctrl-C in the second round, then the same command.

Two cells (control scenario, cubic and bbr, lrf, the GStreamer player, a 4 s clip) with
`--max-reps 4`: round one runs repetitions 0-2 of both cells (6 trials), round two
repetition 3. SIGINT once round one's trials have results and round two has begun: exit 130,
the running trial torn down (its namespaces and processes gone), round one's results kept.
The same command then skips those 6 trials, runs the rest and stops by itself with a report.

Real namespaces and real processes, one trial at a time: about 9 trials of 10 to 20 s each
(longer under load), so it is marked long: outside ./run_tests.sh, run with
`pytest -m long` (docs/METRICS.md, "`--reps auto`").
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from proc_state import alive
from test_topology_fakes import REPO, namespaces, needs_root, stop_gently

pytestmark = [
    pytest.mark.netns,
    pytest.mark.long,
    needs_root,
    pytest.mark.skipif(
        not (REPO / "transport" / "target" / "release" / "mpproxy").is_file(),
        reason="mpproxy not built (scripts/setup.sh)",
    ),
    pytest.mark.skipif(
        shutil.which("gst-inspect-1.0") is None,
        reason="GStreamer not installed (gstreamer1.0-plugins-good: dashdemux2)",
    ),
]

CCS = ("cubic", "bbr")
FIRST_ROUND_REPS = 3
MAX_REPS = 4


def _trial(run_dir: Path, cc: str, rep: int) -> Path:
    return run_dir / "trials" / f"control__user__{cc}__lrf__gstreamer__v4__r{rep}__s{rep + 1}"


def _command(run_dir: Path) -> list[str]:
    return [
        str(REPO / "run_trials.sh"), "--engine", "emulate", "--scenario", "control",
        "--cc", ",".join(CCS), "--sched", "lrf", "--player", "gstreamer",
        "--video-duration", "4", "--reps", "auto", "--max-reps", str(MAX_REPS),
        "--out", str(run_dir),
    ]  # fmt: skip


def _started(trial_dir: Path) -> tuple[set[str], list[int]]:
    """The namespaces and process ids a trial's testbed.jsonl says it created."""
    names: set[str] = set()
    pids: list[int] = []
    log = trial_dir / "testbed.jsonl"
    for line in log.read_text().splitlines() if log.is_file() else []:
        event = json.loads(line)
        if event.get("event") == "topology_build":
            names |= set(event["namespaces"].values())
        if event.get("event") == "process_start":
            pids.append(int(event["pid"]))
    return names, pids


def test_emulated_reps_auto_resumes_after_ctrl_c(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first_round = [_trial(run_dir, cc, rep) for rep in range(FIRST_ROUND_REPS) for cc in CCS]
    second_round = [_trial(run_dir, cc, rep) for rep in range(FIRST_ROUND_REPS, MAX_REPS)
                    for cc in CCS]  # fmt: skip
    proc = subprocess.Popen(
        _command(run_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 600
        # Round one done, round two under way: a trial of repetition 3 with its namespaces
        # and a process started (so that the interrupt has something to tear down).
        while time.monotonic() < deadline and proc.poll() is None:
            if all((t / "result.json").is_file() for t in first_round) and any(
                _started(t)[1] for t in second_round
            ):
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the run ended before round two: " + proc.stderr.read()[-2000:]
        interrupted = next(t for t in second_round if _started(t)[1])
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        stop_gently(proc)
    assert proc.returncode == 130, err[-3000:]
    assert "--reps auto, round with 3 repetition(s) per cell:" in out
    assert "Re-run the same command to resume" in err
    names, pids = _started(interrupted)
    assert names and not names & namespaces()
    assert pids and not [p for p in pids if alive(p)]
    assert not (interrupted / "result.json").exists()
    kept = {t: (t / "result.json").read_text() for t in first_round}

    done = subprocess.run(_command(run_dir), capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: a trial failed (machine load)
    rounds = [line for line in done.stdout.splitlines() if line.startswith("run ")]
    assert (
        f"{2 * FIRST_ROUND_REPS} trials, {2 * FIRST_ROUND_REPS} already finished, 0 to run"
        in (rounds[0])
    )
    assert f"{2 * MAX_REPS} trials, {2 * FIRST_ROUND_REPS} already finished, 2 to run" in rounds[1]
    assert {t: (t / "result.json").read_text() for t in first_round} == kept  # not redone
    assert all((t / "result.json").is_file() for t in second_round)
    assert f"--reps auto stopped after {MAX_REPS} repetition(s) per cell: " in done.stdout
    assert (run_dir / "report.html").is_file()
    summary = (run_dir / "summary.csv").read_text().splitlines()
    assert len(summary) == 1 + 2 * MAX_REPS
    assert not _started(interrupted)[0] & namespaces()  # redone, and torn down again
