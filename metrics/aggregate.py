"""Aggregation over repetitions: mean and 95% confidence interval (Student t).

Input: the summary table (one row per trial). Only trials that ran to their end and are
valid (`status == "ok"` and `valid`) are counted. Output: a long table with one row per
configuration (every spec column except rep, seed, trial_id, run) and metric:
n, mean, std (sample, ddof=1), ci95_half = t(0.975, n-1) * std / sqrt(n), ci95_low and
ci95_high. With n = 1 the spread is unknown, so std and the CI are NaN (never 0).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd
import scipy.stats

from metrics.tables import KNOWN_PATHS, OPTION_COLUMNS, PER_PATH_METRICS

# One configuration (cell of the matrix); the algorithm options ("" for none) keep cells that
# differ only in a --cc-opt/--sched-opt apart.
GROUP_COLUMNS = [
    "scenario", "transport", "cc", "sched", "player", "video_duration_s", *OPTION_COLUMNS,
]  # fmt: skip
CONFIDENCE = 0.95
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
# Metrics whose ranking across configurations the report checks (ranking_support).
RANKED_METRICS = ["qoe_lin_per_segment", "stalls", "stall_total_ms", "dropped_frames_network"]


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
    """Mean and 95% CI of each metric per configuration, over repetitions (long table).

    include_invalid=True also counts finished trials marked invalid (the report uses it,
    with a warning, only for scenarios that have no valid trial at all)."""
    summary = summary.copy()
    for column in OPTION_COLUMNS:  # summaries of runs before the options existed
        if column not in summary.columns:
            summary[column] = ""
        summary[column] = summary[column].fillna("")
    columns = [*by, "metric", "n", "mean", "std", "ci95_half", "ci95_low", "ci95_high"]
    rows = summary[summary["status"] == "ok"] if include_invalid else counted(summary)
    present = [m for m in metrics if m in rows.columns]
    if rows.empty or not present:
        return pd.DataFrame(columns=columns)
    long = rows.melt(id_vars=by, value_vars=present, var_name="metric", value_name="value")
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    stats = (
        long.dropna(subset=["value"])
        .groupby([*by, "metric"], dropna=False, sort=True)["value"]
        .agg(n="count", mean="mean", std="std")
        .reset_index()
    )
    stats["ci95_half"] = [
        ci_half_width(s, n) for s, n in zip(stats["std"], stats["n"], strict=True)
    ]
    stats["ci95_low"] = stats["mean"] - stats["ci95_half"]
    stats["ci95_high"] = stats["mean"] + stats["ci95_half"]
    return stats[columns]


def _label(cell: dict, columns: list[str]) -> str:
    """transport/cc/sched, with options when given: user/cubic/lrf/hystart=false."""
    return "/".join(
        str(cell[c]) for c in columns if c not in OPTION_COLUMNS or _options_given(cell, c)
    )


def _options_given(cell: dict, column: str) -> bool:
    value = cell.get(column)
    return isinstance(value, str) and value != ""


def ranking_support(
    agg: pd.DataFrame, metrics: Iterable[str] = RANKED_METRICS, within: list[str] | None = None
) -> pd.DataFrame:
    """Whether the repetitions support ranking each configuration against the others.

    For every metric and every group of configurations compared in one figure (same
    scenario, player and clip length; `within`), a cell is `not supported` when its 95 % CI
    overlaps another configuration's so much that either CI contains the other's mean (the
    means are closer than one CI half-width), or when its CI is unknown (n < 2). Disjoint
    CIs, or overlapping ones that exclude each other's means, are `supported`. This is a
    reading aid, not a test: CIs that merely touch can still hide a real difference, and
    with many configurations some CIs exclude each other by chance.
    Returns one row per configuration and metric with `ranking` and `ranking_note`.
    """
    within = within or ["scenario", "player", "video_duration_s"]
    rows = agg[agg["metric"].isin(list(metrics))].copy()
    label_columns = [c for c in GROUP_COLUMNS if c not in within]
    out = []
    for _, group in rows.groupby([*within, "metric"], dropna=False, sort=True):
        cells = group.to_dict("records")
        for cell in cells:
            name = _label(cell, label_columns)
            others = [o for o in cells if o is not cell]
            if not others:
                verdict, note = "single configuration", ""
            elif not (cell["n"] >= 2 and math.isfinite(cell["ci95_half"])):
                verdict, note = "not supported", f"n={cell['n']}: no CI"
            else:
                close = [
                    _label(o, label_columns)
                    for o in others
                    if not (o["n"] >= 2 and math.isfinite(o["ci95_half"]))
                    or abs(o["mean"] - cell["mean"]) <= max(cell["ci95_half"], o["ci95_half"])
                ]
                verdict = "not supported" if close else "supported"
                note = ("CI holds the mean of " + ", ".join(close)) if close else ""
            out.append(
                {
                    **{c: cell.get(c, "") for c in GROUP_COLUMNS},
                    "metric": cell["metric"],
                    "configuration": name,
                    "ranking": verdict,
                    "ranking_note": note,
                }
            )
    columns = [*GROUP_COLUMNS, "metric", "configuration", "ranking", "ranking_note"]
    return pd.DataFrame(out, columns=columns)


def ci_half_width(std: float, n: int, confidence: float = CONFIDENCE) -> float:
    """Half-width of the two-sided Student t confidence interval of a mean; NaN if n < 2."""
    if n < 2 or std is None or math.isnan(std):
        return math.nan
    return student_t_quantile(0.5 + confidence / 2, n - 1) * std / math.sqrt(n)


def student_t_quantile(p: float, df: int) -> float:
    """Quantile of Student's t distribution (df degrees of freedom), 0.5 <= p < 1
    (scipy.stats.t.ppf; t(0.975, 1) = 12.7062, t(0.975, 10) = 2.2281)."""
    if not 0.5 <= p < 1 or df < 1:
        raise ValueError(f"student_t_quantile: need 0.5 <= p < 1 and df >= 1, got p={p}, df={df}")
    return float(scipy.stats.t.ppf(p, df))
