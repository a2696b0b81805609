"""metrics/discards.py: discarded frames = skipped live media x fps + every dropped frame (split
by attribution); live latency."""

from __future__ import annotations

import math

import pytest

from metrics.discards import discard_metrics


def sample(latency: float | None, playing: bool = True) -> dict:
    return {"event": "sample", "playing": playing, "live_latency_s": latency}


def test_live_session_counts_skipped_media_and_all_dropped_frames() -> None:
    lines = [
        sample(None, playing=False),  # before start-up: not in the latency figures
        sample(3.0),
        sample(3.2),
        {"event": "live_seek", "skipped_s": 1.967},
        {"event": "playback_rate", "rate": 1.2},
        sample(5.0),
        {"event": "live_seek", "skipped_s": 2.0},
        sample(9.0, playing=False),
        # After the clip's end (60 s): media 59 s + 40 s latency is past the edge, left out.
        {**sample(40.0), "media_time_s": 59.0},
    ]
    spec = {"video_mode": "live", "live_latency_s": 3.0, "video_duration_s": 60}
    row = discard_metrics(lines, 5, 7, spec)  # 5 decoder-side, 7 network-attributable drops
    assert row["skipped_media_s"] == pytest.approx(3.967)
    assert row["discarded_frames_skipped"] == 119  # round(3.967 s x 30 fps)
    assert row["discarded_frames_dropped_decoder"] == 5
    assert row["discarded_frames_dropped_network"] == 7
    assert row["discarded_frames_dropped"] == 12  # both attributions: every dropped frame
    assert row["discarded_frames"] == 131  # 119 + 5 + 7
    assert row["discarded_frames_network"] == 126  # 119 + 7: the stream's part only
    assert (row["live_seeks"], row["playback_rate_changes"]) == (2, 1)
    assert row["live_latency_median_s"] == pytest.approx(3.2)
    assert row["live_latency_max_s"] == pytest.approx(5.0)
    assert row["live_latency_p95_s"] == pytest.approx(3.2 + 0.9 * 1.8)
    assert row["live_latency_error_s"] == pytest.approx(0.2)


def test_vod_session_has_only_the_drop_part_and_no_latency() -> None:
    lines = [{"event": "sample", "playing": True, "media_time_s": 1.0}]
    row = discard_metrics(lines, 2, 3, {"video_mode": "vod"})
    assert row["video_mode"] == "vod"
    assert row["discarded_frames"] == row["discarded_frames_dropped"] == 5
    assert row["discarded_frames_network"] == 3
    assert row["discarded_frames_skipped"] == 0
    assert math.isnan(row["live_latency_median_s"]) and math.isnan(row["live_latency_target_s"])
    # A trial from before live mode has no video_mode in its spec: VOD.
    old = discard_metrics(lines, math.nan, math.nan, {})
    assert old["video_mode"] == "vod" and old["discarded_frames"] == 0
