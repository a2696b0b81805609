"""metrics/qoe.py: the linear QoE against values computed by hand."""

from __future__ import annotations

import math

import pytest

from metrics import qoe

REPS = {
    "event": "representations",
    "reps": [
        {"rep_id": "low", "bitrate_bps": 800_000},
        {"rep_id": "mid", "bitrate_bps": 3_000_000},
        {"rep_id": "top", "bitrate_bps": 5_240_000},
    ],
}


def seg(index: int, rep: str) -> dict:
    return {"event": "segment", "media_type": "video", "rep_id": rep,
            "url": f"/content/x/chunk-stream0-{index:05d}.m4s", "index": index}  # fmt: skip


SESSION = [
    REPS,
    {"event": "startup", "startup_delay_ms": 1000},
    {"event": "segment", "media_type": "init", "rep_id": "low", "url": "/init-stream0.m4s"},
    seg(1, "low"),
    seg(2, "mid"),
    seg(2, "top"),  # re-downloaded at the top rung: the later download counts
    seg(3, "top"),
    seg(4, "mid"),
    # media 5.0 s is in the third 2 s segment (numbering starts at 1): index 3
    {"event": "stall", "media_time_s": 5.0, "duration_ms": 1500},
]


def test_trial_qoe_by_hand() -> None:
    # bitrate 0.8 + 5.24 + 5.24 + 3.0 = 14.28 Mbit/s
    # switches |5.24 - 0.8| + 0 + |3.0 - 5.24| = 4.44 + 2.24 = 6.68 (lambda 1)
    # stall 4.3 x 1.5 s = 6.45; start-up 4.3 x 1.0 s = 4.3
    # QoE = 14.28 - 6.68 - 6.45 - 4.3 = -3.15, over 4 segments: -0.7875
    result = qoe.trial_qoe(SESSION)
    assert result["qoe_bitrate_term"] == pytest.approx(14.28)
    assert result["qoe_switch_term"] == pytest.approx(6.68)
    assert result["qoe_stall_term"] == pytest.approx(6.45)
    assert result["qoe_startup_term"] == pytest.approx(4.3)
    assert result["qoe_lin"] == pytest.approx(-3.15)
    assert result["qoe_lin_per_segment"] == pytest.approx(-0.7875)


def test_segment_terms_by_hand() -> None:
    segments = qoe.segment_qoe(SESSION)
    assert [s.index for s in segments] == [1, 2, 3, 4]
    assert [s.bitrate_mbps for s in segments] == pytest.approx([0.8, 5.24, 5.24, 3.0])
    assert [s.switch_mbps for s in segments] == pytest.approx([0.0, 4.44, 0.0, 2.24])
    assert [s.stall_s for s in segments] == pytest.approx([0.0, 0.0, 1.5, 0.0])
    # segment 3: 5.24 - 0 - 4.3 x 1.5 = -1.21; segment 2: 5.24 - 4.44 = 0.8
    assert [s.qoe for s in segments] == pytest.approx([0.8, 0.8, -1.21, 0.76])


def test_constant_top_rung_without_stalls_is_its_bitrate() -> None:
    lines = [REPS, {"event": "startup", "startup_delay_ms": 0}]
    lines += [seg(i, "top") for i in range(1, 31)]
    result = qoe.trial_qoe(lines)
    assert result["qoe_lin_per_segment"] == pytest.approx(5.24)
    assert result["qoe_lin"] == pytest.approx(30 * 5.24)


def test_weights_are_parameters() -> None:
    # lambda 0, mu 0, mu_s 0: only the bitrate term is left
    result = qoe.trial_qoe(SESSION, lam=0, mu=0, mu_s=0)
    assert result["qoe_lin"] == pytest.approx(14.28)


def test_index_from_url_when_the_player_gives_none() -> None:
    line = {"event": "segment", "media_type": "video", "rep_id": "top",
            "url": "/content/x/chunk-stream2-00007.m4s"}  # fmt: skip
    assert [s.index for s in qoe.segment_qoe([REPS, line])] == [7]


def test_no_segments_gives_nan_not_zero() -> None:
    result = qoe.trial_qoe([REPS, {"event": "startup", "startup_delay_ms": 500}])
    assert math.isnan(result["qoe_lin"]) and math.isnan(result["qoe_lin_per_segment"])


def test_p1203_absent_is_said_and_nan() -> None:
    status = qoe.p1203_status()
    if status == "available":
        pytest.skip("itu-p1203 is installed here")
    assert status.startswith("absent") and "itu-p1203" in status
    assert math.isnan(qoe.p1203_mode0(SESSION))
