"""Cross-validation figures: Kendall's tau-b and the per-trial comparison."""

import json
import math
import shutil
from pathlib import Path

import pandas as pd

from metrics import report
from testbed import crossval
from testbed.crossval import compare


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
    # One emulated trial of three without a stall: a never-stalling simulator scores 1/3.
    assert math.isclose(figures["stall_sign_agreement_if_never_stalling"], 1 / 3)
    assert figures["stalled_trials"] == {"emulate": 2, "sim": 1}


FIXTURE_RUN = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "run-small"


def test_a_run_in_progress_is_compared_on_its_finished_trials(tmp_path: Path) -> None:
    # run-small lists 8 trials: 5 ended ok, 1 failed, 1 has no result.json yet, 1 no folder.
    emulated, simulated = tmp_path / "emu", tmp_path / "sim"
    shutil.copytree(FIXTURE_RUN, emulated)
    shutil.copytree(FIXTURE_RUN, simulated)
    report.build(simulated)  # a finished run: its summary.csv is used as it is
    out = tmp_path / "out"
    assert crossval.main([str(emulated), str(simulated), "--out", str(out)]) == 0
    figures = json.loads((out / "crossval.json").read_text())
    assert figures["partial"] is True
    assert figures["emulated"]["source"].startswith("trial folders")
    assert figures["emulated"]["trials_listed"] == 8
    assert figures["emulated"]["trials_ok"] == 5
    assert figures["emulated"]["trials_missing"] == 3
    assert figures["simulated"]["source"] == "summary.csv"
    assert figures["trials_compared"] == 5
    # The same trials on both sides: every ranking agrees where it is defined.
    assert figures["kendall_tau_b"]["wifi_share"] == 1.0
    assert figures["stall_sign_agreement"] == 1.0
    trials = pd.read_csv(out / "crossval-trials.csv")
    assert (trials["wifi_share_emulate"] == trials["wifi_share_sim"]).all()
    assert not (simulated / "crossval.json").exists()  # --out, not the simulated run


def test_reps_restricts_the_comparison_to_held_out_repetitions(tmp_path: Path) -> None:
    emulated = _summary([10, 20, 30], [0, 1, 2])
    emulated["rep"] = [0, 1, 1]
    trials, figures = compare(emulated, emulated.copy(), reps=[1])
    assert list(trials["rep"]) == [1, 1] and figures["trials_compared"] == 2


def test_bad_reps_and_missing_runs_exit_2(tmp_path: Path) -> None:
    assert crossval.main([str(FIXTURE_RUN), str(FIXTURE_RUN), "--reps", "one"]) == 2
    assert crossval.main([str(tmp_path / "nothing"), str(FIXTURE_RUN)]) == 2


def test_within_scenario_tau_and_medians() -> None:
    emulated = _summary([10, 20, 30], [0, 1, 2])
    simulated = _summary([15, 25, 20], [0, 0, 3])
    _, figures = compare(emulated, simulated)
    within = figures["kendall_tau_b_within_scenario"]["A1"]
    assert within["cells"] == 3 and math.isclose(within["wifi_share"], 1 / 3)
    assert figures["medians"]["wifi_share"] == {"emulate": 0.2, "sim": 0.2}
    assert figures["medians"]["stalls"] == {"emulate": 1.0, "sim": 0.0}
    # Per path: Wi-Fi retransmissions 0, 1, 2 on both sides; LTE 0 everywhere (ties: NaN).
    assert figures["kendall_tau_b_retrans_by_path"]["wifi"] == 1.0
    assert math.isnan(figures["kendall_tau_b_retrans_by_path"]["lte"])


def test_trials_with_options_are_paired_without_them_when_asked(tmp_path: Path) -> None:
    emulated = _summary([10, 20, 30], [0, 1, 2])
    emulated["trial_id"] = [f"A1__user__bbr__s{i}__dashjs__v60__r0__s1" for i in range(3)]
    simulated = emulated.copy()
    simulated["trial_id"] = [
        f"A1__user__bbr__s{i}__dashjs__v60__ccopt-ack-aggregation=false__r0__s1" for i in range(3)
    ]
    assert compare(emulated, simulated)[1]["trials_compared"] == 0
    trials, figures = compare(emulated, simulated, match_without_options=True)
    assert figures["trials_compared"] == 3
    assert set(trials["trial_id"]) == set(emulated["trial_id"])


def test_several_simulated_runs_are_compared_as_one(tmp_path: Path) -> None:
    emulated = tmp_path / "emu"
    emulated.mkdir()
    _summary([10, 20, 30], [0, 1, 2]).to_csv(emulated / "summary.csv", index=False)
    halves = []
    for name, rows in (("sim-a", [0, 1]), ("sim-b", [2])):
        run = tmp_path / name
        run.mkdir()
        _summary([10, 20, 30], [0, 1, 2]).iloc[rows].to_csv(run / "summary.csv", index=False)
        halves.append(str(run))
    out = tmp_path / "out"
    assert crossval.main([str(emulated), ",".join(halves), "--out", str(out)]) == 0
    figures = json.loads((out / "crossval.json").read_text())
    assert figures["trials_compared"] == 3
    assert figures["kendall_tau_b"]["wifi_share"] == 1.0


def test_emulated_again_reports_emulation_against_itself(tmp_path: Path) -> None:
    runs = {}
    for name, wifi, stalls in (
        ("emu", [10, 20, 30], [0, 1, 2]),
        ("sim", [15, 25, 20], [0, 0, 3]),
        ("emu2", [10, 30, 20], [1, 1, 0]),
    ):
        runs[name] = tmp_path / name
        runs[name].mkdir()
        _summary(wifi, stalls).to_csv(runs[name] / "summary.csv", index=False)
    out = tmp_path / "out"
    argv = [str(runs["emu"]), str(runs["sim"]), "--emulated-again", str(runs["emu2"])]
    assert crossval.main([*argv, "--out", str(out)]) == 0
    figures = json.loads((out / "crossval.json").read_text())
    repeat = figures["emulation_repeatability"]
    assert repeat["emulated_run_again"] == str(runs["emu2"])
    # Stall signs 0,1,1 against 1,1,0: one of three agrees.
    assert math.isclose(repeat["stall_sign_agreement"], 1 / 3)
    assert repeat["stalled_trials"] == {"emulated_run": 2, "emulated_run_again": 2}
    # Wi-Fi shares 0.1, 0.2, 0.3 against 0.1, 0.3, 0.2: tau-b 1/3.
    assert math.isclose(repeat["kendall_tau_b"]["wifi_share"], 1 / 3)
    # The simulator's own figures are still there.
    assert math.isclose(figures["stall_sign_agreement"], 2 / 3)
    assert crossval.main([*argv[:2], "--emulated-again", str(tmp_path / "nothing")]) == 2
