"""Tests of testbed/scenario.py on the shipped scenario files."""

from __future__ import annotations

from pathlib import Path

from testbed.scenario import list_scenarios, load_resolved

REPO = Path(__file__).resolve().parent.parent


def test_control_resolves_to_the_contract_shape() -> None:
    resolved = load_resolved("control", REPO, seed=1)
    assert resolved["schema"] == 1
    assert resolved["name"] == "control"
    assert resolved["source"] == "netem-scenarios/control.toml"
    wifi_down = resolved["paths"]["wifi"]["down"]
    assert wifi_down["rate"] == {"kind": "constant", "bps": 20_000_000}
    assert wifi_down["loss"] == {"kind": "none"}
    assert wifi_down["schedule"] == []
    # default queue: one BDP (20 Mbit/s x 40 ms RTT = 66.7 packets of 1500 bytes)
    assert wifi_down["queue"] == {"kind": "packets", "limit": 67}
    assert set(resolved["paths"]) == {"wifi", "lte"}
    assert set(resolved["paths"]["lte"]) == {"up", "down"}


def test_list_contains_control() -> None:
    assert "control" in list_scenarios(REPO)
