"""Aggregation over repetitions: mean and 95 % interval per configuration and metric.

Input: the summary table (one row per trial). Only trials that ran to their end and are
valid (`status == "ok"` and `valid`) are counted. Output: a long table with one row per
configuration (every spec column except rep, seed, trial_id, run) and metric: n, mean, std
(sample, ddof=1), ci95_low, ci95_high and ci_method, the interval from metrics/stats.py
(BCa bootstrap, t for near-normal metrics, exact fallbacks for degenerate samples). With
n = 1 the spread is unknown, so std and the interval are NaN (never 0).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from metrics.stats import cell_labels, decided_ranks, intervals_batch, paired_table
from metrics.tables import KNOWN_PATHS, OPTION_COLUMNS, PER_PATH_METRICS, SETUP_DEFAULTS

# One configuration (cell of the matrix); the algorithm options ("" for none) keep cells that
# differ only in a --cc-opt/--sched-opt apart.
GROUP_COLUMNS = [
    "scenario", "transport", "cc", "sched", "player", "video_duration_s", *OPTION_COLUMNS,
    *SETUP_DEFAULTS,
]  # fmt: skip
DEFAULT_METRICS = [
    "stalls",
    "stall_total_ms",
    "stall_max_ms",
    "dropped_frames",
    "total_frames",
    "startup_delay_ms",
    "mean_bitrate_bps",
    "quality_switches",
    *[f"{metric}_{path}" for path in KNOWN_PATHS for metric in PER_PATH_METRICS],
    "ofo_queue_max_bytes",
    "decode_stalls",
    "dropped_frames_decoder",
    "dropped_frames_network",
    "discarded_frames",
    "discarded_frames_network",
    "skipped_media_s",
    "live_latency_median_s",
    "qoe_lin",
    "qoe_lin_per_segment",
    "p1203_mode0",
    "cpu_player_s",
    "cpu_testbed_s",
    "loadavg_1m_max",
]
# Metrics whose cells the report compares pairwise and ranks (metrics/stats.py): what the
# viewer sees, and the Wi-Fi path's retransmissions, the transport's most direct reaction to
# a lossy Wi-Fi (on B1, BBR retransmitted 3-10 times as many packets there as CUBIC in every
# seed of the default run; README.md). A run without a Wi-Fi path has no such comparison.
RANKED_METRICS = [
    "qoe_lin_per_segment", "stalls", "stall_total_ms", "dropped_frames_network",
    "retrans_pkts_wifi",
]  # fmt: skip


def counted(summary: pd.DataFrame) -> pd.DataFrame:
    """The trials whose results may be counted: finished (ok) and valid."""
    valid = summary["valid"].astype("boolean").fillna(False)
    return summary[(summary["status"] == "ok") & valid]


def aggregate(
    summary: pd.DataFrame,
    metrics: Iterable[str] = DEFAULT_METRICS,
    by: list[str] = GROUP_COLUMNS,
    *,
    include_invalid: bool = False,
) -> pd.DataFrame:
    """Mean and 95 % interval of each metric per configuration, over repetitions (long table).

    include_invalid=True also counts finished trials marked invalid (the report uses it,
    with a warning, only for scenarios that have no valid trial at all)."""
    summary = with_option_columns(summary)
    columns = [*by, "metric", "n", "mean", "std", "ci95_low", "ci95_high", "ci_method"]
    rows = summary[summary["status"] == "ok"] if include_invalid else counted(summary)
    present = [m for m in metrics if m in rows.columns]
    if rows.empty or not present:
        return pd.DataFrame(columns=columns)
    long = rows.melt(id_vars=by, value_vars=present, var_name="metric", value_name="value")
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    long = long.dropna(subset=["value"])
    out = []
    for metric, of_metric in long.groupby("metric", sort=True):
        cells = of_metric.groupby(by, dropna=False, sort=True)["value"]
        keys, samples = zip(*[(k, g.to_numpy(dtype=float)) for k, g in cells], strict=True)
        for key, sample, found in zip(keys, samples, intervals_batch(list(samples), str(metric)),
                                      strict=True):  # fmt: skip
            out.append({
                **dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                "metric": metric, "n": found.n, "mean": found.estimate,
                "std": float(np.std(sample, ddof=1)) if len(sample) > 1 else float("nan"),
                "ci95_low": found.low, "ci95_high": found.high, "ci_method": found.method,
            })  # fmt: skip
    return pd.DataFrame(out, columns=columns)


def with_option_columns(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary with the option columns present ("" for none; runs before they existed)."""
    summary = summary.copy()
    for column in OPTION_COLUMNS:
        if column not in summary.columns:
            summary[column] = ""
        summary[column] = summary[column].fillna("")
    for column, default in SETUP_DEFAULTS.items():  # --ladder, --recv-window-bytes
        if column not in summary.columns:
            summary[column] = default
        summary[column] = summary[column].fillna(default).astype(str)
    return summary


# Cells compared with each other: one scenario (with its player and clip length) at a time.
WITHIN_COLUMNS = ["scenario", "player", "video_duration_s"]
CELL_COLUMNS = ["transport", "cc", "sched", "cc_opts", "sched_opts", *SETUP_DEFAULTS]


def compare_run(summary: pd.DataFrame, metrics: Iterable[str] = RANKED_METRICS) -> pd.DataFrame:
    """Every paired comparison of the counted trials' cells, scenario by scenario, with Holm
    over all of them (metrics/stats.py paired_table)."""
    rows = counted(with_option_columns(summary))
    return paired_table(rows, list(metrics), WITHIN_COLUMNS, CELL_COLUMNS)


def rank_table(comparisons: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """ranking.csv: per scenario and metric, each cell's decided rank, the cells it is decided
    better and worse than, and those it is not distinguishable from (with n)."""
    rows = counted(with_option_columns(summary))
    columns = [*WITHIN_COLUMNS, "metric", "configuration", "rank", "better_than",
               "worse_than", "not_distinguishable"]  # fmt: skip
    if rows.empty or comparisons.empty:
        return pd.DataFrame(columns=columns)
    rows = rows.assign(_cell=cell_labels(rows, CELL_COLUMNS))
    out = []
    for key, group in rows.groupby(WITHIN_COLUMNS, dropna=False, sort=True):
        cells = sorted(group["_cell"].unique())
        mine = comparisons
        for column, value in zip(WITHIN_COLUMNS, key, strict=True):
            mine = mine[(mine[column] == value) | (mine[column].isna() & pd.isna(value))]
        for metric in dict.fromkeys(mine["metric"]):
            ranks = decided_ranks(mine, cells, metric)
            for column, value in zip(WITHIN_COLUMNS, key, strict=True):
                ranks[column] = value
            out.append(ranks)
    return pd.concat(out, ignore_index=True)[columns] if out else pd.DataFrame(columns=columns)
