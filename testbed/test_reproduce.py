"""`--reproduce`: options that mean nothing exit 2 naming the combination; pages carry every
claim; seed 002's findings and seed 003's transition time follow their stated rules."""

import json
from pathlib import Path

import pandas as pd
import pytest

from testbed import cli, reproduce
from testbed.reproduce import (
    NOT_REPRODUCED,
    NOT_RUN,
    PARTLY,
    REPRODUCED,
    Claim,
    Options,
    Page,
    seed002_claims,
    transition_s,
)

REPO = Path(__file__).resolve().parent.parent


def test_unknown_seed_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    assert reproduce.reproduce("seed9", tmp_path) == 2
    assert list(tmp_path.iterdir()) == []


def test_page_lists_each_claim_with_its_verdict_and_open_parameters() -> None:
    page = Page("seedX", "T", "setup text")
    page.claims = [
        Claim("claim a", "paper a", "ours a", REPRODUCED, "why a"),
        Claim("claim b", "paper b", "not run", NOT_RUN),
    ]
    page.open_params = [("buffer", "1 BDP", "not given")]
    page.emulated = "Subset: x.\n\n**Not run in this session**"
    text = page.markdown(125.0, "./run_trials.sh --reproduce seedX", cpu_s=80.0)
    assert "| claim a | paper a | ours a | **reproduced** |" in text
    assert "| claim b | paper b | not run | **not yet run** |" in text
    assert "| buffer | 1 BDP | not given |" in text
    assert "Wall time on this machine: 125 s (2.1 min); CPU time" in text
    assert ": 80 s." in text
    assert "* **claim a**: why a" in text
    assert "## Emulated cross-check\n\nSubset: x." in text


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--reproduce", "seed002", "--cc", "bbr"], "--cc"),
        (["--reproduce", "seed001", "--scenario", "A1"], "--scenario"),
        (["--reproduce", "seed002", "--cross-validate"], "--cross-validate"),
        (["--reproduce", "seed002", "--video-mode", "live"], "--video-mode"),
        (["--reproduce", "all", "--from", "results/x"], "--from"),
        (["--reproduce", "seed000", "--reps", "3"], "--reps"),
        (["--reproduce", "seed001", "--video-duration", "60"], "--video-duration"),
        (["--reproduce", "seed001", "--engine", "emulate", "--executor", "slurm"], "slurm"),
        (["--reproduce", "seed001", "--dry-run"], "--dry-run"),
        (["--reproduce", "seed001", "--from", "/nonexistent/run"], "/nonexistent/run"),
    ],
)
def test_a_combination_that_means_nothing_exits_2_naming_it(
    argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv, tmp_path) == 2
    err = capsys.readouterr().err
    assert named in err, err
    assert list(tmp_path.iterdir()) == []


def test_from_a_matrix_run_is_refused_for_a_seed_that_reads_cross_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"engine": "sim"}))
    assert cli.main(["--reproduce", "seed004", "--from", str(run)], tmp_path) == 2
    assert "a sim matrix run; only seed002's page reads matrix runs" in capsys.readouterr().err


def test_from_without_reproduce_exits_2(tmp_path: Path) -> None:
    assert cli.main(["--from", "x", "--dry-run"], tmp_path) == 2


def test_reps_reaches_every_simulated_part() -> None:
    opts = Options(reps=5)
    assert {opts.reps_for(s) for s in reproduce.SEEDS} == {5}
    assert Options().reps_for("seed002") == 3
    args = reproduce.seed002_matrix_args(opts, Path("/tmp/x"), emulated=False)
    assert args[args.index("--reps") + 1] == "5"
    assert args[args.index("--engine") + 1] == "sim"
    emu = reproduce.seed002_matrix_args(opts, Path("/tmp/x"), emulated=True)
    assert "--engine" not in emu
    assert emu[emu.index("--cc") + 1] == "bbr,cubic,compound,lia,olia"
    assert len(reproduce.crosscheck_plan("seed001", 2)) == 3 * 2 * 2


def _summary(stalls: dict[tuple[str, str, str], float]) -> pd.DataFrame:
    """One trial per cell of the 6 x 6 x 4 matrix: Wi-Fi carries more in A*/B1, LTE in B2;
    BBR retransmits most; stalls from `stalls` (default 0)."""
    rows = []
    for scenario in reproduce.SEED002_SCENARIOS:
        for cc in reproduce.SEED002_CCS:
            for sched in reproduce.SEED002_SCHEDS:
                wifi, lte = (100, 900) if scenario == "B2" else (900, 100)
                if scenario == "B2" and cc == "bbr":
                    wifi, lte = 400, 600
                rows.append({
                    "scenario": scenario, "cc": cc, "sched": sched, "status": "ok",
                    "stalls": stalls.get((scenario, cc, sched), 0.0),
                    "discarded_frames": 0, "pkts_down_wifi": wifi, "pkts_down_lte": lte,
                    "retrans_pkts_wifi": 50 if cc == "bbr" else 5,
                    "retrans_pkts_lte": 40 if cc == "bbr" else 4,
                })  # fmt: skip
    return pd.DataFrame(rows)


def test_seed002_findings_follow_their_rules() -> None:
    stalls = {}
    for scenario in reproduce.SEED002_SCENARIOS:
        for cc in ("lia", "olia", "balia"):
            for sched in reproduce.SEED002_SCHEDS:
                stalls[(scenario, cc, sched)] = 3.0
    stalls[("A2", "compound", "tp-sty")] = 4.0  # poor with TP-STY in A2 only
    claims, figures = seed002_claims(_summary(stalls))
    verdict = {c.name.split(" (")[0]: c.verdict for c in claims}
    assert verdict["A1: BBR, Cubic and Compound good over all schedulers"] == REPRODUCED
    assert verdict["A1: LIA variants"] == REPRODUCED
    assert verdict["A1: Wi-Fi is the most used path for every CC and scheduler"] == REPRODUCED
    assert verdict["A2: Compound has large buffer underflows with TP-STY"] == REPRODUCED
    assert verdict["B2: Compound has large buffer underflows with TP-STY"] == NOT_REPRODUCED
    assert verdict["B2: large LTE utilisation for every CC"] == REPRODUCED
    assert (
        verdict["B2: BBR still uses more of the Wi-Fi path than the other CCs on most schedulers"]
        == REPRODUCED
    )
    assert verdict["B1: BBR retransmits more"] == REPRODUCED
    # Compound is good with 5 of 6 schedulers in B2, so "only BBR and Cubic" holds but not
    # for every other CC: partly.
    assert (
        verdict["B2: only BBR and Cubic deliver good performance across all schedulers"] == PARTLY
    )
    assert "**A1: buffer underflows (mean per trial)**" in figures
    assert "| lia | 3.00 | 3.00 | 3.00 | 3.00 | 3.00 | 3.00 |" in figures


def test_seed002_page_builds_from_a_simulated_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "sim-run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"engine": "sim"}))
    _summary({("B1", "olia", "lrf"): 2.0}).to_csv(run / "summary.csv", index=False)
    opts = Options(from_runs=(run,))
    assert reproduce.reproduce("seed002", tmp_path, opts) == 0
    page = (tmp_path / "docs/reproductions/seed002.md").read_text()
    assert "Simulated run: `sim-run` (144 trials, 0 not ok" in page
    assert "**Not run in this session**" in page
    assert "./run_trials.sh --reproduce seed002 --engine emulate" in page
    assert "| B1: BBR consistently good across all schedulers (Fig. 8) |" in page


def test_transition_time_is_when_x12_first_settles_near_its_new_rate() -> None:
    # x12 at 300 until 6 s, then a linear climb to 500 reached at 8.5 s, then flat.
    bin_s = 0.25
    series = []
    for i in range(80):
        t = i * bin_s
        series.append(300.0 if t < 6 else min(500.0, 300.0 + 80.0 * (t - 6)))
    v = {"bin_s": bin_s, "x12": series, "drop_at_s": 6.0, "back_at_s": 13.0}
    # The 1 s average starting at t is within 10 % of 500 (>= 450) from t = 7.5 s.
    assert transition_s(v) == pytest.approx(1.5)


def test_the_emulated_cross_check_calls_the_benchmark_harness_as_it_is() -> None:
    import inspect

    bench = reproduce._bench_module(REPO)
    assert list(inspect.signature(bench.emulated).parameters) == ["name", "seed", "links"]
    params = list(inspect.signature(bench.run_user).parameters)
    assert params[:8] == ["topo", "workdir", "t0", "cc", "sched", "paths", "nbytes", "tag"]
    wifi, lte = reproduce.CROSSCHECKS["seed001"][1][0].bench_links()
    assert "queue = { bytes = 625000 }" in wifi
    assert 'loss = { model = "bernoulli", p = 1e-05 }' in lte


def test_cross_check_section_puts_both_engines_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "xc"
    run.mkdir()
    point = reproduce.CROSSCHECKS["seed004"][1][0]
    rows = [
        {"point": point.label, "cc": cc, "seed": 1, "goodput_bps": g}
        for cc, g in (("lia", 20e6), ("mpcubic", 40e6), ("hbdp", 50e6))
    ]
    (run / "crosscheck.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    runner = reproduce.Runner(tmp_path, Options(from_runs=(run,)), tmp_path)
    sim = {"lia": 21e6, "mpcubic": 60e6, "hbdp": 50e6}
    monkeypatch.setattr(
        runner, "mpsim", lambda *args: {"goodput_bps": sim[args[args.index("--cc") + 1]]}
    )
    text = reproduce.crosscheck_section("seed004", runner)
    assert "| scaled high-BDP pair | lia | 20.00 (n=1) | 21.00 | 1.05 |" in text
    assert "| scaled high-BDP pair | mpcubic | 40.00 (n=1) | 60.00 | 1.50 |" in text
    assert "2 of 3 cells" in text
    assert "Not run in this session" not in text


def test_seed002_page_puts_an_emulated_run_beside_the_simulated_one(tmp_path: Path) -> None:
    sim, emu = tmp_path / "sim", tmp_path / "emu"
    for run, engine in ((sim, "sim"), (emu, "emulate")):
        run.mkdir()
        (run / "run.json").write_text(json.dumps({"engine": engine}))
    _summary({("B1", "olia", "lrf"): 2.0}).to_csv(sim / "summary.csv", index=False)
    emulated = _summary({("B1", "olia", "lrf"): 3.0, ("B1", "lia", "lrf"): 1.0})
    emulated = emulated[emulated["sched"].isin(["lrf", "tp-sty"])].assign(valid=True)
    emulated.loc[emulated.index[0], "valid"] = False
    emulated.to_csv(emu / "summary.csv", index=False)
    assert reproduce.reproduce("seed002", tmp_path, Options(from_runs=(sim, emu))) == 0
    page = (tmp_path / "docs/reproductions/seed002.md").read_text()
    assert "Not run in this session" not in page
    assert "Emulated run: `" in page
    assert ": 48 trials, 47 valid and used." in page
    assert "Simulated vs emulated mean underflows over the 47 common cells" in page
    assert "| claim (emulated cells only) | emulated | verdict |" in page
