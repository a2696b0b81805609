"""Dropped frames per minute of playing time in live trials, by what the catch-up was doing.

    .venv/bin/python player/live_drop_rates.py results/<run>/trials/*live*/player.jsonl

Every pair of consecutive `sample` lines with `playing` true is one interval; its dropped frames
(the difference of the cumulative `dropped_frames`) go to the first matching group: within
STALL_AFTERMATH_S after a stall ended, else by the `playback_rate` of the interval's first sample
(below, within or above the steady-state band 1 +- RATE_BAND). Prints a Markdown table
(docs/PLAYER.md, "Target latency and segment duration"). Bad input exits 2 naming the file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

STALL_AFTERMATH_S = 0.3
# dash.js's default catch-up nudges the rate to 0.993-1.008 on a clean path; 2 % covers that.
RATE_BAND = 0.02
GROUPS = (
    f"within {STALL_AFTERMATH_S:g} s after a stall ended",
    f"rate > {1 + RATE_BAND:g}",
    f"rate within {1 - RATE_BAND:g}-{1 + RATE_BAND:g}",
    f"rate < {1 - RATE_BAND:g}",
)


def group_of(t_s: float, rate: float, stall_ends_s: Iterable[float]) -> str:
    if any(end <= t_s <= end + STALL_AFTERMATH_S for end in stall_ends_s):
        return GROUPS[0]
    if rate > 1 + RATE_BAND:
        return GROUPS[1]
    if rate >= 1 - RATE_BAND:
        return GROUPS[2]
    return GROUPS[3]


def tally(lines: list[dict]) -> dict[str, list[float]]:
    """group -> [playing seconds, frames dropped] for one trial's player.jsonl lines."""
    stall_ends = [ln["end_t_ns"] / 1e9 for ln in lines if ln.get("event") == "stall"]
    samples = [ln for ln in lines if ln.get("event") == "sample" and ln.get("playing")]
    out = {g: [0.0, 0.0] for g in GROUPS}
    for a, b in zip(samples, samples[1:], strict=False):
        rate = a.get("playback_rate")
        group = group_of(b["t_ns"] / 1e9, 1.0 if rate is None else float(rate), stall_ends)
        out[group][0] += (b["t_ns"] - a["t_ns"]) / 1e9
        out[group][1] += b["dropped_frames"] - a["dropped_frames"]
    return out


def read(path: Path) -> list[dict]:
    lines = []
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        try:
            lines.append(json.loads(text))
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{number}: malformed JSON line ({e})") from None
    return lines


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    totals = {g: [0.0, 0.0] for g in GROUPS}
    for name in argv:
        try:
            per_trial = tally(read(Path(name)))
        except (OSError, ValueError, KeyError) as e:
            print(f"live_drop_rates: {name}: {e}", file=sys.stderr)
            return 2
        for g, (seconds, dropped) in per_trial.items():
            totals[g][0] += seconds
            totals[g][1] += dropped
    print(f"{len(argv)} trial(s)\n")
    print("| while | playing time | frames dropped | per minute |")
    print("|---|---|---|---|")
    for g, (seconds, dropped) in totals.items():
        rate = f"{dropped / seconds * 60:.1f}" if seconds > 0 else "–"
        print(f"| {g} | {seconds:.1f} s | {dropped:g} | {rate} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
