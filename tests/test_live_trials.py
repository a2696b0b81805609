"""Live mode through the testbed, both players: a short `control` trial each (emulator, user
transport, nginx serving the dynamic MPD). Functional checks only: the session ends by itself
at the end of the event (no timeout: both players used to freeze there, docs/PLAYER.md "Live
mode"), player.jsonl has the live fields, and summary.csv's discard and latency columns are
filled, computed by metrics/discards.py as for any trial. Validity and the latency's closeness
to the target need a quiet machine (docs/PLAYER.md), not this test."""

from __future__ import annotations

import csv
import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest
from markers import MPPROXY, needs_built, needs_root

from server.live_mpd import DEFAULT_LATENCY_S

REPO = Path(__file__).resolve().parent.parent
CLIP_S = 12
TARGET_S = DEFAULT_LATENCY_S  # the default: two segment durations (docs/PLAYER.md)
# The join plays at the target to the millisecond (setTimeout never fires early; the MPD's
# availabilityStartTime, Date.now() and dash.js's latency are in milliseconds), and while the
# latency is above the target dash.js only speeds up towards it. Without the join dash.js
# started one segment duration plus the first download after going on air (2.26 s at a 3 s
# target, quiet CPU): below the target unless Chromium is slow to start (under load the old
# page's first latency was 3.972 s at 4 s, once), so this check discriminates when the page is
# ready before the join time.
JOIN_TOLERANCE_S = 0.02

pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    needs_root,
    needs_built(MPPROXY),
    pytest.mark.timeout(600),
]


@pytest.mark.parametrize("player", ["gstreamer", "dashjs"])
def test_live_control_trial_ends_and_fills_the_columns(tmp_path: Path, player: str) -> None:
    if player == "dashjs" and shutil.which("chromium") is None:
        pytest.skip("needs Debian's chromium")
    if player == "gstreamer" and shutil.which("gst-inspect-1.0") is None:
        pytest.skip("needs GStreamer (gstreamer1.0-plugins-good: dashdemux2)")
    run = tmp_path / "run"
    done = subprocess.run(
        [str(REPO / "run_trials.sh"), "--video-mode", "live", "--live-latency-s", f"{TARGET_S:g}",
         "--scenario", "control", "--player", player, "--cc", "cubic", "--sched", "lrf",
         "--video-duration", str(CLIP_S), "--out", str(run)],
        capture_output=True, text=True, timeout=540,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: an invalid trial (CPU load)
    trial = next((run / "trials").iterdir())
    assert f"__live{TARGET_S:g}__" in trial.name
    result = json.loads((trial / "result.json").read_text())
    assert result["status"] == "ok", result
    log = trial / "player.jsonl"
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    # The session ended with the event, not at the runner's timeout.
    assert lines[-1] == {**lines[-1], "event": "end", "reason": "ended"}, lines[-1]
    check = subprocess.run(["node", str(REPO / "player" / "schema.mjs"), str(log)],
                           capture_output=True, text=True)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    latencies = [ln["live_latency_s"] for ln in lines if ln["event"] == "sample" and ln["playing"]]
    assert latencies and all(isinstance(x, int | float) and x > 0 for x in latencies)
    if player == "dashjs":
        # The page joins at the target (docs/PLAYER.md, "Joining at the target"): playback
        # never starts below it (dash.js alone started one segment after going on air, below
        # the target, and slowed down). Late is possible under load (then dash.js speeds up).
        assert latencies[0] >= TARGET_S - JOIN_TOLERANCE_S, latencies[:4]
    rows = list(csv.DictReader((run / "summary.csv").open()))
    assert len(rows) == 1
    row = rows[0]
    assert row["video_mode"] == "live" and float(row["live_latency_target_s"]) == TARGET_S
    for column in ("live_latency_median_s", "live_latency_p95_s", "live_latency_max_s"):
        assert math.isfinite(float(row[column])) and float(row[column]) > 0, (column, row)
    skipped = int(float(row["discarded_frames_skipped"]))
    dropped = int(float(row["discarded_frames_dropped"]))
    assert int(float(row["discarded_frames"])) == skipped + dropped
    assert dropped == int(float(row["dropped_frames_decoder"])) + int(
        float(row["dropped_frames_network"])
    )
    seeks = [ln for ln in lines if ln["event"] == "live_seek"]
    assert int(float(row["live_seeks"])) == len(seeks)
    assert skipped == round(sum(s["skipped_s"] for s in seeks) * 30)
