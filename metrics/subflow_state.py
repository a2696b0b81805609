"""The sender's subflows at chosen moments of a trial: window, SRTT, CC state, bandwidth
estimate, data sent, RTOs, and (LIA) the kernel's cached alpha; and a path's loss episodes,
each with the window that met it.

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

import statistics
from dataclasses import dataclass
from pathlib import Path

from metrics.read import json_lines

SENDER_STATS_FILE = "transport-server.jsonl"
# The user transport's MSS: a datagram's UDP payload, ≤ 1472 B (docs/TRANSPORT.md).
MSS_BYTES = 1472
# Losses closer than this belong to one episode (one overflow of a queue, one burst).
EPISODE_GAP_S = 0.5
# An episode's window is the largest sampled in this long before its first loss: the sample
# that counts a loss already shows the reduced window.
PEAK_LOOKBACK_S = 0.5


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


def _video_connection_lines(trial_dir: Path) -> tuple[list[dict], list[str]]:
    """The video connection's subflow lines in time order, and its paths' names."""
    lines = _subflow_lines(trial_dir)
    conn = video_connection(lines)
    mine = sorted((r for r in lines if int(r["conn"]) == conn), key=lambda r: r["t_ns"])
    return mine, sorted({str(r["path"]) for r in mine})


def states_at(trial_dir: Path, times_s: list[float]) -> list[SubflowState]:
    """Per requested time and path of the video connection, the last sample at or before it
    (a path with no sample yet is left out)."""
    mine, paths = _video_connection_lines(trial_dir)
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


@dataclass(frozen=True)
class LossEpisode:
    """Packets the sender counted lost on one path of the video connection, in one episode.
    As fine as the log: the emulated transport logs every 100 ms, mpsim every second unless
    run with `--sim-stats-interval-ms 100` (then the window before a loss is seen)."""

    t_s: float  # the first sample that counts a loss of the episode
    path: str
    lost_pkts: int
    peak_cwnd_pkts: float | None  # the largest window sampled in PEAK_LOOKBACK_S before it


def loss_episodes(trial_dir: Path, path: str) -> list[LossEpisode]:
    """The video connection's loss episodes on `path`, in time order (increments of
    `pkts_lost_total` no more than EPISODE_GAP_S apart form one). ValueError when the
    connection has no such path."""
    lines, paths = _video_connection_lines(trial_dir)
    if path not in paths:
        raise ValueError(
            f"{trial_dir}: the video connection has no path {path!r} "
            f"(its paths: {', '.join(paths) or 'none'})"
        )
    mine = [r for r in lines if r["path"] == path]
    episodes: list[list] = []  # [t_s, lost, peak]
    lost_before, last_loss_s = 0, None
    for i, r in enumerate(mine):
        t_s = r["t_ns"] / 1e9
        lost = int(r.get("pkts_lost_total", 0)) - lost_before
        lost_before = int(r.get("pkts_lost_total", 0))
        if lost <= 0:
            continue
        if last_loss_s is None or t_s - last_loss_s > EPISODE_GAP_S:
            before = [
                p["cwnd_bytes"] / MSS_BYTES
                for p in mine[:i]
                if t_s - PEAK_LOOKBACK_S <= p["t_ns"] / 1e9 < t_s
            ]
            episodes.append([t_s, 0, max(before) if before else None])
        episodes[-1][1] += lost
        last_loss_s = t_s
    return [LossEpisode(t, path, lost, peak) for t, lost, peak in episodes]


@dataclass(frozen=True)
class LossSummary:
    """A trial's loss episodes on one path in a line: how its first episode came, and the
    window its later ones settled at."""

    path: str
    episodes: int
    lost_pkts: int
    first_t_s: float | None
    first_peak_cwnd_pkts: float | None
    first_lost_pkts: int | None
    steady_peak_cwnd_pkts: float | None  # median peak over the episodes after `after_s`


def summarise_losses(episodes: list[LossEpisode], path: str, after_s: float) -> LossSummary:
    first = episodes[0] if episodes else None
    late = [e.peak_cwnd_pkts for e in episodes if e.t_s > after_s and e.peak_cwnd_pkts]
    return LossSummary(
        path=path,
        episodes=len(episodes),
        lost_pkts=sum(e.lost_pkts for e in episodes),
        first_t_s=first.t_s if first else None,
        first_peak_cwnd_pkts=first.peak_cwnd_pkts if first else None,
        first_lost_pkts=first.lost_pkts if first else None,
        steady_peak_cwnd_pkts=statistics.median(late) if late else None,
    )
