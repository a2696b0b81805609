"""Probe parsing from captured text: the three kernel situations (kernel-config/fixtures/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel_config import capabilities, preflight
from kernel_config.probe import format_text

FIXTURES = Path(__file__).parent / "fixtures"


def caps_of(name: str) -> dict:
    return capabilities.parse(json.loads((FIXTURES / name).read_text()))


def test_upstream_fixture_is_this_kind_of_kernel() -> None:
    caps = caps_of("upstream-6.18.json")
    assert caps["situation"] == "upstream"
    assert caps["mptcp"]["enabled"] is True
    assert caps["mptcp"]["available_schedulers"] == ["default"]
    assert caps["mptcp"]["available_path_managers"] == ["kernel", "userspace"]
    assert caps["tcp_cc"]["available"] == ["reno", "bbr", "cubic"]
    assert caps["tcp_cc"]["allowed"] == ["reno", "bbr"]
    assert caps["features"]["sch_netem"] == {
        "present": False,
        "how": "kernel config CONFIG_NET_SCH_NETEM",
    }
    assert caps["features"]["nfqueue"]["present"] is True
    assert caps["features"]["xt_statistic"]["present"] is True
    assert caps["features"]["bpf_struct_ops"]["present"] is True
    assert caps["mptcp"]["bpf_scheduler_struct_ops"] is False
    meanings = caps["meanings"]
    assert "no netem: the user-space emulator will be used" in meanings
    assert any(
        m.startswith("cubic is available but not allowed inside namespaces") for m in meanings
    )


def test_devel_tree_lists_bpf_schedulers_and_uses_tries_without_config() -> None:
    caps = caps_of("mptcp-devel-bpf.json")
    assert caps["situation"] == "mptcp-devel-bpf"
    assert "bpf_rr" in caps["mptcp"]["available_schedulers"]
    assert caps["mptcp"]["bpf_scheduler_struct_ops"] is True
    assert caps["features"]["sch_netem"] == {
        "present": True,
        "how": "tried in a scratch network namespace",
    }
    assert any("bpftool struct_ops register" in m for m in caps["meanings"])


def test_out_of_tree_uses_old_sysctl_names_and_config_symbols() -> None:
    caps = caps_of("out-of-tree-0.95.json")
    assert caps["situation"] == "out-of-tree-0.9x"
    mptcp = caps["mptcp"]
    assert mptcp["sysctl_names"] == "out-of-tree"
    assert mptcp["enabled"] is True
    assert mptcp["path_manager"] == "fullmesh"
    assert mptcp["available_schedulers"] == ["default", "roundrobin", "redundant", "blest"]
    assert "netlink" not in mptcp["available_path_managers"]
    assert "olia" in caps["tcp_cc"]["available"]
    assert caps["features"]["bpf_struct_ops"]["present"] is False
    assert caps["features"]["sch_netem"]["present"] is True  # CONFIG_NET_SCH_NETEM=m


def test_no_mptcp_and_pre_6_15_kernel() -> None:
    raw = {"sysctl_text": "net.ipv4.tcp_available_congestion_control = reno cubic\n"}
    assert capabilities.parse(raw)["situation"] == "no-mptcp"
    old = {"sysctl_text": "net.mptcp.enabled = 1\nnet.mptcp.pm_type = 0\n"}
    mptcp = capabilities.parse(old)["mptcp"]
    assert mptcp["path_manager"] == "kernel"
    assert mptcp["available_schedulers"] == ["default"]


def test_bad_sysctl_line_is_reported_with_its_line_number() -> None:
    with pytest.raises(ValueError, match="line 2"):
        capabilities.parse_sysctl_text("net.mptcp.enabled = 1\nthis is not a sysctl\n")


def test_text_output_names_situation_and_meanings() -> None:
    text = format_text(caps_of("upstream-6.18.json"))
    assert "situation: upstream" in text
    assert "no netem: the user-space emulator will be used" in text


@pytest.mark.parametrize(
    ("fixture", "transport", "cc", "sched", "expected"),
    [
        (
            "upstream-6.18.json",
            "kernel",
            "bbr",
            "blest",
            ["--transport kernel --sched blest: this kernel offers schedulers: default"],
        ),
        (
            "upstream-6.18.json",
            "kernel",
            "lia",
            "default",
            ["--transport kernel --cc lia: this kernel offers congestion controls: reno bbr cubic"],
        ),
        ("upstream-6.18.json", "kernel", "cubic", "default", []),
        ("upstream-6.18.json", "tcp-lte", "cubic", "-", []),
        (
            "upstream-6.18.json",
            "tcp-wifi",
            "bbr",
            "default",
            [
                "--transport tcp-wifi --sched default: single-path TCP has no scheduler;"
                " use --sched -"
            ],
        ),
        ("mptcp-devel-bpf.json", "kernel", "bbr", "bpf_rr", []),
    ],
)
def test_preflight_reasons(
    fixture: str, transport: str, cc: str, sched: str, expected: list[str]
) -> None:
    caps = caps_of(fixture)
    found = preflight.reasons(transport, cc, sched, caps, is_root=True, have_mptcpize=True)
    assert found == expected


def test_preflight_refuses_out_of_tree_and_non_root_cubic() -> None:
    oot = caps_of("out-of-tree-0.95.json")
    found = preflight.reasons("kernel", "olia", "blest", oot, is_root=True, have_mptcpize=True)
    assert len(found) == 1 and "out-of-tree MPTCP 0.9x" in found[0]
    upstream = caps_of("upstream-6.18.json")
    found = preflight.reasons("tcp-wifi", "cubic", "-", upstream, is_root=False)
    assert found and "only root can add it" in found[0]


def test_preflight_reads_the_orchestrators_minimal_fallback_caps() -> None:
    minimal = {
        "mptcp": {"present": True, "enabled": True, "available_schedulers": ["default"]},
        "tcp_cc": {"available": ["reno", "bbr", "cubic"]},
    }
    ok = preflight.reasons("kernel", "bbr", "default", minimal, is_root=True, have_mptcpize=True)
    assert ok == []
    bad = preflight.reasons("kernel", "bbr", "rr", minimal, is_root=True, have_mptcpize=True)
    assert bad == ["--transport kernel --sched rr: this kernel offers schedulers: default"]
