"""Did a study's later trials behave like its earlier ones? For a study that changed machine
(or anything else outside the code) part-way, with its archive (archive.py) split at a part:
per metric, how many later trials fall outside the range of their cell's earlier trials,
beside the count expected if earlier and later trials were exchangeable (a later trial among
n earlier ones of its cell falls outside their range with probability 2/(n+1) when values do
not tie; ties, as at 0 underflows, make it rarer), and the later/earlier ratio per cell (the
later trial against its cell's earlier median), as a median and a range over the later trials.

A description, not a test: it names the metrics that moved, for a person to judge.

    python -m testbed.reproduce.machine_check studies/seed002/emulate-S0 --later-from-part 13
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import pandas as pd

from testbed.reproduce import archive

CELL = ("scenario", "transport", "cc", "sched", "ladder", "recv_window_bytes")
# What the claims measure, then what the machine's speed shows in.
METRICS = (
    "stalls",
    "stall_total_ms",
    "startup_delay_ms",
    "mean_bitrate_bps",
    "bytes_down_wifi",
    "retrans_pkts_wifi",
    "retrans_pkts_lte",
    "dropped_frames",
    "dropped_frames_cpu",
    "dropped_frames_other",
    "wall_duration_s",
    "cpu_player_s",
    "player_runq_wait_ms_per_s",
    "cpu_emulator_s",
    "cpu_mpproxy_s",
    "cpu_nginx_s",
)


def split_rows(store: Path, later_from_part: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The archive's trials (last attempts) written before part `later_from_part`, and from it."""
    frames = []
    for part in archive.parts(store):
        rows = pd.read_csv(part)
        frames.append(rows.assign(_later=archive.part_number(part) >= later_from_part))
    rows = archive.ok_and_valid(archive.last_attempts(pd.concat(frames, ignore_index=True)))
    return rows[~rows["_later"]], rows[rows["_later"]]


def compare(earlier: pd.DataFrame, later: pd.DataFrame) -> list[dict]:
    """One dict per metric both halves have: n (later trials with earlier ones in their
    cell), outside / below / above their cell's earlier range, expected, and the
    later/earlier-median ratio (median, min, max; cells whose earlier median is 0 left out)."""
    cell = [c for c in CELL if c in earlier.columns and c in later.columns]
    # An empty field (NaN) must match itself: a receive window left to autotuning, say.
    earlier, later = (f.assign(**{c: f[c].astype(object).fillna("").astype(str) for c in cell})
                      for f in (earlier, later))  # fmt: skip
    groups = {key: g for key, g in earlier.groupby(cell)}
    out = []
    for metric in METRICS:
        if metric not in earlier.columns or metric not in later.columns:
            continue
        n = below = above = 0
        expected = 0.0
        ratios = []
        for _, trial in later.iterrows():
            key = tuple(trial[c] for c in cell)
            before = groups.get(key)
            value = trial[metric]
            if before is None or pd.isna(value):
                continue
            values = before[metric].dropna()
            if len(values) < 2:
                continue
            n += 1
            expected += 2 / (len(values) + 1)
            below += int(value < values.min())
            above += int(value > values.max())
            if values.median() != 0:
                ratios.append(value / values.median())
        out.append({"metric": metric, "n": n, "below": below, "above": above,
                    "expected": expected, "ratios": ratios})  # fmt: skip
    return out


def table(results: list[dict]) -> list[str]:
    lines = [
        "| metric | later trials | outside the earlier range (below, above) "
        "| expected if exchangeable | later / earlier median: median (range) |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        ratios = r["ratios"]
        ratio = (f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
                 if ratios else "–")  # fmt: skip
        outside = f"{r['below'] + r['above']} ({r['below']}, {r['above']})"
        lines.append(f"| {r['metric']} | {r['n']} | {outside} | {r['expected']:.1f} | {ratio} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m testbed.reproduce.machine_check",
        description="Compare a study archive's later trials (from one part on) with its earlier "
        "ones, cell by cell: for a study that changed machine part-way.",
    )
    parser.add_argument("archive", type=Path, help="an archive folder (studies/<study>/<run>)")
    parser.add_argument(
        "--later-from-part",
        type=int,
        required=True,
        help="the number NNNN of the first part (part-<time>-NNNN.csv.gz) of the later trials",
    )
    args = parser.parse_args(argv)
    if not archive.is_archive(args.archive):
        print(f"machine_check: {args.archive}: not an archive (no {archive.PART_GLOB} in it)",
              file=sys.stderr)  # fmt: skip
        return 2
    numbers = [archive.part_number(p) for p in archive.parts(args.archive)]
    if not min(numbers) < args.later_from_part <= max(numbers):
        print(f"machine_check: --later-from-part {args.later_from_part}: {args.archive} has "
              f"parts {min(numbers)}-{max(numbers)}; give one above the first and at most the "
              "last", file=sys.stderr)  # fmt: skip
        return 2
    earlier, later = split_rows(args.archive, args.later_from_part)
    print(f"{args.archive}: {len(earlier)} earlier trials (parts before {args.later_from_part}), "
          f"{len(later)} later (ok and valid, last attempts)\n")  # fmt: skip
    print("\n".join(table(compare(earlier, later))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
