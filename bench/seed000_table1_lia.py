"""Summarise the seed000_table1_lia benchmark (docs/reproductions/table1-lia-seed000.md).

Reads the benchmark's printed `seed000_table1_lia {json}` lines from the files named on the
command line and prints, per (variant, run length): the median over seeds of the ratio
"flow under study on bottleneck 1 / mean Reno flow there" with a 95 % percentile bootstrap
interval of the median (`metrics.stats.median_interval`: `scipy.stats.bootstrap`, 10 000
resamples, NumPy's RandomState(0), as the page's figures were computed) and the
range; for runs of 120 s also the same over the windows 10-40 s (Table I's), 10-60 s and
10-120 s of each run; and the loss-rate check: the least-squares slope of log(ratio) on
½·log(p_reno / p_studied), p = congestion events per packet sent (1 if the rates follow the
Mathis et al. law, rate ∝ 1/√p, at equal RTT).

    T1LIA_SEEDS=1-30 T1LIA_S=60 T1LIA_VARIANTS=lia cargo test --release \\
        --test seed000_table1_lia -- --ignored --nocapture > lia60.log
    .venv/bin/python bench/seed000_table1_lia.py lia60.log reno60.log ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats

from metrics.stats import median_interval

TAG = "seed000_table1_lia "
WINDOWS = ((1, 4, "10-40 s"), (1, 6, "10-60 s"), (1, 12, "10-120 s"))  # 10 s windows [a, b)


def read_rows(paths: list[Path]) -> list[dict]:
    rows = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith(TAG):
                rows.append(json.loads(line[len(TAG) :]))
    return rows


def window_ratio(row: dict, first: int, end: int) -> float:
    studied = sum(row["sf1_windows_mbps"][first:end])
    return studied / sum(row["reno_windows_mbps"][first:end])


def line(label: str, values: list[float]) -> str:
    found = median_interval(values, rng=np.random.RandomState(0))
    m, lo, hi = found.estimate, found.low, found.high
    return (
        f"{label}: n={len(values)} median {m:.2f} [{lo:.2f}, {hi:.2f}], "
        f"range {min(values):.2f}-{max(values):.2f}"
    )


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    missing = [p for p in argv if not Path(p).is_file()]
    if missing:
        print(f"seed000_table1_lia.py: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    rows = read_rows([Path(p) for p in argv])
    groups: dict[tuple[str, int], dict[int, dict]] = {}
    for row in rows:
        groups.setdefault((row["variant"], row["sim_s"]), {})[row["seed"]] = row
    for (variant, secs), by_seed in sorted(groups.items()):
        runs = [by_seed[s] for s in sorted(by_seed)]
        print(line(f"{variant} {secs} s", [r["ratio"] for r in runs]))
        if secs >= 120:
            for first, end, label in WINDOWS:
                print("  " + line(f"window {label}", [window_ratio(r, first, end) for r in runs]))
    usable = [r for r in rows if r["sf1_lost_per_kpkt"] > 0 and r["reno_lost_per_kpkt"] > 0]
    x = [0.5 * np.log(r["reno_lost_per_kpkt"] / r["sf1_lost_per_kpkt"]) for r in usable]
    fit = stats.linregress(x, [np.log(r["ratio"]) for r in usable])
    print(
        f"loss-rate check over {len(usable)} runs: slope {fit.slope:.2f}, "
        f"intercept {fit.intercept:.3f}, r {fit.rvalue:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
