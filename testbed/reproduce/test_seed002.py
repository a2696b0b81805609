# ruff: noqa: E501  (expected page lines are long string literals)
"""Seed 002's claims follow the pre-registered rules (contrasts, one partly rule, n/a, "–"),
trials map to their settings, and the page's per-setting table, emulated section and engine
agreement build from small fake run folders."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metrics.verdict import INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED, Verdict
from testbed.reproduce import run as reproduce_run
from testbed.reproduce import seed002_study
from testbed.reproduce.base import Options
from testbed.reproduce.seed002_claims import (
    CCS,
    NOT_APPLICABLE,
    NOT_MEASURED,
    SCENARIOS,
    SCHEDS,
    UNCOUPLED,
    Cell,
    claim_outcome,
    decide_all,
)
from testbed.reproduce.seed002_emulated import collect, emulated_section
from testbed.reproduce.seed002_study import (
    SETTINGS,
    by_setting,
    per_setting_table,
    seeds_run,
    setting_of,
)

FAMILIES = "netem-scenarios/seed002-families"


def _cell(outcome: str) -> Cell:
    return Cell("x", Verdict(outcome, 10, 0.0, -1.0, 1.0, ""))


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([REPRODUCED] * 4, REPRODUCED),
        ([REPRODUCED, REPRODUCED, INCONCLUSIVE, NOT_REPRODUCED], PARTLY),  # half support
        ([REPRODUCED, INCONCLUSIVE, INCONCLUSIVE, NOT_REPRODUCED], NOT_REPRODUCED),
        ([REPRODUCED, INCONCLUSIVE, INCONCLUSIVE, INCONCLUSIVE], INCONCLUSIVE),
    ],
)
def test_one_rule_decides_every_claim(outcomes: list[str], expected: str) -> None:
    assert claim_outcome([_cell(o) for o in outcomes]) == expected


def _rows(
    setting: str = "main",
    seeds: int = 10,
    lia_stalls: float = 3.0,
    compound_tp: float = 0.0,
    ladder: str = "720p-top-only",
    window: str = "auto",
    with_reno: bool = True,
    ccs: tuple[str, ...] = CCS,
    scheds: tuple[str, ...] = SCHEDS,
) -> pd.DataFrame:
    """One trial per cell and seed: the LIA variants stall `lia_stalls` (± noise) in every
    scenario, the others not (Compound × TP-STY `compound_tp`); Wi-Fi carries most in A*/B1,
    LTE in B2; BBR retransmits most."""
    rng = np.random.default_rng(7)
    rows = []
    for sc in SCENARIOS:
        for cc in (*ccs, *((UNCOUPLED,) if with_reno else ())):
            for sched in scheds:
                for seed in range(1, seeds + 1):
                    stalls = 0.0
                    if cc in ("lia", "olia", "balia") and lia_stalls > 0:
                        stalls = lia_stalls + float(rng.integers(0, 2))
                    if (cc, sched) == ("compound", "tp-sty"):
                        stalls = compound_tp
                    wifi = 300 if sc == "B2" else 900
                    rows.append({
                        "trial_id": f"{sc}__user__{cc}__{sched}__dashjs__v180__r{seed - 1}__s{seed}",
                        "scenario": f"{FAMILIES}/{sc}-{setting}.toml", "transport": "user", "cc": cc,
                        "sched": sched, "seed": seed, "status": "ok", "valid": True, "ladder": ladder,
                        "recv_window_bytes": window, "stalls": stalls, "stall_total_ms": 900.0 * stalls,
                        "discarded_frames_network": 5.0 * stalls + float(rng.integers(0, 2)),
                        "pkts_down_wifi": wifi + float(rng.integers(0, 20)), "pkts_down_lte": 1200 - wifi,
                        "bytes_down_wifi": (wifi + (100 if cc == "bbr" else 0)) * 1500.0,
                        "retrans_pkts_wifi": (50 if cc == "bbr" else 5) + float(rng.integers(0, 3)),
                        "retrans_pkts_lte": (40 if cc == "bbr" else 4) + float(rng.integers(0, 3)),
                        "mean_bitrate_bps": 5.24e6,
                    })  # fmt: skip
    return pd.DataFrame(rows)


def _by_id(results):
    return {r.cid: r for r in results}


def test_contrasts_pass_only_where_the_paper_draws_them() -> None:
    got = _by_id(decide_all(_rows(compound_tp=3.0), "sim"))
    assert got["P1"].outcome == REPRODUCED  # LIA variants poor AND the good group good
    assert got["P3"].outcome == REPRODUCED and got["P19"].outcome == REPRODUCED
    assert got["P4"].outcome == REPRODUCED and len(got["P4"].cells) == 12
    assert len(got["P9"].cells) == 11  # TP-STY on Wi-Fi left out
    assert got["P6"].outcome == REPRODUCED and got["P17"].outcome == REPRODUCED
    assert got["P14"].outcome == REPRODUCED and len(got["P14"].cells) == 30
    assert got["P20"].outcome == REPRODUCED
    assert got["P24"].outcome == REPRODUCED and len(got["P24"].cells) == 48
    # the simulator has no decoder: discards are "–", not "not reproduced"
    assert got["P2"].outcome == NOT_MEASURED and got["P23"].outcome == NOT_MEASURED
    # every cell shows n, estimate and interval
    assert "(n 10)" in got["P1"].summary() and "[" in got["P1"].summary()


def test_p10_shows_the_kruskal_wallis_effect_size_with_its_interval() -> None:
    rows = _rows()
    rng = np.random.default_rng(5)  # overlapping cells: the LIA variants stall more, not only
    lia = rows["cc"].isin(["lia", "olia", "balia"])
    rows["stalls"] = np.where(lia, rng.poisson(3.0, len(rows)), rng.poisson(1.0, len(rows)))
    varied = _by_id(decide_all(rows, "sim"))["P10"]
    (cell,) = varied.cells
    assert varied.outcome == REPRODUCED  # the LIA variants stall, the others do not
    assert 0 < cell.verdict.low < cell.verdict.estimate < cell.verdict.high < 1
    assert "ε²" in cell.label and "p = " in cell.verdict.reason
    flat = _by_id(decide_all(_rows(lia_stalls=0.0), "sim"))["P10"]
    assert flat.outcome == INCONCLUSIVE and "no variety" in flat.cells[0].verdict.reason


def test_where_nothing_can_fail_the_contrast_is_undecided_never_support() -> None:
    got = _by_id(decide_all(_rows(lia_stalls=0.0), "sim"))
    # every CC at 0 underflows: "BBR good and the LIA variants poor" cannot be supported
    assert got["P1"].outcome == INCONCLUSIVE
    assert not any(c.supports for c in got["P1"].cells)
    # no CC decided poor under TP-STY in A2: the premise of P8 does not arise
    assert got["P8"].outcome == NOT_APPLICABLE and "premise does not arise" in got["P8"].note


def test_emulated_discards_are_read_and_correlated_per_cc() -> None:
    got = _by_id(decide_all(_rows(), "emulate"))
    assert got["P2"].outcome == REPRODUCED
    assert [c.label.split(":")[0] for c in got["P23"].cells][:3] == ["bbr", "cubic", "compound"]


def test_without_the_uncoupled_control_p24_is_not_applicable() -> None:
    got = _by_id(decide_all(_rows(with_reno=False), "sim"))
    assert got["P24"].outcome == NOT_APPLICABLE and "reno" in got["P24"].note


def test_trials_map_to_their_settings() -> None:
    assert setting_of(f"{FAMILIES}/A1-main.toml", "720p-top-only", "auto") == "S0"
    assert setting_of(f"{FAMILIES}/B2-main.toml", "720p-top-only", 131072.0) == "S15"
    assert setting_of(f"{FAMILIES}/A2-main.toml", "720p", "auto") == "S17"
    assert setting_of(f"{FAMILIES}/B1-start2pct.toml", "720p-top-only", "auto") == "S9"
    assert setting_of(f"{FAMILIES}/A1-peak1pct.toml", "720p-top-only", "auto") == "S9"
    assert setting_of(f"{FAMILIES}/A1-lte-trace-att.toml", "720p-top-only", "nan") == "S6"
    assert setting_of("netem-scenarios/A1.toml", "720p", "auto") is None
    assert len(SETTINGS) == 18
    repo = Path(__file__).resolve().parents[2]
    for s in SETTINGS:  # every setting's files exist
        assert all((repo / f).is_file() for f in s.scenario_files()), s.sid


def test_study_commands_name_every_option_of_the_setting() -> None:
    m = seed002_study.sim_matrix(SETTINGS[15], 10)
    argv = m.argv()
    assert argv[argv.index("--recv-window-bytes") + 1] == str(128 * 1024)
    assert argv[argv.index("--ladder") + 1] == "720p-top-only"
    assert argv[argv.index("--cc") + 1] == "bbr,cubic,compound,lia,olia,balia,reno"
    assert argv[argv.index("--sched") + 1] == "default-oot,lpc,let,gr-sty,tp-sty,tr-sty"
    assert argv[argv.index("--out") + 1] == "results/seed002-study/sim-S15"
    main, baselines = seed002_study.emulated_matrices()
    a = main.argv()
    assert (
        a[a.index("--cc") + 1] == "bbr,cubic,lia,compound"
        and a[a.index("--sched") + 1] == "default-oot,tp-sty"
    )
    assert a[a.index("--video-duration") + 1] == "180" and "--engine" not in a
    assert baselines.argv()[baselines.argv().index("--transport") + 1] == "tcp-lte,tcp-wifi"


@pytest.mark.parametrize("stop_code", [130, 2, 3])
def test_a_stopped_matrix_ends_the_study(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, stop_code: int
) -> None:
    """Ctrl-C during the emulated cells must not go on to the baselines (nor to the next
    setting): only the first signal interrupts, so a matrix started after it could not be
    stopped and each later Ctrl-C would only kill (and fail) its running trial."""
    ran: list[str] = []

    def fake_run(m: seed002_study.StudyMatrix, repo: Path) -> int:
        ran.append(m.out)
        return stop_code

    monkeypatch.setattr(seed002_study, "run_study_matrix", fake_run)
    assert seed002_study.run_study("emulate", [], None, tmp_path) == stop_code
    assert ran == ["results/seed002-study/emulate-S0"]
    ran.clear()
    assert seed002_study.run_study("sim", list(SETTINGS[:3]), None, tmp_path) == stop_code
    assert ran == ["results/seed002-study/sim-S0"]


@pytest.mark.parametrize(
    ("patched", "call", "said"),
    [
        ("add_new", "archive_finished(store, store, 'S9')", "archived 3 trial attempt(s) in S9"),
        ("discard_archived", "discard_raw_logs(store, store)", "discarded the raw logs of 3"),
    ],
    ids=["archiving", "discarding raw logs"],
)
def test_a_signal_while_archiving_waits_for_the_archive_then_stops_the_study(
    tmp_path: Path, patched: str, call: str, said: str
) -> None:
    """SIGTERM (how a study in the background is stopped) may come while the finished trials
    are being archived, or their raw logs discarded: that work is done all the same, and the
    study stops (130) and says how to resume."""
    import subprocess
    import sys

    code = (
        "import os, signal, sys, time; from pathlib import Path\n"
        "from testbed.topology import install_signal_handlers\n"
        "from testbed.reproduce import archive, seed002_study\n"
        "def slow_work(run_dir, store):\n"
        "    os.kill(os.getpid(), signal.SIGTERM); time.sleep(0.2)\n"
        "    (store / 'written').write_text('all of it')\n"
        f"    return {'3' if patched == 'add_new' else '(3, 0)'}\n"
        f"archive.{patched} = slow_work\n"
        "install_signal_handlers()\n"
        f"store = Path({str(tmp_path)!r})\n"
        f"sys.exit(130 if seed002_study.{call} else 0)\n"
    )
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 130, done
    assert (tmp_path / "written").read_text() == "all of it"
    assert said in done.stdout
    assert "interrupted; the same command resumes" in done.stderr


def test_matrices_that_run_through_all_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ran: list[str] = []
    monkeypatch.setattr(seed002_study, "run_study_matrix", lambda m, repo: ran.append(m.out) or 1)
    codes = seed002_study.run_matrices_until_stopped(seed002_study.emulated_matrices(), tmp_path)
    assert codes == [1, 1] and len(ran) == 2


def test_failed_or_invalid_trials_are_set_aside_once_for_a_retry(tmp_path: Path) -> None:
    run = tmp_path / "emulate-S0"

    def trial(name: str, result: dict | None) -> None:
        (run / "trials" / name).mkdir(parents=True, exist_ok=True)
        if result is not None:
            (run / "trials" / name / "result.json").write_text(json.dumps(result))

    trial("valid", {"status": "ok", "valid": True})
    trial("invalid", {"status": "ok", "valid": False})
    trial("failed", {"status": "failed", "valid": False})
    trial("no-space", {"status": "failed", "valid": False, "out_of_space": True})
    trial("running", None)
    assert seed002_study.set_aside_for_retry(run) == ["failed", "invalid"]
    aside = tmp_path / "emulate-S0-first-attempts" / "trials"
    assert sorted(p.name for p in aside.iterdir()) == ["failed", "invalid"]
    assert sorted(p.name for p in (run / "trials").iterdir()) == ["no-space", "running", "valid"]
    # The retry is invalid again: it stays, and the first attempt is kept as it was.
    trial("invalid", {"status": "ok", "valid": False, "second": True})
    assert seed002_study.set_aside_for_retry(run) == []
    assert "second" not in (aside / "invalid" / "result.json").read_text()


def test_study_cli_refuses_unknown_settings(capsys: pytest.CaptureFixture[str]) -> None:
    assert seed002_study.main(["--settings", "S0,S99"]) == 2
    assert "--settings S99: unknown; valid: S0" in capsys.readouterr().err
    assert seed002_study.main(["--settings", "S1", "--dry-run"]) == 0
    assert "--out results/seed002-study/sim-S1" in capsys.readouterr().out


def test_per_setting_table_counts_k_of_n() -> None:
    both = pd.concat([_rows("main", seeds=6), _rows("lte3mbps", seeds=6, lia_stalls=0.0)])
    settings = by_setting(both)
    assert sorted(settings) == ["S0", "S1"]
    table = "\n".join(
        per_setting_table({sid: decide_all(rows, "sim") for sid, rows in settings.items()})
    )
    assert "| P1 A1 | R | I | 1 of 2 (0, 0, 1) |" in table
    assert "| P2 A1 | – | – | – |" in table
    # Both ran through at 6 seeds, with undecided cells: the rule adds seeds until 30.
    seeds = {sid: seeds_run(rows) for sid, rows in settings.items()}
    assert seeds == {"S0": (6, True), "S1": (6, True)}
    results = {sid: decide_all(rows, "sim") for sid, rows in settings.items()}
    table = "\n".join(per_setting_table(results, seeds))
    assert "| seeds per cell | 6 | 6 | |" in table
    assert "| seeds added | **running** | **running** | |" in table
    assert "still running S0, S1 " in table
    assert "| P1 A1 | R | I | – |" in table  # provisional settings are not counted
    table = "\n".join(per_setting_table(results, {"S0": (30, True), "S1": (6, True)}))
    assert "| seeds added | done | **running** | |" in table
    assert "| P1 A1 | R | I | 1 of 1 (0, 0, 0) |" in table
    finished = {"S0": (30, True), "S1": (30, True)}
    assert "**Provisional**" not in "\n".join(per_setting_table(results, finished))
    # A step cut short (a cell lacks seeds, or a cell never ran) is still running, at 30 too.
    cut = settings["S1"][~((settings["S1"]["cc"] == "lia") & (settings["S1"]["seed"] == 6))]
    assert seeds_run(cut) == (6, False)
    assert seeds_run(settings["S1"][settings["S1"]["cc"] != "reno"]) == (6, False)
    table = "\n".join(per_setting_table(results, {"S0": (30, True), "S1": (30, False)}))
    assert "| seeds added | done | **running** | |" in table


def _write_run(run: Path, rows: pd.DataFrame, engine: str, commit: str = "abc123") -> None:
    run.mkdir(parents=True)
    (run / "run.json").write_text(
        json.dumps({"engine": engine, "git_commit": commit, "argv": ["--out", run.name]})
    )
    rows.to_csv(run / "summary.csv", index=False)
    if engine == "emulate":
        for t in rows["trial_id"]:
            (run / "trials" / t).mkdir(parents=True)
            (run / "trials" / t / "trial.json").write_text(
                json.dumps({"env": {"git_commit": commit}})
            )


def test_emulated_section_shows_verdicts_agreement_and_baselines(tmp_path: Path) -> None:
    emu = _rows(
        seeds=3,
        with_reno=False,
        ccs=("bbr", "cubic", "lia", "compound"),
        scheds=("default-oot", "tp-sty"),
    )
    emu["wall_duration_s"] = [190.0 + i % 3 for i in range(len(emu))]
    _write_run(tmp_path / "emulate-S0", emu, "emulate")
    base = pd.DataFrame([{"trial_id": f"{sc}__tcp-lte__s{s}", "scenario": f"{FAMILIES}/{sc}-main.toml",
                          "transport": "tcp-lte", "cc": None, "sched": None, "seed": s, "status": "ok", "valid": True,
                          "ladder": "720p-top-only", "recv_window_bytes": "auto", "stalls": 2.0 + s}
                         for sc in SCENARIOS for s in (1, 2, 3)])  # fmt: skip
    # Wi-Fi alone: A1 plays to the end; B1's player session times out (invalid, its stalls
    # censored); a timed-out LTE trial stays out of C1.
    wifi = pd.DataFrame([{"trial_id": f"{sc}__tcp-wifi__s{s}", "scenario": f"{FAMILIES}/{sc}-main.toml",
                          "transport": "tcp-wifi", "cc": None, "sched": None, "seed": s, "status": "ok",
                          "valid": sc == "A1", "ladder": "720p-top-only", "recv_window_bytes": "auto",
                          "stalls": 0.0 if sc == "A1" else 60.0 + s, "played_s": 180.0 if sc == "A1" else 100.0 + s,
                          "player_end": "ended" if sc == "A1" else "timeout",
                          "invalid_reason": None if sc == "A1" else "player session timed out before the video ended; x"}
                         for sc in ("A1", "B1") for s in (1, 2, 3)])  # fmt: skip
    lte_cut = base.iloc[[0]].assign(trial_id="A1__tcp-lte__s4", seed=4, valid=False, stalls=0.0,
                                    player_end="timeout", invalid_reason="player session timed out before the video ended")  # fmt: skip
    base = pd.concat([base.assign(player_end="ended"), lte_cut, wifi], ignore_index=True)
    _write_run(tmp_path / "emulate-S0-baselines", base, "emulate")
    sim = _rows(seeds=10)
    text, checks = emulated_section(
        [tmp_path / "emulate-S0", tmp_path / "emulate-S0-baselines"], sim, tmp_path
    )
    assert (
        "Valid trials used: 96 in 32 of 32 cells (3 to 3 per cell); trials' commits: abc123 (96) (all on one commit)."
        in text
    )
    assert "| claim (emulated cells only) | emulated | verdict |" in text
    # The duration estimate comes from the trials run (the baselines here record no wall time).
    assert "about 191 s per trial (the median wall time of the 96 emulated trials used" in text
    assert "an extrapolation" not in text
    assert "| P1 A1: BBR, Cubic and Compound excellent" in text
    assert "**Engine agreement (check C4)**" in text
    assert (
        "| buffer underflows |" in text
        and "emulation odd vs even seeds" in text
        and "never-stalling simulator" in text
    )
    # The page links the cell-by-cell reading of the engines' differences, which exists.
    assert "(engine-agreement-seed002.md)" in text
    repo = Path(__file__).resolve().parents[2]
    assert (repo / "docs/reproductions/engine-agreement-seed002.md").is_file()
    by_name = {c.name.split(":")[0]: c for c in checks}
    assert by_name["C1"].verdict == REPRODUCED  # LTE alone stalls in every trial
    assert "n = 12," in by_name["C1"].ours  # the timed-out LTE trial is left out
    assert by_name["C2"].verdict == "reported"
    c2 = by_name["C2"].ours
    assert "A1: 0 [0, " in c2 and "(n 3, played to the end)" in c2
    assert (
        "B1: 3 of 3 trials did not play the video to the end: the player session timed out "
        "(360 s, twice the clip) after 101–103 s of it, with 61–63 underflows by then" in c2
    )


def test_emulated_section_without_runs_gives_the_commands(tmp_path: Path) -> None:
    text, checks = emulated_section([], None, tmp_path)
    assert "**Not run yet**" in text
    assert "s measured start to start for 60 s clips on this machine" in text
    assert "python -m testbed.reproduce.seed002_study --engine emulate" in text
    assert (
        "--ladder 720p-top-only --reps 3 --out results/seed002-study/emulate-S0 --jobs auto" in text
    )
    assert all(c.verdict == "not yet run" for c in checks)


def test_c5_not_run_names_a_live_mode_command_the_cli_accepts() -> None:
    import shlex

    from testbed.cli import build_parser
    from testbed.reproduce.seed002_emulated import live_check

    claim = live_check([])
    assert claim.verdict == "not yet run" and "96 trials of 180 s" in claim.ours
    command = claim.ours.split("`")[1]
    args = build_parser().parse_args(shlex.split(command)[1:])
    assert args.video_mode == "live" and args.out == "results/seed002-study/emulate-S0-live"
    assert args.cc == ["bbr", "cubic", "lia", "compound"] and args.video_duration == 180


def test_collect_counts_trials_outside_the_study(tmp_path: Path) -> None:
    rows = _rows(seeds=2)
    rows.loc[0, "scenario"] = "netem-scenarios/A1.toml"
    rows.loc[1, "status"] = "failed"
    _write_run(tmp_path / "sim-S0", rows, "sim")
    used, sources = collect([tmp_path / "sim-S0"], "sim")
    assert (sources[0].n_outside, sources[0].n_not_ok, sources[0].n_used) == (1, 1, len(rows) - 2)
    assert set(used["setting"]) == {"S0"}


def test_page_builds_from_a_study_folder(tmp_path: Path) -> None:
    study = tmp_path / "study"
    _write_run(study / "sim-S0", _rows(seeds=10, compound_tp=3.0), "sim")
    _write_run(study / "sim-S3", _rows("lte15mbps", seeds=10, lia_stalls=0.0), "sim")
    opts = Options(from_runs=(study / "sim-S0", study / "sim-S3"))
    assert reproduce_run.reproduce("seed002", tmp_path, opts) == 0
    page = (tmp_path / "docs/reproductions/seed002.md").read_text()
    assert (
        "| P1 A1: BBR, Cubic and Compound excellent over all schedulers; the LIA variants poor (contrast) | Fig. 4a |"
        in page
    )
    # 10 seeds with undecided cells: both settings still running, so neither is counted yet
    assert "| P1 A1 | R | I | – |" in page and "still running S0, S3 " in page
    assert "## Checks this testbed adds" in page and "C4: simulator vs emulator" in page
    assert "**Not run yet**" in page
    assert "e87febf" in page


def test_a_folder_of_runs_stands_for_the_runs_in_it(tmp_path: Path) -> None:
    from testbed import cli

    study = tmp_path / "study"
    _write_run(study / "sim-S0", _rows(seeds=2), "sim")
    _write_run(study / "sim-S1", _rows("lte3mbps", seeds=2), "sim")
    argv = ["--reproduce", "seed002", "--from", str(study)]
    opts = reproduce_run.options_from_args(cli.build_parser().parse_args(argv), argv)
    assert opts.from_runs == (study / "sim-S0", study / "sim-S1")


def test_timed_out_simulated_trials_count_only_in_the_sensitivity_line(tmp_path: Path) -> None:
    """A simulated trial that its virtual-time limit ended is excluded from the pre-registered
    verdicts (pre-registration §5) and counted, with its stalls, in the sensitivity line; a
    trial its watchdog ended (`stuck`) is in neither."""
    from testbed.reproduce.seed002_emulated import SIM_TIMED_OUT

    rows = _rows(seeds=10, lia_stalls=0.0).assign(reason="")
    a1_lia = rows.index[(rows["cc"] == "lia") & rows["scenario"].str.contains("/A1-")]
    rows.loc[a1_lia, ["status", "valid", "reason", "stalls", "stall_total_ms", "played_s"]] = [
        "failed",
        False,
        SIM_TIMED_OUT,
        60.0,
        450_000.0,
        42.0,
    ]
    stuck = rows.index[(rows["cc"] == "olia") & rows["scenario"].str.contains("/A1-")][0]
    rows.loc[stuck, ["status", "valid", "reason"]] = [
        "failed",
        False,
        "player did not reach the end (stuck: closed)",
    ]
    _write_run(tmp_path / "study" / "sim-S0", rows, "sim")
    used, _ = collect([tmp_path / "study" / "sim-S0"], "sim")
    with_them, _ = collect([tmp_path / "study" / "sim-S0"], "sim", timed_out=True)
    assert len(used) == len(rows) - len(a1_lia) - 1
    assert len(with_them) == len(rows) - 1
    opts = Options(from_runs=(tmp_path / "study" / "sim-S0",))
    assert reproduce_run.reproduce("seed002", tmp_path, opts) == 0
    page = (tmp_path / "docs/reproductions/seed002.md").read_text()
    assert (
        "### Sensitivity, not pre-registered: the simulated trials that timed out, counted" in page
    )
    assert f"{len(a1_lia)} of the main setting's {len(rows) - 1} simulated trials ended" in page
    assert "A1 lia×default-oot: 10 (mean 60 underflows, 450 s stalled)" in page
    # Excluded, A1's LIA cells have no trial; counted, P1's contrast (LIA variants poor) holds.
    section = page.split("the simulated trials that timed out, counted", 1)[1]
    line = next(x for x in section.splitlines() if x.startswith("| P1 A1 | "))
    assert line.split(" | ")[2] == "**reproduced** (changes)", line
    # The same, setting by setting: the change is listed, and the table shows it counted.
    per_setting = page.split("the timed-out trials counted", 1)[1].split("\n### ", 1)[0]
    by_sched = ", ".join(
        f"{sched.upper()} {n}" for sched, n in rows.loc[a1_lia, "sched"].value_counts().items()
    )
    assert (
        "Timed-out trials per setting (by scheduler; median played and stalled): "
        f"S0 {len(a1_lia)} of {len(rows) - 1} ({by_sched}; 42 s played, 450 s stalled)."
    ) in per_setting
    assert "S0 P1: " in per_setting and "→ reproduced" in per_setting
    assert next(x for x in per_setting.splitlines() if x.startswith("| P1 A1 | ")).startswith(
        "| P1 A1 | R | "
    )


def test_commit_line_tells_a_dirty_checkout_from_another_commit() -> None:
    from testbed.reproduce.seed002_emulated import _one_commit_or_not

    assert _one_commit_or_not(["c3be9f7"]) == " (all on one commit)."
    assert "one commit, some trials with tracked files differing" in _one_commit_or_not(
        ["c3be9f7", "c3be9f7-dirty"]
    )
    assert "more than one commit" in _one_commit_or_not(["c3be9f7", "de04d90-dirty"])
