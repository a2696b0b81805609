"""The sender's subflows at chosen moments of a trial: window, SRTT, CC state, bandwidth
estimate, data sent, RTOs, and (LIA) the kernel's cached alpha.

Why: two trials of one cell can part ways in their first seconds and never meet again. A
sticky scheduler keeps the path it moved to, and a coupled CC keeps the window of a path it
stopped using, so the state at a few early moments explains a whole trial. Comparing the
engines cell by cell needs these numbers side by side
(docs/reproductions/engine-agreement-seed002.md).

Input: the trial folder's `transport-server.jsonl` (docs/CONTRACTS.md, the sender's `subflow`
lines every 100 ms; both engines write it). Times are on the trial's clock (seconds, as
`t_ns`), the same for both engines. The connection shown is the one whose subflows sent the
most bytes: the video's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from metrics.read import json_lines

SENDER_STATS_FILE = "transport-server.jsonl"
# The user transport's MSS: a datagram's UDP payload, ≤ 1472 B (docs/TRANSPORT.md).
MSS_BYTES = 1472


@dataclass(frozen=True)
class SubflowState:
    """One path of the video connection at one moment (the last sample at or before it)."""

    t_s: float
    path: str
    cc_state: str
    cwnd_pkts: float
    srtt_ms: float
    bw_est_mbps: float | None
    data_sent_mb: float
    rtos: int
    recoveries: int
    lia_alpha_k: float | None


def _subflow_lines(trial_dir: Path) -> list[dict]:
    stats = Path(trial_dir) / SENDER_STATS_FILE
    if not stats.is_file():
        raise FileNotFoundError(f"{stats}: no sender statistics in this trial folder")
    # mpproxy may be stopped mid-write: the last line can be cut.
    return [r for r in json_lines(stats, last_line_may_be_cut=True) if r.get("event") == "subflow"]


def video_connection(lines: list[dict]) -> int | None:
    """The connection whose subflows sent the most bytes (None without subflow lines)."""
    last: dict[tuple[int, str], int] = {}
    for r in lines:
        last[(int(r["conn"]), str(r["path"]))] = int(r.get("bytes_sent_total", 0))
    sent: dict[int, int] = {}
    for (conn, _path), total in last.items():
        sent[conn] = sent.get(conn, 0) + total
    return max(sent, key=lambda c: (sent[c], -c)) if sent else None


def states_at(trial_dir: Path, times_s: list[float]) -> list[SubflowState]:
    """Per requested time and path of the video connection, the last sample at or before it
    (a path with no sample yet is left out)."""
    lines = _subflow_lines(trial_dir)
    conn = video_connection(lines)
    mine = sorted((r for r in lines if int(r["conn"]) == conn), key=lambda r: r["t_ns"])
    paths = sorted({str(r["path"]) for r in mine})
    out: list[SubflowState] = []
    for t_s in times_s:
        for path in paths:
            before = [r for r in mine if r["path"] == path and r["t_ns"] <= t_s * 1e9]
            if not before:
                continue
            r = before[-1]
            bw = r.get("bw_est_bps")
            out.append(
                SubflowState(
                    t_s=t_s,
                    path=path,
                    cc_state=str(r.get("cc_state")),
                    cwnd_pkts=r["cwnd_bytes"] / MSS_BYTES,
                    srtt_ms=float(r["srtt_ms"]),
                    bw_est_mbps=None if bw is None else bw / 1e6,
                    data_sent_mb=r.get("data_bytes_sent_total", 0) / 1e6,
                    rtos=int(r.get("rto_total", 0)),
                    recoveries=int(r.get("recoveries_total", 0)),
                    lia_alpha_k=r.get("cc_extra", {}).get("lia_alpha_k"),
                )
            )
    return out
