"""Median CPU cost per player and rung from player/measure_cpu.sh output (JSON lines on stdin).

player/measure_cpu.sh 3 > cpu.jsonl; .venv/bin/python player/cpu_table.py < cpu.jsonl
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict


def main() -> int:
    rows: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            print(f"stdin:{number}: malformed JSON line ({e})", file=sys.stderr)
            return 2
        rows[(row["player"], row["rung"])].append(row)
    print("| player | rung | sessions | CPU % of one core (median) | CPU s per video s | "
          "dropped frames (median) |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for (player, rung), rs in rows.items():
        pct = statistics.median(r["cpu_pct_one_core"] for r in rs)
        per_video_s = statistics.median(r["cpu_s"] / r["played_s"] for r in rs if r["played_s"])
        dropped = statistics.median(r["dropped_frames"] for r in rs)
        print(f"| {player} | {rung} | {len(rs)} | {pct:.1f} | {per_video_s:.2f} | {dropped:g} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
