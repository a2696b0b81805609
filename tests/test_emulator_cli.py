"""linkemu's command line: bad scenarios exit 2 naming the field and change nothing;
every shipped scenario, resolved by the testbed, is accepted by linkemu's strict parser."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from testbed.scenario import resolve_file

REPO = Path(__file__).resolve().parent.parent
LINKEMU = REPO / "emulator/target/release/linkemu"

pytestmark = pytest.mark.skipif(
    not LINKEMU.exists(), reason="build emulator/ first (cargo build --release)"
)


def link() -> dict:
    return {
        "rate": {"kind": "constant", "bps": 20e6},
        "delay_ms": 20.0,
        "jitter_ms": 0.0,
        "loss": {"kind": "none"},
        "queue": {"kind": "packets", "limit": 100},
        "schedule": [],
    }


def scenario() -> dict:
    paths = {p: {"up": link(), "down": link()} for p in ("wifi", "lte")}
    return {"schema": 1, "name": "t", "source": "t", "duration_s": 10.0, "paths": paths}


def run_linkemu(tmp_path: Path, doc: dict, *extra: str) -> subprocess.CompletedProcess:
    file = tmp_path / "scenario.json"
    file.write_text(json.dumps(doc))
    log = tmp_path / "emulator.jsonl"
    argv = [LINKEMU, "--scenario", file, "--seed", "1", "--t0-ns", "0", "--log", log, *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=20)


BAD = [
    ("unknown field", ("wifi", "up", "delay", 5), "unknown field `delay`"),
    ("wrong type", ("wifi", "down", "delay_ms", "20"), "paths.wifi.down.delay_ms"),
    ("negative rate", ("lte", "up", "rate", {"kind": "constant", "bps": -1}), "rate.bps"),
    ("probability > 1", ("lte", "down", "loss", {"kind": "bernoulli", "p": 2}), "loss.p"),
    (
        "missing trace",
        ("wifi", "up", "rate", {"kind": "trace", "file": "/nope.down", "packet_bytes": 1500}),
        "rate.file",
    ),
    (
        "ramp out of order",
        (
            "lte",
            "up",
            "schedule",
            [{"t_s": 5, "op": "ramp", "field": "delay_ms", "value": 1, "until_s": 2}],
        ),
        "schedule[0].until_s",
    ),
]


@pytest.mark.parametrize("what,change,expected", BAD, ids=[b[0] for b in BAD])
def test_bad_scenario_exits_2_names_the_field_and_writes_nothing(tmp_path, what, change, expected):
    path, direction, key, value = change
    doc = scenario()
    doc["paths"][path][direction][key] = value
    done = run_linkemu(tmp_path, doc)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr, done.stderr
    assert "scenario.json" in done.stderr
    assert not (tmp_path / "emulator.jsonl").exists()


def test_validate_prints_each_link(tmp_path):
    file = tmp_path / "s.json"
    file.write_text(json.dumps(scenario()))
    done = subprocess.run(
        [LINKEMU, "--scenario", file, "--validate"], capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [x.split(":")[0] for x in lines] == ["wifi/up", "wifi/down", "lte/up", "lte/down"]
    assert "droptail [packets=100]" in lines[0]


SHIPPED = sorted((REPO / "netem-scenarios").glob("*.toml"))


@pytest.mark.parametrize("toml", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_scenario_is_accepted(tmp_path, toml):
    resolved = resolve_file(toml, REPO, seed=1)
    file = tmp_path / "resolved.json"
    file.write_text(json.dumps(resolved))
    done = subprocess.run(
        [LINKEMU, "--scenario", file, "--validate"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"{toml.name}: {done.stderr}"
