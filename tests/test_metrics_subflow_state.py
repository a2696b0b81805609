"""Subflow state at chosen times (metrics/subflow_state.py, `python -m metrics subflows`):
the video connection is the one that sent the most, each time takes the last sample at or
before it, and bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metrics import subflow_state
from metrics.__main__ import main


def _subflow(t_s: float, conn: int, path: str, sent: int, cwnd_pkts: int, **extra: object) -> dict:
    row = {"t_ns": int(t_s * 1e9), "src": "mpproxy-server", "event": "subflow", "conn": conn,
           "path": path, "bytes_sent_total": sent, "data_bytes_sent_total": sent,
           "cwnd_bytes": cwnd_pkts * subflow_state.MSS_BYTES, "srtt_ms": 40.0,
           "cc_state": "congestion_avoidance", "bw_est_bps": None, "rto_total": 0,
           "recoveries_total": 0, "cc_extra": {}}  # fmt: skip
    row.update(extra)
    return row


def _write_trial(folder: Path, rows: list[dict], trial_id: str, spec: dict) -> Path:
    """A trial folder holding the sender's statistics and a trial.json."""
    (folder / subflow_state.SENDER_STATS_FILE).write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    (folder / "trial.json").write_text(
        json.dumps({"trial_id": trial_id, "spec": spec}), encoding="utf-8"
    )
    return folder


@pytest.fixture
def trial(tmp_path: Path) -> Path:
    rows = [
        _subflow(1.0, 1, "wifi", 1_000, 10),
        _subflow(1.0, 2, "wifi", 500, 10),
        _subflow(1.0, 2, "lte", 0, 10),
        # Connection 2 sends more in the end: it is the video's.
        _subflow(2.0, 2, "wifi", 2_000_000, 12, cc_extra={"lia_alpha_k": 38.0}),
        _subflow(2.0, 2, "lte", 3_000_000, 30, rto_total=1, bw_est_bps=4_900_000),
        _subflow(3.0, 2, "wifi", 2_000_000, 5, cc_state="loss"),
        _subflow(3.0, 1, "wifi", 9_000, 10),
        {"t_ns": 3_500_000_000, "src": "mpproxy-server", "event": "conn", "conn": 2},
    ]
    return _write_trial(tmp_path, rows, "t1", {"cc": "lia", "sched": "tp-sty", "rep": 0})


def test_the_video_connection_is_the_one_that_sent_most(trial: Path) -> None:
    lines = subflow_state._subflow_lines(trial)
    assert subflow_state.video_connection(lines) == 2
    assert subflow_state.video_connection([]) is None


def test_each_time_takes_the_last_sample_at_or_before_it(trial: Path) -> None:
    states = subflow_state.states_at(trial, [0.5, 2.5, 3.0])
    # Nothing at 0.5 s; at 2.5 s both paths from their 2.0 s lines; at 3.0 s Wi-Fi's new line.
    assert [(s.t_s, s.path) for s in states] == [
        (2.5, "lte"), (2.5, "wifi"), (3.0, "lte"), (3.0, "wifi")
    ]  # fmt: skip
    lte, wifi = states[0], states[1]
    assert (lte.cwnd_pkts, lte.rtos, lte.bw_est_mbps, lte.data_sent_mb) == (30.0, 1, 4.9, 3.0)
    assert (wifi.cwnd_pkts, wifi.lia_alpha_k, wifi.cc_state) == (12.0, 38.0, "congestion_avoidance")
    assert (states[3].cwnd_pkts, states[3].cc_state) == (5.0, "loss")


def test_cli_prints_one_csv_row_per_time_and_path(
    trial: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["subflows", str(trial), "--at", "2.5,3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("trial_id,engine,cc,sched,rep,t_s,path,cc_state,cwnd_pkts")
    assert len(lines) == 1 + 4
    # An emulated trial.json names no engine.
    assert lines[1].startswith("t1,emulate,lia,tp-sty,0,2.500,lte,")


@pytest.mark.parametrize("at", ["x", "-1", ","])
def test_cli_bad_times_exit_2(trial: Path, at: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["subflows", str(trial), "--at", at]) == 2
    assert "--at" in capsys.readouterr().err


def test_cli_folder_without_a_trial_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["subflows", str(tmp_path)]) == 2
    assert "no trial.json" in capsys.readouterr().err


@pytest.fixture
def lossy_trial(tmp_path: Path) -> Path:
    """The video connection's LTE subflow every 100 ms: a slow-start overshoot at 3.0-3.1 s
    (window 96, 20 + 12 packets), then two losses of one queue overflow at 5.0 s (window 49)
    and 62.0 s (window 48); a loss on Wi-Fi and one on another connection do not count."""
    rows = []
    lost = 0
    for step in range(0, 650):
        t_s = step / 10
        cwnd = 96 if 2.5 <= t_s < 3.0 else 49 if 4.5 <= t_s < 5.0 else 48 if t_s < 62 else 34
        lost += {30: 20, 31: 12, 50: 15, 620: 14}.get(step, 0)
        rows.append(_subflow(t_s, 2, "lte", 10_000_000, cwnd, pkts_lost_total=lost))
        rows.append(_subflow(t_s, 2, "wifi", 1_000, 10, pkts_lost_total=step // 100))
        rows.append(_subflow(t_s, 1, "lte", 1_000, 10, pkts_lost_total=step))
    return _write_trial(tmp_path, rows, "t2", {"cc": "cubic", "sched": "tp-sty", "rep": 1})


def test_loss_episodes_group_losses_and_take_the_window_before_them(lossy_trial: Path) -> None:
    episodes = subflow_state.loss_episodes(lossy_trial, "lte")
    assert [(e.t_s, e.lost_pkts, e.peak_cwnd_pkts) for e in episodes] == [
        (3.0, 32, 96.0), (5.0, 15, 49.0), (62.0, 14, 48.0)
    ]  # fmt: skip
    summary = subflow_state.summarise_losses(episodes, "lte", after_s=60)
    assert (summary.episodes, summary.lost_pkts) == (3, 61)
    assert (summary.first_t_s, summary.first_peak_cwnd_pkts, summary.first_lost_pkts) == (
        3.0, 96.0, 32
    )  # fmt: skip
    assert summary.steady_peak_cwnd_pkts == 48.0
    assert subflow_state.summarise_losses([], "lte", 60).first_t_s is None


def test_cli_losses_per_episode_and_per_trial(
    lossy_trial: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["losses", str(lossy_trial)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "trial_id,engine,cc,sched,rep,t_s,path,lost_pkts,peak_cwnd_pkts"
    assert lines[1:] == [
        "t2,emulate,cubic,tp-sty,1,3.000,lte,32,96.000",
        "t2,emulate,cubic,tp-sty,1,5.000,lte,15,49.000",
        "t2,emulate,cubic,tp-sty,1,62.000,lte,14,48.000",
    ]
    assert main(["losses", str(lossy_trial), "--per-trial", "--steady-after", "4"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[1] == "t2,emulate,cubic,tp-sty,1,lte,3,61,3.000,96.000,32,48.500"
    assert main(["losses", str(lossy_trial), "--path", "wifi"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1 + 6


def test_cli_losses_bad_input_exits_2(
    lossy_trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["losses", str(lossy_trial), "--per-trial", "--steady-after", "-1"]) == 2
    assert "--steady-after" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["losses", str(empty)]) == 2
    assert "no trial.json" in capsys.readouterr().err
    assert main(["losses", str(lossy_trial), "--path", "lte2"]) == 2
    assert "no path 'lte2' (its paths: lte, wifi)" in capsys.readouterr().err
