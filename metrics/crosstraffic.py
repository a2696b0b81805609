"""Cross traffic beside the multipath connection (docs/METRICS.md, "Cross traffic").

Two goodputs on the same footing, each measured at its receiver while the flow had data
in flight:

* `download_goodput_bps`: the multipath connection's; the player's segment bytes x 8 over
  the union of the segment downloads' [request, end] intervals (the player idles when its
  buffer is full; that idle time is not the connection's).
* `cross_goodput_bps_<flow>`: each cross flow's; the receiver's bytes x 8 between its first
  and last byte (testbed/crosstraffic.py `flow_totals`). `cross_goodput_bps` is their sum,
  `cross_flows` their number.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from metrics.read import NS_PER_S, Trial


def _union_seconds(intervals: list[tuple[float, float]]) -> float:
    total = 0.0
    end_so_far = -math.inf
    for start, end in sorted(intervals):
        if end <= end_so_far:
            continue
        total += end - max(start, end_so_far)
        end_so_far = end
    return total


def download_goodput_bps(trial: Trial) -> float:
    player = trial.player
    if "event" not in player.columns or not (player["event"] == "segment").any():
        return math.nan
    seg = player[player["event"] == "segment"]
    needed = {"bytes", "request_t_ns", "end_t_ns"}
    if not needed <= set(seg.columns):
        return math.nan
    seg = seg.dropna(subset=list(needed))
    busy_s = _union_seconds(
        [
            (float(a) / NS_PER_S, float(b) / NS_PER_S)
            for a, b in zip(seg["request_t_ns"], seg["end_t_ns"], strict=True)
        ]
    )
    return float(pd.to_numeric(seg["bytes"]).sum()) * 8 / busy_s if busy_s > 0 else math.nan


def cross_traffic_metrics(trial: Trial) -> dict[str, Any]:
    """Summary columns: the multipath download goodput, and every cross flow's goodput."""
    out: dict[str, Any] = {"download_goodput_bps": download_goodput_bps(trial)}
    cross = trial.cross
    if "event" not in cross.columns:
        return out
    totals = cross[(cross["event"] == "flow_totals") & (cross.get("role") == "receiver")]
    if totals.empty:
        return out
    goodputs = {}
    for _, row in totals.iterrows():
        value = row.get("goodput_bps")
        goodputs[str(row["flow"])] = float(value) if pd.notna(value) else 0.0
    out["cross_flows"] = len(goodputs)
    out["cross_goodput_bps"] = sum(goodputs.values())
    for flow, value in sorted(goodputs.items()):
        out[f"cross_goodput_bps_{flow}"] = value
    return out
