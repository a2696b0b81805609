"""Grouped bar charts: one bar per (group, scheduler), whatever else varies in the run."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from metrics.plots import grouped_bars


def _agg_row(player: str, sched: str, mean: float) -> dict:
    return {
        "scenario": "control",
        "transport": "kernel",
        "cc": "bbr",
        "sched": sched,
        "player": player,
        "video_duration_s": 60,
        "metric": "stalls",
        "n": 1,
        "mean": mean,
        "ci95_low": float("nan"),
        "ci95_high": float("nan"),
    }


def test_two_players_with_the_same_cc_and_scheduler_get_a_bar_each():
    agg = pd.DataFrame([_agg_row("dashjs", "default", 1.0), _agg_row("gstreamer", "default", 3.0)])
    ax = Figure().subplots()
    grouped_bars(ax, agg, "stalls", "stalls")
    heights = sorted(patch.get_height() for patch in ax.patches)
    assert heights == [1.0, 3.0]
    labels = [tick.get_text() for tick in ax.get_xticklabels()]
    assert labels == ["bbr\n(dashjs)", "bbr\n(gstreamer)"]


def test_a_transport_without_scheduler_beside_one_with_gets_a_bar_each():
    # The control transfer (no CC, no scheduler, no player) beside a streaming trial: the
    # missing scheduler is a bar named "-", not a sort error (seen in a mixed run's report).
    transfer = {**_agg_row("dashjs", "lrf", 2.0), "transport": "none", "cc": None,
                "sched": None, "player": None}  # fmt: skip
    agg = pd.DataFrame([_agg_row("dashjs", "lrf", 1.0), transfer])
    ax = Figure().subplots()
    grouped_bars(ax, agg, "stalls", "stalls")
    assert sorted(patch.get_height() for patch in ax.patches if patch.get_height() > 0) == [
        1.0,
        2.0,
    ]
    assert ax.get_legend_handles_labels()[1] == ["-", "lrf"]
