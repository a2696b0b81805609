"""--engine sim: which trials it takes, and the logs it writes in the emulated formats."""

import json
import subprocess
from dataclasses import replace
from pathlib import Path

from testbed.engine_sim import (
    DASHJS,
    FIRST_REQUEST_S,
    _finish,
    _page_request_argv,
    _trial_argv,
    _write_transport_logs,
    unsupported,
)
from testbed.spec import TrialSpec
from testbed.transports import user


def _spec(transport: str = "user") -> TrialSpec:
    return TrialSpec(
        scenario="B1",
        transport=transport,
        cc="cubic",
        sched="lrf",
        player="dashjs",
        video_duration_s=60,
        rep=0,
        seed=1,
    )


def test_only_the_user_transport_is_simulated() -> None:
    assert unsupported([_spec()]) == []
    (reason,) = unsupported([_spec(), _spec("kernel")])
    assert "kernel" in reason and "--engine emulate" in reason


def test_link_and_subflow_totals_are_written_in_the_emulated_formats(tmp_path: Path) -> None:
    sim = {
        "virtual_s": 60.5,
        "links": {"wifi": {"down": {"pkts_out_total": 10, "bytes_out_total": 14000}}},
    }
    _write_transport_logs(tmp_path, _spec(), sim)
    emulator = [json.loads(x) for x in (tmp_path / "emulator.jsonl").read_text().splitlines()]
    assert emulator[0]["event"] == "start"
    assert emulator[1] == {
        "t_ns": 60_500_000_000,
        "src": "emulator",
        "event": "link_totals",
        "path": "wifi",
        "dir": "down",
        "pkts_out_total": 10,
        "bytes_out_total": 14000,
    }
    assert not (tmp_path / "transport-server.jsonl").exists()  # mpsim writes those


REPO = Path(__file__).resolve().parent.parent


def test_a_small_matrix_runs_and_logs_the_transport_every_second(tmp_path: Path) -> None:
    """Two 10 s trials through the runner (threads, mpsim, result.json, report): the server's
    transport log is a time series (a `subflow` line per path every virtual second)."""
    from dataclasses import replace

    from testbed.engine_sim import MPSIM_BINARY, run_sim_matrix

    assert (REPO / MPSIM_BINARY).is_file(), "build it with ./scripts/setup.sh"
    specs = [replace(_spec(), sched=sched, video_duration_s=10) for sched in ("lrf", "ecf")]
    run_dir = tmp_path / "run"
    assert run_sim_matrix(specs, run_dir, REPO, jobs=2, argv=["test"]) == 0
    for spec in specs:
        trial = run_dir / "trials" / spec.trial_id()
        result = json.loads((trial / "result.json").read_text())
        assert result["status"] == "ok"
        sent = {name: p["data_bytes_sent"] for name, p in
                json.loads((trial / "sim.json").read_text())["server_paths"].items()}  # fmt: skip
        assert [name for name in result["paths_unused"] if sent[name] > 0] == []
        # The user transport's rule on the logs mpsim wrote.
        _, with_data, unused = user.verdict(trial, ["wifi", "lte"])
        assert (result["subflows_with_data"], result["paths_unused"]) == (with_data, unused)
        assert result["subflows_with_data"] >= 1
        lines = [json.loads(x) for x in (trial / "transport-server.jsonl").read_text().splitlines()]
        wifi_t_s = [
            x["t_ns"] / 1e9 for x in lines if x["event"] == "subflow" and x["path"] == "wifi"
        ]
        # Every second of the ~10 s run, plus the final line.
        assert wifi_t_s[:10] == [float(t) for t in range(1, 11)], wifi_t_s
    assert (run_dir / "report.html").is_file()


def test_the_page_requests_are_the_served_files_in_order_before_the_first_request(
    tmp_path: Path,
) -> None:
    repo = Path(__file__).resolve().parent.parent
    mpd = tmp_path / "manifest.mpd"
    mpd.write_text("x" * 2181)
    argv = _page_request_argv(repo, mpd)
    assert argv[::2] == ["--player-page-request"] * 7
    requests = [tuple(r.split(":")) for r in argv[1::2]]
    at = [float(r[0]) for r in requests]
    assert at == sorted(at) and at[-1] < FIRST_REQUEST_S
    by_conn = {c: [int(r[1]) for r in requests if r[2] == c] for c in ("0", "1", "2")}
    size = lambda p: (repo / p).stat().st_size  # noqa: E731
    assert by_conn["0"] == [size("player/web/player.mjs"), size("player/web/lib/stall.mjs"), 2181]
    assert by_conn["1"] == [size("player/web/index.html"), size("player/web/player.css")]
    assert by_conn["2"] == [size(DASHJS), size("player/web/lib/overload.mjs")]


def test_only_the_dashjs_player_loads_the_page(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parent.parent
    mpd = tmp_path / "manifest.mpd"
    mpd.write_text("<MPD/>")
    dashjs = _trial_argv(_spec(), tmp_path, repo, mpd)
    gstreamer = _trial_argv(replace(_spec(), player="gstreamer"), tmp_path, repo, mpd)
    assert dashjs.count("--player-page-request") == 7
    assert "--player-page-request" not in gstreamer


def _subflow(side: str, path: str, received: int, *, established: bool = True) -> str:
    return json.dumps({"t_ns": 1, "src": f"mpproxy-{side}", "event": "subflow", "conn": 1,
                       "path": path, "established": established,
                       "bytes_acked_total": 1000 if established else 0,
                       "data_bytes_received_total": received})  # fmt: skip


def _finished(tmp_path: Path, client: list[str], server: list[str]) -> dict:
    """_finish on a trial folder whose mpsim ran to the end and wrote these `subflow` lines;
    mpsim's own per-path summary says the server sent stream data on wifi only."""
    (tmp_path / "logs").mkdir(parents=True)
    (tmp_path / "transport-client.jsonl").write_text("".join(x + "\n" for x in client))
    (tmp_path / "transport-server.jsonl").write_text("".join(x + "\n" for x in server))
    sim = {"virtual_s": 10.0, "player_summary": {"ended": True},
           "server_paths": {"wifi": {"data_bytes_sent": 5_000_000, "bytes_acked_total": 5_000_000},
                            "lte": {"data_bytes_sent": 0, "bytes_acked_total": 3000}}}  # fmt: skip
    proc = subprocess.CompletedProcess([], 0, stdout=json.dumps(sim), stderr="")
    return _finish(_spec(), tmp_path, ["wifi", "lte"], proc, 0.5)


def test_a_path_that_carried_only_the_clients_requests_counts_as_carrying_data(
    tmp_path: Path,
) -> None:
    """The user transport's rule: stream data received by either side. The server sent
    nothing on lte, but it received the client's requests there, so lte is used (the engine
    once counted only what the server sent: 1 path, in 2 of seed 002's 432 trials)."""
    result = _finished(
        tmp_path,
        client=[_subflow("client", "wifi", 5_000_000), _subflow("client", "lte", 0)],
        server=[_subflow("server", "wifi", 1200), _subflow("server", "lte", 800)],
    )
    assert (result["subflows_with_data"], result["paths_unused"]) == (2, [])
    assert result["valid"] and result["invalid_reasons"] == []


def test_the_subflow_rule_is_the_user_transports_unused_and_never_established(
    tmp_path: Path,
) -> None:
    client = [_subflow("client", "wifi", 5_000_000), _subflow("client", "lte", 0)]
    server = [_subflow("server", "wifi", 1200), _subflow("server", "lte", 0)]
    unused = _finished(tmp_path / "unused", client, server)
    assert (unused["subflows_with_data"], unused["paths_unused"], unused["valid"]) == (
        1,
        ["lte"],
        True,
    )
    never = [_subflow("client", "wifi", 5_000_000), _subflow("client", "lte", 0, established=False)]
    server = [_subflow("server", "wifi", 1200), _subflow("server", "lte", 0, established=False)]
    result = _finished(tmp_path / "never", never, server)
    assert result["status"] == "ok" and not result["valid"]
    (reason,) = result["invalid_reasons"]
    assert reason.startswith("user: 1 of 2 subflows never established (lte:"), reason


def test_a_trial_whose_mpsim_a_signal_killed_leaves_no_result(tmp_path: Path, monkeypatch) -> None:
    """A stopped run kills mpsim: that is no result of the trial, so no result.json (a
    resumed run redoes it, and no archive takes it as a failure)."""
    from testbed import engine_sim

    trial_dir = tmp_path / "trial"
    trial_dir.mkdir()
    monkeypatch.setattr(engine_sim, "_prepare", lambda *a: ["mpsim"])
    monkeypatch.setattr(engine_sim, "_resolved", lambda *a: {"paths": {"wifi": {}, "lte": {}}})
    killed = subprocess.CompletedProcess(["mpsim"], -15, "", "")
    monkeypatch.setattr(engine_sim.subprocess, "run", lambda *a, **k: killed)
    result = engine_sim._run_trial(_spec(), trial_dir, tmp_path, REPO, tmp_path / "m.mpd", None)
    assert result["status"] == engine_sim.INTERRUPTED
    assert not (trial_dir / "result.json").exists()


def test_sigterm_stops_a_simulated_run_keeping_what_finished(tmp_path: Path) -> None:
    """SIGTERM (how a study running in the background is stopped: it ignores SIGINT) ends the
    run like Ctrl-C: exit 130, the running trials finish, no more start, and every result
    written is a trial's own."""
    import signal
    import sys
    import time

    from testbed.engine_sim import MPSIM_BINARY

    assert (REPO / MPSIM_BINARY).is_file(), "build it with ./scripts/setup.sh"
    run_dir = tmp_path / "run"
    code = (
        "import sys; from dataclasses import replace; from pathlib import Path\n"
        "from testbed.engine_sim import run_sim_matrix\n"
        "from testbed.spec import TrialSpec\n"
        "base = TrialSpec(scenario='B1', transport='user', cc='cubic', sched='lrf',"
        " player='dashjs', video_duration_s=20, rep=0, seed=1)\n"
        "specs = [replace(base, rep=r, seed=r + 1) for r in range(40)]\n"
        f"sys.exit(run_sim_matrix(specs, Path({str(run_dir)!r}), Path({str(REPO)!r}), jobs=1,"
        " argv=['test'], report=False))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while not list(run_dir.glob("trials/*/result.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    results = [json.loads(p.read_text()) for p in run_dir.glob("trials/*/result.json")]
    assert 1 <= len(results) < 40
    assert all(r["status"] == "ok" for r in results), results


def test_sched_trace_reaches_mpsim(tmp_path: Path, monkeypatch) -> None:
    """`run_trials.sh --sched-trace` with `--engine sim`: the trial writes the sender's
    decisions where an emulated trial does (the report's timeline reads them there)."""
    from testbed import transports
    from testbed.engine_sim import MPSIM_BINARY, run_sim_matrix

    assert (REPO / MPSIM_BINARY).is_file(), "build it with ./scripts/setup.sh"
    spec = replace(_spec(), video_duration_s=10)
    for traced in (False, True):
        if traced:
            monkeypatch.setenv(transports.SCHED_TRACE_ENV, "1")
        run_dir = tmp_path / f"run-{traced}"
        assert run_sim_matrix([spec], run_dir, REPO, jobs=1, argv=["test"], report=False) == 0
        trace = run_dir / "trials" / spec.trial_id() / "sched-trace-server.jsonl"
        assert trace.is_file() == traced
    decisions = [json.loads(x) for x in trace.read_text().splitlines()]
    assert len(decisions) > 100 and all("t_ns" in d for d in decisions)


def test_stats_interval_reaches_mpsim_and_changes_the_log_alone(
    tmp_path: Path, monkeypatch
) -> None:
    """`run_trials.sh --engine sim --sim-stats-interval-ms 100`: the sender logs ten times as
    often, and the trial's results (mpsim's sim.json but its wall time) stay the same."""
    from testbed.engine_sim import MPSIM_BINARY, SIM_STATS_INTERVAL_ENV, run_sim_matrix

    assert (REPO / MPSIM_BINARY).is_file(), "build it with ./scripts/setup.sh"
    spec = replace(_spec(), video_duration_s=10)
    lines, results = {}, {}
    for interval in ("", "100"):
        monkeypatch.setenv(SIM_STATS_INTERVAL_ENV, interval)
        run_dir = tmp_path / f"run-{interval or 'default'}"
        assert run_sim_matrix([spec], run_dir, REPO, jobs=1, argv=["test"], report=False) == 0
        trial_dir = run_dir / "trials" / spec.trial_id()
        log = (trial_dir / "transport-server.jsonl").read_text().splitlines()
        lines[interval] = sum('"subflow"' in x for x in log)
        sim = json.loads((trial_dir / "sim.json").read_text())
        sim.pop("wall_s")
        results[interval] = sim
    assert lines["100"] > 5 * lines[""] > 0
    assert results["100"] == results[""]
