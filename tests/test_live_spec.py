"""Live mode in the trial spec and the CLI: ids, older trial.json files, bad combinations."""

from __future__ import annotations

import subprocess
from pathlib import Path

from server.content import SEGMENT_S
from server.live_mpd import DEFAULT_LATENCY_S, MIN_LATENCY_SEGMENTS
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
    live = f"__live{DEFAULT_LATENCY_S:g}__"
    assert f"__gstreamer__v60{live}" in done.stdout and f"__dashjs__v60{live}" in done.stdout
    done = run_cli("--video-mode", "live", "--live-latency-s", "0")
    assert done.returncode == 2 and "--live-latency-s" in done.stderr
    done = run_cli("--video-mode", "live", "--scenario", "B1", "--cc", "bbr", "--sched", "lrf")
    assert done.returncode == 0 and live in done.stdout


def test_cli_default_target_is_two_segment_durations_and_a_lower_one_is_warned() -> None:
    """The rule of docs/PLAYER.md "Live mode": target >= 2 segment durations by default;
    below it the run goes ahead (a legitimate experiment) with a warning naming the rule."""
    args = ("--video-mode", "live", "--scenario", "control", "--cc", "bbr", "--sched", "lrf")
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    assert DEFAULT_LATENCY_S >= MIN_LATENCY_SEGMENTS * SEGMENT_S >= 2 * SEGMENT_S
    assert f"__live{DEFAULT_LATENCY_S:g}__" in done.stdout and "warning" not in done.stderr
    below = f"{MIN_LATENCY_SEGMENTS * SEGMENT_S - 1:g}"
    done = run_cli(*args, "--live-latency-s", below)
    assert done.returncode == 0, done.stderr
    assert f"__live{below}__" in done.stdout
    assert "warning: --live-latency-s" in done.stderr and "segment durations" in done.stderr
    done = run_cli("--scenario", "control", "--cc", "bbr", "--sched", "lrf",
                   "--live-latency-s", below)  # fmt: skip
    assert done.returncode == 0 and "warning" not in done.stderr  # VOD: the target is unused
