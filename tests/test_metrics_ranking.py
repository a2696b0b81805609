"""metrics.aggregate.ranking_support: which cells the repetitions can rank."""

from __future__ import annotations

import math

import pandas as pd

from metrics.aggregate import ranking_support


def cell(cc: str, mean: float, half: float, n: int, scenario: str = "B1") -> dict:
    return {"scenario": scenario, "transport": "user", "cc": cc, "sched": "lrf",
            "player": "dashjs", "video_duration_s": 60, "metric": "qoe_lin_per_segment",
            "n": n, "mean": mean, "std": math.nan, "ci95_half": half,
            "ci95_low": mean - half, "ci95_high": mean + half}  # fmt: skip


def verdicts(rows: list[dict]) -> dict[str, str]:
    flags = ranking_support(pd.DataFrame(rows))
    return dict(zip(flags["cc"], flags["ranking"], strict=True))


def test_close_means_are_not_ranked_distant_ones_are() -> None:
    rows = [cell("bbr", 4.0, 0.5, 3), cell("cubic", 4.3, 0.5, 3), cell("lia", 2.0, 0.4, 3)]
    # bbr and cubic: 0.3 apart, CI half-width 0.5: each CI holds the other's mean
    assert verdicts(rows) == {"bbr": "not supported", "cubic": "not supported",
                              "lia": "supported"}  # fmt: skip


def test_overlap_that_excludes_the_means_is_supported() -> None:
    # 4.0 ± 0.5 and 4.8 ± 0.5 overlap on [4.3, 4.5] but neither holds the other's mean
    assert set(verdicts([cell("bbr", 4.0, 0.5, 5), cell("cubic", 4.8, 0.5, 5)]).values()) == {
        "supported"
    }


def test_one_repetition_cannot_rank_and_says_why() -> None:
    flags = ranking_support(
        pd.DataFrame([cell("bbr", 4.0, math.nan, 1), cell("cubic", 1.0, 0.1, 4)])
    )
    by_cc = flags.set_index("cc")
    assert by_cc.loc["bbr", "ranking"] == "not supported"
    assert by_cc.loc["bbr", "ranking_note"] == "n=1: no CI"
    assert by_cc.loc["cubic", "ranking"] == "not supported"  # against a cell with no CI


def test_scenarios_are_compared_separately() -> None:
    rows = [cell("bbr", 4.0, 0.5, 3, "B1"), cell("cubic", 4.1, 0.5, 3, "A1")]
    assert set(verdicts(rows).values()) == {"single configuration"}
