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
Options: --bytes N (per transfer), --reps N, --seed N. Prints one JSON line per transfer and
a summary; needs root, built mpproxy and linkemu.
"""

from __future__ import annotations

import argparse
import json
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


def write_scenario(name: str, workdir: Path, seed: int) -> Path:
    wifi, lte = SCENARIOS[name]
    toml = workdir / f"bench-{name}.toml"
    toml.write_text(
        f'name = "bench-{name}"\ndescription = "transport benchmark {name}"\n'
        f"duration_s = 3600.0\n\n[paths.wifi]\n{wifi}\n\n[paths.lte]\n{lte}\n"
    )
    resolved = resolve_file(toml, REPO, seed)
    out = workdir / "scenario.json"
    out.write_text(json.dumps(resolved))
    return out


@contextmanager
def emulated(name: str, seed: int):
    workdir = Path(tempfile.mkdtemp(prefix=f"tbx-core-bench-{name}-"))
    scenario = write_scenario(name, workdir, seed)
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


def get(topo, host: str, port: int, nbytes: int, cc: str | None = None) -> dict:
    argv = [sys.executable, str(XFER), "get", "--host", host, "--port", str(port),
            "--bytes", str(nbytes)] + (["--cc", cc] if cc else [])  # fmt: skip
    done = topo.run("client", argv, check=True, timeout=1800)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_kernel(topo, workdir: Path, cc: str, nbytes: int, tag: str) -> dict:
    port = 9100 + hash(tag) % 500
    srv = topo.spawn("server", f"xfer-{tag}", [sys.executable, str(XFER), "serve",
                     "--host", "10.1.2.2", "--port", str(port), "--cc", cc])  # fmt: skip
    wait_for(srv.stdout_path, "listening", "tcp source")
    r = get(topo, "10.1.2.2", port, nbytes, cc)
    srv.terminate()
    return {"transport": "kernel-tcp", "cc": cc, "sched": "-", **r}


def run_user(topo, workdir: Path, t0: int, cc: str, sched: str, paths: list[str], nbytes: int,
             tag: str) -> dict:  # fmt: skip
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
    r = get(topo, "127.0.0.1", listen_port, nbytes)
    wall = time.monotonic() - wall0
    cpu_s = (cpu_ticks(server.pid) + cpu_ticks(client.pid) - before) / CLK_TCK
    for proc in (client, server, src):
        proc.terminate()
    per_path = {}
    for line in c_stats.read_text().splitlines():
        row = json.loads(line)
        if row.get("event") == "subflow":
            per_path[row["path"]] = row.get("data_bytes_received_total", 0)
    cpu_per_100 = cpu_s / wall / (r["goodput_bps"] / 1e8) if r["goodput_bps"] else None
    return {"transport": "user", "cc": cc, "sched": sched, **r, "cpu_s": round(cpu_s, 2),
            "cpu_pct_per_100mbps": round(100 * cpu_per_100, 1) if cpu_per_100 else None,
            "path_bytes": per_path}  # fmt: skip


def show(row: dict, rows: list[dict]) -> None:
    rows.append(row)
    print(json.dumps(row), flush=True)


def median_goodput(rows: list[dict], transport: str, cc: str) -> float:
    vals = [r["goodput_bps"] for r in rows if r["transport"] == transport and r["cc"] == cc]
    return statistics.median(vals) if vals else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("case", choices=["fidelity", "loss", "aggregate", "exact"])
    ap.add_argument("--bytes", type=int, default=None, help="bytes per transfer")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("bench.py: needs root (network namespaces)", file=sys.stderr)
        return 2
    for binary in (MPPROXY, LINKEMU):
        if not binary.is_file():
            print(f"bench.py: {binary} not built", file=sys.stderr)
            return 2
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
