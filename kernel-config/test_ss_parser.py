"""ss output parsing, from text captured on the build machine (kernel-config/fixtures/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_config.sampler import subflow_line
from kernel_config.ss_parser import parse_rate_bps, parse_ss

FIXTURES = Path(__file__).parent / "fixtures"


def test_mptcp_subflows_carry_token_flags_and_counters() -> None:
    records = parse_ss((FIXTURES / "ss-tinH-mptcp.txt").read_text())
    assert [r.peer_addr for r in records] == ["10.2.1.2", "10.1.1.2"]
    join, initial = records
    assert join.mptcp_flags == "Jec" and initial.mptcp_flags == "Mec"
    assert join.mptcp_token == initial.mptcp_token == "c89b94eb"
    assert initial.cc == "bbr"
    assert initial.integer("bytes_sent") == 25846217
    assert initial.srtt_ms == pytest.approx(0.441)
    assert initial.rttvar_ms == pytest.approx(0.024)
    assert initial.number("pacing_rate") == 2747579936
    # seq: from tcp-ulp-mptcp must not be mistaken for a TCP field
    assert "seq" in initial.info and initial.info["segs_out"] == "18472"


def test_plain_tcp_socket_has_no_token_and_unacked_is_read() -> None:
    (record,) = parse_ss((FIXTURES / "ss-tinH-tcp.txt").read_text())
    assert record.mptcp_flags is None and record.mptcp_token is None
    assert record.integer("unacked") == 45
    line = subflow_line(record, 5, cc=record.cc, token=None, final=False, mptcp=False)
    assert line["conn"] == "10.1.2.2:9001-10.1.1.2:59378"
    assert line["path"] == "wifi"
    assert line["cwnd_bytes"] == 186 * 1448
    assert line["inflight_bytes"] == 45 * 1448
    assert line["wire_bytes_sent_total"] == 33381016 + 23201 * 52


def test_destroy_events_give_final_counters_and_retransmissions() -> None:
    records = parse_ss((FIXTURES / "ss-tinEH-destroy.txt").read_text())
    assert [r.state for r in records] == ["UNCONN", "UNCONN"]
    lte = records[1]
    assert lte.cc is None  # ss -E shows no CC name
    assert lte.pkts_retrans_total == 66
    assert lte.integer("bytes_retrans") == 93556
    # 80 header bytes per data segment, 64 per pure ACK (measured against iptables counters)
    assert lte.wire_bytes_sent_estimate(mptcp=True) == 24167985 + 17276 * 80 + 5 * 64


def test_rates_with_units_and_bad_lines() -> None:
    assert parse_rate_bps("1.5Mbps") == 1_500_000
    assert parse_rate_bps("42bps") == 42
    assert parse_rate_bps("fast") is None
    with pytest.raises(ValueError, match="line 1"):
        parse_ss("\tinfo before socket\n")
    with pytest.raises(ValueError, match="cannot read socket line"):
        parse_ss("garbage\n")


def test_sampler_tags_destroy_events_with_what_earlier_samples_saw() -> None:
    import io
    import json

    from kernel_config.sampler import SubflowSampler

    out = io.StringIO()
    sampler = SubflowSampler(out, t0_ns=0, port=9000)
    sampler.write(parse_ss((FIXTURES / "ss-tinH-mptcp.txt").read_text()), final=False)
    destroyed = (FIXTURES / "ss-tinEH-destroy.txt").read_text()
    destroyed = destroyed.replace("10.1.1.2:39164", "10.1.1.2:58938")  # seen before: MPTCP
    sampler.write(parse_ss(destroyed), final=True)
    lines = [json.loads(text) for text in out.getvalue().splitlines()]
    assert [(x["path"], x["final"], x["mptcp"]) for x in lines] == [
        ("lte", False, True),
        ("wifi", False, True),
        ("wifi", True, True),  # token and CC carried over from the sample
        ("lte", True, None),  # never sampled: unknown
    ]
    assert lines[2]["conn"] == "c89b94eb" and lines[2]["cc_state"] == "bbr"
    assert lines[3]["conn"] == "10.1.2.2:9000-10.2.1.2:48183"
    assert all(x["src"] == "kernel-ss" and x["event"] == "subflow" for x in lines)
