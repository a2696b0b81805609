"""Benchmark of mpproxy (`user`) against kernel TCP on the real emulator (docs/TRANSPORT.md).

Each case builds a fresh testbed topology (three namespaces, CONTRACTS §3), runs linkemu
with a scenario written here, moves seeded random bytes server -> client through TCP
(kernel) or through mpproxy client/server (user) and checks their SHA-256.

    .venv/bin/python transport/bench/bench.py fidelity     # 100 Mbit/s, 25 ms, 1-BDP queue:
                                                           # kernel cubic/bbr vs user cubic/bbr
    .venv/bin/python transport/bench/bench.py loss         # same link, 0.1 % loss, bbr
    .venv/bin/python transport/bench/bench.py aggregate    # 50 + 20 Mbit/s, bbr + lrf
    .venv/bin/python transport/bench/bench.py exact        # 1 %/2 % loss, 20/40 ms: bbr+lrf,
                                                           # cubic+rr, 200 MB each
    .venv/bin/python transport/bench/bench.py grid         # single path, 20 Mbit/s, 1-BDP queue,
                       # {reno,cubic,bbr} x loss {0.1,1} % x one-way {10,40} ms, kernel vs user;
                       # transfers sized for >= 20 expected losses, steady-state goodput
    .venv/bin/python transport/bench/bench.py outage       # 20 Mbit/s, 25 ms, path dead 3 s:
                       # time from the outage's end to 90 % of the pre-outage goodput
Options: --bytes N (per transfer; grid: overrides the per-cell size), --expected-losses N (grid),
--reps N, --seed N, --cc a,b (grid/outage). Prints one JSON line per transfer and a summary;
needs root, built mpproxy and linkemu. Every transfer's line carries the sender's loss-recovery
counters: kernel TCP's TcpExt deltas of the server namespace, the user transport's stats
(`counters` summed over its paths, `counters_per_path` per path).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from testbed.scenario import resolve_file  # noqa: E402
from testbed.topology import Topology  # noqa: E402

MPPROXY = REPO / "transport/target/release/mpproxy"
LINKEMU = REPO / "emulator/target/release/linkemu"
XFER = Path(__file__).resolve().parent / "tcp_xfer.py"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def link(rate_bps: int, delay_ms: float, loss: float = 0.0, queue_bytes: int | None = None) -> str:
    lines = [f"rate = {{ bps = {rate_bps} }}", f"delay_ms = {delay_ms}"]
    if queue_bytes:
        lines.append(f"queue = {{ bytes = {queue_bytes} }}")
    if loss:
        lines.append(f'loss = {{ model = "bernoulli", p = {loss} }}')
    return "\n".join(lines)


BDP_100M_50MS = 625_000  # 100 Mbit/s × 50 ms RTT
SCENARIOS = {
    "fidelity": (
        link(100_000_000, 25.0, 0, BDP_100M_50MS),
        link(100_000_000, 25.0, 0, BDP_100M_50MS),
    ),
    "loss": (
        link(100_000_000, 25.0, 0.001, BDP_100M_50MS),
        link(100_000_000, 25.0, 0.001, BDP_100M_50MS),
    ),
    "aggregate": (link(50_000_000, 25.0), link(20_000_000, 25.0)),
    "exact": (link(50_000_000, 20.0, 0.01), link(20_000_000, 40.0, 0.02)),
}


GRID_RATE_BPS = 20_000_000
GRID_LOSSES = (0.001, 0.01)
GRID_ONE_WAY_MS = (10.0, 40.0)
# Grid transfer size. A loss-based CC's goodput is set by its loss epochs (the sawtooth
# between two losses), so a transfer must span many of them to be dominated by steady
# state: with 5 MB at 0.1 % a transfer sees ~3.5 data losses, and whether one lands in slow
# start changes its goodput up to 4x for both stacks. Each cell's size is therefore
# GRID_EXPECTED_LOSSES / p full-size packets (0.1 %: 29 MB; 1 %: 2.9 MB, raised to
# GRID_MIN_BYTES), and the goodput compared is the steady-state one: bytes received after
# the first GRID_WARMUP_S seconds (slow start and the first reduction) over the time taken.
# 20 losses rather than more keeps the whole grid near 20 min on this path (the 0.1 %/40 ms
# cubic and reno transfers run at 6-7 Mbit/s in steady state). BBR's goodput is not set by
# loss epochs (it ignores random loss below ~20 %), so its transfers are sized by time
# instead: GRID_RATE_BASED_BYTES last about 5 s at its 18-19 Mbit/s, 3 s of them after the
# warm-up.
GRID_EXPECTED_LOSSES = 20
GRID_MIN_BYTES = 5_000_000
GRID_RATE_BASED_CCS = ("bbr",)
GRID_RATE_BASED_BYTES = 12_000_000
GRID_WARMUP_S = 2.0
GRID_TIMELINE_MS = 100
TCP_MSS_BYTES = 1448
# Kernel sender counters read from the server namespace's /proc/net/netstat and
# /proc/net/snmp before and after each kernel transfer (nstat names).
KERNEL_COUNTERS = ("TcpExtTCPTimeouts", "TcpExtTCPLossProbes", "TcpExtTCPLossProbeRecovery",
                   "TcpExtTCPSackRecovery", "TcpExtTCPLostRetransmit", "TcpExtTCPSpuriousRTOs",
                   "TcpExtTCPLossUndo", "TcpExtTCPFullUndo", "TcpExtTCPPartialUndo",
                   "TcpExtTCPDSACKUndo", "TcpExtTCPSACKReorder", "TcpRetransSegs",
                   "TcpOutSegs")  # fmt: skip
# The user sender's counters, from the server's stats (sender_counters: summed over paths).
USER_COUNTERS = ("rto_total", "tlp_total", "recoveries_total", "pkts_lost_total",
                 "pkts_retrans_total", "pkts_sent_total")  # fmt: skip
OUTAGE_ONE_WAY_MS = 25.0
OUTAGE_S = 3.0
# Each outage transfer gets its own slot of the emulator's clock: it starts at the slot's
# start, the path is dead from OUTAGE_AT_S to OUTAGE_AT_S + OUTAGE_S into the slot.
OUTAGE_FIRST_SLOT_S = 5.0
OUTAGE_SLOT_S = 40.0
OUTAGE_AT_S = 10.0
# Pre-outage goodput: mean over this window before the outage; recovery: the first window of
# RECOVERY_WINDOW_S after the outage whose goodput reaches RECOVERY_FRACTION of it.
PRE_OUTAGE_WINDOW_S = 5.0
RECOVERY_WINDOW_S = 0.5
RECOVERY_FRACTION = 0.9
TIMELINE_MS = 50


def bdp_bytes(rate_bps: int, one_way_ms: float) -> int:
    return int(rate_bps / 8 * 2 * one_way_ms / 1000)


def scenario_toml(name: str, links: tuple[str, str]) -> str:
    """The scenario file of a benchmark case: paths wifi and lte with these link bodies.
    testbed/reproduce.py's cross-checks give the same text to `mpsim --scenario`, whose links
    then draw linkemu's loss pattern for the same seed."""
    wifi, lte = links
    return (
        f'name = "bench-{name}"\ndescription = "transport benchmark {name}"\n'
        f"duration_s = 3600.0\n\n[paths.wifi]\n{wifi}\n\n[paths.lte]\n{lte}\n"
    )


def write_scenario(
    name: str, workdir: Path, seed: int, links: tuple[str, str] | None = None
) -> Path:
    toml = workdir / f"bench-{name}.toml"
    toml.write_text(scenario_toml(name, links or SCENARIOS[name]))
    resolved = resolve_file(toml, REPO, seed)
    out = workdir / "scenario.json"
    out.write_text(json.dumps(resolved))
    return out


@contextmanager
def emulated(name: str, seed: int, links: tuple[str, str] | None = None):
    workdir = Path(tempfile.mkdtemp(prefix=f"tbx-core-bench-{name}-"))
    scenario = write_scenario(name, workdir, seed, links)
    t0 = time.monotonic_ns()
    with Topology.create(workdir, t0_ns=t0) as topo:
        topo.install_nfqueue_hooks()
        log = workdir / "emulator.jsonl"
        argv = [str(LINKEMU), "--scenario", str(scenario), "--seed", str(seed),
                "--t0-ns", str(t0), "--log", str(log)]  # fmt: skip
        topo.spawn("router", "emulator", argv, rt_priority=50)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (log.is_file() and "start" in log.read_text()):
            time.sleep(0.05)
        yield topo, workdir, t0


def wait_for(path: Path, needle: str, what: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.is_file() and needle in path.read_text(errors="replace"):
            return
        time.sleep(0.02)
    raise RuntimeError(f"{what} did not start: no '{needle}' in {path}")


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def get(topo, host: str, port: int, nbytes: int, cc: str | None = None,
        timeline_ms: int = 0) -> dict:  # fmt: skip
    argv = [sys.executable, str(XFER), "get", "--host", host, "--port", str(port),
            "--bytes", str(nbytes), "--timeline-ms", str(timeline_ms)]  # fmt: skip
    argv += ["--cc", cc] if cc else []
    done = topo.run("client", argv, check=True, timeout=1800)
    return json.loads(done.stdout.strip().splitlines()[-1])


def kernel_counters(topo, role: str) -> dict[str, int]:
    """The namespace's TCP counters (nstat names: Tcp*, TcpExt*)."""
    text = topo.run(role, ["cat", "/proc/net/snmp", "/proc/net/netstat"]).stdout.splitlines()
    out: dict[str, int] = {}
    for names, values in zip(text[::2], text[1::2], strict=False):
        prefix, keys = names.split(":", 1)
        _, vals = values.split(":", 1)
        for k, v in zip(keys.split(), vals.split(), strict=False):
            out[f"{prefix}{k}"] = int(v)
    return out


def run_kernel(topo, workdir: Path, cc: str, nbytes: int, tag: str, timeline_ms: int = 0) -> dict:
    port = 9100 + hash(tag) % 500
    srv = topo.spawn("server", f"xfer-{tag}", [sys.executable, str(XFER), "serve",
                     "--host", "10.1.2.2", "--port", str(port), "--cc", cc])  # fmt: skip
    wait_for(srv.stdout_path, "listening", "tcp source")
    before = kernel_counters(topo, "server")
    r = get(topo, "10.1.2.2", port, nbytes, cc, timeline_ms)
    srv.terminate()
    after = kernel_counters(topo, "server")
    counters = {k: after.get(k, 0) - before.get(k, 0) for k in KERNEL_COUNTERS}
    return {"transport": "kernel-tcp", "cc": cc, "sched": "-", **r, "counters": counters}


def run_user(topo, workdir: Path, t0: int, cc: str, sched: str, paths: list[str], nbytes: int,
             tag: str, timeline_ms: int = 0) -> dict:  # fmt: skip
    port = 9600 + hash(tag) % 300
    listen_port = 8100 + hash(tag) % 300
    src = topo.spawn("server", f"xfer-{tag}", [sys.executable, str(XFER), "serve",
                     "--host", "127.0.0.1", "--port", str(port)])  # fmt: skip
    wait_for(src.stdout_path, "listening", "tcp source")
    common = ["--cc", cc, "--sched", sched, "--t0-ns", str(t0), "--seed", "1"]
    s_stats, c_stats = workdir / f"{tag}-server.jsonl", workdir / f"{tag}-client.jsonl"
    server = topo.spawn("server", f"mpproxy-server-{tag}", [str(MPPROXY), "server",
                        "--listen", "10.1.2.2:4433,10.2.2.2:4433", "--forward",
                        f"127.0.0.1:{port}", "--stats", str(s_stats), *common])  # fmt: skip
    path_args = []
    for p in paths:
        path_args += ["--path", {"wifi": "wifi=10.1.1.2:10.1.2.2:4433",
                                 "lte": "lte=10.2.1.2:10.2.2.2:4433"}[p]]  # fmt: skip
    client = topo.spawn("client", f"mpproxy-client-{tag}", [str(MPPROXY), "client", "--listen",
                        f"127.0.0.1:{listen_port}", *path_args, "--stats", str(c_stats),
                        *common])  # fmt: skip
    wait_for(s_stats, '"start"', "mpproxy server")
    wait_for(c_stats, '"start"', "mpproxy client")
    before = cpu_ticks(server.pid) + cpu_ticks(client.pid)
    wall0 = time.monotonic()
    r = get(topo, "127.0.0.1", listen_port, nbytes, None, timeline_ms)
    wall = time.monotonic() - wall0
    cpu_s = (cpu_ticks(server.pid) + cpu_ticks(client.pid) - before) / CLK_TCK
    for proc in (client, server, src):
        proc.terminate()
    per_path = {}
    for line in c_stats.read_text().splitlines():
        row = json.loads(line)
        if row.get("event") == "subflow":
            per_path[row["path"]] = row.get("data_bytes_received_total", 0)
    counters, counters_per_path = sender_counters(s_stats)
    cpu_per_100 = cpu_s / wall / (r["goodput_bps"] / 1e8) if r["goodput_bps"] else None
    return {"transport": "user", "cc": cc, "sched": sched, **r, "cpu_s": round(cpu_s, 2),
            "cpu_pct_per_100mbps": round(100 * cpu_per_100, 1) if cpu_per_100 else None,
            "path_bytes": per_path, "counters": counters,
            "counters_per_path": counters_per_path}  # fmt: skip


def sender_counters(stats: Path) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """The user sender's USER_COUNTERS from its stats file: summed over its subflows, and per
    path. A subflow's counters are cumulative in its own `subflow` lines (one per connection
    and path), so its figure is its last line's; the total adds the subflows (the file's last
    line alone is one path's)."""
    last: dict[tuple[int, str], dict[str, int]] = {}
    for line in stats.read_text().splitlines():
        row = json.loads(line)
        if row.get("event") == "subflow":
            last[(row.get("conn", 0), row["path"])] = {k: row.get(k, 0) for k in USER_COUNTERS}
    per_path: dict[str, dict[str, int]] = {}
    for (_, path), c in last.items():
        mine = per_path.setdefault(path, dict.fromkeys(USER_COUNTERS, 0))
        for k in USER_COUNTERS:
            mine[k] += c[k]
    total = {k: sum(c[k] for c in per_path.values()) for k in USER_COUNTERS}
    return total, per_path


def show(row: dict, rows: list[dict]) -> None:
    rows.append(row)
    print(json.dumps(row), flush=True)


def median_goodput(rows: list[dict], transport: str, cc: str) -> float:
    vals = [r["goodput_bps"] for r in rows if r["transport"] == transport and r["cc"] == cc]
    return statistics.median(vals) if vals else float("nan")


def grid_links(loss: float, one_way_ms: float) -> tuple[str, str]:
    wifi = link(GRID_RATE_BPS, one_way_ms, loss, bdp_bytes(GRID_RATE_BPS, one_way_ms))
    return wifi, wifi


def grid_bytes(cc: str, loss: float, expected_losses: int) -> int:
    """Transfer size of a grid cell: `expected_losses` data-packet losses at rate `loss`
    (a fixed size for the rate-based CCs)."""
    if cc in GRID_RATE_BASED_CCS:
        return GRID_RATE_BASED_BYTES
    return max(GRID_MIN_BYTES, math.ceil(expected_losses / loss) * TCP_MSS_BYTES)


def steady_goodput_bps(timeline: list[list[int]], warmup_s: float) -> float | None:
    """Goodput after the first `warmup_s` of a (ns, bytes) timeline; None if too short."""
    t_first, t_last = timeline[0][0], timeline[-1][0]
    start = t_first + int(warmup_s * 1e9)
    if t_last - start < 1e9:
        return None
    return goodput_between(timeline, start, t_last)


def run_grid(a: argparse.Namespace, ccs: list[str]) -> list[dict]:
    """Each (loss, delay) cell in its own emulator; per CC and repetition, kernel then user."""
    rows: list[dict] = []
    for loss in GRID_LOSSES:
        for one_way in GRID_ONE_WAY_MS:
            name = f"grid-{loss}-{one_way:g}"
            with emulated(name, a.seed, grid_links(loss, one_way)) as (topo, workdir, t0):
                for rep in range(a.reps):
                    for cc in ccs:
                        n = a.bytes or grid_bytes(cc, loss, a.expected_losses)
                        cell = {"loss": loss, "one_way_ms": one_way, "rep": rep}
                        k = run_kernel(topo, workdir, cc, n, f"g{cc}{rep}k", GRID_TIMELINE_MS)
                        u = run_user(topo, workdir, t0, cc, "lrf", ["wifi"], n, f"g{cc}{rep}u",
                                     GRID_TIMELINE_MS)  # fmt: skip
                        for r in (k, u):
                            steady = steady_goodput_bps(r.pop("timeline"), GRID_WARMUP_S)
                            r["steady_goodput_bps"] = round(steady) if steady else None
                            show({**cell, **r}, rows)
    print(f"summary (median user/kernel steady-state goodput ratio per cell: after the first "
          f"{GRID_WARMUP_S:g} s; whole-transfer ratio in brackets):")  # fmt: skip
    for loss in GRID_LOSSES:
        for one_way in GRID_ONE_WAY_MS:
            for cc in ccs:
                cell = [r for r in rows if r["loss"] == loss and r["one_way_ms"] == one_way
                        and r["cc"] == cc]  # fmt: skip

                def med(transport: str, key: str, cell: list[dict] = cell) -> float:
                    vals = [r[key] or r["goodput_bps"] for r in cell
                            if (r["transport"] == "user") == (transport == "user")]  # fmt: skip
                    return statistics.median(vals)

                k, u = med("kernel", "steady_goodput_bps"), med("user", "steady_goodput_bps")
                kw, uw = med("kernel", "goodput_bps"), med("user", "goodput_bps")
                print(f"  loss {loss * 100:g} % one-way {one_way:g} ms {cc:6} kernel "
                      f"{k / 1e6:6.2f} user {u / 1e6:6.2f} Mbit/s ratio {u / k:.2f} "
                      f"[{uw / kw:.2f}]")  # fmt: skip
    return rows


def outage_links(slots: int) -> tuple[str, str]:
    schedule = ", ".join(
        f'{{ t_s = {OUTAGE_FIRST_SLOT_S + i * OUTAGE_SLOT_S + OUTAGE_AT_S}, op = "outage", '
        f"until_s = {OUTAGE_FIRST_SLOT_S + i * OUTAGE_SLOT_S + OUTAGE_AT_S + OUTAGE_S} }}"
        for i in range(slots)
    )
    bdp = bdp_bytes(GRID_RATE_BPS, OUTAGE_ONE_WAY_MS)
    wifi = link(GRID_RATE_BPS, OUTAGE_ONE_WAY_MS, 0, bdp) + f"\nschedule = [{schedule}]"
    return wifi, link(GRID_RATE_BPS, OUTAGE_ONE_WAY_MS, 0, bdp)


def goodput_between(timeline: list[list[int]], a_ns: int, b_ns: int) -> float:
    """Mean goodput (bit/s) in [a, b] from a cumulative (ns, bytes) timeline (step-wise)."""

    def bytes_at(t: int) -> int:
        got = 0
        for ts, b in timeline:
            if ts > t:
                break
            got = b
        return got

    return (bytes_at(b_ns) - bytes_at(a_ns)) * 8 / ((b_ns - a_ns) / 1e9)


def recovery_s(timeline: list[list[int]], outage_start_ns: int, outage_end_ns: int) -> float | None:
    """Seconds from the outage's end until a RECOVERY_WINDOW_S window reaches
    RECOVERY_FRACTION of the goodput of the PRE_OUTAGE_WINDOW_S before the outage."""
    pre = goodput_between(timeline, outage_start_ns - int(PRE_OUTAGE_WINDOW_S * 1e9),
                          outage_start_ns)  # fmt: skip
    win = int(RECOVERY_WINDOW_S * 1e9)
    step = TIMELINE_MS * 1_000_000
    t = outage_end_ns
    while t + win <= timeline[-1][0]:
        if goodput_between(timeline, t, t + win) >= RECOVERY_FRACTION * pre:
            return (t + win - outage_end_ns) / 1e9
        t += step
    return None


def run_outage(a: argparse.Namespace, ccs: list[str]) -> list[dict]:
    """One slot per transfer; kernel and user alternate, each CC in turn."""
    rows: list[dict] = []
    # 20 Mbit/s for the whole slot but the outage: the transfer outlasts the recovery.
    n = a.bytes or 60_000_000
    plan = [(cc, rep, t) for rep in range(a.reps) for cc in ccs for t in ("kernel", "user")]
    with emulated("outage", a.seed, outage_links(len(plan))) as (topo, workdir, t0):
        for i, (cc, rep, transport) in enumerate(plan):
            slot_ns = t0 + int((OUTAGE_FIRST_SLOT_S + i * OUTAGE_SLOT_S) * 1e9)
            time.sleep(max(0.0, (slot_ns - time.monotonic_ns()) / 1e9))
            tag = f"o{cc}{rep}{transport[0]}"
            if transport == "kernel":
                r = run_kernel(topo, workdir, cc, n, tag, TIMELINE_MS)
            else:
                r = run_user(topo, workdir, t0, cc, "lrf", ["wifi"], n, tag, TIMELINE_MS)
            start = slot_ns + int(OUTAGE_AT_S * 1e9)
            end = start + int(OUTAGE_S * 1e9)
            timeline = r.pop("timeline")
            rec = recovery_s(timeline, start, end)
            show({**r, "rep": rep, "recovery_s": rec,
                  "pre_outage_bps": round(goodput_between(
                      timeline, start - int(PRE_OUTAGE_WINDOW_S * 1e9), start))}, rows)  # fmt: skip
    print("summary (median seconds from the outage's end to 90 % of the pre-outage goodput):")
    for cc in ccs:
        med = {}
        for transport in ("kernel-tcp", "user"):
            vals = [r["recovery_s"] for r in rows if r["cc"] == cc and r["transport"] == transport]
            ok = [v for v in vals if v is not None]
            med[transport] = statistics.median(ok) if len(ok) == len(vals) and ok else None
        k, u = med["kernel-tcp"], med["user"]
        ratio = f"{u / k:.2f}" if k and u else "n/a"
        print(f"  {cc:6} kernel {k} s  user {u} s  ratio user/kernel {ratio}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("case", choices=["fidelity", "loss", "aggregate", "exact", "grid", "outage"])
    ap.add_argument("--bytes", type=int, default=None, help="bytes per transfer")
    ap.add_argument("--expected-losses", type=int, default=GRID_EXPECTED_LOSSES,
                    help="grid: size reno/cubic transfers for this many losses")  # fmt: skip
    ap.add_argument("--reps", type=int, default=None, help="default 3 (grid), 2 (outage), 1")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cc", default=None, help="grid/outage: comma-separated CCs")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("bench.py: needs root (network namespaces)", file=sys.stderr)
        return 2
    for binary in (MPPROXY, LINKEMU):
        if not binary.is_file():
            print(f"bench.py: {binary} not built", file=sys.stderr)
            return 2
    a.reps = a.reps or {"grid": 3, "outage": 2}.get(a.case, 1)
    if a.case in ("grid", "outage"):
        ccs = (a.cc or ("reno,cubic,bbr" if a.case == "grid" else "reno,cubic")).split(",")
        rows = run_grid(a, ccs) if a.case == "grid" else run_outage(a, ccs)
        print(f"  all byte-exact: {all(r['sha_ok'] for r in rows)}")
        return 0 if all(r["sha_ok"] for r in rows) else 1
    rows: list[dict] = []
    with emulated(a.case, a.seed) as (topo, workdir, t0):
        for rep in range(a.reps):
            if a.case == "fidelity":
                n = a.bytes or 100_000_000
                for cc in ("cubic", "bbr"):
                    show(run_kernel(topo, workdir, cc, n, f"k{cc}{rep}"), rows)
                    show(run_user(topo, workdir, t0, cc, "lrf", ["wifi"], n, f"u{cc}{rep}"), rows)
            elif a.case == "loss":
                n = a.bytes or 100_000_000
                show(run_kernel(topo, workdir, "bbr", n, f"kbbr{rep}"), rows)
                show(run_user(topo, workdir, t0, "bbr", "lrf", ["wifi"], n, f"ubbr{rep}"), rows)
            elif a.case == "aggregate":
                n = a.bytes or 100_000_000
                show(
                    run_user(topo, workdir, t0, "bbr", "lrf", ["wifi", "lte"], n, f"agg{rep}"), rows
                )
            else:
                n = a.bytes or 200_000_000
                for cc, sched in (("bbr", "lrf"), ("cubic", "rr")):
                    show(run_user(topo, workdir, t0, cc, sched, ["wifi", "lte"], n,
                                  f"x{cc}{sched}{rep}"), rows)  # fmt: skip
    print("summary:")
    for transport in ("kernel-tcp", "user"):
        for cc in ("cubic", "bbr"):
            g = median_goodput(rows, transport, cc)
            if g == g:
                print(f"  {transport:10} {cc:6} median goodput {g / 1e6:7.2f} Mbit/s")
    if a.case in ("fidelity", "loss"):
        for cc in ("cubic", "bbr"):
            k, u = median_goodput(rows, "kernel-tcp", cc), median_goodput(rows, "user", cc)
            if k == k and u == u:
                print(f"  ratio user/kernel {cc}: {u / k:.3f}")
    print(f"  all byte-exact: {all(r['sha_ok'] for r in rows)}")
    subprocess.run(["true"])
    return 0 if all(r["sha_ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
