"""Cross traffic and a shared bottleneck end to end, short (bench/topology_bench.py is the
measurement): real namespaces, linkemu and the generators (about 20 s)."""

from __future__ import annotations

import json

import pytest
from test_topology_fakes import needs_root

from bench import topology_bench as bench

pytestmark = [pytest.mark.netns, needs_root]


def test_three_flows_share_the_bottleneck_and_cbr_holds_its_rate(tmp_path) -> None:
    shared = bench.run_one("bottleneck", 8.0, tmp_path)
    # A backlogged 20 Mbit/s link, fed from two paths, releases at its rate.
    assert abs(shared["error_pct"]) < 2, shared
    flows = shared["bottleneck_flow_bytes_out"]
    assert len(flows) == 3 and all(v > 0 for v in flows.values()), flows
    assert {k.split("(")[1] for k in flows} == {"wifi)", "lte)"}
    lines = [json.loads(x) for x in (tmp_path / "bottleneck" / "cross-traffic.jsonl").open()]
    stats = [x for x in lines if x["event"] == "flow_stats"]
    assert {x["flow"] for x in stats} == {"wifi.0", "wifi.1", "lte.0"}
    assert all(x["t_ns"] > 0 and x["role"] == "receiver" for x in stats)
    cbr = bench.run_one("cbr", 4.0, tmp_path)
    assert abs(cbr["error_pct"]) < 2, cbr
    # Every packet sent at 10 Mbit/s through a 20 Mbit/s link arrives on a quiet machine; a
    # loaded one may lose a few in the receiver's socket buffer, within the rate's 2 %.
    assert cbr["packets_received"] >= 0.98 * cbr["packets_sent"], cbr
