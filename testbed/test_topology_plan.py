"""The generated address plan and the cross-traffic flow list (no namespaces needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testbed import crosstraffic
from testbed.scenario import load_resolved
from testbed.topology import (
    PATHS,
    TopologyError,
    cross_addresses,
    nfqueue_hooks,
    path_plans,
)

REPO = Path(__file__).resolve().parent.parent


def test_two_path_plan_is_the_old_fixed_one() -> None:
    wifi, lte = PATHS["wifi"], PATHS["lte"]
    assert (wifi.client_addr, wifi.server_addr, wifi.table) == ("10.1.1.2", "10.1.2.2", 101)
    assert (lte.client_addr, lte.router_server_side_iface, lte.table) == ("10.2.1.2", "s-lte", 102)
    assert nfqueue_hooks(PATHS) == [
        (0, "wifi", "up", "c-wifi"),
        (1, "wifi", "down", "s-wifi"),
        (2, "lte", "up", "c-lte"),
        (3, "lte", "down", "s-lte"),
    ]


def test_n_paths_get_their_own_blocks_in_file_order() -> None:
    plans = path_plans([f"p{i}" for i in range(8)])
    assert [p.client_addr for p in plans.values()] == [f"10.{n}.1.2" for n in range(1, 9)]
    assert plans["p7"].router_client_side_iface == "c-p7" and plans["p7"].table == 108
    assert nfqueue_hooks(plans)[-1] == (15, "p7", "down", "s-p7")
    for bad in ([], [f"p{i}" for i in range(9)]):
        with pytest.raises(TopologyError):
            path_plans(bad)


def test_cross_traffic_addresses_and_flows() -> None:
    assert cross_addresses(PATHS["lte"], 0) == ("10.2.1.100", "10.2.2.100")
    assert cross_addresses(PATHS["wifi"], 49) == ("10.1.1.149", "10.1.2.149")
    with pytest.raises(TopologyError):
        cross_addresses(PATHS["wifi"], 50)
    table1 = load_resolved("seed000-table1-0.01pct", REPO, 0)
    flows = crosstraffic.flows(table1)
    assert [f.flow for f in flows] == ["wifi.0", "wifi.1", "lte.0", "lte.1"]
    assert crosstraffic.flows_per_path(table1) == {"wifi": 2, "lte": 2}
    assert [crosstraffic.kernel_cc("match", cc) for cc in ("bbr", "cubic", "lia", "olia")] == [
        "bbr", "cubic", "reno", "reno"]  # fmt: skip
    assert crosstraffic.kernel_cc("cubic", "bbr") == "cubic"
    assert crosstraffic.flows(load_resolved("control", REPO, 0)) == []
