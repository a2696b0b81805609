"""The per-session player summary, defined once: start-up, stalls, drops, switches, bitrate.

Players write events only (docs/schemas/player.v1.schema.json); this module turns one
session's events into its summary. The orchestrator (testbed/players.py: did the session
end, is a control session clean), the pair-session tool (bench/pair_session.py) and the
tables (metrics/tables.py) all call `summarize`, so they cannot disagree.

Definitions (input: the parsed lines of one player.jsonl, in file order):
* end_reason: `reason` of the `end` line (`ended`, `timeout`, `error`); None without one
  (the player crashed or was killed).
* startup_delay_ms: the FIRST `startup` event (the first frame shown); None without one.
* stalls: number of `stall` events, a stall still open at the end included (a stall is
  playback waiting for data after start-up, detected by the player).
  stall_total_ms / stall_max_ms: sum / maximum of their `duration_ms` (0 without stalls).
* dropped_frames / total_frames: the cumulative counters' final value, i.e. their maximum
  over `sample` lines (counters never decrease); None without samples.
* mean_bitrate_bps: mean `bitrate_bps` over samples taken while playing (samples are evenly
  spaced, so this is the time average of the bitrate on screen); None without such samples.
* quality_switches: number of `quality_switch` events. played_s: largest `media_time_s`.
* decode_stalls / decode_stall_total_ms: `decode_stall` events (waits with a healthy buffer:
  the machine, not the network), not counted in `stalls`. A player that cannot detect them
  (GStreamer) logs none, so both read 0 there.
* decode_overload_frames / decode_overload_events: `decode_overload` events and the frames
  they report. player_errors: `error` events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from metrics.numbers import number_or_none

SUMMARY_FIELDS = [
    "end_reason",
    "startup_delay_ms",
    "stalls",
    "stall_total_ms",
    "stall_max_ms",
    "dropped_frames",
    "total_frames",
    "mean_bitrate_bps",
    "quality_switches",
    "played_s",
    "player_errors",
    "decode_overload_events",
    "decode_overload_frames",
    "decode_stalls",
    "decode_stall_total_ms",
]


def summarize(lines: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The summary of one session (definitions in the module docstring)."""
    end_reason: str | None = None
    startup_delay_ms: float | None = None
    stall_ms: list[float] = []
    decode_stall_ms: list[float] = []
    dropped: float | None = None
    total: float | None = None
    bitrates: list[float] = []
    played_s = 0.0
    switches = errors = overload_events = 0
    overload_frames = 0.0
    for line in lines:
        event = line.get("event")
        if event == "end":
            end_reason = str(line.get("reason"))
        elif event == "startup" and startup_delay_ms is None:
            startup_delay_ms = number_or_none(line.get("startup_delay_ms"))
        elif event == "stall":
            stall_ms.append(number_or_none(line.get("duration_ms")) or 0.0)
        elif event == "decode_stall":
            decode_stall_ms.append(number_or_none(line.get("duration_ms")) or 0.0)
        elif event == "decode_overload":
            overload_events += 1
            overload_frames += number_or_none(line.get("dropped_frames")) or 0.0
        elif event == "quality_switch":
            switches += 1
        elif event == "error":
            errors += 1
        elif event == "sample":
            d, t = (
                number_or_none(line.get("dropped_frames")),
                number_or_none(line.get("total_frames")),
            )
            dropped = d if dropped is None or (d is not None and d > dropped) else dropped
            total = t if total is None or (t is not None and t > total) else total
            played_s = max(played_s, number_or_none(line.get("media_time_s")) or 0.0)
            bitrate = number_or_none(line.get("bitrate_bps"))
            if line.get("playing") is True and bitrate is not None:
                bitrates.append(bitrate)
    return {
        "end_reason": end_reason,
        "startup_delay_ms": startup_delay_ms,
        "stalls": len(stall_ms),
        "stall_total_ms": round(sum(stall_ms), 3),
        "stall_max_ms": round(max(stall_ms, default=0.0), 3),
        "dropped_frames": None if dropped is None else int(dropped),
        "total_frames": None if total is None else int(total),
        "mean_bitrate_bps": round(sum(bitrates) / len(bitrates)) if bitrates else None,
        "quality_switches": switches,
        "played_s": round(played_s, 3),
        "player_errors": errors,
        "decode_overload_events": overload_events,
        "decode_overload_frames": int(overload_frames),
        "decode_stalls": len(decode_stall_ms),
        "decode_stall_total_ms": round(sum(decode_stall_ms), 3),
    }
