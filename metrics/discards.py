"""Discarded frames and live latency: one place for both definitions.

Seed 002 counts *picture discards* beside buffer underflows: frames the viewer never sees
because they arrived too late. A VOD player never throws media away (it stalls instead); a live
player does, when it jumps to the live edge. So

    discarded_frames = discarded_frames_skipped + discarded_frames_dropped

* `discarded_frames_skipped` = round(skipped media time x frame rate): the media time the
  player skipped to catch up with the live edge, i.e. the sum of `skipped_s` over the
  `live_seek` lines of player.jsonl (a seek after start-up in live mode, from the last
  presented frame to the seek target: player/web/player.mjs for dash.js, player/gst_player.py
  for GStreamer), times the content's frame rate (`FPS`, server/content.py). 0 in VOD mode.
* `discarded_frames_dropped` = every frame the player's decoder or sink dropped (the issue's
  definition, "frames dropped by the decoder"), whatever the cause, split by metrics/drops.py's
  attribution into `discarded_frames_dropped_network` (during a stall or with little buffered,
  at a rendition change, or without machine evidence: the stream's doing) and
  `discarded_frames_dropped_decoder` (with evidence that the machine could not decode in time:
  CPU saturated or a GStreamer QoS drop). Both are frames the viewer never saw; the split says
  whom to blame. A trial whose decoder-side part exceeds metrics/drops.py's tolerance is
  invalid anyway (the machine, not the network, shaped it), so among valid trials the decoder
  part is small; `discarded_frames_network` = skipped + network-attributable drops is the
  stream-only figure for comparisons on a loaded machine.

Live latency (live mode only; NaN in VOD): `live_latency_s` of the player's `sample` lines
(dash.js getCurrentLiveLatency(): wall clock minus the presentation time on screen, mapped with
the MPD's availabilityStartTime), over samples taken while playing and while the event is on
air (media time + latency <= clip length + 0.5 s; afterwards the wall clock runs on and the
value grows without meaning): median, 95th percentile and maximum; `live_latency_error_s` =
median minus the target (`live_latency_s` of the trial spec).
`live_seeks` counts the catch-up seeks, `playback_rate_changes` the catch-up rate changes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from metrics.numbers import number_or_none

FPS = 30  # the content's frame rate (server/content.py FPS)
ON_AIR_MARGIN_S = 0.5  # the live edge may pass the clip's end by this much (sampling, rounding)

DISCARD_COLUMNS = [
    "video_mode",
    "discarded_frames",
    "discarded_frames_skipped",
    "discarded_frames_dropped",
    "discarded_frames_dropped_decoder",
    "discarded_frames_dropped_network",
    "discarded_frames_network",
    "skipped_media_s",
    "live_seeks",
    "playback_rate_changes",
    "live_latency_target_s",
    "live_latency_median_s",
    "live_latency_p95_s",
    "live_latency_max_s",
    "live_latency_error_s",
]


def discard_metrics(
    lines: list[dict],
    dropped_frames_decoder: float | None,
    dropped_frames_network: float | None,
    spec: dict,
    fps: float = FPS,
) -> dict[str, Any]:
    """The columns above for one session (player.jsonl lines as dicts); the dropped frames
    per side come from metrics/drops.py (`drop_counts`)."""
    mode = str(spec.get("video_mode") or "vod")
    skipped_s = sum(
        number_or_none(ln.get("skipped_s")) or 0.0 for ln in lines if ln.get("event") == "live_seek"
    )
    skipped_frames = round(skipped_s * fps)
    dropped_decoder = int(number_or_none(dropped_frames_decoder) or 0)
    dropped_network = int(number_or_none(dropped_frames_network) or 0)
    # While the event is on air: the live edge (media time + latency) within the clip. After
    # the clip's end the wall clock runs on and dash.js's latency grows without meaning.
    end_s = (number_or_none(spec.get("video_duration_s")) or math.inf) + ON_AIR_MARGIN_S
    latencies = [
        latency
        for ln in lines
        if ln.get("event") == "sample" and str(ln.get("playing")) == "True"
        for latency in [number_or_none(ln.get("live_latency_s"))]
        if latency is not None
        and (number_or_none(ln.get("media_time_s")) or 0.0) + latency <= end_s
    ]
    target = number_or_none(spec.get("live_latency_s")) if mode == "live" else None
    median = float(np.quantile(latencies, 0.5)) if latencies else math.nan
    return {
        "video_mode": mode,
        "discarded_frames": skipped_frames + dropped_decoder + dropped_network,
        "discarded_frames_skipped": skipped_frames,
        "discarded_frames_dropped": dropped_decoder + dropped_network,
        "discarded_frames_dropped_decoder": dropped_decoder,
        "discarded_frames_dropped_network": dropped_network,
        "discarded_frames_network": skipped_frames + dropped_network,
        "skipped_media_s": round(skipped_s, 3),
        "live_seeks": sum(1 for ln in lines if ln.get("event") == "live_seek"),
        "playback_rate_changes": sum(1 for ln in lines if ln.get("event") == "playback_rate"),
        "live_latency_target_s": target if target is not None else math.nan,
        "live_latency_median_s": median,
        "live_latency_p95_s": float(np.quantile(latencies, 0.95)) if latencies else math.nan,
        "live_latency_max_s": max(latencies) if latencies else math.nan,
        "live_latency_error_s": median - target if latencies and target is not None else math.nan,
    }
