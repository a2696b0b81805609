"""Bulk transfers over the emulated paths: the harness the transport benchmark
(transport/bench/bench.py) and the reproductions' emulated cross-checks (testbed/reproduce/)
share.

`emulated(name, seed, links)` builds a fresh testbed topology (three namespaces, CONTRACTS §3)
and runs linkemu with a two-path scenario written from the link bodies; inside it,
`run_kernel` moves seeded random bytes server -> client over kernel TCP and `run_user` through
mpproxy client/server, each checked by SHA-256 (transport/bench/tcp_xfer.py), and each returns
one row: goodput, byte-exactness and the sender's loss-recovery counters (kernel TCP's TcpExt
deltas of the server namespace; the user transport's stats summed over its paths and per path).
Needs root, built mpproxy and linkemu.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from testbed.scenario import resolve_file
from testbed.topology import Topology

REPO = Path(__file__).resolve().parent.parent
MPPROXY = REPO / "transport/target/release/mpproxy"
LINKEMU = REPO / "emulator/target/release/linkemu"
XFER = REPO / "transport/bench/tcp_xfer.py"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def link(rate_bps: int, delay_ms: float, loss: float = 0.0, queue_bytes: int | None = None) -> str:
    lines = [f"rate = {{ bps = {rate_bps} }}", f"delay_ms = {delay_ms}"]
    if queue_bytes:
        lines.append(f"queue = {{ bytes = {queue_bytes} }}")
    if loss:
        lines.append(f'loss = {{ model = "bernoulli", p = {loss} }}')
    return "\n".join(lines)


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


def scenario_toml(name: str, links: tuple[str, str]) -> str:
    """The scenario file of a bulk case: paths wifi and lte with these link bodies. The
    reproductions' cross-checks give the same text to `mpsim --scenario`, whose links then
    draw linkemu's loss pattern for the same seed."""
    wifi, lte = links
    return (
        f'name = "bench-{name}"\ndescription = "transport benchmark {name}"\n'
        f"duration_s = 3600.0\n\n[paths.wifi]\n{wifi}\n\n[paths.lte]\n{lte}\n"
    )


def write_scenario(name: str, workdir: Path, seed: int, links: tuple[str, str]) -> Path:
    toml = workdir / f"bench-{name}.toml"
    toml.write_text(scenario_toml(name, links))
    resolved = resolve_file(toml, REPO, seed)
    out = workdir / "scenario.json"
    out.write_text(json.dumps(resolved))
    return out


@contextmanager
def emulated(name: str, seed: int, links: tuple[str, str]):
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
