"""What dash.js downloads after an up-switch, measured on trials' player.jsonl
(docs/SIMULATOR.md, "Replacements after an up-switch").

`python -m testbed.upswitches RUN [RUN ...]` reads every trial of the runs and classifies each
up-switch after the start-up decision (a media segment request at a higher bitrate than the
request before it, from the third media request on): a *replacement* when the requested
segment was requested before (dash.js downloads buffered media again), given as its index
relative to the segment under the playhead, else *next*. The playhead is the last `sample`
event's media time at the request; the buffer is the end of the media requested so far minus
the playhead. It prints the counts as JSON, and how many of the up-switches the simulator's
rule (`replace_from` in transport/src/sim/player.rs: replace from the playhead's segment,
except with one to 1.25 segments buffered) classifies as observed.
"""

from __future__ import annotations

import argparse
import bisect
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

# transport/src/sim/player.rs NO_REPLACEMENT_BELOW_SEGMENTS.
NO_REPLACEMENT_BELOW_SEGMENTS = 1.25


@dataclass(frozen=True)
class UpSwitch:
    trial: str
    replaced: bool
    # Requested index minus the index of the segment under the playhead.
    relative_index: int
    playhead_s: float
    buffer_s: float


def up_switches(player_jsonl: Path, segment_s: float) -> list[UpSwitch]:
    events = [json.loads(line) for line in player_jsonl.read_text().splitlines() if line]
    bitrate = {
        r["rep_id"]: r["bitrate_bps"]
        for e in events
        if e["event"] == "representations"
        for r in e["reps"]
    }
    samples = [e for e in events if e["event"] == "sample"]
    sample_times = [e["t_ns"] for e in samples]
    media = [e for e in events if e["event"] == "segment" and e.get("media_type") == "video"]
    found = []
    requested_to = 0  # one past the highest segment index requested so far
    for k, seg in enumerate(media):
        index = seg["segment_index"]
        if k >= 2 and bitrate[seg["rep_id"]] > bitrate[media[k - 1]["rep_id"]]:
            j = bisect.bisect_right(sample_times, seg["request_t_ns"]) - 1
            playhead_s = samples[j]["media_time_s"] if j >= 0 else 0.0
            found.append(
                UpSwitch(
                    trial=player_jsonl.parent.name,
                    replaced=index < requested_to,
                    relative_index=index - int(playhead_s // segment_s),
                    playhead_s=playhead_s,
                    buffer_s=requested_to * segment_s - playhead_s,
                )
            )
        requested_to = max(requested_to, index + 1)
    return found


def rule_replaces(buffer_s: float, segment_s: float) -> bool:
    """The simulator's rule, given that something buffered is at a lower bitrate."""
    in_band = segment_s <= buffer_s < NO_REPLACEMENT_BELOW_SEGMENTS * segment_s
    return buffer_s > 1e-9 and not in_band


def summarise(switches: list[UpSwitch], segment_s: float) -> dict:
    kinds = Counter(
        f"replaced_from_{s.relative_index:+d}" if s.replaced else "next" for s in switches
    )
    nexts = [s.buffer_s for s in switches if not s.replaced]
    return {
        "up_switches": len(switches),
        "by_kind": dict(sorted(kinds.items())),
        "next_with_buffer_2_to_2.75_s": sum(1 for b in nexts if 2.0 <= b < 2.75),
        "rule_agrees": sum(
            1 for s in switches if rule_replaces(s.buffer_s, segment_s) == s.replaced
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.upswitches", description=__doc__)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--segment-s", type=float, default=2.0, help="segment duration (s)")
    args = parser.parse_args(argv)
    switches: list[UpSwitch] = []
    for run in args.runs:
        files = sorted(run.glob("trials/*/player.jsonl"))
        if not files:
            print(f"upswitches: {run}: no trials/*/player.jsonl inside", file=sys.stderr)
            return 2
        for f in files:
            switches += up_switches(f, args.segment_s)
    print(json.dumps(summarise(switches, args.segment_s), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
