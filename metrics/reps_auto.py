"""`--reps auto`: whether a run's comparisons are decided, and how many repetitions the rest
would need. Pure functions of the per-trial summary table (metrics/tables.py); the runner
(testbed/reps_auto.py) calls `assess` after every round and `next_reps` for the next one.

A comparison (two cells of one scenario, one metric, paired over the seeds both ran) is
settled when metrics/stats.py decides it (Holm over every comparison of the run) or shows
the two cells equivalent within the metric's margin (stats.EQUIVALENCE_MARGINS).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from metrics.aggregate import compare_run
from metrics.decided import summary_lines

# The metrics `--reps auto` decides on: the stalls a viewer sees and the QoE they add up to.
AUTO_METRICS = ["stalls", "stall_total_ms", "qoe_lin_per_segment"]
FIRST_ROUND_REPS = 3


@dataclass(frozen=True)
class Assessment:
    """The state of a run's comparisons after a round."""

    comparisons: pd.DataFrame  # metrics.stats.paired_table
    reps_done: int  # the fewest pairs any comparison has
    settled: int
    unsettled: int
    reps_needed: float  # the most pairs an unsettled comparison needs (NaN: no estimate)

    @property
    def all_settled(self) -> bool:
        return self.unsettled == 0

    def lines(self) -> list[str]:
        """What is decided, equivalent and open, in plain words."""
        grouped = summary_lines(self.comparisons)
        head = (
            f"{self.settled} of {self.settled + self.unsettled} comparison(s) settled "
            f"after {self.reps_done} repetition(s)"
        )
        return [head, *(f"  {kind}: {line}" for kind, found in grouped.items() for line in found)]


def assess(summary: pd.DataFrame, metrics: list[str] = AUTO_METRICS) -> Assessment:
    """Paired comparisons of the counted trials of `summary`, and what they settle."""
    table = compare_run(summary, metrics)
    settled_mask = table["decided"].astype(bool) | table["equivalent"].astype(bool)
    unsettled = table[~settled_mask]
    needed = pd.to_numeric(unsettled["pairs_needed"], errors="coerce").dropna()
    return Assessment(
        comparisons=table,
        reps_done=int(table["n_pairs"].min()) if len(table) else 0,
        settled=int(settled_mask.sum()),
        unsettled=len(unsettled),
        reps_needed=float(needed.max()) if len(needed) else math.nan,
    )


def next_reps(assessment: Assessment, current_reps: int, max_reps: int) -> int | None:
    """Repetitions per cell for the next round, or None to stop (all settled, or the cap).

    Grows towards the smallest estimate that decides another comparison, at least one and at
    most doubling per round, never past max_reps: estimates from few pairs are rough, so the
    runner looks again after every round instead of jumping to the largest estimate."""
    if assessment.all_settled or current_reps >= max_reps:
        return None
    unsettled = assessment.comparisons[
        ~(
            assessment.comparisons["decided"].astype(bool)
            | assessment.comparisons["equivalent"].astype(bool)
        )
    ]
    estimates = pd.to_numeric(unsettled["pairs_needed"], errors="coerce").dropna()
    reachable = estimates[estimates <= max_reps]
    target = int(reachable.min()) if len(reachable) else current_reps + 1
    return int(min(max_reps, max(current_reps + 1, min(target, 2 * current_reps))))
