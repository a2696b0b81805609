"""Live mode in the trial spec and the CLI: ids, older trial.json files, bad combinations."""

from __future__ import annotations

import subprocess
from pathlib import Path

from testbed.spec import TrialSpec

REPO = Path(__file__).resolve().parent.parent
BASE = {"scenario": "B1", "transport": "user", "cc": "bbr", "sched": "lrf", "player": "dashjs",
        "video_duration_s": 60, "rep": 0, "seed": 1}  # fmt: skip


def test_live_trials_have_their_own_id_and_vod_ids_are_unchanged() -> None:
    vod = TrialSpec.from_dict(BASE)  # a trial.json from before live mode: VOD
    assert vod.video_mode == "vod"
    assert vod.trial_id() == "B1__user__bbr__lrf__dashjs__v60__r0__s1"
    live = TrialSpec.from_dict({**BASE, "video_mode": "live", "live_latency_s": 2.5})
    assert live.trial_id() == "B1__user__bbr__lrf__dashjs__v60__live2.5__r0__s1"
    assert TrialSpec.from_dict(live.to_dict()) == live


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(REPO / "run_trials.sh"), "--dry-run", *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_cli_live_mode_takes_both_players_and_rejects_a_bad_latency() -> None:
    done = run_cli("--video-mode", "live", "--scenario", "B1", "--player", "dashjs,gstreamer",
                   "--cc", "bbr", "--sched", "lrf")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "__gstreamer__v60__live3__" in done.stdout and "__dashjs__v60__live3__" in done.stdout
    done = run_cli("--video-mode", "live", "--live-latency-s", "0")
    assert done.returncode == 2 and "--live-latency-s" in done.stderr
    done = run_cli("--video-mode", "live", "--scenario", "B1", "--cc", "bbr", "--sched", "lrf")
    assert done.returncode == 0 and "__live3__" in done.stdout
