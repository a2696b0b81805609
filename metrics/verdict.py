"""Verdicts for the reproduction pages: does a run reproduce a paper's claim?

A claim check never rests on a point estimate: it takes the per-trial samples (paired by seed
when the cells share seeds), computes the estimate and its interval with metrics/stats.py,
and returns one of

* reproduced: the interval lies entirely where the claim says;
* partly: the direction is decided as the paper says but its stated size is not (the interval
  is short of, or straddles, the size), or only some parts of a combined claim are reproduced;
* not reproduced: the interval lies entirely on the other side (or outside the band);
* inconclusive: the interval holds both outcomes (too few trials, or too much spread), or
  n < 2 (no interval at all).

Rules in docs/METRICS.md, "Verdicts".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from metrics.stats import ALPHA, difference_interval, interval

REPRODUCED = "reproduced"
PARTLY = "partly"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Verdict:
    outcome: str
    n: int  # pairs (paired) or the smaller sample
    estimate: float  # the mean (difference)
    low: float  # its 95 % interval (90 % for a band: two one-sided tests at 5 %)
    high: float
    reason: str

    def text(self) -> str:
        """ "reproduced (n = 8, estimate -1.2, 95 % interval [-2.0, -0.4]): ..." """
        if math.isnan(self.low):
            where = f"n = {self.n}, estimate {self.estimate:.3g}, no interval"
        else:
            where = (
                f"n = {self.n}, estimate {self.estimate:.3g}, interval "
                f"[{self.low:.3g}, {self.high:.3g}]"
            )
        return f"{self.outcome} ({where}): {self.reason}"


def check_direction(
    a: Sequence[float],
    b: Sequence[float],
    claim: str,
    *,
    paired: bool,
    at_least: float = 0.0,
    metric: str = "",
) -> Verdict:
    """The paper says mean(a) - mean(b) is `claim` ("lower" or "higher") than 0, optionally by
    at least `at_least` (> 0, in the metric's units). Paired samples are aligned by seed."""
    if claim not in ("lower", "higher"):
        raise ValueError(f"check_direction: claim must be 'lower' or 'higher', got {claim!r}")
    if at_least < 0:
        raise ValueError(f"check_direction: at_least must be >= 0, got {at_least}")
    found = difference_interval(a, b, paired=paired, metric=metric)
    n, estimate, low, high = found.n, found.estimate, found.low, found.high
    if n < 2 or math.isnan(low):
        return Verdict(INCONCLUSIVE, n, estimate, low, high, "fewer than 2 trials: no interval")
    sign = -1.0 if claim == "lower" else 1.0
    # In the claim's orientation: positive = the way the paper says.
    near, far = sorted((sign * low, sign * high))
    said = f"a {claim} than b" + (f" by at least {at_least:g}" if at_least else "")
    if near > 0:
        if at_least == 0 or near >= at_least:
            return Verdict(REPRODUCED, n, estimate, low, high, f"{said}: the interval says so")
        size = "short of" if far < at_least else "straddles"
        return Verdict(
            PARTLY,
            n,
            estimate,
            low,
            high,
            f"direction as the paper says; the interval {size} the size {at_least:g}",
        )
    if far < 0:
        return Verdict(
            NOT_REPRODUCED,
            n,
            estimate,
            low,
            high,
            f"the interval lies on the other side of 0 (paper: {said})",
        )
    return Verdict(
        INCONCLUSIVE,
        n,
        estimate,
        low,
        high,
        f"the interval holds 0 (paper: {said}); more trials would decide",
    )


def check_band(
    samples: Sequence[float],
    low_bound: float,
    high_bound: float,
    *,
    b: Sequence[float] | None = None,
    paired: bool = False,
    metric: str = "",
) -> Verdict:
    """The paper says the mean (or, with `b`, the mean difference a - b) lies within
    [low_bound, high_bound]. Reproduced when the 90 % interval lies inside the band (two
    one-sided tests at 5 %), not reproduced when the 95 % interval lies entirely outside it."""
    if not low_bound < high_bound:
        raise ValueError(f"check_band: need low_bound < high_bound, got {low_bound}, {high_bound}")
    if b is None:
        narrow = interval(samples, metric, confidence=1 - 2 * ALPHA)
        wide = interval(samples, metric)
    else:
        narrow = difference_interval(
            samples, b, paired=paired, metric=metric, confidence=1 - 2 * ALPHA
        )
        wide = difference_interval(samples, b, paired=paired, metric=metric)
    n, estimate = narrow.n, narrow.estimate
    band = f"[{low_bound:g}, {high_bound:g}]"
    if n < 2 or math.isnan(narrow.low):
        return Verdict(
            INCONCLUSIVE, n, estimate, narrow.low, narrow.high, "fewer than 2 trials: no interval"
        )
    if low_bound <= narrow.low and narrow.high <= high_bound:
        return Verdict(
            REPRODUCED,
            n,
            estimate,
            narrow.low,
            narrow.high,
            f"the 90 % interval lies inside the paper's band {band}",
        )
    if wide.high < low_bound or wide.low > high_bound:
        return Verdict(
            NOT_REPRODUCED,
            n,
            estimate,
            wide.low,
            wide.high,
            f"the 95 % interval lies outside the paper's band {band}",
        )
    return Verdict(
        INCONCLUSIVE,
        n,
        estimate,
        narrow.low,
        narrow.high,
        f"the interval overlaps the edge of the paper's band {band}",
    )


def combine(parts: Iterable[Verdict]) -> str:
    """The verdict of a claim made of parts: reproduced if every part is, not reproduced if
    none is and at least one is not reproduced, inconclusive if none is decided either way,
    partly otherwise."""
    outcomes = [p.outcome for p in parts]
    if not outcomes:
        return INCONCLUSIVE
    if all(o == REPRODUCED for o in outcomes):
        return REPRODUCED
    if all(o == INCONCLUSIVE for o in outcomes):
        return INCONCLUSIVE
    if not any(o in (REPRODUCED, PARTLY) for o in outcomes):
        return NOT_REPRODUCED
    return PARTLY


def as_array(values: Iterable[float]) -> np.ndarray:
    """Samples as floats, NaN dropped (a helper for callers reading summary.csv columns)."""
    array = np.asarray(list(values), dtype=float)
    return array[np.isfinite(array)]
