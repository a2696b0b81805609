"""What a run decided, in plain words, from the paired comparisons of metrics/stats.py.

One sentence per comparison: a decided pair names the better cell, the test, n and the
Holm-adjusted p-value; an undecided pair says so and how many more repetitions would decide
it at the observed effect; an equivalent pair names the margin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from metrics.stats import ALPHA, EQUIVALENCE_MARGINS, min_pairs_to_decide

# "<better> has <phrase> than <worse>"
BETTER_PHRASES = {
    "stalls": "fewer stalls",
    "stalled": "fewer stalled trials",
    "stall_total_ms": "less stall time",
    "stall_max_ms": "shorter longest stalls",
    "dropped_frames": "fewer dropped frames",
    "dropped_frames_network": "fewer network-attributable dropped frames",
    "qoe_lin_per_segment": "a higher QoE per segment",
    "qoe_lin": "a higher QoE",
    "mean_bitrate_bps": "a higher mean bitrate",
    "startup_delay_ms": "a shorter start-up",
}
# "<a> and <b> differ in <name>" for decided metrics without a better direction.
DIFFER_NAMES = {"retrans_pkts_wifi": "packets retransmitted on Wi-Fi"}
GROUP_LABEL_COLUMNS = ["scenario", "player", "video_duration_s"]


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"= {value:.3g}"


def _where(row: Mapping[str, Any]) -> str:
    parts = [str(row[c]) for c in GROUP_LABEL_COLUMNS if c in row and pd.notna(row[c])]
    return parts[0] if parts else ""


def sentence(row: Mapping[str, Any]) -> str:
    """One comparison (a row of stats.paired_table, as a dict or Series) in plain words."""
    metric, a, b, n = row["metric"], row["a"], row["b"], int(row["n_pairs"])
    where = f"{place}: " if (place := _where(row)) else ""
    test = "exact McNemar" if row["test"] == "mcnemar-exact" else "Wilcoxon signed-rank"
    if row["decided"]:
        if row["better"]:
            worse = b if row["better"] == a else a
            phrase = BETTER_PHRASES.get(metric, f"a better {metric}")
            mean_better, mean_worse = row["mean_a"], row["mean_b"]
            if row["better"] != a:
                mean_better, mean_worse = mean_worse, mean_better
            return (
                f"{where}{row['better']} has {phrase} than {worse} (mean {mean_better:.3g} "
                f"against {mean_worse:.3g}; paired {test}, n = {n}, p_Holm {_p(row['p_holm'])})."
            )
        name = DIFFER_NAMES.get(metric, metric)
        return (
            f"{where}{a} and {b} differ in {name} (mean {row['mean_a']:.3g} against "
            f"{row['mean_b']:.3g}; paired {test}, n = {n}, p_Holm {_p(row['p_holm'])})."
        )
    if row["equivalent"]:
        margin = EQUIVALENCE_MARGINS.get(metric, math.nan)
        return (
            f"{where}{a} and {b} are equivalent in {metric} within ±{margin:g} (paired, n = {n})."
        )
    text = f"{where}{a} vs {b} on {metric}: not decided (paired, n = {n}"
    text += f", p_Holm {_p(row['p_holm'])})" if math.isfinite(row["p_holm"]) else ")"
    needed = row["pairs_needed"]
    if math.isfinite(needed):
        more = max(1, int(needed) - n)
        text += f"; about {more} more repetition(s) needed at the observed effect"
    elif n > 0:
        text += "; no difference observed, so no estimate of the repetitions needed"
    return text + "."


KINDS = ("decided", "equivalent", "not decided")


def kinds(comparisons: pd.DataFrame) -> pd.Series:
    """Each comparison's kind: decided, equivalent or not decided."""
    decided = comparisons["decided"].astype(bool).to_numpy()
    equivalent = comparisons["equivalent"].astype(bool).to_numpy()
    labels = np.where(decided, KINDS[0], np.where(equivalent, KINDS[1], KINDS[2]))
    return pd.Series(labels, index=comparisons.index, dtype=object)


def summary_lines(comparisons: pd.DataFrame, limit: int | None = None) -> dict[str, list[str]]:
    """The sentences, grouped: decided, equivalent, not decided; at most `limit` of each
    (in table order) when given: a large report has 10^5 comparisons and shows a few."""
    if comparisons.empty:
        return {name: [] for name in KINDS}
    kind = kinds(comparisons)
    out: dict[str, list[str]] = {}
    for name in KINDS:
        rows = comparisons[kind == name]
        rows = rows if limit is None else rows.head(limit)
        out[name] = [sentence(row) for row in rows.to_dict("records")]
    return out


def reach_line(comparisons: pd.DataFrame) -> str | None:
    """Why comparisons with too few pairs could not be decided at all, whatever their data
    (None when every comparison had enough pairs): Holm over m comparisons needs p <=
    0.05 / m first, which the exact paired tests reach only from stats.min_pairs_to_decide
    pairs on."""
    total = len(comparisons)
    if total == 0:
        return None
    needed = min_pairs_to_decide(total)
    short = comparisons[comparisons["n_pairs"] < needed]
    if short.empty:
        return None
    why = (
        f"with Holm over {total} comparison(s) the first needs p ≤ {ALPHA / total:.3g}, and "
        f"the exact paired tests give that only with at least {needed} pairs of seeds that "
        f"differ, all in one direction"
    )
    if len(short) == total:
        most = int(comparisons["n_pairs"].max())
        return (
            f"Nothing in this run could be decided, whatever the data: {why}; its comparisons "
            f"have at most {most} pair(s) (--reps {needed} or more, or --reps auto, could)."
        )
    return (
        f"{len(short)} of {total} comparison(s) could not be decided, whatever the data: {why}, "
        f"and they have fewer pairs."
    )
