"""Shared-bottleneck rate and cross-traffic CBR accuracy (docs/EMULATOR.md, "Topologies").

Builds a real trial topology (testbed.topology) from a scenario written here, starts
linkemu and the cross-traffic generators (testbed.crosstraffic) exactly as a trial does,
and measures:

* `bottleneck`: three kernel TCP flows (CUBIC; two on path wifi, one on path lte) through
  one 20 Mbit/s shared link (down). The shared link's departure rate, from the emulator's
  link_stats (bytes_out of the bottleneck, IP bytes), over the flows' steady part (from
  5 s after start to 1 s before stop), against the configured rate.
* `cbr`: one UDP constant-bit-rate flow of 10 Mbit/s (1200-byte IP packets) on a 100
  Mbit/s path. The receiver's IP-byte rate between its first and last packet against the
  configured rate, and the emulator's arrivals on that link.

    sudo .venv/bin/python bench/topology_bench.py [--duration-s 20] [--out bench/topology.json]

Root is needed (namespaces). Nothing else runs in the namespaces; the machine may be busy.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from testbed import crosstraffic
from testbed.scenario import load_resolved
from testbed.supervisor import EventLog
from testbed.topology import Topology

REPO = Path(__file__).resolve().parent.parent

BOTTLENECK_BPS = 20_000_000
CBR_BPS = 10_000_000

# Both scenarios: the name, then a 100 Mbit/s Wi-Fi path; {duration} is filled in per run.
HEAD = """
name = "bench-{name}"
duration_s = {{duration}}
[paths.wifi]
rate = {{{{ bps = 100_000_000 }}}}
delay_ms = 10.0
"""
SCENARIOS = {
    "bottleneck": HEAD.format(name="bottleneck")
    + f"""[paths.lte]
rate = {{{{ bps = 100_000_000 }}}}
delay_ms = 20.0
[bottlenecks.core]
paths = ["wifi", "lte"]
directions = ["down"]
rate = {{{{ bps = {BOTTLENECK_BPS} }}}}
delay_ms = 5.0
[[cross_traffic]]
kind = "tcp_bulk"
path = "wifi"
count = 2
cc = "cubic"
[[cross_traffic]]
kind = "tcp_bulk"
path = "lte"
count = 1
cc = "cubic"
""",
    "cbr": HEAD.format(name="cbr")
    + f"""[[cross_traffic]]
kind = "udp_cbr"
path = "wifi"
rate_bps = {CBR_BPS}
packet_bytes = 1200
""",
}


def run_one(kind: str, duration_s: float, work: Path) -> dict:
    from testbed.trial import start_emulator

    toml = work / f"{kind}.toml"
    toml.write_text(SCENARIOS[kind].format(duration=float(duration_s)))
    scenario = load_resolved(str(toml), REPO, 1)
    trial_dir = work / kind
    (trial_dir / "logs").mkdir(parents=True, exist_ok=True)
    (trial_dir / "scenario.json").write_text(json.dumps(scenario))
    t0_ns = time.monotonic_ns()
    events = EventLog(trial_dir / "testbed.jsonl", t0_ns)
    with Topology.create(
        trial_dir,
        t0_ns=t0_ns,
        events=events,
        path_names=list(scenario["paths"]),
        cross_flows=crosstraffic.flows_per_path(scenario),
    ) as topo:
        ctx = SimpleNamespace(
            spec=SimpleNamespace(cc="cubic"), dir=trial_dir, repo=REPO, topo=topo,
            t0_ns=t0_ns, scenario=scenario, events=events, spawn=topo.spawn,
        )  # fmt: skip
        topo.install_nfqueue_hooks()
        emulator = start_emulator(ctx, 1)  # type: ignore[arg-type]
        crosstraffic.start(ctx)
        time.sleep(duration_s + 3)
        emulator.terminate()
    return analyse(kind, trial_dir, duration_s)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def analyse(kind: str, trial_dir: Path, duration_s: float) -> dict:
    emu = _lines(trial_dir / "emulator.jsonl")
    cross = _lines(trial_dir / crosstraffic.LOG_NAME)
    start_ns = next(r["t_ns"] for r in emu if r["event"] == "start")
    if kind == "bottleneck":
        lo, hi = start_ns + 5e9, start_ns + (duration_s - 1) * 1e9
        rows = [r for r in emu if r["event"] == "link_stats" and r.get("bottleneck") == "core"
                and lo <= r["t_ns"] - r["interval_ms"] * 1e6 and r["t_ns"] <= hi]  # fmt: skip
        out_bytes = sum(r["bytes_out"] for r in rows)
        seconds = sum(r["interval_ms"] for r in rows) / 1000
        measured = out_bytes * 8 / seconds
        flows = {}
        for r in emu:
            if r["event"] == "bottleneck_flow_totals":
                flows = {f"{f['src']}>{f['dst']} ({f['from_path']})": f["bytes_out"]
                         for f in r["flows"]}  # fmt: skip
        goodputs = {r["flow"]: r.get("goodput_bps") for r in cross
                    if r["event"] == "flow_totals" and r["role"] == "receiver"}  # fmt: skip
        return {"configured_bps": BOTTLENECK_BPS, "measured_bps": measured,
                "error_pct": 100 * (measured / BOTTLENECK_BPS - 1), "window_s": seconds,
                "drops_queue": sum(r["drops_queue"] for r in rows),
                "bottleneck_flow_bytes_out": flows, "receiver_goodput_bps": goodputs}  # fmt: skip
    totals = next(r for r in cross if r["event"] == "flow_totals" and r["role"] == "receiver")
    sender = next(r for r in cross if r["event"] == "flow_totals" and r["role"] == "sender")
    # n packets over n - 1 inter-arrival gaps: the rate is (n - 1) x size / (last - first).
    size = totals["ip_bytes"] / totals["packets"]
    span_s = (totals["last_byte_t_ns"] - totals["first_byte_t_ns"]) / 1e9
    measured = (totals["packets"] - 1) * size * 8 / span_s
    return {"configured_bps": CBR_BPS, "measured_bps": measured,
            "error_pct": 100 * (measured / CBR_BPS - 1), "span_s": span_s,
            "packets_received": totals["packets"], "packets_sent": sender["packets"]}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration-s", type=float, default=20.0)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "topology.json")
    parser.add_argument("--only", choices=sorted(SCENARIOS), default=None)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="topology-bench-") as tmp:
        for kind in [args.only] if args.only else sorted(SCENARIOS):
            results[kind] = run_one(kind, args.duration_s, Path(tmp))
            r = results[kind]
            print(f"{kind}: configured {r['configured_bps'] / 1e6:.3f} Mbit/s, measured "
                  f"{r['measured_bps'] / 1e6:.3f} Mbit/s ({r['error_pct']:+.2f} %)")  # fmt: skip
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
