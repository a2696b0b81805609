"""N paths and cross-traffic endpoints in real namespaces: interfaces and addresses per
the generated plan, each path's traffic (the cross addresses' too) on its own router
interface, and teardown removing everything (CONTRACTS §3)."""

from __future__ import annotations

import pytest
from test_topology_fakes import namespaces, needs_root

from testbed.topology import Topology, cross_addresses

pytestmark = [pytest.mark.netns, needs_root]


def _addresses(topo: Topology, role: str) -> set[str]:
    out = topo.run(role, ["ip", "-o", "-4", "addr", "show"]).stdout
    return {line.split()[3].split("/")[0] for line in out.splitlines()}


def _router_iface_for(topo: Topology, src: str, dst: str) -> str:
    """The router interface a packet from src (client ns) to dst leaves the client by."""
    out = topo.run("client", ["ip", "route", "get", dst, "from", src]).stdout
    return out.split(" dev ")[1].split()[0]


def test_three_paths_with_cross_addresses_then_teardown(tmp_path) -> None:
    names = ["wifi", "lte", "fiveg"]
    with Topology.create(tmp_path, path_names=names, cross_flows={"lte": 2}) as topo:
        built = set(topo.ns.__dict__.values())
        assert built <= namespaces()
        client, server = _addresses(topo, "client"), _addresses(topo, "server")
        assert {"10.1.1.2", "10.2.1.2", "10.3.1.2", "10.2.1.100", "10.2.1.101"} <= client
        assert {"10.3.2.2", "10.2.2.100", "10.2.2.101"} <= server
        assert "10.1.1.100" not in client  # no cross flows on wifi
        assert {"c-fiveg", "s-fiveg"} <= {
            line.split(":")[1].strip().split("@")[0]
            for line in topo.run("router", ["ip", "-o", "link"]).stdout.splitlines()
        }
        # The client address picks the path, cross addresses included.
        assert _router_iface_for(topo, "10.3.1.2", "10.1.2.2") == "fiveg"
        cross_client, cross_server = cross_addresses(topo.plans["lte"], 1)
        assert _router_iface_for(topo, cross_client, cross_server) == "lte"
        assert _router_iface_for(topo, cross_client, "10.3.2.2") == "lte"
        plan = topo.address_plan()
        assert list(plan) == names
        assert plan["fiveg"]["nfqueue_down"] == 5
        assert plan["lte"]["cross_server"] == ["10.2.2.100", "10.2.2.101"]
        topo.spawn("server", "sleeper", ["sleep", "60"])
    assert not (built & namespaces())
