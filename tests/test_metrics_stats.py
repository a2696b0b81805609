"""metrics.stats: intervals per cell, paired comparisons with Holm, decided ranks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from metrics import stats
from metrics.aggregate import compare_run, rank_table
from metrics.decided import reach_line, summary_lines
from metrics.reps_auto import assess, next_reps


def test_bca_interval_holds_the_mean_of_a_spread_sample() -> None:
    found = stats.interval([0, 0, 2, 5, 1, 0, 3, 7], "stalls")
    assert found.method == "bca"
    assert found.estimate == pytest.approx(2.25)
    assert found.low < found.estimate < found.high


def test_all_zero_counts_get_the_exact_poisson_interval() -> None:
    found = stats.interval([0, 0, 0], "stalls")
    # Garwood: upper = chi2(0.975, 2) / 2 / n = 7.3778 / 2 / 3
    assert (found.method, found.low) == ("poisson-exact", 0.0)
    assert found.high == pytest.approx(7.3778 / 6, abs=1e-3)


def test_all_equal_non_counts_are_marked_degenerate_and_single_values_have_none() -> None:
    assert stats.interval([0.0] * 4, "stall_total_ms").method == "degenerate"
    single = stats.interval([5.0], "stalls")
    assert single.method == "none" and math.isnan(single.low)


def test_near_normal_metrics_get_the_t_interval() -> None:
    found = stats.interval([1.0, 1.2, 0.9, 1.1], "qoe_lin_per_segment")
    assert found.method == "t"
    # mean 1.05, sd 0.1291, t(0.975, 3) = 3.1824: half-width 0.2054
    assert found.high - found.estimate == pytest.approx(0.2054, abs=1e-3)


def test_batch_intervals_equal_one_by_one() -> None:
    rng = np.random.default_rng(3)
    samples = [rng.poisson(2, size=5).astype(float) for _ in range(6)]
    batch = stats.intervals_batch(samples, "stalls")
    assert [b.estimate for b in batch] == [s.mean() for s in samples]
    assert all(b.low <= b.estimate <= b.high for b in batch)


def test_binary_outcomes_use_the_exact_mcnemar_test() -> None:
    pairs = pd.DataFrame({"a": [1] * 9 + [0], "b": [0] * 9 + [1]})
    found = stats.compare_cells("stalled", "x", "y", pairs)
    # 9 discordant one way, 1 the other: two-sided binomial p = 2 * P(X <= 1 | 10, 0.5)
    assert found.test == "mcnemar-exact"
    assert found.p_value == pytest.approx(2 * 11 / 1024)


def test_vectorised_mcnemar_equals_scipy_binomtest() -> None:
    rng = np.random.default_rng(7)
    x, y = rng.integers(0, 2, size=(40, 9)), rng.integers(0, 2, size=(40, 9))
    found = stats.paired_p_values("stalled", x, y)
    for row in range(40):
        b = int(np.sum((x[row] == 1) & (y[row] == 0)))
        c = int(np.sum((x[row] == 0) & (y[row] == 1)))
        expected = scipy.stats.binomtest(b, b + c).pvalue if b + c else 1.0
        assert found[row] == pytest.approx(expected)


def test_holm_matches_its_definition_and_skips_nan() -> None:
    adjusted, rejected = stats.holm([0.01, 0.04, math.nan, 0.03])
    assert adjusted[0] == pytest.approx(0.03)  # 3 x 0.01
    assert adjusted[3] == pytest.approx(0.06) and adjusted[1] == pytest.approx(0.06)
    assert math.isnan(adjusted[2]) and list(rejected) == [True, False, False, False]


def test_pairs_needed_grows_as_the_effect_shrinks_and_is_nan_without_one() -> None:
    rng = np.random.default_rng(4)
    noise = rng.normal(size=8)
    large = stats.pairs_needed(noise + 2.0, 0.05)
    small = stats.pairs_needed(noise + 0.3, 0.05)
    assert stats.MIN_PAIRS <= large < small
    assert math.isnan(stats.pairs_needed(np.array([1.0, -1.0]), 0.05))


@pytest.mark.parametrize("alpha", [0.05, 1e-3, 1e-6])
def test_pairs_needed_is_the_first_whole_number_of_pairs_that_reaches_the_power(
    alpha: float,
) -> None:
    """The batched search gives what a scan over every whole number of pairs gives where the
    power grows with the pairs, and a crossing (reached at m, not at m - 1) where SciPy's NaNs
    make it jump."""
    rng = np.random.default_rng(7)
    noises = [rng.normal(size=rng.integers(4, 12)) for _ in range(40)]
    # standardised noise plus an effect of 0.15 to 1.5 standard deviations
    samples = [(z - z.mean()) / z.std(ddof=1) + rng.uniform(0.15, 1.5) for z in noises]
    found = stats.pairs_needed_batch(samples, alpha)
    pairs = np.arange(stats.MIN_PAIRS, 3_000)
    monotone = 0
    for sample, got in zip(samples, found, strict=True):
        effect = abs(sample.mean()) / sample.std(ddof=1)
        reached = stats.paired_t_power(effect, pairs * stats.WILCOXON_ARE, alpha) >= stats.POWER
        assert reached.any() and not math.isnan(got)
        if reached[np.argmax(reached) :].all():
            monotone += 1
            assert got == pairs[np.argmax(reached)]
        else:
            at = int(got) - stats.MIN_PAIRS
            assert reached[at] and (at == 0 or not reached[at - 1])
    # Most cases are the plain one, except at a tiny alpha, where SciPy's noncentral t is
    # NaN over much of the range and the normal approximation stands in there.
    assert monotone >= (20 if alpha >= 1e-3 else 0)


def test_pairs_needed_agrees_with_statsmodels_solve_power() -> None:
    from statsmodels.stats.power import TTestPower

    for effect in (0.2, 0.5, 1.0):
        sample = np.array([effect - 1, effect + 1] * 3)  # mean `effect`, sd about 1.095
        effect_of_sample = sample.mean() / sample.std(ddof=1)
        nobs = TTestPower().solve_power(effect_size=effect_of_sample, alpha=0.05, power=stats.POWER)
        expected = max(stats.MIN_PAIRS, math.ceil(nobs / stats.WILCOXON_ARE))
        assert stats.pairs_needed(sample, 0.05) == expected


def run_rows(effect: float, seeds: int, rng: np.random.Generator) -> pd.DataFrame:
    """Two CCs x one scheduler, paired seeds; bbr stalls `effect` times less on average."""
    rows = []
    for seed in range(seeds):
        shared = rng.gamma(2.0, 1.0)  # the seed's loss draws, common to both cells
        for cc, scale in (("bbr", 1.0 / effect), ("cubic", 1.0)):
            stalls = rng.poisson(2 * shared * scale)
            rows.append({
                "scenario": "B1", "player": "dashjs", "video_duration_s": 60,
                "transport": "user", "cc": cc, "sched": "lrf", "cc_opts": "",
                "sched_opts": "", "seed": seed, "rep": seed, "status": "ok", "valid": True,
                "stalls": stalls, "stall_total_ms": 800.0 * stalls,
                "qoe_lin_per_segment": 2.0 - 0.1 * stalls,
            })  # fmt: skip
    return pd.DataFrame(rows)


def test_a_large_paired_effect_is_decided_and_ranked() -> None:
    summary = run_rows(effect=6.0, seeds=20, rng=np.random.default_rng(5))
    comparisons = compare_run(summary, ["stalls"])
    row = comparisons.iloc[0]
    assert bool(row["decided"]) and row["better"] == "bbr"
    ranks = rank_table(comparisons, summary).set_index("configuration")
    assert ranks.loc["bbr", "rank"] == 1 and ranks.loc["cubic", "rank"] == 2
    sentence = summary_lines(comparisons)["decided"][0]
    means = comparisons.iloc[0]
    assert sentence.startswith(
        f"B1: bbr has fewer stalls than cubic (mean {means['mean_a']:.3g} against "
        f"{means['mean_b']:.3g}; paired Wilcoxon"
    )
    assert reach_line(comparisons) is None  # 20 pairs: enough for one comparison


def test_min_pairs_to_decide_follows_the_exact_wilcoxon_floor_and_holm() -> None:
    # 2 / 2**n <= 0.05 / m: n = 6 for one comparison (0.031), 8 for 4 (0.0078 <= 0.0125),
    # 10 for 24 (0.00195 <= 0.00208), the old default run's 4 cells x 4 metrics.
    assert [stats.min_pairs_to_decide(m) for m in (1, 4, 12, 24)] == [6, 8, 9, 10]
    for m in (1, 4, 24):
        n = stats.min_pairs_to_decide(m)
        same_sign = np.arange(1.0, n + 1)
        assert scipy.stats.wilcoxon(same_sign, method="exact").pvalue <= 0.05 / m
        assert scipy.stats.wilcoxon(same_sign[:-1], method="exact").pvalue > 0.05 / m


def test_a_run_too_short_to_decide_says_so_and_how_many_pairs_would() -> None:
    # One repetition of two cells on three metrics: nothing can be decided (n = 1 < 7).
    short = compare_run(run_rows(effect=6.0, seeds=1, rng=np.random.default_rng(5)),
                        ["stalls", "stall_total_ms", "qoe_lin_per_segment"])  # fmt: skip
    line = reach_line(short)
    assert line is not None and line.startswith("Nothing in this run could be decided")
    assert "Holm over 3 comparison(s)" in line and "--reps 7" in line


def test_reps_auto_stops_when_settled_and_grows_otherwise() -> None:
    decided = assess(run_rows(effect=6.0, seeds=20, rng=np.random.default_rng(5)), ["stalls"])
    assert decided.all_settled and next_reps(decided, 20, 30) is None
    open_ = assess(run_rows(effect=1.3, seeds=3, rng=np.random.default_rng(6)), ["stalls"])
    assert not open_.all_settled
    following = next_reps(open_, 3, 30)
    assert following is not None and 4 <= following <= 6
    assert next_reps(open_, 30, 30) is None
    assert any("not decided" in line for line in open_.lines())


def test_kendall_tau_b_of_equal_reversed_tied_and_degenerate_rankings() -> None:
    assert stats.kendall_tau_b([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert stats.kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # 4 concordant pairs, one tie in each ranking: 4 / sqrt(5 * 5).
    assert stats.kendall_tau_b([1, 2, 2, 3], [1, 2, 3, 3]) == pytest.approx(0.8)
    # A pair with a NaN is left out: the three others are concordant.
    assert stats.kendall_tau_b([1, 2, 3, math.nan], [1, 2, 3, 0]) == pytest.approx(1.0)
    assert math.isnan(stats.kendall_tau_b([1, 1], [1, 2]))
    assert math.isnan(stats.kendall_tau_b([1], [1]))


def test_median_interval_holds_the_median_and_needs_three_values() -> None:
    found = stats.median_interval([1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 2.0, 4.0, 9.0, math.nan])
    assert (found.n, found.estimate, found.method) == (9, 4.0, "percentile")
    assert found.low <= found.estimate <= found.high
    assert found.low >= 1.0 and found.high <= 13.0
    short = stats.median_interval([1.0, 2.0])
    assert (short.estimate, math.isnan(short.low), short.method) == (1.5, True, "none")


def test_binomial_rate_band_is_the_exact_binomial_range() -> None:
    low, high = stats.binomial_rate_band(0.01, 20_000)
    # 200 expected losses; the exact 95 % range of the count is 173..228.
    assert (round(low * 20_000), round(high * 20_000)) == (173, 228)
    # Close to the normal approximation's half-width 1.96 * sqrt(p (1 - p) / n) at this n.
    normal = 1.96 * (0.01 * 0.99 / 20_000) ** 0.5
    assert (high - low) / 2 == pytest.approx(normal, rel=0.05)


def test_kruskal_effect_is_h_over_n_minus_1_with_an_interval_around_it() -> None:
    rng = np.random.default_rng(3)
    groups = [rng.poisson(mean, 30) for mean in np.linspace(0, 20, 12)]
    found = stats.kruskal_effect(groups)
    h, p = scipy.stats.kruskal(*groups)
    assert (found.h, found.p) == pytest.approx((h, p))
    assert found.effect.n == 360
    assert found.effect.estimate == pytest.approx(h / 359)
    assert found.effect.low < found.effect.estimate < found.effect.high
    assert 0.5 < found.effect.low and found.effect.high < 1


def test_kruskal_effect_without_a_difference_has_no_interval_rather_than_a_biased_one() -> None:
    # Resampling every group adds spread between them, so every resample's epsilon-squared
    # lies above the data's: a percentile interval would exclude the estimate.
    groups = [np.array([0.0, 1.0] * 15) for _ in range(12)]
    found = stats.kruskal_effect(groups)
    assert found.effect.estimate == pytest.approx(0.0)
    assert found.p == pytest.approx(1.0)
    assert math.isnan(found.effect.low) and found.effect.method == "none"
    # Groups that barely overlap: the resamples cannot spread above the estimate, and BCa has
    # no interval (or one beside the estimate, which is not shown either).
    separated = [np.zeros(10)] * 6 + [np.array([3.0, 4.0] * 5)] * 6
    blocks = stats.kruskal_effect(separated)
    assert blocks.p < 1e-6 and blocks.effect.estimate > 0.7
    assert math.isnan(blocks.effect.low) and blocks.effect.method == "none"


def test_kruskal_effect_needs_two_groups_and_two_values() -> None:
    # A group of one trial (a setting whose study has just begun): H and p, no interval.
    single = stats.kruskal_effect([[1.0], [2.0, 3.0], [5.0, 6.0]])
    assert single.p < 1 and single.effect.estimate > 0 and math.isnan(single.effect.low)
    assert math.isnan(stats.kruskal_effect([[1.0, 2.0]]).h)
    assert math.isnan(stats.kruskal_effect([[1.0, 1.0], [1.0], [math.nan]]).p)
