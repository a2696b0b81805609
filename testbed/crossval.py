"""Cross-validation of the simulator against emulation (docs/SIMULATOR.md).

`./run_trials.sh --cross-validate <matrix options>` runs the matrix on both engines (into
`<run>-emulate` and `<run>-sim`) and compares them here; `python -m testbed.crossval
EMULATED_RUN SIMULATED_RUN` compares two finished runs. Output, in the simulated run folder:
`crossval-trials.csv` (per trial: stalls, stall time, mean bitrate, per-path bytes and
retransmissions on both engines) and `crossval.json` (per matrix: Kendall's tau-b between the
engines' rankings of the scenario x CC x scheduler cells, per measure; stall sign agreement).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import pandas as pd

CELL = ["scenario", "cc", "sched"]
TRIAL_MEASURES = ["stalls", "stall_total_ms", "mean_bitrate_bps"]


def kendall_tau_b(x: list[float], y: list[float]) -> float:
    """Kendall's tau-b (ties in either ranking allowed); NaN with fewer than 2 pairs or when
    one side is all ties."""
    pairs = [(a, b) for a, b in zip(x, y, strict=True) if not (math.isnan(a) or math.isnan(b))]
    concordant = discordant = ties_x = ties_y = 0
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            dx = pairs[i][0] - pairs[j][0]
            dy = pairs[i][1] - pairs[j][1]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                ties_x += 1
            elif dy == 0:
                ties_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    return (concordant - discordant) / denominator if denominator else math.nan


def _per_trial(summary: pd.DataFrame) -> pd.DataFrame:
    # Trials that ran to their end. An emulated trial marked invalid for decode overload
    # (frames dropped by a busy CPU) still measured its network side; `valid` is kept per trial.
    ok = summary[summary["status"] == "ok"].copy()
    down = [c for c in ok.columns if c.startswith("bytes_down_")]
    retrans = [c for c in ok.columns if c.startswith("retrans_pkts_")]
    total = ok[down].sum(axis=1, min_count=1)
    ok["wifi_share"] = ok["bytes_down_wifi"] / total if "bytes_down_wifi" in ok else math.nan
    ok["retrans_pkts"] = ok[retrans].sum(axis=1, min_count=1)
    keep = ["trial_id", *CELL, "rep", "valid", *TRIAL_MEASURES, "wifi_share", "retrans_pkts", *down]
    return ok[[c for c in keep if c in ok.columns]]


def compare(emulated: pd.DataFrame, simulated: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """(per-trial table, per-matrix figures) from two summary.csv tables."""
    emu, sim = _per_trial(emulated), _per_trial(simulated)
    trials = emu.merge(sim, on=["trial_id", *CELL, "rep"], suffixes=("_emulate", "_sim"))
    figures: dict = {
        "trials_compared": len(trials),
        "emulated_trials_invalid": int((~trials["valid_emulate"].astype(bool)).sum()),
    }
    if len(trials):
        agree = (trials["stalls_emulate"] > 0) == (trials["stalls_sim"] > 0)
        figures["stall_sign_agreement"] = float(agree.mean())
    measures = ["wifi_share", "retrans_pkts", "mean_bitrate_bps", "stall_total_ms"]
    cells = trials.groupby(CELL)[[f"{m}_{e}" for m in measures for e in ("emulate", "sim")]].mean()
    figures["cells"] = len(cells)
    figures["kendall_tau_b"] = {
        m: kendall_tau_b(list(cells[f"{m}_emulate"]), list(cells[f"{m}_sim"])) for m in measures
    }
    return trials, figures


def write(emulated_run: Path, simulated_run: Path) -> dict:
    emulated = pd.read_csv(emulated_run / "summary.csv")
    simulated = pd.read_csv(simulated_run / "summary.csv")
    trials, figures = compare(emulated, simulated)
    figures["emulated_run"] = str(emulated_run)
    figures["simulated_run"] = str(simulated_run)
    trials.to_csv(simulated_run / "crossval-trials.csv", index=False)
    (simulated_run / "crossval.json").write_text(json.dumps(figures, indent=2) + "\n")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.crossval", description=__doc__)
    parser.add_argument("emulated_run", type=Path)
    parser.add_argument("simulated_run", type=Path)
    args = parser.parse_args(argv)
    for run in (args.emulated_run, args.simulated_run):
        if not (run / "summary.csv").is_file():
            print(
                f"crossval: {run / 'summary.csv'} is missing (not a finished run)", file=sys.stderr
            )
            return 2
    print(json.dumps(write(args.emulated_run, args.simulated_run), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
