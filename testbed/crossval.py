"""Cross-validation of the simulator against emulation (docs/SIMULATOR.md).

`./run_trials.sh --cross-validate <matrix options>` runs the matrix on both engines (into
`<run>-emulate` and `<run>-sim`) and compares them here; `python -m testbed.crossval
EMULATED_RUN SIMULATED_RUN [--out DIR]` compares two runs, also runs still in progress: a run
without summary.csv is read from its finished trial folders (those with result.json), and
`crossval.json` says how many of the trials its run.json lists are missing. Output, in the
simulated run folder or DIR: `crossval-trials.csv` (per trial: stalls, stall time, mean
bitrate, startup, per-path bytes and retransmissions on both engines) and `crossval.json` (per
matrix: Kendall's tau-b between the engines' rankings of the scenario x CC x scheduler cells,
per measure, over all cells and within each scenario; stall sign agreement, and what a
simulator that never stalls would score). `--emulated-again RUN` adds the same figures
between two emulated runs of the matrix (`emulation_repeatability`): emulation against
itself, the ceiling for the simulator.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import pandas as pd

from metrics.stats import kendall_tau_b

CELL = ["scenario", "cc", "sched"]
TRIAL_MEASURES = ["stalls", "stall_total_ms", "mean_bitrate_bps", "startup_delay_ms"]
# The measures ranked per cell (mean over the repetitions compared).
CELL_MEASURES = ["wifi_share", "retrans_pkts", "mean_bitrate_bps", "stall_total_ms"]
# The figures kept for emulation against emulation (`--emulated-again`).
REPEATABILITY_FIGURES = [
    "trials_compared",
    "stall_sign_agreement",
    "stalled_trials",
    "kendall_tau_b",
    "kendall_tau_b_retrans_by_path",
    "stall_sign_agreement_by_scenario",
]


def _per_trial(summary: pd.DataFrame) -> pd.DataFrame:
    # Trials that ran to their end. An emulated trial marked invalid for decode overload
    # (frames dropped by a busy CPU) still measured its network side; `valid` is kept per trial.
    ok = summary[summary["status"] == "ok"].copy()
    down = [c for c in ok.columns if c.startswith("bytes_down_")]
    retrans = [c for c in ok.columns if c.startswith("retrans_pkts_")]
    total = ok[down].sum(axis=1, min_count=1)
    ok["wifi_share"] = ok["bytes_down_wifi"] / total if "bytes_down_wifi" in ok else math.nan
    ok["retrans_pkts"] = ok[retrans].sum(axis=1, min_count=1)
    keep = ["trial_id", *CELL, "rep", "valid", *TRIAL_MEASURES, "wifi_share", "retrans_pkts"]
    keep += [*down, *retrans]
    return ok[[c for c in keep if c in ok.columns]]


def _tau_by_measure(cells: pd.DataFrame) -> dict[str, float]:
    return {
        m: kendall_tau_b(list(cells[f"{m}_emulate"]), list(cells[f"{m}_sim"]))
        for m in CELL_MEASURES
    }


# The option parts of a trial id (testbed/spec.py): `__ccopt-...` and `__schedopt-...`.
_OPTION_PARTS = re.compile(r"__(?:ccopt|schedopt)-[^_]*")


def without_options(trial_id: str) -> str:
    """The trial id without its --cc-opt / --sched-opt parts."""
    return _OPTION_PARTS.sub("", trial_id)


def compare(
    emulated: pd.DataFrame,
    simulated: pd.DataFrame,
    reps: list[int] | None = None,
    match_without_options: bool = False,
) -> tuple[pd.DataFrame, dict]:
    """(per-trial table, per-matrix figures) from two summary.csv tables; with `reps`, only
    those repetitions (e.g. the ones held out while the simulator was developed); with
    `match_without_options`, trials are paired by their ids without the --cc-opt /
    --sched-opt parts (e.g. a simulated run with an option that gives the behaviour of the
    commit the emulated trials ran)."""
    emu, sim = _per_trial(emulated), _per_trial(simulated)
    if match_without_options:
        emu["trial_id"] = emu["trial_id"].map(without_options)
        sim["trial_id"] = sim["trial_id"].map(without_options)
    if reps is not None:
        emu, sim = emu[emu["rep"].isin(reps)], sim[sim["rep"].isin(reps)]
    trials = emu.merge(sim, on=["trial_id", *CELL, "rep"], suffixes=("_emulate", "_sim"))
    figures: dict = {
        "trials_compared": len(trials),
        "emulated_trials_invalid": int((~trials["valid_emulate"].astype(bool)).sum()),
    }
    if len(trials):
        agree = (trials["stalls_emulate"] > 0) == (trials["stalls_sim"] > 0)
        figures["stall_sign_agreement"] = float(agree.mean())
        # What a simulator that never stalls would score: the share of emulated trials
        # without a stall (the sign agreement is only informative above it).
        figures["stall_sign_agreement_if_never_stalling"] = float(
            (trials["stalls_emulate"] == 0).mean()
        )
        figures["stalled_trials"] = {
            e: int((trials[f"stalls_{e}"] > 0).sum()) for e in ("emulate", "sim")
        }
    columns = [f"{m}_{e}" for m in CELL_MEASURES for e in ("emulate", "sim")]
    cells = trials.groupby(CELL)[columns].mean()
    figures["cells"] = len(cells)
    figures["kendall_tau_b"] = _tau_by_measure(cells)
    # Within one scenario: the ranking of the CC x scheduler cells alone (the pooled ranking
    # is helped by the scenarios' different path rates, which both engines see).
    figures["kendall_tau_b_within_scenario"] = {
        str(scenario): {"cells": len(group), **_tau_by_measure(group)}
        for scenario, group in cells.groupby(level="scenario")
    }
    # Retransmissions per path (a ranking can agree on the total and not on where).
    paths = sorted(
        c.removeprefix("retrans_pkts_").removesuffix("_emulate")
        for c in trials.columns
        if c.startswith("retrans_pkts_") and c.endswith("_emulate") and c != "retrans_pkts_emulate"
    )
    per_path = trials.groupby(CELL)[
        [f"retrans_pkts_{p}_{e}" for p in paths for e in ("emulate", "sim")]
    ].mean()
    figures["kendall_tau_b_retrans_by_path"] = {
        p: kendall_tau_b(
            list(per_path[f"retrans_pkts_{p}_emulate"]), list(per_path[f"retrans_pkts_{p}_sim"])
        )
        for p in paths
    }
    figures["stall_sign_agreement_by_scenario"] = {
        str(scenario): float(((group["stalls_emulate"] > 0) == (group["stalls_sim"] > 0)).mean())
        for scenario, group in trials.groupby("scenario")
    }
    # Medians per engine, to see a bias at a glance (a ranking can agree with one engine
    # off by a factor).
    figures["medians"] = {
        m: {e: _median(trials, f"{m}_{e}") for e in ("emulate", "sim")}
        for m in [*CELL_MEASURES, "stalls", "startup_delay_ms"]
    }
    return trials, figures


def no_nan(value):
    """NaN (a tau-b with too few pairs) as null: JSON has no NaN."""
    if isinstance(value, dict):
        return {k: no_nan(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _median(table: pd.DataFrame, column: str) -> float | None:
    if column not in table or table[column].isna().all():
        return None
    return float(table[column].median())


def finished_trials(run: Path) -> list[Path]:
    """The trial folders of a run that have a result (result.json): finished, ok or not."""
    trials = run / "trials"
    if not trials.is_dir():
        return []
    return [d for d in sorted(trials.iterdir()) if (d / "result.json").is_file()]


def listed_trials(run: Path) -> list[str]:
    """The trial ids the run's run.json lists (the whole matrix), or [] without one."""
    try:
        manifest = json.loads((run / "run.json").read_text())
    except (OSError, ValueError):
        return []
    return [str(t) for t in manifest.get("trials", [])] if isinstance(manifest, dict) else []


def load_summary(run: Path) -> tuple[pd.DataFrame, dict]:
    """A run's summary and how complete it is. A finished run has summary.csv; a run in
    progress (no summary.csv yet) is reduced here from its finished trial folders, with the
    same code the report uses (metrics), so the figures are the same once it finishes."""
    listed = listed_trials(run)
    if (run / "summary.csv").is_file():
        summary = pd.read_csv(run / "summary.csv")
        source = "summary.csv"
    else:
        from metrics.read import read_trial
        from metrics.tables import summary_table

        rows = [summary_table([read_trial(d, strict=False)]) for d in finished_trials(run)]
        summary = pd.concat(rows, ignore_index=True) if rows else summary_table([])
        source = "trial folders (run in progress: no summary.csv)"
    ok = set(summary.loc[summary["status"] == "ok", "trial_id"]) if len(summary) else set()
    info = {
        "source": source,
        "trials_listed": len(listed),
        "trials_ok": len(ok),
        "trials_missing": sorted(set(listed) - ok),
    }
    return summary, info


def write(
    emulated_run: Path,
    simulated_run: Path | list[Path],
    out: Path | None = None,
    reps: list[int] | None = None,
    match_without_options: bool = False,
    emulated_again: Path | None = None,
) -> dict:
    """Compare the two runs and write crossval-trials.csv and crossval.json into `out`
    (default: the (first) simulated run); with `reps`, only those repetitions. Several
    simulated runs (e.g. one per --cc-opt set) are compared as one. With `emulated_again`
    (another emulated run of the same matrix), the same figures between the two emulated
    runs go under `emulation_repeatability`: how far emulation agrees with itself, the
    ceiling for the simulator's agreement with it."""
    simulated_runs = simulated_run if isinstance(simulated_run, list) else [simulated_run]
    emulated, emulated_info = load_summary(emulated_run)
    loaded = [load_summary(run) for run in simulated_runs]
    simulated = pd.concat([summary for summary, _ in loaded], ignore_index=True)
    simulated_info = {
        "source": ", ".join(info["source"] for _, info in loaded),
        "trials_listed": sum(info["trials_listed"] for _, info in loaded),
        "trials_ok": sum(info["trials_ok"] for _, info in loaded),
        "trials_missing": [t for _, info in loaded for t in info["trials_missing"]],
    }
    trials, figures = compare(emulated, simulated, reps, match_without_options)
    missing = {
        engine: info.pop("trials_missing")
        for engine, info in (("emulate", emulated_info), ("sim", simulated_info))
    }
    figures = {
        "emulated_run": str(emulated_run),
        "simulated_run": ",".join(str(run) for run in simulated_runs),
        "match_without_options": match_without_options,
        "partial": bool(missing["emulate"] or missing["sim"]),
        "reps": "all" if reps is None else reps,
        "emulated": emulated_info | {"trials_missing": len(missing["emulate"])},
        "simulated": simulated_info | {"trials_missing": len(missing["sim"])},
        **figures,
    }
    if emulated_again is not None:
        again, again_info = load_summary(emulated_again)
        _, repeat = compare(emulated, again, reps, match_without_options)
        figures["emulation_repeatability"] = {
            "emulated_run_again": str(emulated_again),
            "trials_missing": len(again_info["trials_missing"]),
            **{k: repeat[k] for k in REPEATABILITY_FIGURES if k in repeat},
        }
        if "stalled_trials" in repeat:  # "sim" is the second emulated run here
            stalled = repeat["stalled_trials"]
            figures["emulation_repeatability"]["stalled_trials"] = {
                "emulated_run": stalled["emulate"],
                "emulated_run_again": stalled["sim"],
            }
    out = simulated_runs[0] if out is None else out
    out.mkdir(parents=True, exist_ok=True)
    trials.to_csv(out / "crossval-trials.csv", index=False)
    (out / "crossval.json").write_text(json.dumps(no_nan(figures), indent=2) + "\n")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.crossval", description=__doc__)
    parser.add_argument("emulated_run", type=Path)
    parser.add_argument(
        "simulated_run",
        help="a simulated run folder, or several comma-separated (compared as one run)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for crossval.json and crossval-trials.csv (default: SIMULATED_RUN, "
        "the first one)",
    )
    parser.add_argument(
        "--match-without-options",
        action="store_true",
        help="pair trials by their ids without the --cc-opt / --sched-opt parts (e.g. a "
        "simulated run with --cc-opt ack_aggregation=false against emulated trials of a "
        "commit that behaved so)",
    )
    parser.add_argument(
        "--reps",
        default=None,
        help="compare only these repetitions, comma-separated (e.g. 1,2: the ones held out "
        "while the simulator's models were developed; default: all)",
    )
    parser.add_argument(
        "--emulated-again",
        type=Path,
        default=None,
        help="another emulated run of the same matrix: its agreement with EMULATED_RUN "
        "(emulation against itself, the ceiling for the simulator) goes into crossval.json "
        "as emulation_repeatability",
    )
    args = parser.parse_args(argv)
    reps = None
    if args.reps is not None:
        try:
            reps = [int(r) for r in args.reps.split(",")]
        except ValueError:
            print(
                f"crossval: --reps {args.reps!r}: expected repetition numbers such as 1,2",
                file=sys.stderr,
            )
            return 2
    simulated_runs = [Path(run) for run in args.simulated_run.split(",") if run]
    again = [args.emulated_again] if args.emulated_again is not None else []
    for run in (args.emulated_run, *simulated_runs, *again):
        if not (run / "summary.csv").is_file() and not (run / "trials").is_dir():
            print(
                f"crossval: {run}: not a run folder (neither summary.csv nor trials/ inside)",
                file=sys.stderr,
            )
            return 2
    print(
        json.dumps(
            no_nan(
                write(
                    args.emulated_run,
                    simulated_runs,
                    args.out,
                    reps,
                    args.match_without_options,
                    args.emulated_again,
                )
            ),
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
