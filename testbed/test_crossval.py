"""Cross-validation figures: Kendall's tau-b and the per-trial comparison."""

import math

import pandas as pd

from testbed.crossval import compare, kendall_tau_b


def test_tau_b_of_equal_reversed_and_tied_rankings() -> None:
    assert kendall_tau_b([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    # 4 concordant pairs, one tie in each ranking: 4 / sqrt(5 * 5).
    assert math.isclose(kendall_tau_b([1, 2, 2, 3], [1, 2, 3, 3]), 0.8)
    assert math.isnan(kendall_tau_b([1, 1], [1, 2]))


def _summary(wifi: list[float], stalls: list[int]) -> pd.DataFrame:
    rows = []
    for i, (w, s) in enumerate(zip(wifi, stalls, strict=True)):
        rows.append(
            {
                "trial_id": f"t{i}",
                "scenario": "A1",
                "cc": "cubic",
                "sched": f"s{i}",
                "rep": 0,
                "status": "ok",
                "valid": True,
                "stalls": s,
                "stall_total_ms": 100.0 * s,
                "mean_bitrate_bps": 1e6 + i,
                "bytes_down_wifi": w,
                "bytes_down_lte": 100 - w,
                "retrans_pkts_wifi": i,
                "retrans_pkts_lte": 0,
            }  # fmt: skip
        )
    return pd.DataFrame(rows)


def test_compare_ranks_cells_and_counts_stall_sign_agreement() -> None:
    emulated = _summary([10, 20, 30], [0, 1, 2])
    simulated = _summary([15, 25, 20], [0, 0, 3])
    trials, figures = compare(emulated, simulated)
    assert len(trials) == 3 and figures["cells"] == 3
    assert math.isclose(figures["stall_sign_agreement"], 2 / 3)
    # wifi shares 0.1, 0.2, 0.3 vs 0.15, 0.25, 0.2: one discordant pair of three.
    assert math.isclose(figures["kendall_tau_b"]["wifi_share"], 1 / 3)
    assert figures["kendall_tau_b"]["retrans_pkts"] == 1.0
