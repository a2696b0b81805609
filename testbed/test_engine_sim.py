"""--engine sim: which trials it takes, and the logs it writes in the emulated formats."""

import json
from dataclasses import replace
from pathlib import Path

from testbed.engine_sim import (
    DASHJS,
    FIRST_REQUEST_S,
    _page_request_argv,
    _trial_argv,
    _write_transport_logs,
    unsupported,
)
from testbed.spec import TrialSpec


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
        assert result["subflows_with_data"] == sum(1 for b in sent.values() if b > 0)
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
