"""Verdict of a kernel-mode trial: MPTCP really used, on how many paths (invalid-trial marking)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernel_config import verify

FIXTURES = Path(__file__).parent / "fixtures"


def mib(**deltas: int) -> dict[str, dict[str, dict[str, int]]]:
    """Client/server counters before (all zero) and after (the given MPTcpExt deltas)."""
    after = {f"MPTcpExt{name}": value for name, value in deltas.items()}
    return {
        "client": {"before": {}, "after": after},
        "server": {"before": {}, "after": after},
    }


def line(
    path: str,
    sent: int,
    *,
    mptcp: bool | None = True,
    retrans: int = 0,
    state: str = "ESTAB",
    srtt_ms: float | None = 20.5,
) -> dict[str, Any]:
    """One kernel-subflows.jsonl line; by default an established socket with an RTT sample."""
    addr = {"wifi": "10.1.1.2", "lte": "10.2.1.2"}[path]
    return {
        "event": "subflow",
        "subflow": f"10.1.2.2:8080-{addr}:40000",
        "conn": "c89b94eb" if mptcp else f"10.1.2.2:8080-{addr}:40000",
        "path": path,
        "mptcp": mptcp,
        "state": state,
        "srtt_ms": srtt_ms,
        "min_rtt_ms": srtt_ms,
        "bytes_sent_total": sent,
        "bytes_acked_total": sent,
        "bytes_retrans_total": retrans * 1448,
        "pkts_retrans_total": retrans,
        "segs_out_total": sent // 1400,
        "data_segs_out_total": sent // 1400,
    }


def emulator(wifi_in: int, lte_in: int) -> list[dict[str, Any]]:
    return [
        {
            "event": "link_totals",
            "path": p,
            "dir": "down",
            "bytes_in_total": b,
            "bytes_out_total": b,
        }
        for p, b in (("wifi", wifi_in), ("lte", lte_in))
    ]


GOOD_MIB = {"MPCapableSYNTX": 3, "MPCapableSYNRX": 3, "MPJoinSynRx": 3}


def test_two_paths_over_mptcp_is_valid_and_bytes_agree() -> None:
    lines = [line("wifi", 100, retrans=0), line("wifi", 14_000_000), line("lte", 7_000_000)]
    wire_wifi = 14_000_000 + 10_000 * 80
    result = verify.verdict("kernel", mib(**GOOD_MIB), lines, emulator(wire_wifi, 7_400_000))
    assert result["valid"] is True, result["invalid_reasons"]
    assert result["subflows_with_data"] == 2
    assert result["mptcp_used"] is True
    assert result["bytes_vs_emulator"]["wifi"]["kernel_over_emulator_in"] == pytest.approx(1.0)
    assert result["per_path"]["wifi"]["bytes_sent"] == 14_000_000  # last line per socket wins


def test_fallback_to_tcp_marks_invalid() -> None:
    deltas = dict(GOOD_MIB, MPCapableFallbackACK=1)
    lines = [line("wifi", 5_000_000), line("lte", 5_000_000)]
    result = verify.verdict("kernel", mib(**deltas), lines, [])
    assert result["valid"] is False
    assert any("fell back to plain TCP" in r for r in result["invalid_reasons"])


def test_path_never_established_marks_invalid() -> None:
    result = verify.verdict("kernel", mib(**GOOD_MIB), [line("wifi", 9_000_000)], [])
    assert result["subflows_with_data"] == 1
    assert result["paths_established"] == ["wifi"] and result["paths_unused"] == []
    assert result["invalid_reasons"] == [
        "kernel MPTCP: 2 subflows configured but lte never established (no socket on it past"
        " SYN-RECV with an RTT sample in kernel-subflows.jsonl)"
    ]


def test_a_join_stuck_in_syn_recv_is_not_established() -> None:
    # A request socket (the MP_JOIN's third ACK never arrived): no full socket, no RTT.
    lines = [line("wifi", 9_000_000), line("lte", 0, state="SYN-RECV", srtt_ms=None)]
    result = verify.verdict("kernel", mib(**GOOD_MIB), lines, [])
    assert result["valid"] is False
    assert "lte never established" in result["invalid_reasons"][0]


def test_established_path_without_data_is_valid_and_flagged() -> None:
    # The scheduler kept every byte on wifi; the lte join completed (ESTAB, RTT from the
    # SYN-ACK) and sent only its handshake. Its socket was later destroyed (ss -E: UNCONN).
    lte = line("lte", 0)
    lte_destroyed = line("lte", 0, state="UNCONN") | {"final": True}
    result = verify.verdict(
        "kernel", mib(**GOOD_MIB), [line("wifi", 9_000_000), lte, lte_destroyed], []
    )
    assert result["valid"] is True, result["invalid_reasons"]
    assert result["subflows_with_data"] == 1
    assert result["paths_established"] == ["lte", "wifi"]
    assert result["paths_unused"] == ["lte"]
    assert "paths_unused=lte" in verify.format_summary(result)


def test_player_not_under_mptcpize_marks_invalid() -> None:
    lines = [line("wifi", 9_000_000, mptcp=False)]
    result = verify.verdict("kernel", mib(), lines, [])
    reasons = " | ".join(result["invalid_reasons"])
    assert "client sent no MP_CAPABLE SYN" in reasons
    assert "plain TCP socket(s) served the player" in reasons
    assert result["mptcp_used"] is False


def test_bytes_mismatch_with_emulator_marks_invalid() -> None:
    lines = [line("wifi", 5_000_000), line("lte", 5_000_000)]
    result = verify.verdict("kernel", mib(**GOOD_MIB), lines, emulator(8_000_000, 5_300_000))
    assert any(r.startswith("wifi: kernel wire bytes") for r in result["invalid_reasons"])
    assert result["bytes_vs_emulator"]["lte"]["within_tolerance"] is True


def test_tcp_lte_must_use_lte_only() -> None:
    ok = verify.verdict("tcp-lte", mib(), [line("lte", 3_000_000, mptcp=False)], [])
    assert ok["valid"] is True and ok["paths_with_data"] == ["lte"]
    assert ok["paths_unused"] is None  # single-path by design: nothing to flag
    wrong = verify.verdict("tcp-lte", mib(), [line("wifi", 3_000_000, mptcp=False)], [])
    assert wrong["invalid_reasons"] == ["tcp-lte: expected data on lte only, got wifi"]


def test_emulator_link_stats_are_summed_when_totals_are_missing() -> None:
    stats = [
        {"event": "link_stats", "path": "lte", "dir": "down", "bytes_in": 10, "bytes_out": 9},
        {"event": "link_stats", "path": "lte", "dir": "down", "bytes_in": 5, "bytes_out": 5},
        {"event": "link_stats", "path": "lte", "dir": "up", "bytes_in": 99, "bytes_out": 99},
    ]
    assert verify.emulator_down_bytes(stats) == {
        "lte": {"bytes_in": 15, "bytes_out": 14, "source": "link_stats"}
    }


def test_netstat_fixture_and_truncated_jsonl(tmp_path: Path) -> None:
    counters = verify.parse_netstat((FIXTURES / "proc-net-netstat.txt").read_text())
    assert "MPTcpExtMPCapableSYNRX" in counters and "TcpExtTCPLostRetransmit" in counters
    bad = tmp_path / "kernel-subflows.jsonl"
    bad.write_text(json.dumps({"event": "subflow"}) + '\n{"event": ')
    with pytest.raises(ValueError, match=r"kernel-subflows.jsonl:2: truncated"):
        verify.read_jsonl(bad)


def test_summary_table_shows_ratio_and_retransmissions(tmp_path: Path) -> None:
    lines = [line("wifi", 5_000_000, retrans=7), line("lte", 5_000_000)]
    wire = 5_000_000 + (5_000_000 // 1400) * 80
    result = verify.verdict("kernel", mib(**GOOD_MIB), lines, emulator(wire, wire))
    (tmp_path / "kernel-mptcp.json").write_text(json.dumps(result))
    text = verify.format_summary(result)
    assert "subflows_with_data=2" in text
    wifi_row = next(row for row in text.splitlines() if row.startswith("wifi"))
    assert wifi_row.split()[4:6] == ["1.00000", "7"]
    assert verify.main([str(tmp_path)]) == 0
    assert verify.main([str(tmp_path / "missing")]) == 2
