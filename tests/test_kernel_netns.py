"""Kernel MPTCP set-up, sampler and verdict on real namespaces.

The testbed's own topology (testbed/topology.py) without the emulator: the router's iptables
byte counters stand in for the emulator's link_totals, which checks the kernel-vs-wire byte
estimate.
An MPTCP transfer (Python sockets, IPPROTO_MPTCP) then must use two subflows; with random
loss on the wifi downlink (iptables statistic) the wifi subflow must show retransmissions.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernel_config import mptcp_setup, verify
from kernel_config.host_cc import HostAllowedCC
from metrics import schemas
from testbed.topology import Topology

pytestmark = [
    pytest.mark.netns,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces"),
]

SERVER = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_MPTCP)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.1.2.2", 8080)); s.listen(); print("ready", flush=True)
c, _ = s.accept(); n = int(c.recv(64)); chunk = b"x" * 65536
while n > 0:
    n -= c.send(chunk[: min(n, len(chunk))])
c.shutdown(socket.SHUT_WR); c.recv(1); c.close()
"""
CLIENT = r"""
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_MPTCP)
s.connect(("10.1.2.2", 8080)); s.send(sys.argv[1].encode()); got = 0
while (b := s.recv(65536)):
    got += len(b); time.sleep(0.0005)  # a slow reader, so both subflows get used
print(got)
"""


class Namespaces:
    """The testbed's own topology (testbed/topology.py: client, router, server; wifi and lte
    paths, policy routing, offloads off), without the emulator and its NFQUEUE hooks, plus
    iptables byte counters on the router's downlinks."""

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        self.prefix = topo.hex6
        self.names = {role: topo.ns.of(role) for role in ("client", "router", "server")}

    def run(self, role: str, argv: list[str]) -> subprocess.CompletedProcess:
        done = self.topo.run(role, argv, check=False)
        if done.returncode != 0:
            raise subprocess.CalledProcessError(done.returncode, argv, done.stdout, done.stderr)
        return done

    def add_downlink_counters(self) -> None:
        for iface in ("s-wifi", "s-lte"):  # downlink byte counters (the emulator's bytes_in)
            self.run("router", ["iptables", "-w", "-t", "mangle", "-A", "FORWARD", "-i", iface])

    def router_down_bytes(self) -> dict[str, int]:
        text = self.run(
            "router", ["iptables", "-w", "-t", "mangle", "-L", "FORWARD", "-v", "-x", "-n"]
        ).stdout
        out: dict[str, int] = {}
        for row in text.splitlines():
            fields = row.split()
            iface = next((f for f in fields if f in ("s-wifi", "s-lte")), None)
            if iface and fields[0].isdigit():
                out[iface.removeprefix("s-")] = int(fields[1])
        return out


@pytest.fixture
def namespaces(tmp_path: Path) -> Iterator[Namespaces]:
    with Topology.create(tmp_path / "topology") as topo:
        ns = Namespaces(topo)
        ns.add_downlink_counters()
        yield ns
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(name in listed for name in ns.names.values())


def transfer(ns: Namespaces, tmp_path: Path, total_bytes: int) -> dict:
    # The router's byte counters start from zero for each transfer.
    ns.run("router", ["iptables", "-w", "-t", "mangle", "-Z", "FORWARD"])
    mib_before = {
        role: verify.parse_netstat(ns.run(role, ["cat", "/proc/net/netstat"]).stdout)
        for role in ("client", "server")
    }
    out = tmp_path / "kernel-subflows.jsonl"
    t0_ns = time.monotonic_ns()
    sampler = subprocess.Popen(
        ["ip", "netns", "exec", ns.names["server"], sys.executable, "-m", "kernel_config.sampler",
         "--out", str(out), "--t0-ns", str(t0_ns), "--interval-ms", "100"]
    )  # fmt: skip
    server = subprocess.Popen(
        ["ip", "netns", "exec", ns.names["server"], sys.executable, "-c", SERVER],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        got = ns.run("client", [sys.executable, "-c", CLIENT, str(total_bytes)]).stdout
        assert int(got) == total_bytes
        server.wait(timeout=30)
        time.sleep(0.3)
    finally:
        for proc in (sampler, server):
            proc.terminate()
            proc.wait(timeout=10)
    mib_after = {
        role: verify.parse_netstat(ns.run(role, ["cat", "/proc/net/netstat"]).stdout)
        for role in ("client", "server")
    }
    wire = ns.router_down_bytes()
    emulator_lines = [
        {
            "event": "link_totals",
            "path": p,
            "dir": "down",
            "bytes_in_total": b,
            "bytes_out_total": b,
        }
        for p, b in wire.items()
    ]
    mib = {role: {"before": mib_before[role], "after": mib_after[role]} for role in mib_before}
    return verify.verdict("kernel", mib, verify.read_jsonl(out), emulator_lines)


@pytest.mark.parametrize("cc", ["bbr", "cubic"])
def test_two_subflows_carry_data_and_bytes_match_the_wire(
    namespaces: Namespaces, tmp_path: Path, cc: str
) -> None:
    host_cc = HostAllowedCC()
    trial = f"test-netns-{namespaces.prefix}"
    held = cc not in host_cc.current()
    if held:
        host_cc.allow(cc, os.getpid(), trial)
    try:
        mptcp_setup.setup_mptcp(namespaces.run, mptcp_setup.KernelSettings(cc=cc, sched="default"))
    finally:
        if held:
            host_cc.release(os.getpid(), trial)
    settings = mptcp_setup.describe(namespaces.run)
    assert settings["server"]["tcp_congestion_control"] == cc
    assert "10.2.1.2" in (settings["client"]["endpoints"] or "")
    # The sampler reads ss every 100 ms; once in three clean-clone runs of the suite one
    # subflow's count was 3.3 % above the router's (kernel 8.40 MB, wire 8.13 MB), not seen
    # again on re-runs. Until that is explained, a mismatch gets one more transfer, which
    # must match; the first mismatch is kept in the failure message.
    first_mismatch = None
    for attempt in range(2):
        out = tmp_path / f"attempt-{attempt}"
        out.mkdir()
        result = transfer(namespaces, out, 20_000_000)
        assert result["valid"], result["invalid_reasons"]
        # Real sampler lines carry the evidence of the never-established rule (state, rtt).
        assert result["paths_established"] == ["lte", "wifi"] and result["paths_unused"] == []
        assert result["paths_with_data"] == ["lte", "wifi"]
        ratios = {
            path: result["bytes_vs_emulator"][path]["kernel_over_emulator_in"]
            for path in ("wifi", "lte")
        }
        if all(abs(ratio - 1) < 0.01 for ratio in ratios.values()):
            break
        first_mismatch = first_mismatch or result["bytes_vs_emulator"]
    else:
        raise AssertionError(f"kernel vs wire bytes off by > 1 % twice: {first_mismatch}, {ratios}")
    tmp_path = out
    assert schemas.check_file(tmp_path / "kernel-subflows.jsonl") == []
    cc_names = {
        line["cc_state"]
        for line in verify.read_jsonl(tmp_path / "kernel-subflows.jsonl")
        if line["cc_state"]
    }
    assert cc_names == {cc}


def test_loss_on_wifi_shows_retransmissions_on_the_wifi_subflow(
    namespaces: Namespaces, tmp_path: Path
) -> None:
    mptcp_setup.setup_mptcp(namespaces.run, mptcp_setup.KernelSettings(cc="bbr", sched="default"))
    namespaces.run(
        "router",
        ["iptables", "-w", "-A", "FORWARD", "-i", "s-wifi", "-m", "statistic", "--mode", "random",
         "--probability", "0.02", "-j", "DROP"],
    )  # fmt: skip
    result = transfer(namespaces, tmp_path, 10_000_000)
    assert result["per_path"]["wifi"]["pkts_retrans"] > 0
    assert result["per_path"]["wifi"]["bytes_retrans"] > 0
    assert result["subflows_with_data"] == 2


def test_scratch_namespace_tries_agree_with_the_kernel_config() -> None:
    """Kernels without /proc/config.gz are probed by trying; here both ways must agree."""
    from kernel_config import capabilities, probe

    raw = probe.collect(try_features=False)
    if raw["config_text"] is None:
        pytest.skip("no kernel config on this machine to compare with")
    from_config = capabilities.parse(raw)["features"]
    tries = probe._scratch_tries()
    for name, present in tries.items():
        assert from_config[name]["present"] == present, name
    assert set(tries) >= {"sch_netem", "sch_fq", "sch_htb", "sch_tbf", "nfqueue", "xt_statistic"}
