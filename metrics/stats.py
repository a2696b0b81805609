"""The statistics of a run: intervals per cell, paired comparisons, decided ranks.

The one place (with metrics/verdict.py) where intervals and tests are computed; every
number comes from SciPy or statsmodels, nothing here re-implements a statistic they provide.
Rules (docs/METRICS.md, "Statistics"):

* Interval per cell (`cell_intervals`): 95 % BCa bootstrap (`scipy.stats.bootstrap`) of the
  mean, for every metric except the few whose per-trial values are close to normal
  (`T_METRICS`), which get the Student t interval of `scipy.stats.ttest_1samp`. Degenerate
  samples (every value equal, e.g. all zeros) have no bootstrap spread: a count metric then
  gets the exact Poisson (Garwood) interval of its total over n trials (`scipy.stats.chi2`),
  any other metric the point itself, marked `method = "degenerate"`. n = 1: no interval.
* Paired comparison of two cells of one group (`compare_cells`): over the seeds both cells
  ran (repetition r of every cell runs with seed N + r, so pairs share the loss draws).
  0/1 metrics: exact McNemar test (`scipy.stats.binomtest` on the discordant pairs); every
  other metric: Wilcoxon signed-rank test (`scipy.stats.wilcoxon`, zero differences dropped).
* Family-wise error: Holm (`statsmodels.stats.multitest.multipletests`) over every comparison
  of one call (a report: every metric and group), at alpha = 0.05.
* Ranks (`decided_ranks`): a cell's rank is 1 + the number of cells decided better than it.
* Undecided pairs get the number of pairs that would decide them at the observed effect
  (`pairs_needed`): the paired t test's sample size (`statsmodels` TTestPower, power 0.8, the
  Holm threshold the pair faces now) divided by the Wilcoxon test's asymptotic relative
  efficiency 3/pi; a pair whose observed mean difference is 0 has no estimate.
* Equivalence (`equivalent`): the 90 % paired bootstrap interval of the mean difference lies
  inside +-margin (two one-sided tests at 5 %), with at least `MIN_PAIRS` pairs.
* Benchmarks' figures: the interval of a median (`median_interval`, percentile bootstrap of
  `scipy.stats.bootstrap`) and the band a measured Bernoulli rate falls in by chance
  (`binomial_rate_band`, `scipy.stats.binom.interval`).
* Agreement of two rankings (`kendall_tau_b`, the simulator's cross-validation): Kendall's
  tau-b of `scipy.stats.kendalltau` (ties in either ranking allowed).
* Differences among many groups (`kruskal_effect`): the Kruskal-Wallis test's p
  (`scipy.stats.kruskal`) and its effect size epsilon-squared = H / (n - 1), with a BCa
  bootstrap interval that resamples every group on its own (`scipy.stats.bootstrap`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower, normal_power

CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE
BOOTSTRAP_RESAMPLES = 2000
# Fixed so that a report rebuilt from the same trials shows the same intervals.
BOOTSTRAP_SEED = 20151
POWER = 0.8
# Pitman asymptotic relative efficiency of the Wilcoxon signed-rank test to the t test under
# normal errors (3/pi); for heavy tails it is higher, so this errs towards more pairs.
WILCOXON_ARE = 3 / math.pi
# Fewer pairs than this cannot decide anything at 5 % (the exact two-sided Wilcoxon p-value
# is at least 2 / 2**n, 0.0625 at n = 5), nor show equivalence.
MIN_PAIRS = 6
# Above this many pairs a difference is as good as none: no estimate (NaN).
MAX_PAIRS_ESTIMATE = 1e6
# The Wilcoxon p-value from the exact null distribution of the signed-rank statistic (scipy's
# "auto" switches to a permutation test when ranks tie, 100 times slower; the calibration
# test, tests/test_metrics_stats_calibration.py, checks the error rate with ties and zeros).
WILCOXON_METHOD = "exact"

# Metrics whose per-trial values are near normal (averages over a whole trial, no floor at 0
# in practice): a t interval is justified. Every other metric gets the bootstrap.
T_METRICS = {"mean_bitrate_bps", "qoe_lin", "qoe_lin_per_segment", "p1203_mode0"}
# Non-negative integer counts: the all-equal fallback is the exact Poisson interval.
COUNT_METRICS = {
    "stalls",
    "dropped_frames",
    "dropped_frames_network",
    "dropped_frames_decoder",
    "decode_stalls",
    "discarded_frames",
    "discarded_frames_network",
    "quality_switches",
    "stalled",
}
# 0/1 outcomes, compared with the exact McNemar test.
BINARY_METRICS = {"stalled"}
# Which way is better; a metric not listed is compared two-sided with no "better".
HIGHER_IS_BETTER = {"qoe_lin", "qoe_lin_per_segment", "p1203_mode0", "mean_bitrate_bps"}
LOWER_IS_BETTER = {
    "stalls",
    "stalled",
    "stall_total_ms",
    "stall_max_ms",
    "dropped_frames",
    "dropped_frames_network",
    "startup_delay_ms",
    "quality_switches",
    "discarded_frames",
    "discarded_frames_network",
    "live_latency_median_s",
}
# Differences too small to matter, for the equivalence check (units of the metric).
EQUIVALENCE_MARGINS = {
    "stalls": 0.5,
    "stalled": 0.2,
    "stall_total_ms": 500.0,
    "stall_max_ms": 500.0,
    "dropped_frames": 30.0,
    "dropped_frames_network": 30.0,
    "qoe_lin_per_segment": 0.1,
    "mean_bitrate_bps": 100_000.0,
    "startup_delay_ms": 250.0,
}


@dataclass(frozen=True)
class Interval:
    """A cell's estimate (the mean) and its 95 % interval; low/high NaN when unknown."""

    n: int
    estimate: float
    low: float
    high: float
    method: str  # bca | t | poisson-exact | degenerate | percentile | none


def _rng() -> np.random.Generator:
    return np.random.default_rng(BOOTSTRAP_SEED)


def interval(values: Iterable[float], metric: str = "", confidence: float = CONFIDENCE) -> Interval:
    """The estimate and interval of one cell's per-trial values (NaN dropped)."""
    return intervals_batch([np.asarray(list(values), dtype=float)], metric, confidence)[0]


def intervals_batch(
    samples: list[np.ndarray], metric: str = "", confidence: float = CONFIDENCE
) -> list[Interval]:
    """`interval` of many cells of one metric: samples of equal size are bootstrapped in one
    vectorised call (a 2 000-trial report has thousands of cells)."""
    cleaned = [s[~np.isnan(s)] for s in (np.asarray(x, dtype=float) for x in samples)]
    out: list[Interval | None] = [None] * len(cleaned)
    by_size: dict[int, list[int]] = {}
    for index, sample in enumerate(cleaned):
        n = len(sample)
        if n == 0:
            out[index] = Interval(0, math.nan, math.nan, math.nan, "none")
        elif n == 1:
            out[index] = Interval(1, float(sample[0]), math.nan, math.nan, "none")
        elif np.all(sample == sample[0]):
            out[index] = _degenerate(sample, metric, confidence)
        elif metric in T_METRICS:
            ci = scipy.stats.ttest_1samp(sample, 0.0).confidence_interval(confidence)
            out[index] = Interval(n, float(sample.mean()), float(ci.low), float(ci.high), "t")
        else:
            by_size.setdefault(n, []).append(index)
    for n, indices in by_size.items():
        data = np.stack([cleaned[i] for i in indices])
        low, high = _bca_mean(data, confidence)
        for row, index in enumerate(indices):
            sample = cleaned[index]
            out[index] = Interval(n, float(sample.mean()), float(low[row]), float(high[row]), "bca")
    return [i for i in out if i is not None]


def difference_interval(
    a: Iterable[float],
    b: Iterable[float],
    *,
    paired: bool,
    metric: str = "",
    confidence: float = CONFIDENCE,
) -> Interval:
    """The mean difference a - b and its interval. Paired (a[i] and b[i] share a seed): the
    `interval` of the differences. Unpaired: the BCa bootstrap of mean(a) - mean(b), resampling
    each sample on its own (n = the smaller sample)."""
    x = np.asarray(list(a), dtype=float)
    y = np.asarray(list(b), dtype=float)
    if paired:
        if len(x) != len(y):
            raise ValueError(f"paired samples of different lengths: {len(x)} and {len(y)}")
        keep = np.isfinite(x) & np.isfinite(y)
        return interval(x[keep] - y[keep], metric, confidence)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    n = min(len(x), len(y))
    if n == 0:
        return Interval(0, math.nan, math.nan, math.nan, "none")
    estimate = float(x.mean() - y.mean())
    if n < 2:
        return Interval(n, estimate, math.nan, math.nan, "none")
    if np.all(x == x[0]) and np.all(y == y[0]):
        return Interval(n, estimate, estimate, estimate, "degenerate")

    def mean_difference(first: np.ndarray, second: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(first, axis=axis) - np.mean(second, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ci = scipy.stats.bootstrap(
            (x, y),
            mean_difference,
            confidence_level=confidence,
            n_resamples=BOOTSTRAP_RESAMPLES,
            method="BCa",
            rng=_rng(),
        ).confidence_interval
    return Interval(n, estimate, float(ci.low), float(ci.high), "bca")


def _bca_mean(data: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """BCa intervals of the mean of every row of `data` (rows of equal length)."""
    with warnings.catch_warnings():
        # Rows with very few distinct values warn (and may give NaN): handled by the caller.
        warnings.simplefilter("ignore")
        result = scipy.stats.bootstrap(
            (data,),
            np.mean,
            axis=-1,
            confidence_level=confidence,
            n_resamples=BOOTSTRAP_RESAMPLES,
            method="BCa",
            rng=_rng(),
        )
    low = np.atleast_1d(result.confidence_interval.low)
    high = np.atleast_1d(result.confidence_interval.high)
    # BCa can fail on a sample with one outlier among equal values (its jackknife has no
    # spread): fall back to the percentile interval of the same resamples.
    bad = ~(np.isfinite(low) & np.isfinite(high))
    if bad.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fallback = scipy.stats.bootstrap(
                (data[bad],),
                np.mean,
                axis=-1,
                confidence_level=confidence,
                n_resamples=BOOTSTRAP_RESAMPLES,
                method="percentile",
                rng=_rng(),
            )
        low[bad] = np.atleast_1d(fallback.confidence_interval.low)
        high[bad] = np.atleast_1d(fallback.confidence_interval.high)
    return low, high


def _degenerate(sample: np.ndarray, metric: str, confidence: float) -> Interval:
    """Every value equal: a count metric gets the exact Poisson interval of its total,
    anything else the point (no resampling spread exists)."""
    n, value = len(sample), float(sample[0])
    if metric in COUNT_METRICS and value >= 0 and value.is_integer():
        total = value * n
        tail = (1 - confidence) / 2
        low = 0.0 if total == 0 else scipy.stats.chi2.ppf(tail, 2 * total) / 2 / n
        high = scipy.stats.chi2.ppf(1 - tail, 2 * total + 2) / 2 / n
        if metric in BINARY_METRICS:  # a proportion: the exact binomial interval
            ci = scipy.stats.binomtest(int(total), n).proportion_ci(confidence, "exact")
            low, high = ci.low, ci.high
        return Interval(n, value, float(low), float(high), "poisson-exact")
    return Interval(n, value, value, value, "degenerate")


# ---------------------------------------------------------------- paired comparisons


@dataclass(frozen=True)
class Comparison:
    """One paired comparison of cells a and b on one metric (difference = a - b)."""

    metric: str
    a: str
    b: str
    n_pairs: int
    mean_a: float
    mean_b: float
    mean_difference: float
    test: str  # wilcoxon | mcnemar-exact | none
    p_value: float


def compare_cells(metric: str, a: str, b: str, pairs: pd.DataFrame) -> Comparison:
    """Paired test of cells a and b; `pairs` has columns a and b, one row per shared seed."""
    data = pairs[["a", "b"]].astype(float).dropna()
    x, y = data["a"].to_numpy(), data["b"].to_numpy()
    n = len(x)
    if n == 0:
        return Comparison(metric, a, b, 0, math.nan, math.nan, math.nan, "none", math.nan)
    difference = x - y
    test = "mcnemar-exact" if metric in BINARY_METRICS else "wilcoxon"
    p_value = float(paired_p_values(metric, x, y)[0])
    return Comparison(
        metric,
        a,
        b,
        n,
        float(x.mean()),
        float(y.mean()),
        float(difference.mean()),
        test,
        float(p_value),
    )


def paired_p_values(metric: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Two-sided p-values of the paired test of each row of x against the same row of y
    (equal shapes, no NaN): the exact McNemar test for 0/1 metrics, otherwise one vectorised
    Wilcoxon signed-rank call (zero differences dropped; rows without a nonzero difference
    get p = 1: no evidence of a difference)."""
    x, y = np.atleast_2d(np.asarray(x, dtype=float)), np.atleast_2d(np.asarray(y, dtype=float))
    p_values = np.ones(len(x))
    if metric in BINARY_METRICS:
        only_x = np.sum((x > 0) & (y == 0), axis=1)
        only_y = np.sum((x == 0) & (y > 0), axis=1)
        # scipy.stats.binomtest(only_x, only_x + only_y, 0.5).pvalue, vectorised: at p = 0.5
        # the two-sided exact p-value is twice the smaller tail (tests check the equality).
        tail = scipy.stats.binom.cdf(np.minimum(only_x, only_y), only_x + only_y, 0.5)
        return np.where(only_x + only_y > 0, np.minimum(1.0, 2 * tail), 1.0)
    d = x - y
    varies = np.any(d != 0, axis=1)
    if varies.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "sample size too small for normal approximation"
            p_values[varies] = scipy.stats.wilcoxon(
                d[varies], axis=1, zero_method="wilcox", method=WILCOXON_METHOD
            ).pvalue
    return p_values


def min_pairs_to_decide(comparisons: int, alpha: float = ALPHA) -> int:
    """The fewest pairs with which any of `comparisons` Holm-corrected paired tests can be
    decided: the first needs p <= alpha / comparisons, and the smallest two-sided p-value the
    exact Wilcoxon signed-rank test (or the sign test) gives n pairs is 2 / 2**n (every pair
    differs, all in one direction)."""
    threshold = alpha / max(1, comparisons)
    n = 1
    while scipy.stats.wilcoxon(np.arange(1.0, n + 1), method="exact").pvalue > threshold:
        n += 1
    return n


def holm(p_values: Iterable[float], alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """Holm-adjusted p-values and which are rejected (NaN p-values: never rejected)."""
    p = np.asarray(list(p_values), dtype=float)
    adjusted = np.full(len(p), math.nan)
    rejected = np.zeros(len(p), dtype=bool)
    finite = np.isfinite(p)
    if finite.any():
        reject, corrected, _, _ = multipletests(p[finite], alpha=alpha, method="holm")
        adjusted[finite] = corrected
        rejected[finite] = reject
    return adjusted, rejected


def pairs_needed(differences: np.ndarray, alpha: float, power: float = POWER) -> float:
    """Pairs that would decide a difference of the observed size at `alpha` with `power`
    (paired t sample size over the Wilcoxon efficiency 3/pi); NaN if the observed mean
    difference is 0 or the estimate is above MAX_PAIRS_ESTIMATE; for differences that never
    vary, the sign test's 1 + log2(1/alpha)."""
    return float(pairs_needed_batch([differences], alpha, power)[0])


def pairs_needed_batch(
    differences: list[np.ndarray], alpha: float, power: float = POWER
) -> np.ndarray:
    """`pairs_needed` of many comparisons at one `alpha`, all at once: the smallest whole
    number of pairs m at which the paired t test (`paired_t_power`) with m x WILCOXON_ARE
    observations reaches `power`, that is the t test's sample size over the Wilcoxon
    efficiency, rounded up. Found by `_smallest_passing` from the normal approximation's size:
    a few vectorised power evaluations for 10^5 comparisons (`TTestPower.solve_power` one by
    one took 5 ms each; a continuous root finder to 12 digits took 64). Where SciPy's NaNs
    make the power jump between the t and the normal value, the answer is a crossing (reached
    at m, not at m - 1), not necessarily the first, as it was for the root finder."""
    out = np.full(len(differences), math.nan)
    sign_test = float(max(MIN_PAIRS, math.ceil(1 + math.log2(1 / alpha))))
    rows: list[int] = []
    effects: list[float] = []
    for row, differences_of_pair in enumerate(differences):
        d = np.asarray(differences_of_pair, dtype=float)
        d = d[np.isfinite(d)]
        if len(d) == 0 or d.mean() == 0:
            continue
        spread = d.std(ddof=1) if len(d) > 1 else 0.0
        if spread == 0:
            out[row] = sign_test
        else:
            rows.append(row)
            effects.append(abs(d.mean()) / spread)
    if not rows:
        return out
    index, effect = np.asarray(rows), np.asarray(effects)

    def passes(pairs: np.ndarray, effect_size: np.ndarray) -> np.ndarray:
        nobs = pairs * WILCOXON_ARE
        return paired_t_power(effect_size, nobs, alpha) >= power

    enough = passes(np.full(len(effect), MIN_PAIRS), effect)
    reachable = ~enough & passes(np.full(len(effect), MAX_PAIRS_ESTIMATE / WILCOXON_ARE), effect)
    out[index[enough]] = MIN_PAIRS
    if reachable.any():
        effect = effect[reachable]
        z = scipy.stats.norm.isf(alpha / 2) + scipy.stats.norm.ppf(power)
        out[index[reachable]] = _smallest_passing(
            lambda pairs, at: passes(pairs, effect[at]),
            fails_at=np.full(len(effect), MIN_PAIRS, dtype=np.int64),
            passes_at=np.full(len(effect), math.ceil(MAX_PAIRS_ESTIMATE / WILCOXON_ARE)),
            guess=np.ceil((z / effect) ** 2 / WILCOXON_ARE),
        )
    return out


def paired_t_power(effect_size: np.ndarray, nobs: np.ndarray, alpha: float) -> np.ndarray:
    """Power of the two-sided paired t test (statsmodels `TTestPower.power`) at standardised
    effect `effect_size` with `nobs` pairs. SciPy's noncentral t returns NaN in parts of the
    range (small samples, and the tiny Holm thresholds of a large report); there the normal
    approximation (`normal_power`) stands in."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the NaNs above
        t_power = TTestPower().power(effect_size=effect_size, nobs=nobs, alpha=alpha)
        z_power = normal_power(effect_size, nobs, alpha)
    return np.where(np.isfinite(t_power), t_power, z_power)


def _smallest_passing(
    passes: Callable[[np.ndarray, np.ndarray], np.ndarray],
    fails_at: np.ndarray,
    passes_at: np.ndarray,
    guess: np.ndarray,
) -> np.ndarray:
    """For each element i, the smallest whole m in (fails_at[i], passes_at[i]] with
    `passes(m, i)`, a test monotone in m (False at fails_at, True at passes_at), evaluated
    for many elements at once (`passes(ms, indices)`). From `guess` it gallops (steps 1, 2,
    4, ...) towards the other side, then bisects: a few evaluations when guesses are close."""
    lo, hi = fails_at.copy(), passes_at.copy()
    at = np.arange(len(lo))
    start = np.clip(np.asarray(guess, dtype=np.int64), lo + 1, hi)
    ok = passes(start, at)
    hi[ok], lo[~ok] = start[ok], start[~ok]
    going_down, done, step = ok, np.zeros(len(lo), dtype=bool), 1
    while True:
        probe = np.where(going_down, hi - step, lo + step)
        active = np.flatnonzero(~done & (probe > lo) & (probe < hi))
        if not len(active):
            break
        ok = passes(probe[active], active)
        hi[active[ok]], lo[active[~ok]] = probe[active[ok]], probe[active[~ok]]
        done[active[ok != going_down[active]]] = True  # the probe crossed: bracketed
        step *= 2
    while True:
        active = np.flatnonzero(hi - lo > 1)
        if not len(active):
            return hi
        middle = (lo[active] + hi[active]) // 2
        ok = passes(middle, active)
        hi[active[ok]], lo[active[~ok]] = middle[ok], middle[~ok]


def median_interval(
    values: Iterable[float],
    confidence: float = CONFIDENCE,
    resamples: int = 10_000,
    rng: np.random.Generator | np.random.RandomState | None = None,
) -> Interval:
    """The median and its percentile bootstrap interval (NaN dropped; no interval with fewer
    than 3 values); resampled with `rng`, by default the module's fixed seed."""
    x = np.asarray(list(values), dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return Interval(0, math.nan, math.nan, math.nan, "none")
    median = float(np.median(x))
    if len(x) < 3:
        return Interval(len(x), median, math.nan, math.nan, "none")
    ci = scipy.stats.bootstrap(
        (x,),
        np.median,
        confidence_level=confidence,
        n_resamples=resamples,
        method="percentile",
        rng=_rng() if rng is None else rng,
    ).confidence_interval
    return Interval(len(x), median, float(ci.low), float(ci.high), "percentile")


def binomial_rate_band(p: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The central `confidence` range of the rate k / n measured over n Bernoulli(p) draws
    (exact binomial quantiles): how far a correct loss rate may land from p by chance."""
    low, high = scipy.stats.binom.interval(confidence, n, p)
    return float(low) / n, float(high) / n


def kendall_tau_b(x: Iterable[float], y: Iterable[float]) -> float:
    """Kendall's tau-b between two rankings of the same items (`scipy.stats.kendalltau`,
    ties allowed); pairs with a NaN on either side are left out. NaN with fewer than 2 pairs
    left or when one side is all ties."""
    a = np.asarray(list(x), dtype=float)
    b = np.asarray(list(y), dtype=float)
    if len(a) != len(b):
        raise ValueError(f"rankings of different lengths: {len(a)} and {len(b)}")
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan
    return float(scipy.stats.kendalltau(a, b, variant="b").statistic)


@dataclass(frozen=True)
class KruskalEffect:
    """A Kruskal-Wallis test over groups and its effect size with an interval."""

    h: float  # the test statistic, tie-corrected
    p: float
    effect: Interval  # epsilon-squared = H / (n - 1), n = all values of all groups


def kruskal_effect(
    groups: list[Iterable[float]], confidence: float = CONFIDENCE, resamples: int = 1000
) -> KruskalEffect:
    """Kruskal-Wallis over `groups` (`scipy.stats.kruskal`; NaN dropped, empty groups left
    out) and epsilon-squared = H / (n - 1): the share of the ranks' variance that lies between
    the groups (0: the groups' ranks mix alike; 1: every group holds a block of ranks of its
    own; Tomczak and Tomczak, "The need to report effect size estimates revisited", 2014).
    Its interval is the BCa bootstrap of `scipy.stats.bootstrap` with every group resampled
    on its own (the groups keep their sizes). Resampling adds spread between the groups, so
    the resamples' epsilon-squared lies above the data's; BCa corrects that bias. Where it
    cannot (groups that do not differ: every resample above the estimate; groups that barely
    overlap: every resample at or below it) there is no interval: NaN.
    Needs 2 groups and 2 distinct values, otherwise H, p and the interval are NaN; a group
    of one value leaves H and p but no interval (BCa's jackknife needs 2 per group)."""
    samples = [x[np.isfinite(x)] for x in (np.asarray(list(g), dtype=float) for g in groups)]
    samples = [x for x in samples if len(x)]
    n = sum(len(x) for x in samples)
    if len(samples) < 2 or len(np.unique(np.concatenate(samples))) < 2:
        return KruskalEffect(math.nan, math.nan, Interval(n, math.nan, math.nan, math.nan, "none"))
    h, p = scipy.stats.kruskal(*samples)
    estimate = float(h) / (n - 1)
    if min(len(x) for x in samples) < 2:  # a group of one value has no jackknife for BCa
        return KruskalEffect(float(h), float(p), Interval(n, estimate, math.nan, math.nan, "none"))

    def epsilon_squared(*resampled: np.ndarray, axis: int = -1) -> np.ndarray:
        # Vectorised over the batch axes (the bootstrap's resamples, the jackknife's
        # leave-one-out samples, whose group sizes differ from the data's).
        lengths = [x.shape[-1] for x in resampled]
        total = sum(lengths)
        pooled = np.concatenate(resampled, axis=-1)
        ranks = scipy.stats.rankdata(pooled, axis=-1)
        blocks = np.split(ranks, np.cumsum(lengths)[:-1], axis=-1)
        mean_rank = (total + 1) / 2
        between = sum(
            k * (b.mean(axis=-1) - mean_rank) ** 2 for k, b in zip(lengths, blocks, strict=True)
        )
        rows = pooled.reshape(-1, total)
        ties = np.array([_tie_sum(row) for row in rows]).reshape(pooled.shape[:-1])
        with np.errstate(divide="ignore", invalid="ignore"):
            h = 12 / (total * (total + 1)) * between / (1 - ties / (total**3 - total))
        return h / (total - 1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BCa without spread below the estimate: NaN, kept
        result = scipy.stats.bootstrap(
            tuple(samples),
            epsilon_squared,
            confidence_level=confidence,
            n_resamples=resamples,
            method="BCa",
            rng=_rng(),
        )
    ci = result.confidence_interval
    low, high = float(ci.low), float(ci.high)
    method = "bca"
    if not low <= estimate <= high:  # NaN, or BCa's correction overshot at a bound of [0, 1]
        low, high, method = math.nan, math.nan, "none"
    return KruskalEffect(float(h), float(p), Interval(n, estimate, low, high, method))


def _tie_sum(values: np.ndarray) -> float:
    """Sum of t^3 - t over the runs of t equal values (the Kruskal-Wallis tie correction)."""
    counts = np.unique(values, return_counts=True)[1].astype(float)
    return float(np.sum(counts**3 - counts))


def equivalent(differences: np.ndarray, margin: float) -> bool:
    """Whether the paired differences show equivalence within +-margin: the 90 % bootstrap
    interval of the mean difference inside the margin (two one-sided tests at 5 %)."""
    d = np.asarray(differences, dtype=float)
    d = d[np.isfinite(d)]
    if len(d) < MIN_PAIRS or not math.isfinite(margin):
        return False
    if np.all(d == d[0]):
        return abs(float(d[0])) < margin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ci = scipy.stats.bootstrap(
            (d,),
            np.mean,
            confidence_level=1 - 2 * ALPHA,
            n_resamples=BOOTSTRAP_RESAMPLES,
            method="BCa",
            rng=_rng(),
        ).confidence_interval
    if not (math.isfinite(ci.low) and math.isfinite(ci.high)):
        return False
    return -margin < ci.low and ci.high < margin


# ---------------------------------------------------------------- a whole run


def paired_table(
    counted: pd.DataFrame,
    metrics: Iterable[str],
    group_columns: list[str],
    cell_columns: list[str],
    pair_column: str = "seed",
    alpha: float = ALPHA,
    margins: dict[str, float] | None = None,
) -> pd.DataFrame:
    """Every paired comparison of every metric between the cells of each group, with Holm
    over all of them: one row per comparison (group columns, metric, a, b, n_pairs, means,
    mean_difference, test, p_value, p_holm, decided, better, equivalent, pairs_needed)."""
    margins = EQUIVALENCE_MARGINS if margins is None else margins
    rows: list[dict] = []
    differences: list[np.ndarray] = []
    data = counted.copy()
    data["_cell"] = cell_labels(data, cell_columns)
    for metric in metrics:
        if metric not in data.columns:
            continue
        values = data.assign(_v=pd.to_numeric(data[metric], errors="coerce"))
        for key, group in values.groupby(group_columns, dropna=False, sort=True):
            wide = group.pivot_table(
                index=pair_column, columns="_cell", values="_v", aggfunc="first"
            )
            where = dict(zip(group_columns, _tuple(key), strict=True))
            for found, d in _group_comparisons(metric, wide):
                rows.append({**where, **found.__dict__})
                differences.append(d)
    columns = [
        *group_columns,
        "metric",
        "a",
        "b",
        "n_pairs",
        "mean_a",
        "mean_b",
        "mean_difference",
        "test",
        "p_value",
        "p_holm",
        "decided",
        "better",
        "equivalent",
        "pairs_needed",
    ]
    if not rows:
        return pd.DataFrame(columns=columns)
    table = pd.DataFrame(rows)
    table["p_holm"], table["decided"] = holm(table["p_value"], alpha)
    table["better"] = [
        _better(m, a, b, d) if decided else ""
        for m, a, b, d, decided in zip(
            table["metric"],
            table["a"],
            table["b"],
            table["mean_difference"],
            table["decided"],
            strict=True,
        )
    ]
    undecided = int((~table["decided"]).sum())
    # The Holm threshold an undecided comparison faces at best: alpha over the undecided count.
    threshold = alpha / max(1, undecided)
    table["equivalent"] = [
        (not decided) and equivalent(d, margins.get(m, math.nan))
        for d, m, decided in zip(differences, table["metric"], table["decided"], strict=True)
    ]
    settled = (table["decided"] | table["equivalent"]).to_numpy(dtype=bool)
    needed = np.full(len(table), math.nan)
    open_rows = np.flatnonzero(~settled)
    needed[open_rows] = pairs_needed_batch([differences[i] for i in open_rows], threshold)
    table["pairs_needed"] = needed
    return table[columns]


def _group_comparisons(metric: str, wide: pd.DataFrame) -> list[tuple[Comparison, np.ndarray]]:
    """Every pair of the columns (cells) of `wide` (rows: seeds), compared paired. Pairs with
    the same shared seeds are tested in one vectorised Wilcoxon call (thousands of pairs in a
    large matrix); 0/1 metrics and unusual pairs go one by one through compare_cells."""
    cells = sorted(wide.columns)
    values = wide[cells].to_numpy(dtype=float)
    first, second = np.triu_indices(len(cells), k=1)
    out: list[tuple[Comparison, np.ndarray] | None] = [None] * len(first)
    complete = np.all(np.isfinite(values), axis=0)
    batch = [k for k in range(len(first)) if complete[first[k]] and complete[second[k]]]
    if len(batch) and len(values) > 0:
        x, y = values[:, first[batch]].T, values[:, second[batch]].T
        d = x - y
        p_values = paired_p_values(metric, x, y)
        test = "mcnemar-exact" if metric in BINARY_METRICS else "wilcoxon"
        row_means = (np.ascontiguousarray(v).mean(axis=1).tolist() for v in (x, y, d))
        means = zip(*row_means, strict=True)
        for row, (k, (mean_x, mean_y, mean_d)) in enumerate(zip(batch, means, strict=True)):
            found = Comparison(
                metric,
                cells[first[k]],
                cells[second[k]],
                d.shape[1],
                mean_x,
                mean_y,
                mean_d,
                test,
                float(p_values[row]),
            )
            out[k] = (found, d[row])
    for k in range(len(first)):
        if out[k] is None:
            a, b = cells[first[k]], cells[second[k]]
            pairs = wide[[a, b]].set_axis(["a", "b"], axis=1).dropna()
            out[k] = (compare_cells(metric, a, b, pairs), (pairs["a"] - pairs["b"]).to_numpy())
    return [o for o in out if o is not None]


def _tuple(key) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def _better(metric: str, a: str, b: str, mean_difference: float) -> str:
    """The better cell of a decided pair ("" if the metric has no better direction)."""
    if metric in LOWER_IS_BETTER:
        return a if mean_difference < 0 else b
    if metric in HIGHER_IS_BETTER:
        return a if mean_difference > 0 else b
    return ""


def cell_labels(table: pd.DataFrame, cell_columns: list[str]) -> list[str]:
    """cc+sched (with transport or options when they vary in the table): bbr+lrf."""
    varying = [c for c in cell_columns if c in table.columns and table[c].astype(str).nunique() > 1]
    shown = varying or [c for c in ("cc", "sched") if c in table.columns]
    return [
        "+".join(str(v) for v in row if str(v) not in ("", "nan", "None"))
        for row in table[shown].itertuples(index=False)
    ]


def decided_ranks(comparisons: pd.DataFrame, cells: list[str], metric: str) -> pd.DataFrame:
    """One row per cell: rank (1 + cells decided better), better_than, worse_than and
    not_distinguishable (with the pair count) within one group of one metric."""
    rows = comparisons[comparisons["metric"] == metric]
    # One pass over the comparisons, each filed under both of its cells (a 182-cell scenario
    # has 16 471 comparisons per metric: filtering them once per cell took seconds).
    better_than: dict[str, list[str]] = {cell: [] for cell in cells}
    worse_than: dict[str, list[str]] = {cell: [] for cell in cells}
    unclear: dict[str, list[str]] = {cell: [] for cell in cells}
    for a, b, winner, decided, n in zip(
        rows["a"], rows["b"], rows["better"], rows["decided"], rows["n_pairs"], strict=True
    ):
        for cell, other in ((a, b), (b, a)):
            if cell not in better_than:
                continue
            if winner == cell:
                better_than[cell].append(other)
            elif winner != "":
                worse_than[cell].append(other)
            if not decided:
                unclear[cell].append(f"{other} (n = {n})")
    out = [
        {
            "configuration": cell,
            "metric": metric,
            "rank": 1 + len(worse_than[cell]),
            "better_than": ", ".join(sorted(better_than[cell])),
            "worse_than": ", ".join(sorted(worse_than[cell])),
            "not_distinguishable": ", ".join(sorted(unclear[cell])),
        }
        for cell in cells
    ]
    return pd.DataFrame(out).sort_values(["rank", "configuration"]) if out else pd.DataFrame(out)
