"""Scheduler timeline of one trial: which data went on which path when, where the scheduler
waited, and the receiver's out-of-order queue, so head-of-line blocking is visible.

Inputs (both in the trial folder, docs/CONTRACTS.md):
* `sched-trace-server.jsonl`: one line per scheduler decision of the sender (mpproxy
  server, written with `run_trials.sh --sched-trace`); `dsn`/`bytes` are the data sequence
  range the decision placed; placement time, not wire time (a pre-assigned range waits in
  the subflow's queue until its window opens).
* `transport-client.jsonl`: the receiver's `conn` lines every 100 ms (`ofo_queue_bytes`).

A video session opens several connections; the timeline shows the one that carried the most
data (the connection is matched across the two proxies by `conn_id`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from metrics.read import json_lines

SCHED_TRACE_FILE = "sched-trace-server.jsonl"
RECEIVER_STATS_FILE = "transport-client.jsonl"
SENDER_STATS_FILE = "transport-server.jsonl"
KIND_COLOURS = {"fresh": "tab:blue", "reinjection": "tab:red", "copy": "tab:orange"}


@dataclass
class Timeline:
    """The chosen connection's placements, waits and receiver out-of-order queue."""

    conn_id: str | None
    placements: pd.DataFrame  # t_s, path, kind (fresh|reinjection|copy), dsn_mb, end_mb
    waits: pd.DataFrame  # t_s, reason
    ofo: pd.DataFrame  # t_s, ofo_kb
    decisions: int


def _jsonl(path: Path) -> list[dict]:
    # The trace's last line may be cut by mpproxy being stopped mid-write.
    return json_lines(path, last_line_may_be_cut=True)


def _conn_ids(stats: Path) -> dict[int, str]:
    """Log id → conn_id of one proxy's `conn_open` lines."""
    if not stats.is_file():
        return {}
    return {
        int(r["conn"]): str(r["conn_id"])
        for r in _jsonl(stats)
        if r.get("event") == "conn_open" and "conn_id" in r
    }


def read_timeline(trial_dir: Path) -> Timeline | None:
    """The timeline of the trial's busiest connection; None without a scheduler trace."""
    trace = Path(trial_dir) / SCHED_TRACE_FILE
    if not trace.is_file():
        return None
    rows = _jsonl(trace)
    if not rows:
        return None
    decisions = pd.DataFrame(rows)
    placed = decisions.groupby("conn")["bytes"].sum()
    conn = int(placed.idxmax())
    mine = decisions[decisions["conn"] == conn]
    t_s = mine["t_ns"] / 1e9
    sends = mine[(mine["decision"] == "send") & (mine["bytes"] > 0)]
    parts = [
        pd.DataFrame(
            {
                "t_s": sends["t_ns"] / 1e9,
                "path": sends["path"],
                "kind": sends["kind"],
                "dsn_mb": sends["dsn"] / 1e6,
                "end_mb": (sends["dsn"] + sends["bytes"]) / 1e6,
            }
        )
    ]
    copies = sends[sends["copies"].map(len) > 0].explode("copies")
    if len(copies):
        parts.append(
            pd.DataFrame(
                {
                    "t_s": copies["t_ns"] / 1e9,
                    "path": copies["copies"],
                    "kind": "copy",
                    "dsn_mb": copies["dsn"] / 1e6,
                    "end_mb": (copies["dsn"] + copies["bytes"]) / 1e6,
                }
            )
        )
    placements = pd.concat(parts, ignore_index=True)
    waits = pd.DataFrame(
        {"t_s": t_s[mine["decision"] == "wait"], "reason": mine["wait_reason"]}
    ).dropna(subset=["t_s"])
    conn_id = _conn_ids(Path(trial_dir) / SENDER_STATS_FILE).get(conn)
    ofo = pd.DataFrame({"t_s": [], "ofo_kb": []})
    receiver = Path(trial_dir) / RECEIVER_STATS_FILE
    if conn_id is not None and receiver.is_file():
        lines = [
            r
            for r in _jsonl(receiver)
            if r.get("event") == "conn" and str(r.get("conn_id")) == conn_id
        ]
        ofo = pd.DataFrame(
            {
                "t_s": [r["t_ns"] / 1e9 for r in lines],
                "ofo_kb": [r.get("ofo_queue_bytes", 0) / 1e3 for r in lines],
            }
        )
    return Timeline(conn_id, placements, waits, ofo, len(mine))


def timeline_figure(timeline: Timeline, title: str) -> Figure:
    """Per path: data ranges placed over time (colour: fresh, reinjection, copy); the
    scheduler's deliberate waits; the receiver's out-of-order queue."""
    paths = sorted(str(p) for p in timeline.placements["path"].dropna().unique())
    rows = len(paths) + 2
    figure = Figure(figsize=(11, 2.0 * rows + 1), layout="constrained")
    axes = figure.subplots(rows, 1, sharex=True)
    for ax, path in zip(axes, paths, strict=False):
        mine = timeline.placements[timeline.placements["path"] == path]
        for kind, colour in KIND_COLOURS.items():
            k = mine[mine["kind"] == kind]
            if len(k):
                ax.vlines(k["t_s"], k["dsn_mb"], k["end_mb"], colors=colour, linewidth=1.5,
                          label=f"{kind} ({len(k)})")  # fmt: skip
                ax.plot(k["t_s"], k["dsn_mb"], ".", color=colour, markersize=1.5)
        ax.set_ylabel(f"{path}\ndata seq (MB)")
        ax.legend(fontsize="small", loc="upper left")
        ax.grid(alpha=0.3)
    wait_ax, ofo_ax = axes[-2], axes[-1]
    reasons = sorted(str(r) for r in timeline.waits["reason"].dropna().unique())
    for i, reason in enumerate(reasons):
        w = timeline.waits[timeline.waits["reason"] == reason]
        wait_ax.plot(w["t_s"], [i] * len(w), "|", markersize=8, label=f"{reason} ({len(w)})")
    wait_ax.set_yticks(range(len(reasons)), reasons)
    wait_ax.set_ylabel("scheduler\nwaits")
    if not reasons:
        wait_ax.text(0.5, 0.5, "no deliberate waits", transform=wait_ax.transAxes,
                     ha="center", va="center", color="grey")  # fmt: skip
    wait_ax.grid(alpha=0.3)
    if len(timeline.ofo):
        ofo_ax.step(timeline.ofo["t_s"], timeline.ofo["ofo_kb"], where="post", color="tab:purple")
    else:
        ofo_ax.text(0.5, 0.5, "no receiver stats for this connection",
                    transform=ofo_ax.transAxes, ha="center", va="center", color="grey")  # fmt: skip
    ofo_ax.set_ylabel("receiver out-of-\norder queue (kB)")
    ofo_ax.set_xlabel("time since trial start (s)")
    ofo_ax.grid(alpha=0.3)
    figure.suptitle(title)
    return figure


def pick_trial(trial_dirs: list[Path]) -> Path | None:
    """The first trial (by name) that has a scheduler trace."""
    with_trace = sorted(d for d in trial_dirs if (Path(d) / SCHED_TRACE_FILE).is_file())
    return with_trace[0] if with_trace else None
