"""Topology: addresses, routes, path choice by client address, offloads, packet sizes,
NFQUEUE hooks, supervised processes and the control transfer (CONTRACTS §3, §5.6)."""

from __future__ import annotations

import json
import sys
import time

import pytest
from test_topology_fakes import REPO, needs_root

from metrics import schemas
from testbed.supervisor import EventLog
from testbed.topology import NFQUEUE_HOOKS, PATHS, Topology

pytestmark = [pytest.mark.netns, needs_root]

EXPECTED_ADDRESSES = {
    "client": {"wifi": "10.1.1.2", "lte": "10.2.1.2"},
    "router": {
        "c-wifi": "10.1.1.1",
        "s-wifi": "10.1.2.1",
        "c-lte": "10.2.1.1",
        "s-lte": "10.2.2.1",
    },
    "server": {"wifi": "10.1.2.2", "lte": "10.2.2.2"},
}

TCP_SINK = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7000)); s.listen(8); print("ready", flush=True)
while True:
    c, _ = s.accept()
    while c.recv(65536): pass
    c.close()
"""

TCP_SEND = """
import socket, sys
src, dst, nbytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = socket.create_connection((dst, 7000), timeout=20, source_address=(src, 0))
c.sendall(b"x" * nbytes); c.close()
"""


@pytest.fixture(scope="module")
def topo(tmp_path_factory):
    with Topology.create(tmp_path_factory.mktemp("topo")) as t:
        for role in ("server", "client"):
            sink = t.spawn(role, f"sink-{role}", [sys.executable, "-c", TCP_SINK])
            deadline = time.monotonic() + 10
            while "ready" not in sink.stdout_path.read_text() and time.monotonic() < deadline:
                time.sleep(0.05)
        yield t


def _counter_rules(topo: Topology, rules: list[list[str]]) -> None:
    topo.run("router", ["iptables", "-w", "-t", "mangle", "-F", "FORWARD"])
    for rule in rules:
        topo.run("router", ["iptables", "-w", "-t", "mangle", "-A", "FORWARD", *rule])


def _counters(topo: Topology) -> list[int]:
    out = topo.run("router", ["iptables", "-w", "-t", "mangle", "-L", "FORWARD", "-v", "-n", "-x"])
    lines = out.stdout.splitlines()[2:]
    return [int(line.split()[0]) for line in lines if line.strip()]


def test_namespace_names_and_addresses(topo):
    assert topo.ns.client == f"tb-{topo.hex6}-c"
    assert topo.ns.router == f"tb-{topo.hex6}-r"
    assert topo.ns.server == f"tb-{topo.hex6}-s"
    for role, expected in EXPECTED_ADDRESSES.items():
        links = json.loads(topo.run(role, ["ip", "-j", "addr", "show"]).stdout)
        found = {
            link["ifname"]: a["local"]
            for link in links
            for a in link.get("addr_info", [])
            if a["family"] == "inet" and link["ifname"] != "lo"
        }
        assert found == expected, role
        for link in links:
            assert "UP" in link["flags"], (role, link["ifname"])
            if link["ifname"] != "lo":
                assert link["mtu"] == 1500


def _route_dev(topo: Topology, role: str, *args: str) -> str:
    out = topo.run(role, ["ip", "-j", "route", "get", *args]).stdout
    return json.loads(out)[0]["dev"]


def test_policy_routing(topo):
    # client: the source address picks the path, whatever the server address
    for path, plan in PATHS.items():
        for server_addr in ("10.1.2.2", "10.2.2.2"):
            assert _route_dev(topo, "client", server_addr, "from", plan.client_addr) == path
    assert _route_dev(topo, "client", "10.2.2.2") == "wifi"  # main default via wifi
    # router: the input interface picks the server side
    for plan in PATHS.values():
        for server_addr in ("10.1.2.2", "10.2.2.2"):
            dev = _route_dev(topo, "router", server_addr, "from", plan.client_addr,
                             "iif", plan.router_client_side_iface)  # fmt: skip
            assert dev == plan.router_server_side_iface
    # server: replies go back by the client subnet's path
    assert _route_dev(topo, "server", "10.1.1.2") == "wifi"
    assert _route_dev(topo, "server", "10.2.1.2") == "lte"
    forwarding = topo.run("router", ["sysctl", "-n", "net.ipv4.ip_forward"]).stdout.strip()
    assert forwarding == "1"


def test_traffic_takes_the_client_addresss_path(topo):
    _counter_rules(topo, [["-i", "c-wifi"], ["-i", "c-lte"], ["-i", "s-wifi"], ["-i", "s-lte"]])
    # From the LTE address to the Wi-Fi server address: must cross c-lte/s-lte only.
    topo.run("client", [sys.executable, "-c", TCP_SEND, "10.2.1.2", "10.1.2.2", "100000"])
    c_wifi, c_lte, s_wifi, s_lte = _counters(topo)
    assert c_lte > 10 and s_lte > 5
    assert c_wifi == 0 and s_wifi == 0
    _counter_rules(topo, [["-i", "c-wifi"], ["-i", "c-lte"]])
    topo.run("client", [sys.executable, "-c", TCP_SEND, "10.1.1.2", "10.2.2.2", "100000"])
    c_wifi, c_lte = _counters(topo)
    assert c_wifi > 10 and c_lte == 0


def test_offloads_off_on_every_veth(topo):
    ends = [("client", "wifi"), ("client", "lte"), ("server", "wifi"), ("server", "lte")]
    ends += [("router", i) for i in ("c-wifi", "s-wifi", "c-lte", "s-lte")]
    for role, iface in ends:
        features = topo.run(role, ["ethtool", "-k", iface]).stdout
        for name in ("tcp-segmentation-offload", "generic-segmentation-offload",
                     "generic-receive-offload", "tx-checksumming"):  # fmt: skip
            assert f"{name}: off" in features, (role, iface, name)


def test_forwarded_packets_are_mtu_sized(topo):
    # With TSO/GSO/GRO on, the router would forward 64 KB super-packets.
    _counter_rules(topo, [["-m", "length", "--length", "1501:65535"],
                          ["-m", "length", "--length", "1400:1500"]])  # fmt: skip
    for src in ("10.1.1.2", "10.2.1.2"):  # up, on each path
        topo.run("client", [sys.executable, "-c", TCP_SEND, src, "10.1.2.2", "5000000"])
    for dst in ("10.1.1.2", "10.2.1.2"):  # down, on each path
        topo.run("server", [sys.executable, "-c", TCP_SEND, "0.0.0.0", dst, "5000000"])
    oversized, full_sized = _counters(topo)
    assert oversized == 0
    assert full_sized >= 4 * 5_000_000 // 1500 * 0.9


def test_supervised_process_logs_and_early_exit(topo):
    proc = topo.spawn("client", "shortlived", ["sh", "-c", "echo hello; echo oops >&2; exit 3"])
    assert proc.wait(10) == 3
    assert proc.stdout_path.read_text() == "hello\n"
    assert proc.stderr_path.read_text() == "oops\n"
    assert "exited early with status 3" in proc.died_early()
    assert schemas.check_file(topo.trial_dir / "testbed.jsonl") == []
    lines = [json.loads(x) for x in (topo.trial_dir / "testbed.jsonl").read_text().splitlines()]
    exits = [x for x in lines if x["event"] == "process_exit" and x["name"] == "shortlived"]
    assert exits and exits[0]["returncode"] == 3 and exits[0]["stopped_by_testbed"] is False
    starts = [x for x in lines if x["event"] == "process_start" and x["name"] == "shortlived"]
    assert starts[0]["namespace"] == topo.ns.client
    state = json.loads(topo.state_file.read_text())
    assert proc.pid in [p["pid"] for p in state["processes"]]


def test_spawn_passes_trial_clock_and_rt_priority(topo):
    proc = topo.spawn("router", "clock", ["sh", "-c", "echo $TESTBED_T0_NS; chrt -p $$"],
                      rt_priority=10)  # fmt: skip
    assert proc.wait(10) == 0
    t0, policy = proc.stdout_path.read_text().splitlines()[:2]
    assert int(t0) == topo.t0_ns
    assert "SCHED_FIFO" in policy


def test_nfqueue_hooks(tmp_path):
    with Topology.create(tmp_path) as topo:
        topo.install_nfqueue_hooks()
        rules = topo.run("router", ["iptables", "-w", "-t", "mangle", "-S", "FORWARD"]).stdout
        for queue, _path, _direction, iface in NFQUEUE_HOOKS:
            assert f"-A FORWARD -i {iface} -j NFQUEUE --queue-num {queue}" in rules


def test_control_transfer_unimpaired(tmp_path, monkeypatch):
    """The probe's measurements and control.jsonl on bare veths (no emulator)."""
    from testbed.probe import run_control
    from testbed.scenario import load_resolved
    from testbed.spec import TrialSpec
    from testbed.transports import none
    from testbed.trial import TrialContext

    spec = TrialSpec("control", "none", None, None, None, 0, 0, 1)
    scenario = load_resolved("control", REPO, 1)
    with Topology.create(tmp_path) as topo:
        events = EventLog(tmp_path / "testbed.jsonl", topo.t0_ns)
        ctx = TrialContext(spec, tmp_path, REPO, topo, topo.t0_ns, scenario, None, events)
        none.start(ctx)
        time.sleep(0.5)
        rows = run_control(ctx, duration_s=0.5)
    assert schemas.check_file(tmp_path / "control.jsonl") == []
    assert schemas.check_file(tmp_path / "testbed.jsonl") == []
    lines = [json.loads(x) for x in (tmp_path / "control.jsonl").read_text().splitlines()]
    assert [(x["path"], x["dir"]) for x in lines] == [
        ("wifi", "up"), ("wifi", "down"), ("lte", "up"), ("lte", "down")]  # fmt: skip
    for line in lines:
        assert line["event"] == "path_probe" and line["src"] == "testbed"
        assert line["goodput_bps"] > 10_000_000  # bare veth: far above any emulated rate
        assert 0 < line["rtt_ms_min"] <= line["rtt_ms_median"] <= line["rtt_ms_max"]
        assert line["configured_delay_ms"] in (20.0, 40.0)
    assert len(rows) == 4 and ctx.invalid_reasons == []
