"""linkemu end to end: a real topology (testbed.topology), the NFQUEUE hooks, a scenario,
and measurements taken from inside the namespaces with linkemu-probe (UDP, one-way
delay on the shared CLOCK_MONOTONIC, loss from sequence numbers)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from metrics import schemas
from testbed.linkprobe import LINKEMU, ProbeFlow, constant_link
from testbed.topology import Topology

REPO = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.netns,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces"),
    pytest.mark.skipif(
        not LINKEMU.exists(), reason="build emulator/ first (cargo build --release)"
    ),
]

WIFI_LOSS_P = 0.05
STEP_AT_S = 3.0


def link(rate_bps: float, delay_ms: float, loss: dict | None = None, schedule=None) -> dict:
    return constant_link(rate_bps, delay_ms, loss=loss, schedule=schedule)


SCENARIO = {
    "schema": 1,
    "name": "emu-test",
    "source": "tests/test_emulator_netns.py",
    "duration_s": 60.0,
    "paths": {
        "wifi": {
            "up": link(20e6, 10.0, {"kind": "bernoulli", "p": WIFI_LOSS_P}),
            "down": link(20e6, 10.0),
        },
        "lte": {
            "up": link(10e6, 30.0),  # becomes a trace link: see start_emulator
            "down": link(
                10e6,
                30.0,
                schedule=[{"t_s": STEP_AT_S, "op": "step", "field": "delay_ms", "value": 60.0}],
            ),
        },
    },
}


def Probe(  # noqa: N802 (reads as the class it builds)
    topo: Topology,
    tag: str,
    path: str,
    direction: str,
    port: int,
    pps: int,
    count: int,
    payload_bytes: int = 100,
) -> ProbeFlow:
    """A probe flow whose rows land in the trial folder; the sender runs at normal priority."""
    return ProbeFlow(topo, tag, path, direction, port=port, pps=pps, count=count,
                     out=topo.trial_dir / f"probe-{tag}.csv", payload_bytes=payload_bytes,
                     idle_s=1.5, sender_rt_priority=None)  # fmt: skip


def start_emulator(topo: Topology, name: str, seed: int, *extra: object) -> tuple:
    # lte/up: a Mahimahi trace with two 1500-byte opportunities every 2 ms (12 Mbit/s).
    trace = topo.trial_dir / "two-every-2ms.up"
    trace.write_text("".join(f"{ms}\n{ms}\n" for ms in range(2, 1001, 2)))
    scenario = json.loads(json.dumps(SCENARIO))
    scenario["paths"]["lte"]["up"]["rate"] = {
        "kind": "trace",
        "file": str(trace),
        "packet_bytes": 1500,
    }
    scenario_path = topo.trial_dir / "scenario.json"
    scenario_path.write_text(json.dumps(scenario))
    log = topo.trial_dir / f"{name}.jsonl"
    argv = [LINKEMU, "--scenario", scenario_path, "--seed", seed, "--t0-ns", topo.t0_ns,
            "--log", log, *extra]  # fmt: skip
    proc = topo.spawn("router", name, argv, rt_priority=50)
    time.sleep(0.3)
    assert proc.running(), proc.stderr_path.read_text()
    return proc, log


def one_way_ms(rows: np.ndarray) -> np.ndarray:
    return (rows[:, 2] - rows[:, 1]) / 1e6


@pytest.fixture(scope="module")
def topo(tmp_path_factory):
    with Topology.create(tmp_path_factory.mktemp("emu")) as t:
        yield t


@pytest.fixture(scope="module")
def baseline_ms(topo) -> float:
    """One-way latency of the bare path (kernel, veth, probe), before any hook exists."""
    probe = Probe(topo, "baseline", "wifi", "up", 8000, pps=500, count=500)
    base = float(np.median(one_way_ms(probe.rows())))
    assert base < 1.0, f"bare path one-way latency {base} ms: machine too loaded?"
    topo.install_nfqueue_hooks()
    return base


@pytest.fixture(scope="module")
def run(topo, baseline_ms):
    """One emulator run with three concurrent probes; returns their data and the log."""
    emu, log = start_emulator(topo, "linkemu", seed=7)
    start_line = json.loads(log.read_text().splitlines()[0])
    emu_start_mono_ns = topo.t0_ns + start_line["t_ns"]
    lossy = Probe(topo, "wifi-up", "wifi", "up", 8001, pps=1000, count=4000)
    # 25 Mbit/s of UDP (1400-byte payloads) into a 20 Mbit/s link.
    flood = Probe(topo, "wifi-down", "wifi", "down", 8002, pps=2200, count=6600,
                  payload_bytes=1400)  # fmt: skip
    step = Probe(topo, "lte-down", "lte", "down", 8003, pps=500, count=2500)
    # 16 Mbit/s into the 12 Mbit/s trace link.
    traced = Probe(topo, "lte-up", "lte", "up", 8005, pps=1400, count=4200, payload_bytes=1400)
    data = {"lossy": lossy.rows(), "lossy_lost": lossy.lost(), "flood": flood.rows()}
    data["traced"] = traced.rows()
    data["step"] = step.rows()
    emu.terminate()
    assert emu.returncode == 0, emu.stderr_path.read_text()
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    return {**data, "lines": lines, "log": log, "emu_start_mono_ns": emu_start_mono_ns}


def test_delay_matches_the_scenario(run, baseline_ms):
    added = one_way_ms(run["lossy"]) - baseline_ms
    serialisation_ms = 128 * 8 / 20e6 * 1e3
    median, p95, p99 = np.median(added), *np.percentile(added, [95, 99])
    assert abs(median - (10.0 + serialisation_ms)) < 0.5, f"median {median} ms"
    # The tail bounds the emulator's timing plus the host's: here four probe flows (one of
    # them 25 Mbit/s) share two cores with the emulator, and a CI run of a quiet machine once
    # saw p99 at +4.7 ms with the median on target. 95 % within 3 ms is the claim under
    # load; p99 within 10 ms still catches a release timer that slips by a scheduling tick.
    # The idle accuracy (p99 error <= 1 ms) is bench/emulator.sh's (docs/EMULATOR.md).
    assert p95 < 10.0 + serialisation_ms + 3.0, f"p95 {p95} ms"
    assert p99 < 10.0 + serialisation_ms + 10.0, f"p99 {p99} ms"


def test_bernoulli_loss_rate_and_counters_agree(run):
    lost = len(run["lossy_lost"])
    # 5 % of 4000: mean 200, sd 13.8; 4 sd either way.
    assert 145 <= lost <= 255, lost
    totals = {(x["path"], x["dir"]): x for x in run["lines"] if x["event"] == "link_totals"}
    wifi_up = totals[("wifi", "up")]
    assert wifi_up["drops_random_total"] == lost
    assert wifi_up["pkts_in_total"] == 4000
    assert wifi_up["pkts_out_total"] == 4000 - lost


def received_rate_bps(rows: np.ndarray, packet_bytes: int) -> float:
    recv_ns = np.sort(rows[:, 2])
    # Skip the first and last 0.3 s (queue filling, sender stopping).
    keep = (recv_ns > recv_ns[0] + 0.3e9) & (recv_ns < recv_ns[-1] - 0.3e9)
    span_s = (recv_ns[keep][-1] - recv_ns[keep][0]) / 1e9
    return (keep.sum() - 1) * packet_bytes * 8 / span_s


def test_rate_limits_an_overloading_flow(run):
    rate_bps = received_rate_bps(run["flood"], 1400 + 28)
    assert abs(rate_bps / 20e6 - 1) < 0.03, rate_bps
    totals = {(x["path"], x["dir"]): x for x in run["lines"] if x["event"] == "link_totals"}
    assert totals[("wifi", "down")]["drops_queue_total"] > 500


def test_trace_link_delivers_the_trace_rate(run):
    # Under overload the queue never empties, so no opportunity bytes are wasted:
    # 2 x 1500 bytes every 2 ms = 12 Mbit/s, i.e. 1050.4 packets of 1428 bytes per s.
    packets_per_s = received_rate_bps(run["traced"], 1) / 8
    expected = 12e6 / (1428 * 8)
    assert abs(packets_per_s / expected - 1) < 0.02, packets_per_s


def test_schedule_step_changes_the_delay_at_its_time(run, baseline_ms):
    rows = run["step"]
    sent_s = (rows[:, 1] - run["emu_start_mono_ns"]) / 1e9
    added = one_way_ms(rows) - baseline_ms
    before = added[sent_s < STEP_AT_S - 0.1]
    after = added[sent_s > STEP_AT_S + 0.1]
    assert len(before) > 200 and len(after) > 200
    assert abs(np.median(before) - 30.1) < 0.5, np.median(before)
    assert abs(np.median(after) - 60.1) < 0.5, np.median(after)
    changes = [x for x in run["lines"] if x["event"] == "schedule"]
    assert [(c["path"], c["dir"], c["op"], c["field"], c["value"]) for c in changes] == [
        ("lte", "down", "step", "delay_ms", 60.0)
    ]
    start = next(x for x in run["lines"] if x["event"] == "start")
    applied_s = (changes[0]["t_ns"] - start["t_ns"]) / 1e9
    assert abs(applied_s - STEP_AT_S) < 0.01, applied_s


def test_log_lines_follow_the_contract(run):
    assert schemas.check_file(run["log"], "emulator") == []  # docs/schemas/emulator.v1
    lines = run["lines"]
    assert lines[0]["event"] == "start" and lines[0]["backend"] == "nfqueue"
    assert lines[0]["seed"] == 7 and lines[0]["scenario"] == "emu-test"
    stats = [x for x in lines if x["event"] == "link_stats"]
    fields = {"t_ns", "src", "event", "path", "dir", "interval_ms", "pkts_in", "bytes_in",
              "pkts_out", "bytes_out", "drops_random", "drops_queue", "drops_outage",
              "queue_pkts", "queue_bytes", "sojourn_mean_ms", "sojourn_max_ms", "rate_bps",
              "delay_ms", "loss_p"}  # fmt: skip
    assert stats and all(set(x) == fields for x in stats)
    assert len(stats) % 4 == 0
    times = sorted({x["t_ns"] for x in stats})
    assert np.all(np.abs(np.diff(times) - 100_000_000) < 1_000), "stats lines not 100 ms apart"
    # Interval counters add up to the totals.
    totals = {(x["path"], x["dir"]): x for x in lines if x["event"] == "link_totals"}
    assert len(totals) == 4
    for (path, direction), total in totals.items():
        mine = [x for x in stats if (x["path"], x["dir"]) == (path, direction)]
        assert sum(x["pkts_in"] for x in mine) <= total["pkts_in_total"]
    wifi_down = [x for x in stats if (x["path"], x["dir"]) == ("wifi", "down") and x["pkts_out"]]
    assert max(x["sojourn_max_ms"] for x in wifi_down) > 10.0
    assert all(x["rate_bps"] == 20_000_000 for x in wifi_down)
    # The kernel never dropped a packet behind the emulator's back.
    kernel = [x for x in lines if x["event"] == "nfqueue_totals"]
    assert [(x["path"], x["dir"], x["queue"]) for x in kernel] == [
        ("wifi", "up", 0), ("wifi", "down", 1), ("lte", "up", 2), ("lte", "down", 3)
    ]  # fmt: skip
    assert all(
        x["kernel_queue_dropped_total"] + x["kernel_user_dropped_total"] == 0 for x in kernel
    )


def test_same_seed_same_loss_pattern_and_packet_log(topo, run):
    packet_log = topo.trial_dir / "packets.log"
    emu, _ = start_emulator(topo, "linkemu-again", 7, "--packet-log", packet_log)
    again = Probe(topo, "wifi-up-again", "wifi", "up", 8004, pps=1000, count=4000)
    lost = again.lost()
    emu.terminate()
    assert emu.returncode == 0
    assert lost == run["lossy_lost"]
    lines = packet_log.read_text().splitlines()
    assert lines[0].startswith("# linkemu packet log")
    wifi_up = [x.split() for x in lines if " wifi/up " in x and not x.startswith("#")]
    kinds = [x[2] for x in wifi_up]
    assert kinds.count("+") == 4000
    assert kinds.count("d") == len(lost)
    assert kinds.count("-") == 4000 - len(lost)
    sojourns_ms = [float(x[4]) for x in wifi_up if x[2] == "-"]
    assert all(10.0 <= s_ms < 13.0 for s_ms in sojourns_ms), (min(sojourns_ms), max(sojourns_ms))
