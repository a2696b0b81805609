"""machine_check: a study's later trials against the earlier ones of their cell."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from testbed.reproduce import archive, machine_check


def _part(store: Path, number: int, rows: list[dict]) -> None:
    store.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows).assign(status="ok", valid=True)
    frame.to_csv(store / archive.part_name(f"20261129T0000{number:02d}Z", number), index=False)


def _trial(cc: str, rep: int, stalls: float, cpu: float) -> dict:
    return {"trial_id": f"B1__user__{cc}__lrf__r{rep}", "scenario": "B1.toml", "cc": cc,
            "sched": "lrf", "rep": rep, "stalls": stalls, "cpu_player_s": cpu,
            "recv_window_bytes": None}  # fmt: skip


def test_later_trials_are_placed_in_their_cells_earlier_range(tmp_path: Path) -> None:
    store = tmp_path / "emulate-S0"
    # Earlier: two cells of 3 trials each; later: one trial per cell.
    _part(store, 1, [_trial("bbr", r, s, c) for r, s, c in ((0, 1, 80), (1, 2, 90), (2, 3, 100))])
    _part(store, 2, [_trial("lia", r, s, c) for r, s, c in ((0, 0, 50), (1, 0, 60), (2, 0, 70))])
    _part(store, 3, [_trial("bbr", 3, 2, 120), _trial("lia", 3, 0, 40)])
    earlier, later = machine_check.split_rows(store, 3)
    assert (len(earlier), len(later)) == (6, 2)
    by_metric = {r["metric"]: r for r in machine_check.compare(earlier, later)}
    stalls, cpu = by_metric["stalls"], by_metric["cpu_player_s"]
    # Inside (2 within 1-3; 0 ties at 0) / outside (120 above 80-100, 40 below 50-70).
    assert (stalls["n"], stalls["below"], stalls["above"]) == (2, 0, 0)
    assert (cpu["below"], cpu["above"]) == (1, 1)
    assert cpu["expected"] == pytest.approx(2 * 2 / 4)  # 2/(n+1) per trial, n = 3
    # Ratios to the cell's earlier median; a cell whose median is 0 gives none.
    assert stalls["ratios"] == [1.0]
    assert cpu["ratios"] == pytest.approx([120 / 90, 40 / 60])
    assert "| cpu_player_s | 2 | 2 (1, 1) | 1.0 | 1.00 (0.67–1.33) |" in machine_check.table([cpu])


def test_bad_input_exits_2_naming_what_would_be_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert machine_check.main([str(tmp_path / "none"), "--later-from-part", "2"]) == 2
    assert "not an archive" in capsys.readouterr().err
    store = tmp_path / "emulate-S0"
    _part(store, 1, [_trial("bbr", 0, 1, 80)])
    _part(store, 2, [_trial("bbr", 1, 1, 80)])
    assert machine_check.main([str(store), "--later-from-part", "1"]) == 2
    assert "has parts 1-2" in capsys.readouterr().err
    assert machine_check.main([str(store), "--later-from-part", "2"]) == 0
    assert "1 earlier trials (parts before 2), 1 later" in capsys.readouterr().out
