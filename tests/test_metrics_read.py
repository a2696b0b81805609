"""metrics.read and metrics.tables on the hand-made trial tests/fixtures/trial-known.

The fixture's known events (see tests/fixtures/trial-known/README.md): 2 stalls of
1500 ms and 250 ms, 12 dropped frames of 1500, startup 800 ms, one quality switch,
emulator per-path totals, and transport retransmission counters on two sides and two
connections.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from metrics.read import INTERRUPTED_REASON, LogFormatError, read_jsonl, read_trial
from metrics.tables import (
    path_intervals_table,
    path_totals_table,
    segments_table,
    stalls_table,
    summary_table,
)

FIXTURES = Path(__file__).parent / "fixtures"
KNOWN = FIXTURES / "trial-known"
KNOWN_ID = "A1__user__bbr__lrf__dashjs__v60__r0__s1"


@pytest.fixture
def known_copy(tmp_path: Path) -> Path:
    """A writable copy of the known trial, for tests that damage it."""
    return Path(shutil.copytree(KNOWN, tmp_path / "trial"))


def summary_row(trial_dir: Path, strict: bool = True) -> dict:
    return summary_table([read_trial(trial_dir, strict=strict)]).iloc[0].to_dict()


def test_player_metrics_of_known_trial_are_exact() -> None:
    row = summary_row(KNOWN)
    assert row["trial_id"] == KNOWN_ID
    assert row["stalls"] == 2
    assert row["stall_total_ms"] == 1750.0
    assert row["stall_max_ms"] == 1500.0
    assert row["dropped_frames"] == 12
    assert row["total_frames"] == 1500
    assert row["startup_delay_ms"] == 800.0
    # playing samples show 1, 1, 2, 2, 2 Mb/s; the stalled sample is not counted
    assert row["mean_bitrate_bps"] == 1_600_000
    assert row["quality_switches"] == 1
    assert row["played_s"] == 3.0
    assert row["player_end"] == "ended"
    # a wait with a full buffer (CPU, not network) is a decode stall, not a stall
    assert (row["decode_stalls"], row["decode_stall_total_ms"]) == (1, 100.0)


def test_spec_and_status_columns() -> None:
    row = summary_row(KNOWN)
    expected = {"scenario": "A1", "transport": "user", "cc": "bbr", "sched": "lrf"}
    assert {k: row[k] for k in expected} == expected
    assert (row["player"], row["video_duration_s"], row["rep"], row["seed"]) == ("dashjs", 60, 0, 1)
    assert (row["status"], row["reason"], row["valid"], row["invalid_reason"]) == (
        "ok",
        "",
        True,
        "",
    )
    assert row["wall_duration_s"] == 73.2
    assert row["log_errors"] == 0


def test_per_path_bytes_packets_drops_and_retransmissions_are_exact() -> None:
    row = summary_row(KNOWN)
    assert (row["bytes_down_wifi"], row["pkts_down_wifi"]) == (75_000, 50)
    assert (row["bytes_up_wifi"], row["pkts_up_wifi"]) == (520, 10)
    assert (row["bytes_down_lte"], row["pkts_down_lte"]) == (15_000, 10)
    assert (row["bytes_up_lte"], row["pkts_up_lte"]) == (260, 5)
    assert (row["drops_random_wifi"], row["drops_queue_wifi"]) == (3, 0)
    assert (row["drops_random_lte"], row["drops_queue_lte"]) == (0, 1)
    # wifi: server conn 1 ends at 6, server conn 2 at 2, client 0; lte: server 2 + client 1
    assert (row["retrans_pkts_wifi"], row["retrans_pkts_lte"]) == (8, 3)
    assert row["ofo_queue_max_bytes"] == 9000
    assert (row["reinjected_bytes"], row["sched_waits"], row["transport_conns"]) == (3000, 5, 3)
    assert (row["http_requests"], row["http_body_bytes"]) == (2, 750_000)


def test_path_totals_fall_back_to_interval_sums_without_link_totals(known_copy: Path) -> None:
    emulator = known_copy / "emulator.jsonl"
    kept = [line for line in emulator.read_text().splitlines() if '"link_totals"' not in line]
    emulator.write_text("\n".join(kept) + "\n")
    totals = path_totals_table([read_trial(known_copy)])
    assert set(totals["source"]) == {"link_stats"}
    row = summary_row(known_copy)
    assert (row["bytes_down_wifi"], row["pkts_down_wifi"], row["drops_random_wifi"]) == (
        75_000,
        50,
        3,
    )
    assert (row["bytes_down_lte"], row["drops_queue_lte"]) == (15_000, 1)


def test_stall_and_segment_tables() -> None:
    trial = read_trial(KNOWN)
    stalls = stalls_table([trial])
    assert stalls[["start_s", "end_s", "duration_ms"]].values.tolist() == [
        [2.0, 3.5, 1500.0],
        [5.0, 5.25, 250.0],
    ]
    segments = segments_table([trial])
    assert segments["download_ms"].tolist() == [1700.0, 1000.0]
    assert segments["bytes"].tolist() == [500_000, 250_000]
    # nginx times are converted from the wall clock with trial.json's origin
    assert trial.nginx["t_s"].round(6).tolist() == [1.7, 4.3]


def test_path_intervals_table() -> None:
    table = path_intervals_table([read_trial(KNOWN)]).set_index(["path", "t_s"])
    assert len(table) == 10  # 5 intervals x 2 paths
    assert (table.loc["wifi", "down_bps"] == 15_000 * 8 / 0.1).all()
    assert table.loc[("wifi", 0.4), "drops_random"] == 2
    assert table.loc[("lte", 0.5), "drops_queue"] == 1
    # cwnd and srtt of the data sender (server side): conn 1 only at 0.5 s
    assert table.loc[("wifi", 0.5), "cwnd_bytes"] == 45_000
    assert table.loc[("lte", 0.3), "srtt_ms"] == 80.0
    assert math.isnan(table.loc[("wifi", 0.1), "cwnd_bytes"])
    # bytes_sent_total of conn 1 grew from 30000 to 60000 between 0.3 s and 0.5 s
    assert table.loc[("wifi", 0.5), "sent_bps"] == pytest.approx(30_000 * 8 / 0.2)
    assert math.isnan(table.loc[("wifi", 0.3), "sent_bps"])  # first samples: no rate yet


@pytest.mark.parametrize(
    ("damage", "line", "words"),
    [
        (lambda lines: lines.__setitem__(2, lines[2][:-5] + "\n"), 3, "invalid JSON"),
        (lambda lines: lines.__setitem__(2, "\n"), 3, "empty line"),
        (lambda lines: lines.__setitem__(2, "[1, 2]\n"), 3, "expected a JSON object"),
        (lambda lines: lines.__setitem__(2, '{"t_ns": 5, "src": "x"}\n'), 3, '"event"'),
        (lambda lines: lines.__setitem__(2, '{"t_ns": 1.5, "event": "x"}\n'), 3, '"t_ns"'),
        (lambda lines: lines.__setitem__(-1, lines[-1][:30]), 15, "truncated"),
        (lambda lines: lines.__setitem__(-1, lines[-1].rstrip("\n")), 15, "no terminating newline"),
    ],
)
def test_malformed_lines_name_file_and_line(
    known_copy: Path, damage, line: int, words: str
) -> None:
    player = known_copy / "player.jsonl"
    lines = player.read_text().splitlines(keepends=True)
    damage(lines)
    player.write_text("".join(lines))
    with pytest.raises(LogFormatError) as raised:
        read_jsonl(player)
    assert f"player.jsonl:{line}:" in str(raised.value)
    assert words in str(raised.value)
    with pytest.raises(LogFormatError):
        read_trial(known_copy, strict=True)
    # Not strict (how the report reads a run): good lines kept, error reported, not valid.
    trial = read_trial(known_copy, strict=False)
    assert len(trial.errors) == 1 and f"player.jsonl:{line}:" in trial.errors[0]
    row = summary_table([trial]).iloc[0]
    assert not row["valid"] and row["log_errors"] == 1
    assert f"player.jsonl:{line}" in row["invalid_reason"]
    assert row["status"] == "ok"  # the run finished; only its logs are damaged


def test_missing_optional_files_are_fine(tmp_path: Path) -> None:
    trial_dir = tmp_path / "bare"
    trial_dir.mkdir()
    for name in ("trial.json", "result.json"):
        shutil.copy(KNOWN / name, trial_dir / name)
    row = summary_row(trial_dir)
    assert row["status"] == "ok" and row["valid"]
    assert row["player_end"] == "no player log"
    assert math.isnan(row["stalls"]) and math.isnan(row["bytes_down_wifi"])
    assert math.isnan(row["retrans_pkts_lte"]) and math.isnan(row["ofo_queue_max_bytes"])
    assert path_intervals_table([read_trial(trial_dir)]).empty


def test_trial_without_result_json_is_incomplete(known_copy: Path) -> None:
    (known_copy / "result.json").unlink()
    row = summary_row(known_copy)
    assert row["status"] == "incomplete"
    assert row["reason"] == INTERRUPTED_REASON == "no result.json: interrupted"
    assert not row["valid"]
    assert row["stalls"] == 2  # what was logged before the interruption is still read


def test_failed_trial_keeps_its_reason(known_copy: Path) -> None:
    (known_copy / "result.json").write_text(
        '{"schema": 1, "trial_id": "x", "status": "failed", "reason": "player crashed (exit 139)",'
        ' "valid": false, "invalid_reasons": [], "wall_duration_s": 12.0, "subflows_with_data": 1}'
    )
    row = summary_row(known_copy)
    assert (row["status"], row["reason"], row["valid"]) == (
        "failed",
        "player crashed (exit 139)",
        False,
    )


def test_paths_unused_is_copied_from_result_json(known_copy: Path) -> None:
    result_path = known_copy / "result.json"
    result = json.loads(result_path.read_text())
    assert math.isnan(summary_row(known_copy)["paths_unused"])  # not recorded: an older run
    for recorded, cell in ((["lte"], "lte"), ([], ""), (["lte", "sat"], "lte,sat")):
        result_path.write_text(json.dumps(result | {"paths_unused": recorded}))
        row = summary_row(known_copy)
        assert (row["paths_unused"], row["valid"]) == (cell, True)


def test_kernel_trial_retransmissions_and_cwnd_from_ss() -> None:
    trial = read_trial(FIXTURES / "trial-kernel")
    row = summary_table([trial]).iloc[0]
    # MPTCP token conn: wifi subflow 4 then 9, a second wifi subflow 1, lte 1;
    # a TCP-fallback 4-tuple conn: wifi 2
    assert (row["retrans_pkts_wifi"], row["retrans_pkts_lte"]) == (12, 1)
    assert row["transport_conns"] == 2
    assert not row["valid"] and "fell back to TCP" in row["invalid_reason"]
    assert trial.kernel_mptcp is not None and trial.kernel_mptcp["verdict"].startswith("fallback")
    intervals = path_intervals_table([trial]).set_index(["path", "t_s"])
    # sum over the subflows sampled in (0.1 s, 0.2 s]; srtt their mean
    assert intervals.loc[("wifi", 0.2), "cwnd_bytes"] == 21_720 + 2_896 + 28_960
    assert intervals.loc[("wifi", 0.2), "srtt_ms"] == pytest.approx((42.5 + 41.5 + 43.0) / 3)


def test_control_trial_probe_columns() -> None:
    row = summary_row(FIXTURES / "trial-control")
    assert (row["transport"], row["player"]) == ("none", "none")
    assert row["probe_goodput_down_bps_wifi"] == 19_200_000
    assert row["probe_goodput_down_bps_lte"] == 14_100_000
    assert row["probe_rtt_median_ms_wifi"] == 41.0  # mean of the down and up probes
