"""Accuracy benchmark of the user-space link emulator (linkemu) on this machine.

For each path at 100 Mbit/s and 25 ms one-way delay it measures:
* the achieved rate of a saturating TCP (cubic) download vs the configured rate;
* the added one-way delay, idle and under that load, vs the configured delay
  (UDP probe `linkemu-probe`; sender and receiver share CLOCK_MONOTONIC);
* the loss rate of 1 % Bernoulli over >= 100k packets, and Gilbert-Elliott loss
  rate and mean burst length vs theory;
* linkemu's CPU use (from /proc/<pid>/stat) while both paths carry 100 Mbit/s.

Run: `bench/emulator.sh` (writes bench/emulator.json and prints a table).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from metrics.stats import binomial_rate_band
from testbed.linkprobe import LINKEMU, PROBE, ProbeFlow, constant_link
from testbed.topology import PATHS, Topology

REPO = Path(__file__).resolve().parent.parent

RATE_BPS = 100e6
DELAY_MS = 25.0
PROBE_PAYLOAD_BYTES = 100
IP_UDP_HEADER_BYTES = 28
TCP_IP_HEADER_BYTES = 52  # IPv4 20 + TCP 20 + timestamps option 12
EMULATOR_RT_PRIORITY = 50
CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
GE = {"p_good_to_bad": 0.01, "p_bad_to_good": 0.3, "loss_in_good": 0.0, "loss_in_bad": 1.0}
BERNOULLI_P = 0.01


def link(loss: dict | None = None) -> dict:
    # One bandwidth-delay product (RTT 50 ms) so one cubic flow can fill the link.
    return constant_link(RATE_BPS, DELAY_MS, loss=loss, queue={"kind": "ms", "limit": 50.0})


def scenario(name: str, links: dict[tuple[str, str], dict]) -> dict:
    paths = {p: {d: links.get((p, d), link()) for d in ("up", "down")} for p in ("wifi", "lte")}
    return {
        "schema": 1,
        "name": name,
        "source": "bench/emulator_bench.py",
        "duration_s": 600.0,
        "paths": paths,
    }


def load_average() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / CLOCK_TICKS_PER_S, int(fields[12]) / CLOCK_TICKS_PER_S


class Bench:
    def __init__(self, topo: Topology, work: Path, tick_us: int) -> None:
        self.topo = topo
        self.work = work
        self.tick_us = tick_us
        self.port = 9000
        self.emulator = None

    def next_port(self) -> int:
        self.port += 1
        return self.port

    def start_emulator(self, sc: dict, seed: int = 1) -> None:
        self.stop_emulator()
        path = self.work / f"scenario-{sc['name']}.json"
        path.write_text(json.dumps(sc, indent=1))
        log = self.work / f"emulator-{sc['name']}.jsonl"
        argv = [LINKEMU, "--scenario", path, "--seed", seed, "--t0-ns", self.topo.t0_ns,
                "--log", log, "--tick-us", self.tick_us]  # fmt: skip
        self.emulator = self.topo.spawn(
            "router", f"linkemu-{sc['name']}", argv, rt_priority=EMULATOR_RT_PRIORITY
        )
        time.sleep(0.3)
        if not self.emulator.running():
            raise RuntimeError(f"linkemu exited: {self.emulator.stderr_path.read_text()}")

    def stop_emulator(self) -> None:
        if self.emulator is not None:
            self.emulator.terminate()
            self.emulator = None

    def start_probe(self, path: str, direction: str, pps: float, count: int, tag: str):
        """Starts receiver and sender; returns a function that waits and returns the rows."""
        flow = ProbeFlow(
            self.topo, f"{tag}-{path}-{direction}", path, direction, port=self.next_port(),
            pps=pps, count=count, out=self.work / f"probe-{tag}-{path}-{direction}.csv",
            payload_bytes=PROBE_PAYLOAD_BYTES, idle_s=2,
        )  # fmt: skip
        return flow.rows

    def start_iperf(self, path: str, seconds: int, tag: str):
        """A saturating cubic download (server → client) on `path`."""
        plan = PATHS[path]
        port = self.next_port()
        server = self.topo.spawn(
            "server",
            f"iperf-s-{tag}-{path}",
            ["iperf3", "-s", "-1", "-p", port, "-B", plan.server_addr],  # fmt: skip
        )
        time.sleep(0.3)
        client = self.topo.spawn(
            "client",
            f"iperf-c-{tag}-{path}",
            [
                "iperf3",
                "-c",
                plan.server_addr,
                "-B",
                plan.client_addr,
                "-p",
                port,
                "-R",
                "-t",
                seconds,
                "-C",
                "cubic",
                "-J",
            ],  # fmt: skip
        )

        def finish(skip_s: float = 2.0) -> dict:
            client.wait(seconds + 30)
            server.wait(10)
            result = json.loads(client.stdout_path.read_text())
            mss = result["start"].get("tcp_mss_default") or 1448
            # Whole intervals after slow start; the last one may be a short remainder.
            steady = [iv["sum"] for iv in result["intervals"][:-1] if iv["sum"]["start"] >= skip_s]
            goodput = sum(iv["bytes"] * 8 for iv in steady) / sum(iv["seconds"] for iv in steady)
            return {
                "goodput_bps": goodput,
                "mss_bytes": mss,
                "ip_rate_bps": goodput * (mss + TCP_IP_HEADER_BYTES) / mss,
                "retransmits": result["end"]["sum_sent"].get("retransmits"),
            }

        return finish


def one_way_ms(rows: np.ndarray) -> np.ndarray:
    return (rows[:, 2] - rows[:, 1]) / 1e6


def expected_ms() -> float:
    serialisation_ms = (PROBE_PAYLOAD_BYTES + IP_UDP_HEADER_BYTES) * 8 / RATE_BPS * 1e3
    return DELAY_MS + serialisation_ms


def pct(x: np.ndarray, q: float) -> float:
    return round(float(np.percentile(x, q)), 4)


def loss_stats(rows: np.ndarray, count: int) -> dict:
    received = np.zeros(count, dtype=bool)
    received[np.unique(rows[:, 0])] = True
    lost = ~received
    # Bursts: maximal runs of consecutive lost sequence numbers.
    edges = np.diff(np.concatenate(([0], lost.astype(np.int8), [0])))
    starts, ends = np.where(edges == 1)[0], np.where(edges == -1)[0]
    bursts = ends - starts
    n_lost = int(lost.sum())
    return {
        "sent": count,
        "lost": n_lost,
        "loss_rate": n_lost / count,
        "bursts": int(len(bursts)),
        "mean_burst_pkts": float(bursts.mean()) if len(bursts) else 0.0,
    }


def emulator_rate_bps(log: Path, path: str, skip_s: float, until_s: float) -> float:
    """Mean bytes_out rate of path/down from the emulator's own 100 ms intervals."""
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    stats = [x for x in lines if x["event"] == "link_stats" and x["path"] == path]
    stats = [x for x in stats if x["dir"] == "down"]
    t0 = stats[0]["t_ns"]
    window = [x for x in stats if skip_s <= (x["t_ns"] - t0) / 1e9 < until_s]
    busy = [x["bytes_out"] * 8 / 0.1 for x in window]
    return float(np.mean(busy)) if busy else 0.0


def kernel_drops(work: Path) -> int:
    """Packets the kernel dropped before linkemu saw them, over every emulator run."""
    total = 0
    for log in work.glob("emulator-*.jsonl"):
        for line in log.read_text().splitlines():
            x = json.loads(line)
            if x["event"] == "nfqueue_totals":
                total += x["kernel_queue_dropped_total"] + x["kernel_user_dropped_total"]
    return total


def run(work: Path, tick_us: int, quick: bool) -> dict:
    results: dict = {
        "command": "bench/emulator.sh"
        + (f" --tick-us {tick_us}" if tick_us != 250 else "")
        + (" --quick" if quick else ""),
        "configured": {"rate_bps": RATE_BPS, "delay_ms": DELAY_MS},
        "tick_us": tick_us,
        "load_average_start": load_average(),
        "cpus": os.cpu_count(),
    }
    idle_pps, idle_s = (200, 5) if quick else (500, 10)
    load_s = 8 if quick else 14
    loss_count = 20_000 if quick else 120_000
    with Topology.create(work) as topo:
        bench = Bench(topo, work, tick_us)
        # Baseline: the same probe without hooks or emulator (kernel + veth + probe cost).
        finish = {
            (p, d): bench.start_probe(p, d, idle_pps, idle_pps * 2, "baseline")
            for p in ("wifi", "lte")
            for d in ("up", "down")
        }
        baseline = {k: float(np.median(one_way_ms(f()))) for k, f in finish.items()}
        results["baseline_one_way_ms"] = {f"{p}/{d}": round(v, 4) for (p, d), v in baseline.items()}
        topo.install_nfqueue_hooks()

        # 1. Idle added delay, all four directions at once.
        bench.start_emulator(scenario("clean", {}))
        finish = {
            (p, d): bench.start_probe(p, d, idle_pps, idle_pps * idle_s, "idle")
            for p in ("wifi", "lte")
            for d in ("up", "down")
        }
        idle = {}
        for (p, d), f in finish.items():
            rows = f()
            added = one_way_ms(rows) - baseline[(p, d)]
            err = added - expected_ms()
            idle[f"{p}/{d}"] = {
                "samples": int(len(rows)),
                "added_ms_median": pct(added, 50),
                "added_ms_p99": pct(added, 99),
                "error_ms_median": pct(np.abs(err), 50),
                "error_ms_p99": pct(np.abs(err), 99),
                "error_ms_max": pct(np.abs(err), 100),
                "raw_one_way_ms_median": pct(one_way_ms(rows), 50),
            }
        results["idle_delay"] = idle
        results["expected_added_ms"] = round(expected_ms(), 4)

        # 2. Saturating download per path, with a delay probe on the same direction.
        loaded = {}
        for p in ("wifi", "lte"):
            bench.start_emulator(scenario(f"load-{p}", {}))
            iperf = bench.start_iperf(p, load_s, f"load-{p}")
            time.sleep(3)
            probe = bench.start_probe(p, "down", 200, 200 * (load_s - 5), f"load-{p}")
            rows = probe()
            rate = iperf()
            log = work / f"emulator-load-{p}.jsonl"
            bench.stop_emulator()
            added = one_way_ms(rows) - baseline[(p, "down")]
            loaded[p] = {
                **rate,
                "rate_error": rate["ip_rate_bps"] / RATE_BPS - 1,
                "emulator_reported_bps": emulator_rate_bps(log, p, 3.0, load_s - 1.0),
                "loaded_added_ms_median": pct(added, 50),
                "loaded_added_ms_p99": pct(added, 99),
                "loaded_added_ms_max": pct(added, 100),
            }
        results["loaded"] = loaded

        # 3. CPU for 2 x 100 Mbit/s (both paths saturated at once).
        bench.start_emulator(scenario("cpu", {}))
        emu_pid = bench.emulator.pid
        iperfs = {p: bench.start_iperf(p, load_s, f"cpu-{p}") for p in ("wifi", "lte")}
        time.sleep(3)
        cpu0, t0 = cpu_seconds(emu_pid), time.monotonic()
        time.sleep(load_s - 5)
        cpu1, t1 = cpu_seconds(emu_pid), time.monotonic()
        rates = {p: f() for p, f in iperfs.items()}
        bench.stop_emulator()
        results["cpu_2x100"] = {
            "core_fraction": (sum(cpu1) - sum(cpu0)) / (t1 - t0),
            "user_fraction": (cpu1[0] - cpu0[0]) / (t1 - t0),
            "system_fraction": (cpu1[1] - cpu0[1]) / (t1 - t0),
            "window_s": round(t1 - t0, 2),
            "ip_rate_bps": {p: r["ip_rate_bps"] for p, r in rates.items()},
        }

        # 4. Loss: 1 % Bernoulli on wifi/up, Gilbert-Elliott on lte/up.
        bench.start_emulator(
            scenario(
                "loss",
                {
                    ("wifi", "up"): link({"kind": "bernoulli", "p": BERNOULLI_P}),
                    ("lte", "up"): link({"kind": "gilbert_elliott", **GE}),
                },
            )
        )
        finish_b = bench.start_probe("wifi", "up", 20_000, loss_count, "loss")
        finish_g = bench.start_probe("lte", "up", 20_000, loss_count, "loss")
        bern = loss_stats(finish_b(), loss_count)
        ge = loss_stats(finish_g(), loss_count)
        bench.stop_emulator()
        ge_loss_theory = GE["p_good_to_bad"] / (GE["p_good_to_bad"] + GE["p_bad_to_good"])
        bern["configured_p"] = BERNOULLI_P
        bern["relative_error"] = bern["loss_rate"] / BERNOULLI_P - 1
        # 95 % sampling band of the measured rate around p (exact binomial), as a relative
        # half-width: a relative error inside it is chance.
        low, high = binomial_rate_band(BERNOULLI_P, loss_count)
        bern["sampling_relative_95"] = (high - low) / 2 / BERNOULLI_P
        ge.update(
            {
                "params": GE,
                "theory_loss_rate": ge_loss_theory,
                "theory_mean_burst_pkts": 1 / GE["p_bad_to_good"],
                "loss_relative_error": ge["loss_rate"] / ge_loss_theory - 1,
                "burst_relative_error": ge["mean_burst_pkts"] * GE["p_bad_to_good"] - 1,
            }
        )
        results["loss_bernoulli"] = bern
        results["loss_gilbert_elliott"] = ge
    results["kernel_drops_total"] = kernel_drops(work)
    results["load_average_end"] = load_average()
    results["targets"] = targets(results)
    return results


def targets(r: dict) -> dict:
    worst_median = max(v["error_ms_median"] for v in r["idle_delay"].values())
    worst_p99 = max(v["error_ms_p99"] for v in r["idle_delay"].values())
    worst_rate = max(abs(v["rate_error"]) for v in r["loaded"].values())
    return {
        "rate_within_2pct": {"value": worst_rate, "met": worst_rate <= 0.02},
        "idle_error_median_le_0_3ms": {"value": worst_median, "met": worst_median <= 0.3},
        "idle_error_p99_le_1ms": {"value": worst_p99, "met": worst_p99 <= 1.0},
        "loss_within_10pct": {
            "value": abs(r["loss_bernoulli"]["relative_error"]),
            "met": abs(r["loss_bernoulli"]["relative_error"]) <= 0.10,
        },
        "cpu_le_half_core": {
            "value": r["cpu_2x100"]["core_fraction"],
            "met": r["cpu_2x100"]["core_fraction"] <= 0.5,
        },
    }


def table(r: dict) -> str:
    rows = ["| measure | configured / target | measured | met |", "|---|---|---|---|"]
    t = r["targets"]
    for p, v in r["loaded"].items():
        rows.append(
            f"| {p} TCP cubic download, IP rate (goodput) | 100 Mbit/s ±2 % | "
            f"{v['ip_rate_bps'] / 1e6:.2f} Mbit/s ({v['goodput_bps'] / 1e6:.2f}); "
            f"emulator log {v['emulator_reported_bps'] / 1e6:.2f} | "
            f"{'yes' if abs(v['rate_error']) <= 0.02 else 'no'} |"
        )
    for k, v in r["idle_delay"].items():
        rows.append(
            f"| {k} idle added delay, median / p99 (n={v['samples']}) | "
            f"{r['expected_added_ms']:.3f} ms; error ≤0.3 / ≤1 ms | "
            f"{v['added_ms_median']:.3f} / {v['added_ms_p99']:.3f} ms "
            f"(error {v['error_ms_median']:.3f} / {v['error_ms_p99']:.3f}) | "
            f"{'yes' if v['error_ms_median'] <= 0.3 and v['error_ms_p99'] <= 1 else 'no'} |"
        )
    for p, v in r["loaded"].items():
        rows.append(
            f"| {p}/down added delay under load, median / p99 / max | 25 ms + queue (≤50 ms) | "
            f"{v['loaded_added_ms_median']:.2f} / {v['loaded_added_ms_p99']:.2f} / "
            f"{v['loaded_added_ms_max']:.2f} ms | - |"
        )
    b = r["loss_bernoulli"]
    rows.append(
        f"| Bernoulli loss, {b['sent']} pkts | 1 % ±10 % rel. | {b['loss_rate'] * 100:.3f} % "
        f"({b['relative_error'] * 100:+.1f} %) | "
        f"{'yes' if t['loss_within_10pct']['met'] else 'no'} |"
    )
    g = r["loss_gilbert_elliott"]
    rows.append(
        f"| Gilbert-Elliott loss rate / mean burst, {g['sent']} pkts | "
        f"{g['theory_loss_rate'] * 100:.2f} % / {g['theory_mean_burst_pkts']:.2f} pkts | "
        f"{g['loss_rate'] * 100:.2f} % / {g['mean_burst_pkts']:.2f} pkts | - |"
    )
    c = r["cpu_2x100"]
    rates = ", ".join(f"{p} {v / 1e6:.1f}" for p, v in c["ip_rate_bps"].items())
    rows.append(
        f"| linkemu CPU, 2 × 100 Mbit/s ({rates} Mbit/s) | ≤ 50 % of a core | "
        f"{c['core_fraction'] * 100:.1f} % | {'yes' if t['cpu_le_half_core']['met'] else 'no'} |"
    )
    la0, la1 = r["load_average_start"], r["load_average_end"]
    rows.append(f"\nLoad average (1/5/15 min) at start {la0}, at end {la1}; {r['cpus']} CPUs.")
    rows.append(f"Packets the kernel dropped before linkemu saw them: {r['kernel_drops_total']}.")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tick-us", type=int, default=250, help="linkemu --tick-us (default 250)")
    parser.add_argument("--out", type=Path, default=REPO / "bench/emulator.json",
                        help="result JSON (default bench/emulator.json)")  # fmt: skip
    parser.add_argument("--work", type=Path, default=REPO / "results/bench-emulator",
                        help="raw data and logs (default results/bench-emulator)")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke run)")
    args = parser.parse_args()
    for binary in (LINKEMU, PROBE):
        if not binary.exists():
            print(f"missing {binary}: run `cargo build --release` in emulator/", file=sys.stderr)
            return 2
    # A fresh folder per run: supervised processes append to their log files.
    work = args.work / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work.mkdir(parents=True, exist_ok=False)
    results = run(work, args.tick_us, args.quick)
    # Relative to the repository when inside it, so the committed result names no machine.
    resolved = work.resolve()
    results["work_dir"] = str(
        resolved.relative_to(REPO) if resolved.is_relative_to(REPO) else resolved
    )
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(table(results))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
