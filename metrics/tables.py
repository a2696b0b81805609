"""Tidy tables computed from parsed trials (metrics/read.py); no plotting, no files.

Tables (one observation per row):
* `summary_table`:   one row per trial (spec, status, validity, player and path metrics).
* `stalls_table`:    one row per stall.
* `segments_table`:  one row per downloaded segment.
* `samples_table`:   one row per player sample (buffer level, bitrate on screen).
* `path_totals_table`: one row per trial, path and direction (emulator counters).
* `subflow_totals_table`: one row per trial, side, connection, path and subflow (counters).
* `path_intervals_table`: one row per trial, 100 ms interval and path.
* `probes_table`:    one row per control-transfer probe (transport none).

Every metric is defined once, in a function or constant named after it; docs/METRICS.md
lists the definitions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from common.paths import DEFAULT_PATH_NAMES
from metrics.cpu import CPU_COLUMNS, cpu_metrics
from metrics.crosstraffic import cross_traffic_metrics
from metrics.discards import DISCARD_COLUMNS, discard_metrics
from metrics.drops import attribute_drops, drop_counts
from metrics.player_summary import SUMMARY_FIELDS, summarize
from metrics.qoe import TRIAL_QOE_FIELDS, p1203_mode0, segment_qoe, trial_qoe
from metrics.read import INTERRUPTED_REASON, NS_PER_S, Trial

SPEC_COLUMNS = [
    "trial_id",
    "run",
    "scenario",
    "transport",
    "cc",
    "sched",
    "player",
    "video_duration_s",
    "rep",
    "seed",
    "cc_opts",
    "sched_opts",
    "ladder",
    "recv_window_bytes",
]
# run_trials.sh --ladder and --recv-window-bytes, with their defaults written out (specs
# written before the options existed played the default ladder with an autotuned window), so
# that cells differing only in them stay apart in every table and figure.
SETUP_DEFAULTS = {"ladder": "720p", "recv_window_bytes": "auto"}
# run_trials.sh --cc-opt/--sched-opt, as one "key=value,key=value" string ("" for none), so
# that cells differing only in an option stay apart in every table and figure.
OPTION_COLUMNS = ["cc_opts", "sched_opts"]
STATUS_COLUMNS = [
    "status",
    "reason",
    "valid",
    "invalid_reason",
    "wall_duration_s",
    "subflows_with_data",
    "paths_unused",
    "log_errors",
]
# The player summary's fields (metrics/player_summary.py), `end_reason` named player_end.
PLAYER_COLUMNS = ["player_end" if f == "end_reason" else f for f in SUMMARY_FIELDS]
# The testbed's two paths (CONTRACTS §3); they always get columns, even when empty,
# so summary.csv has the same columns in every run. Other path names get columns too.
KNOWN_PATHS = list(DEFAULT_PATH_NAMES)
PER_PATH_METRICS = [
    "bytes_down",
    "pkts_down",
    "bytes_up",
    "pkts_up",
    "drops_random",
    "drops_queue",
    "drops_outage",
    "retrans_pkts",
    "probe_goodput_down_bps",
    "probe_rtt_median_ms",
]
TRANSPORT_COLUMNS = [
    "transport_conns",
    "ofo_queue_max_bytes",
    "reinjected_bytes",
    "sched_waits",
    "http_requests",
    "http_body_bytes",
]
# Where the dropped frames came from (metrics/drops.py): decoder-side = with CPU or QoS
# evidence; network-attributable = the rest, by circumstance.
DROP_COLUMNS = [
    "dropped_frames_decoder",
    "dropped_frames_network",
    "dropped_frames_cpu",
    "dropped_frames_qos",
    "dropped_frames_stall",
    "dropped_frames_switch",
    "dropped_frames_other",
    "drop_episodes",
]
# The linear QoE (metrics/qoe.py) and, when installed, ITU-T P.1203 mode 0.
QOE_COLUMNS = [*TRIAL_QOE_FIELDS, "p1203_mode0"]
SEGMENT_S = 2.0  # the content's segment length (server/content.py SEGMENT_S)
INTERVAL_NS = 100_000_000  # the emulator's and mpproxy's sampling interval (CONTRACTS §5)
EMULATOR_COUNTERS = ["pkts_in", "bytes_in", "pkts_out", "bytes_out"]
EMULATOR_DROPS = ["drops_random", "drops_queue", "drops_outage"]
# The side whose subflows carry the video (server -> client); kernel mode samples with ss.
DATA_SENDER_SIDES = ["server", "kernel", "client"]


def per_path_columns(paths: Iterable[str]) -> list[str]:
    return [f"{metric}_{path}" for path in paths for metric in PER_PATH_METRICS]


def summary_columns(paths: Iterable[str] = KNOWN_PATHS) -> list[str]:
    return (
        SPEC_COLUMNS + STATUS_COLUMNS + PLAYER_COLUMNS + per_path_columns(paths) + TRANSPORT_COLUMNS
        + DROP_COLUMNS + QOE_COLUMNS + CPU_COLUMNS + DISCARD_COLUMNS
    )  # fmt: skip


def events(df: pd.DataFrame, event: str, columns: Iterable[str]) -> pd.DataFrame:
    """Rows of one event kind, with every expected column present (missing -> NaN)."""
    wanted = ["trial_id", *columns]
    rows = df[df["event"] == event] if "event" in df.columns and len(df) else df.iloc[0:0]
    return rows.reindex(columns=list(dict.fromkeys(wanted))).reset_index(drop=True)


def player_events(trials: Iterable[Trial], event: str, columns: list[str]) -> pd.DataFrame:
    """`events` of every trial's player log, one table (the columns even without trials)."""
    frames = [events(t.player, event, columns) for t in trials]
    return (
        pd.concat(frames, ignore_index=True) if frames else events(pd.DataFrame(), event, columns)
    )


# ---------------------------------------------------------------- status and validity


def trial_status(trial: Trial) -> dict[str, Any]:
    """Status (ok | failed | incomplete), its reason, and whether results may be counted.

    A trial is `incomplete` when result.json is missing (interrupted; CONTRACTS §2:
    result.json is written last). It is counted (`valid`) only when result.json says
    valid and every log line could be read; format errors are added to invalid_reason.
    """
    result = trial.result
    reasons: list[str] = []
    if result is None:
        unreadable = [e for e in trial.errors if "result.json" in e]
        status = "incomplete"
        reason = f"result.json unreadable: {unreadable[0]}" if unreadable else INTERRUPTED_REASON
        valid = False
        reasons.append("trial did not finish")
    else:
        status = str(result.get("status", "failed"))
        reason = result.get("reason")
        valid = bool(result.get("valid", False)) and status == "ok"
        reasons.extend(str(r) for r in result.get("invalid_reasons") or [])
        if status != "ok" and not reasons:
            reasons.append(f"status {status}")
    if trial.errors:
        valid = False
        reasons.append(f"{len(trial.errors)} malformed log line(s), first: {trial.errors[0]}")
    if not trial.meta:
        reasons.append("no trial.json")
    return {
        "status": status,
        "reason": reason if reason else "",
        "valid": valid,
        "invalid_reason": "; ".join(reasons),
        "wall_duration_s": (result or {}).get("wall_duration_s", math.nan),
        "subflows_with_data": (result or {}).get("subflows_with_data", math.nan),
        "paths_unused": paths_unused((result or {}).get("paths_unused")),
        "log_errors": len(trial.errors),
    }


def paths_unused(recorded: Any) -> str | float:
    """result.json `paths_unused` as one cell: the paths whose subflow was established but
    carried no stream data, comma-separated ("" = every path carried data); NaN when the
    trial does not say (a transport without the check, a failed trial, an older run)."""
    if not isinstance(recorded, list):
        return math.nan
    return ",".join(str(name) for name in recorded)


# ---------------------------------------------------------------- player metrics


def player_metrics(trial: Trial) -> dict[str, Any]:
    """Per-trial player metrics: metrics/player_summary.py's `summarize` of player.jsonl (the
    one definition of start-up, stalls, drops, switches and bitrate), missing values NaN."""
    lines = _player_lines(trial)
    if not lines:
        return dict.fromkeys(PLAYER_COLUMNS, math.nan) | {"player_end": "no player log"}
    summary = summarize(lines)
    row = {
        column: math.nan if summary.get(column) is None else summary[column]
        for column in PLAYER_COLUMNS
        if column != "player_end"
    }
    row["player_end"] = summary["end_reason"] or "no end line"
    return row


def _player_lines(trial: Trial) -> list[dict[str, Any]]:
    return trial.player_records()


def drop_and_qoe_metrics(trial: Trial) -> dict[str, Any]:
    """Drop attribution (metrics/drops.py) and QoE (metrics/qoe.py) of one trial."""
    lines = _player_lines(trial)
    if not lines:
        return dict.fromkeys(DROP_COLUMNS + QOE_COLUMNS + DISCARD_COLUMNS, math.nan)
    cpu_lines = trial.cpu.to_dict("records") if "event" in trial.cpu.columns else []
    episodes = attribute_drops(lines, cpu_lines)
    row: dict[str, Any] = dict(drop_counts(episodes))
    row["drop_episodes"] = "; ".join(
        f"t={e.t_s:.1f}s {e.frames} {e.cause} ({e.evidence})" for e in episodes
    )
    row |= trial_qoe(lines, SEGMENT_S)
    row["p1203_mode0"] = p1203_mode0(lines, SEGMENT_S)
    row |= discard_metrics(
        lines, row["dropped_frames_decoder"], row["dropped_frames_network"], trial.spec
    )
    return row


def qoe_segments_table(trials: Iterable[Trial]) -> pd.DataFrame:
    """One row per trial and segment: the linear QoE's terms (metrics/qoe.py)."""
    columns = ["trial_id", "segment_index", "bitrate_mbps", "switch_mbps", "stall_s", "qoe"]
    rows = [
        [trial.trial_id, s.index, s.bitrate_mbps, s.switch_mbps, s.stall_s, s.qoe]
        for trial in trials
        for s in segment_qoe(_player_lines(trial), SEGMENT_S)
    ]
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------- per-path tables


def path_totals_table(trials: Iterable[Trial]) -> pd.DataFrame:
    """One row per trial, path and direction: the emulator's packet and byte counters.

    From the `link_totals` lines written at exit when present (they include the last,
    partial interval); otherwise the sum of the 100 ms `link_stats` lines (source column).
    """
    columns = ["trial_id", "path", "dir", *EMULATOR_COUNTERS, *EMULATOR_DROPS, "source"]
    frames = []
    for trial in trials:
        em = trial.emulator
        totals = events(
            em,
            "link_totals",
            ["path", "dir", *[f"{c}_total" for c in EMULATOR_COUNTERS + EMULATOR_DROPS]],
        )
        stats = events(em, "link_stats", ["path", "dir", *EMULATOR_COUNTERS, *EMULATOR_DROPS])
        if len(totals):
            renamed = totals.rename(
                columns={f"{c}_total": c for c in EMULATOR_COUNTERS + EMULATOR_DROPS}
            )
            renamed = renamed.groupby(["trial_id", "path", "dir"], as_index=False).last()
            renamed["source"] = "link_totals"
            frames.append(renamed)
        elif len(stats):
            summed = stats.groupby(["trial_id", "path", "dir"], as_index=False)[
                EMULATOR_COUNTERS + EMULATOR_DROPS
            ].sum()
            summed["source"] = "link_stats"
            frames.append(summed)
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def subflow_totals_table(trials: Iterable[Trial]) -> pd.DataFrame:
    """One row per trial, side, connection, path and subflow: the last value of every
    `*_total` counter of the `subflow` lines (user transport sides client/server; kernel
    ss = side `kernel`, whose lines also name the subflow's 4-tuple)."""
    counters = [
        "bytes_sent_total",
        "bytes_acked_total",
        "bytes_retrans_total",
        "pkts_sent_total",
        "pkts_lost_total",
        "pkts_retrans_total",
        "sched_picks_total",
    ]
    keys = ["trial_id", "side", "conn", "path", "subflow"]
    frames = []
    for trial in trials:
        for source, side in ((trial.transport, None), (trial.kernel_subflows, "kernel")):
            rows = events(source, "subflow", ["side", "conn", "path", "subflow", "t_ns", *counters])
            if side is not None:
                rows["side"] = side
            if len(rows):
                rows = _subflow_keys(rows)
                frames.append(
                    rows.sort_values("t_ns").groupby(keys, as_index=False)[counters].last()
                )
    if not frames:
        return pd.DataFrame(columns=keys + counters)
    return pd.concat(frames, ignore_index=True)


def _subflow_keys(rows: pd.DataFrame) -> pd.DataFrame:
    """conn as text (kernel: MPTCP token or 4-tuple); `subflow` (kernel ss: the subflow's
    4-tuple, so two subflows of one connection on one path stay apart; "" when absent)."""
    rows = rows.copy()
    rows["conn"] = rows["conn"].astype(str)
    rows["subflow"] = rows["subflow"].astype(object).where(rows["subflow"].notna(), "").astype(str)
    return rows


def path_metrics(
    trial: Trial, path_totals: pd.DataFrame, subflow_totals: pd.DataFrame
) -> dict[str, Any]:
    """Wide per-path columns for the summary row: bytes/pkts delivered down and up (the
    emulator's bytes_out/pkts_out), drops summed over both directions,
    retrans_pkts = sum over sides and connections of the last `pkts_retrans_total`, and
    the control transfer's downstream goodput and median RTT (mean over probes)."""
    out: dict[str, Any] = {}
    probes = probes_table([trial])
    mine = path_totals[path_totals["trial_id"] == trial.trial_id]
    flows = subflow_totals[subflow_totals["trial_id"] == trial.trial_id]
    paths = list(
        dict.fromkeys(KNOWN_PATHS + list(mine["path"].dropna()) + list(flows["path"].dropna()))
    )
    for path in paths:
        link = mine[mine["path"] == path]
        down, up = link[link["dir"] == "down"], link[link["dir"] == "up"]
        has_link = len(link) > 0
        out[f"bytes_down_{path}"] = _sum_or_nan(down["bytes_out"], has_link)
        out[f"pkts_down_{path}"] = _sum_or_nan(down["pkts_out"], has_link)
        out[f"bytes_up_{path}"] = _sum_or_nan(up["bytes_out"], has_link)
        out[f"pkts_up_{path}"] = _sum_or_nan(up["pkts_out"], has_link)
        for drop in EMULATOR_DROPS:
            out[f"{drop}_{path}"] = _sum_or_nan(link[drop], has_link)
        subflows = flows[flows["path"] == path]
        out[f"retrans_pkts_{path}"] = _sum_or_nan(subflows["pkts_retrans_total"], len(flows) > 0)
        probe = probes[probes["path"] == path]
        down = probe[probe["dir"] == "down"]
        out[f"probe_goodput_down_bps_{path}"] = _mean(down["goodput_bps"])
        out[f"probe_rtt_median_ms_{path}"] = _mean(probe["rtt_ms_median"])
    return out


def _mean(values: pd.Series) -> float:
    return float(pd.to_numeric(values, errors="coerce").mean()) if len(values) else math.nan


def probes_table(trials: Iterable[Trial]) -> pd.DataFrame:
    """One row per `path_probe` of the control transfer (CONTRACTS §5.6)."""
    columns = [
        "t_s", "path", "dir", "bytes", "duration_s", "goodput_bps", "rtt_ms_min",
        "rtt_ms_median", "rtt_ms_max", "configured_rate_bps", "configured_delay_ms",
    ]  # fmt: skip
    frames = [events(t.control, "path_probe", columns) for t in trials]
    return pd.concat(frames, ignore_index=True) if frames else events(pd.DataFrame(), "x", columns)


def _sum_or_nan(values: pd.Series, present: bool) -> float:
    """NaN when the source log is absent (unknown), 0 when present but silent."""
    return float(pd.to_numeric(values, errors="coerce").fillna(0).sum()) if present else math.nan


def transport_metrics(trial: Trial, subflow_totals: pd.DataFrame) -> dict[str, Any]:
    """Connection-level metrics (user transport `conn` lines, nginx requests).

    ofo_queue_max_bytes: the largest `ofo_queue_max_bytes` of any connection on either
    side (the receiver's reordering buffer, i.e. head-of-line blocking across paths).
    reinjected_bytes / sched_waits: sum over sides and connections of the last counter.
    """
    conns = events(
        trial.transport,
        "conn",
        [
            "side",
            "conn",
            "t_ns",
            "ofo_queue_max_bytes",
            "reinjected_bytes_total",
            "sched_waits_total",
        ],
    )
    flows = subflow_totals[subflow_totals["trial_id"] == trial.trial_id]
    nginx = events(trial.nginx, "request", ["body_bytes_sent"])
    has_conns = len(conns) > 0
    last = conns.sort_values("t_ns").groupby(["side", "conn"]).last() if has_conns else conns
    return {
        "transport_conns": len(flows[["side", "conn"]].drop_duplicates())
        if len(flows)
        else (len(last) if has_conns else math.nan),
        "ofo_queue_max_bytes": float(pd.to_numeric(conns["ofo_queue_max_bytes"]).max())
        if has_conns
        else math.nan,
        "reinjected_bytes": _sum_or_nan(last["reinjected_bytes_total"], has_conns),
        "sched_waits": _sum_or_nan(last["sched_waits_total"], has_conns),
        "http_requests": len(nginx) if len(trial.nginx) else math.nan,
        "http_body_bytes": _sum_or_nan(nginx["body_bytes_sent"], len(trial.nginx) > 0),
    }


# ---------------------------------------------------------------- the summary


def spec_values(spec: dict[str, Any]) -> dict[str, Any]:
    """A trial spec (trial.json, run.json) as SPEC_COLUMNS values: NaN where a field is
    absent, the options joined into one string."""
    row = {column: spec.get(column, math.nan) for column in SPEC_COLUMNS}
    for column in OPTION_COLUMNS:
        row[column] = ",".join(spec.get(column) or ())
    for column, default in SETUP_DEFAULTS.items():
        value = spec.get(column)
        row[column] = default if value is None else str(value)
    return row


def spec_row(trial: Trial) -> dict[str, Any]:
    row = spec_values(trial.spec)
    row["trial_id"] = trial.trial_id
    row["run"] = trial.meta.get("run", math.nan)
    return row


def summary_table(trials: list[Trial]) -> pd.DataFrame:
    """One row per trial, failed and incomplete trials included (with their reasons)."""
    path_totals = path_totals_table(trials)
    subflow_totals = subflow_totals_table(trials)
    rows = []
    for trial in trials:
        row = spec_row(trial) | trial_status(trial) | player_metrics(trial)
        row |= path_metrics(trial, path_totals, subflow_totals)
        row |= transport_metrics(trial, subflow_totals)
        row |= drop_and_qoe_metrics(trial) | cpu_metrics(trial.cpu, trial.meta)
        row |= cross_traffic_metrics(trial)
        rows.append(row)
    return order_summary_columns(pd.DataFrame(rows))


def order_summary_columns(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary's fixed column order; paths other than wifi/lte after them, by name;
    the cross-traffic columns (metrics/crosstraffic.py) last, when a trial has them."""
    found = {c.removeprefix("bytes_down_") for c in summary.columns if c.startswith("bytes_down_")}
    columns = summary_columns(KNOWN_PATHS + sorted(found - set(KNOWN_PATHS)))
    cross = ["download_goodput_bps", "cross_flows", "cross_goodput_bps"]
    cross += sorted(c for c in summary.columns if c.startswith("cross_goodput_bps_"))
    if any(c in summary.columns for c in cross[1:]):
        columns += [c for c in cross if c in summary.columns]
    return summary.reindex(columns=columns)


# ---------------------------------------------------------------- event tables


def stalls_table(trials: Iterable[Trial]) -> pd.DataFrame:
    """One row per stall: start/end on the trial clock (s), duration, media time, open."""
    columns = ["start_t_ns", "end_t_ns", "duration_ms", "media_time_s", "open"]
    stalls = player_events(trials, "stall", columns)
    stalls["start_s"] = stalls["start_t_ns"].astype(float) / NS_PER_S
    stalls["end_s"] = stalls["end_t_ns"].astype(float) / NS_PER_S
    return stalls[["trial_id", "start_s", "end_s", "duration_ms", "media_time_s", "open"]]


def segments_table(trials: Iterable[Trial]) -> pd.DataFrame:
    """One row per segment download; download_ms = end - request."""
    what = ["url", "rep_id", "media_type", "bytes"]  # the segment, kept as logged
    times = ["request_t_ns", "first_byte_t_ns", "end_t_ns"]
    seg = player_events(trials, "segment", [*what, *times, "throughput_bps"])
    seg["request_s"] = seg["request_t_ns"].astype(float) / NS_PER_S
    seg["download_ms"] = (seg["end_t_ns"].astype(float) - seg["request_t_ns"].astype(float)) / 1e6
    return seg[["trial_id", "request_s", *what, "download_ms", "throughput_bps"]]


def samples_table(trials: Iterable[Trial]) -> pd.DataFrame:
    """One row per player sample (every 250 ms): buffer level and what is on screen."""
    columns = [
        "t_s",
        "media_time_s",
        "buffer_s",
        "bitrate_bps",
        "playing",
        "dropped_frames",
        "total_frames",
    ]
    return player_events(trials, "sample", columns)


# ---------------------------------------------------------------- 100 ms intervals


def interval_end_s(t_ns: pd.Series) -> pd.Series:
    """The end of the 100 ms interval holding each time: a line stamped t describes the
    interval (t - 100 ms, t], so times are rounded up to the interval grid."""
    ticks = np.ceil(t_ns.astype(float) / INTERVAL_NS)
    return ticks * INTERVAL_NS / NS_PER_S


def path_intervals_table(trials: Iterable[Trial]) -> pd.DataFrame:
    """One row per trial, 100 ms interval (t_s = its end) and path.

    From the emulator: down_bps / up_bps = bytes_out * 8 / interval, drops (both
    directions), queue_pkts_down and sojourn_mean_ms_down. From the data sender's
    transport samples (server, else kernel ss, else client): cwnd_bytes (sum over
    connections of each one's last sample in the interval), srtt_ms (mean over
    connections) and sent_bps (sum over subflows of each one's sending rate since its
    previous sample, from bytes_sent_total; NaN for first samples).
    """
    frames = []
    for trial in trials:
        link = _link_intervals(trial)
        flows = _subflow_intervals(trial)
        if link.empty and flows.empty:
            continue
        merged = (
            link.merge(flows, on=["trial_id", "t_s", "path"], how="outer")
            if len(flows) and len(link)
            else (link if len(link) else flows)
        )
        frames.append(merged)
    columns = [
        "trial_id", "t_s", "path", "down_bps", "up_bps", "drops_random", "drops_queue",
        "drops_outage", "queue_pkts_down", "sojourn_mean_ms_down", "cwnd_bytes", "srtt_ms",
        "sent_bps",
    ]  # fmt: skip
    if not frames:
        return pd.DataFrame(columns=columns)
    table = pd.concat(frames, ignore_index=True).reindex(columns=columns)
    return table.sort_values(["trial_id", "path", "t_s"]).reset_index(drop=True)


def _link_intervals(trial: Trial) -> pd.DataFrame:
    stats = events(
        trial.emulator,
        "link_stats",
        [
            "t_ns",
            "path",
            "dir",
            "interval_ms",
            "bytes_out",
            *EMULATOR_DROPS,
            "queue_pkts",
            "sojourn_mean_ms",
        ],
    )
    if stats.empty:
        return pd.DataFrame(columns=["trial_id", "t_s", "path"])
    stats["t_s"] = interval_end_s(stats["t_ns"])
    stats["bps"] = (
        stats["bytes_out"].astype(float) * 8 / (stats["interval_ms"].astype(float) / 1000)
    )
    keys = ["trial_id", "t_s", "path"]
    wide = stats.pivot_table(index=keys, columns="dir", values="bps", aggfunc="sum").reset_index()
    wide = wide.rename(columns={"down": "down_bps", "up": "up_bps"})
    drops = stats.groupby(keys, as_index=False)[EMULATOR_DROPS].sum()
    down = (
        stats[stats["dir"] == "down"]
        .groupby(keys, as_index=False)
        .agg(
            queue_pkts_down=("queue_pkts", "last"), sojourn_mean_ms_down=("sojourn_mean_ms", "mean")
        )
    )
    return wide.merge(drops, on=keys, how="left").merge(down, on=keys, how="left")


def _subflow_intervals(trial: Trial) -> pd.DataFrame:
    columns = [
        "side",
        "conn",
        "path",
        "subflow",
        "t_ns",
        "cwnd_bytes",
        "srtt_ms",
        "bytes_sent_total",
    ]
    rows = pd.concat(
        [
            events(trial.transport, "subflow", columns),
            events(trial.kernel_subflows, "subflow", columns).assign(side="kernel"),
        ],
        ignore_index=True,
    )
    if rows.empty:
        return pd.DataFrame(columns=["trial_id", "t_s", "path"])
    side = next(
        s for s in DATA_SENDER_SIDES + list(rows["side"].unique()) if (rows["side"] == s).any()
    )
    rows = _subflow_keys(rows[rows["side"] == side].sort_values("t_ns"))
    rows["t_s"] = interval_end_s(rows["t_ns"])
    # Sending rate of each subflow since its previous sample (samples may be 100 ms or,
    # for kernel ss, 150 ms apart); NaN for a subflow's first sample.
    by_subflow = rows.groupby(["path", "conn", "subflow"])
    elapsed_s = by_subflow["t_ns"].diff() / NS_PER_S
    rows["sent_bps"] = by_subflow["bytes_sent_total"].diff() * 8 / elapsed_s.where(elapsed_s > 0)
    per_conn = rows.groupby(["trial_id", "t_s", "path", "conn", "subflow"], as_index=False).agg(
        cwnd_bytes=("cwnd_bytes", "last"),
        srtt_ms=("srtt_ms", "mean"),
        sent_bps=("sent_bps", "last"),
    )
    return per_conn.groupby(["trial_id", "t_s", "path"], as_index=False).agg(
        cwnd_bytes=("cwnd_bytes", "sum"),
        srtt_ms=("srtt_ms", "mean"),
        sent_bps=("sent_bps", _sum_or_missing),
    )


def _sum_or_missing(values: pd.Series) -> float:
    """Sum, but NaN (not 0) when every value is missing."""
    return float(values.sum(min_count=1))
