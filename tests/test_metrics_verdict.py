"""metrics.verdict: claim checks that never rest on a point estimate."""

from __future__ import annotations

import numpy as np
import pytest

from metrics import verdict


def paired(effect: float, n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    shared = rng.lognormal(7.0, 0.5, size=n)
    return shared + effect + rng.normal(0, 50, size=n), shared + rng.normal(0, 50, size=n)


def test_a_clear_paired_effect_in_the_paper_s_direction_is_reproduced() -> None:
    a, b = paired(effect=-400.0, n=10)
    found = verdict.check_direction(a, b, "lower", paired=True, metric="stall_total_ms")
    assert found.outcome == verdict.REPRODUCED
    assert found.n == 10 and found.high < 0 and found.low < found.estimate < found.high
    assert found.text().startswith("reproduced (n = 10, estimate -")


def test_the_opposite_effect_is_not_reproduced() -> None:
    a, b = paired(effect=400.0, n=10)
    found = verdict.check_direction(a, b, "lower", paired=True)
    assert found.outcome == verdict.NOT_REPRODUCED and found.low > 0


def test_a_point_estimate_in_the_right_direction_with_a_wide_interval_is_inconclusive() -> None:
    a, b = np.array([0.0, 3.0, 0.0]), np.array([1.0, 0.0, 4.0])  # mean -0.67, spread wide
    found = verdict.check_direction(a, b, "lower", paired=True, metric="stalls")
    assert found.estimate < 0
    assert found.outcome == verdict.INCONCLUSIVE and found.low < 0 < found.high


def test_a_single_trial_is_inconclusive_whatever_it_shows() -> None:
    found = verdict.check_direction([0.0], [9.0], "lower", paired=True)
    assert found.outcome == verdict.INCONCLUSIVE and found.n == 1


def test_direction_right_but_size_short_is_partly() -> None:
    a, b = paired(effect=-400.0, n=12)
    found = verdict.check_direction(a, b, "lower", paired=True, at_least=2000.0)
    assert found.outcome == verdict.PARTLY and "short of" in found.reason


def test_unpaired_samples_use_the_difference_of_means() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.normal(10, 1, size=15), rng.normal(5, 1, size=12)
    found = verdict.check_direction(a, b, "higher", paired=False)
    assert found.outcome == verdict.REPRODUCED and found.n == 12
    assert found.estimate == pytest.approx(a.mean() - b.mean())


def test_band_inside_outside_and_on_the_edge() -> None:
    rng = np.random.default_rng(3)
    near_ten = rng.normal(10.0, 0.2, size=20)
    assert verdict.check_band(near_ten, 9.0, 11.0).outcome == verdict.REPRODUCED
    assert verdict.check_band(near_ten, 12.0, 14.0).outcome == verdict.NOT_REPRODUCED
    assert verdict.check_band(near_ten, 9.0, 10.0).outcome == verdict.INCONCLUSIVE
    with pytest.raises(ValueError, match="low_bound < high_bound"):
        verdict.check_band(near_ten, 2.0, 1.0)


def test_combining_parts() -> None:
    def part(outcome: str) -> verdict.Verdict:
        return verdict.Verdict(outcome, 5, 0.0, -1.0, 1.0, "")

    r, p, n, i = (verdict.REPRODUCED, verdict.PARTLY, verdict.NOT_REPRODUCED, verdict.INCONCLUSIVE)
    assert verdict.combine([part(r), part(r)]) == r
    assert verdict.combine([part(r), part(n)]) == p
    assert verdict.combine([part(n), part(i)]) == n
    assert verdict.combine([part(i), part(i)]) == i
    assert verdict.combine([]) == i
