"""metrics.aggregate: mean and 95 % interval over repetitions (run-small)."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pandas as pd
import pytest

from metrics.aggregate import aggregate
from metrics.read import read_run
from metrics.tables import summary_table

RUN_SMALL = Path(__file__).parent / "fixtures" / "run-small"


@functools.cache
def run_small_aggregate() -> pd.DataFrame:
    return aggregate(summary_table(read_run(RUN_SMALL)))


def by_config(metric: str) -> pd.DataFrame:
    agg = run_small_aggregate()
    return agg[agg["metric"] == metric].set_index(["cc", "sched"])


def test_aggregate_counts_only_finished_valid_trials() -> None:
    rows = by_config("stalls")
    # bbr/rr rep 1 is incomplete, cubic/lrf rep 1 invalid, cubic/rr failed
    assert rows["n"].to_dict() == {("bbr", "lrf"): 2, ("bbr", "rr"): 1, ("cubic", "lrf"): 1}


def test_aggregate_mean_and_interval() -> None:
    stalls = by_config("stalls").loc[("bbr", "lrf")]
    # 1 and 3 stalls: mean 2, sample std sqrt(2); the bootstrap of two values spans them
    assert stalls["mean"] == 2.0
    assert stalls["std"] == pytest.approx(math.sqrt(2))
    assert stalls["ci_method"] == "bca"
    assert 1.0 <= stalls["ci95_low"] <= 2.0 <= stalls["ci95_high"] <= 3.0
    packets = by_config("pkts_down_wifi").loc[("bbr", "lrf")]
    assert packets["mean"] == 90.0  # 100 and 80 packets
    assert 80.0 <= packets["ci95_low"] < packets["ci95_high"] <= 100.0
    single = by_config("dropped_frames").loc[("cubic", "lrf")]
    assert (single["n"], single["mean"]) == (1, 30.0)
    assert math.isnan(single["std"]) and math.isnan(single["ci95_low"])
    assert single["ci_method"] == "none"
