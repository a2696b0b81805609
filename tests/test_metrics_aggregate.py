"""metrics.aggregate: Student t quantiles and mean/95% CI over repetitions (run-small)."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pandas as pd
import pytest

from metrics.aggregate import aggregate, ci_half_width, student_t_quantile
from metrics.read import read_run
from metrics.tables import summary_table

RUN_SMALL = Path(__file__).parent / "fixtures" / "run-small"


@pytest.mark.parametrize(
    ("df", "t975"),
    [
        (1, 12.7062),
        (2, 4.3027),
        (3, 3.1824),
        (5, 2.5706),
        (10, 2.2281),
        (30, 2.0423),
        (120, 1.9799),
    ],
)
def test_student_t_quantile_matches_tables(df: int, t975: float) -> None:
    assert student_t_quantile(0.975, df) == pytest.approx(t975, abs=5e-5)


def test_student_t_quantile_other_levels_and_bad_input() -> None:
    assert student_t_quantile(0.995, 1) == pytest.approx(63.6567, abs=5e-4)
    assert student_t_quantile(0.95, 4) == pytest.approx(2.1318, abs=5e-5)
    with pytest.raises(ValueError, match="df"):
        student_t_quantile(0.975, 0)


def test_ci_half_width_is_nan_for_a_single_repetition() -> None:
    assert math.isnan(ci_half_width(float("nan"), 1))
    assert ci_half_width(2.0, 4) == pytest.approx(3.1824 * 2.0 / 2.0, abs=1e-4)


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


def test_aggregate_mean_and_ci() -> None:
    stalls = by_config("stalls").loc[("bbr", "lrf")]
    # 1 and 3 stalls: mean 2, sample std sqrt(2), half-width t(0.975, 1) * sqrt(2) / sqrt(2)
    assert stalls["mean"] == 2.0
    assert stalls["std"] == pytest.approx(math.sqrt(2))
    assert stalls["ci95_half"] == pytest.approx(12.7062, abs=1e-4)
    assert stalls["ci95_low"] == pytest.approx(2 - 12.7062, abs=1e-4)
    packets = by_config("pkts_down_wifi").loc[("bbr", "lrf")]
    assert packets["mean"] == 90.0  # 100 and 80 packets
    assert packets["ci95_half"] == pytest.approx(127.062, abs=1e-3)
    single = by_config("dropped_frames").loc[("cubic", "lrf")]
    assert (single["n"], single["mean"]) == (1, 30.0)
    assert math.isnan(single["std"]) and math.isnan(single["ci95_half"])
