"""Cross traffic: flows other than the multipath connection's, on the scenario's paths.

A scenario's `[[cross_traffic]]` entries (netem-scenarios/README.md) become one sender and
one receiver process per flow. Flow k on path P uses the path's cross-traffic addresses
(testbed.topology.cross_addresses: 10.<i+1>.1.<100+k> in the client namespace,
10.<i+1>.2.<100+k> in the server namespace), so its packets cross P's emulated link and any
bottleneck P traverses, like the multipath connection's subflows; `down` flows send from
the server namespace, `up` flows from the client namespace.

Kinds:
* `tcp_bulk`: kernel TCP with the named congestion control (TCP_CONGESTION), sending as
  fast as it may from start_s to stop_s. cc = "match" picks the kernel CC of the trial's
  multipath CC family: bbr* -> bbr, cubic -> cubic, anything else (the coupled LIA, OLIA,
  BALIA family, ...) -> reno.
* `tcp_onoff`: the same, sending for on_s, then pausing for off_s (the connection stays).
* `udp_cbr`: UDP datagrams of packet_bytes (IP bytes) at rate_bps, on an absolute send
  schedule (a late packet is sent at once, so the mean rate holds under scheduling noise).

start_s and stop_s count from the emulator's start (its `start` line), like schedules.

Log (docs/CONTRACTS.md, cross traffic): every process appends JSON Lines to
<trial>/cross-traffic.jsonl, t_ns on the trial clock: the receiver a `flow_stats` line per
100 ms interval with data (`bytes` received, `goodput_bps`), and both a `flow_totals` line
at the end (bytes, first and last byte times; for UDP also packets and IP bytes).

CLI (what start() spawns; by hand for measurements):
    python -m testbed.crosstraffic send|receive --proto tcp|udp --local ADDR --peer ADDR
        --port N --flow ID --t0-ns N --begin-ns N --stop-ns N --log FILE [--cc C]
        [--on-s S --off-s S] [--rate-bps R --packet-bytes B]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from testbed.topology import cross_addresses

LOG_NAME = "cross-traffic.jsonl"
BASE_PORT = 5201
STATS_INTERVAL_NS = 100_000_000
IP_UDP_HEADER_BYTES = 28
TCP_CHUNK_BYTES = 64 * 1024
RECV_BYTES = 256 * 1024
CONNECT_RETRY_S = 5.0
RECEIVER_GRACE_NS = 2_000_000_000  # a receiver waits this long after stop for the tail
EMULATOR_START_WAIT_S = 5.0


@dataclass(frozen=True)
class Flow:
    flow: str  # "<path>.<k>", k = index among the path's cross flows
    kind: str  # tcp_bulk | tcp_onoff | udp_cbr
    path: str
    direction: str  # up | down
    k: int
    start_s: float
    stop_s: float
    cc: str | None = None
    on_s: float | None = None
    off_s: float | None = None
    rate_bps: float | None = None
    packet_bytes: int | None = None


def flows(scenario: dict) -> list[Flow]:
    """Every cross-traffic flow of a resolved scenario, `count` expanded."""
    out: list[Flow] = []
    per_path: dict[str, int] = {}
    for entry in scenario.get("cross_traffic", []):
        for _ in range(int(entry["count"])):
            k = per_path.get(entry["path"], 0)
            per_path[entry["path"]] = k + 1
            out.append(
                Flow(
                    flow=f"{entry['path']}.{k}",
                    kind=entry["kind"],
                    path=entry["path"],
                    direction=entry["direction"],
                    k=k,
                    start_s=float(entry["start_s"]),
                    stop_s=float(entry["stop_s"]),
                    cc=entry.get("cc"),
                    on_s=entry.get("on_s"),
                    off_s=entry.get("off_s"),
                    rate_bps=entry.get("rate_bps"),
                    packet_bytes=entry.get("packet_bytes"),
                )
            )
    return out


def flows_per_path(scenario: dict) -> dict[str, int]:
    """Cross-traffic flows per path (what the address plan must give addresses to)."""
    counts: dict[str, int] = {}
    for flow in flows(scenario):
        counts[flow.path] = counts.get(flow.path, 0) + 1
    return counts


def kernel_cc(cc: str, trial_cc: str) -> str:
    """The kernel CC a cross flow uses; "match" follows the trial's CC family."""
    if cc != "match":
        return cc
    if trial_cc.startswith("bbr"):
        return "bbr"
    if trial_cc == "cubic":
        return "cubic"
    return "reno"


def _emulator_start_ns(trial_dir: Path, fallback_ns: int) -> int:
    """Trial-clock time of the emulator's start line (schedules count from it)."""
    log = trial_dir / "emulator.jsonl"
    deadline = time.monotonic() + EMULATOR_START_WAIT_S
    while time.monotonic() < deadline:
        try:
            for line in log.read_text(errors="replace").splitlines():
                row = json.loads(line)
                if row.get("event") == "start":
                    return int(row["t_ns"])
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    return fallback_ns


def argv_for(ctx, flow: Flow, role: str, begin_ns: int) -> list[str]:  # noqa: ANN001
    """The command of one side of one flow (ctx: testbed.trial.TrialContext)."""
    plan = ctx.topo.plans[flow.path]
    client_addr, server_addr = cross_addresses(plan, flow.k)
    sender_is_server = flow.direction == "down"
    local, peer = (server_addr, client_addr) if sender_is_server else (client_addr, server_addr)
    if role == "receive":
        local, peer = peer, local
    index = [f.flow for f in flows(ctx.scenario)].index(flow.flow)
    argv = [sys.executable, "-m", "testbed.crosstraffic", role,
            "--proto", "udp" if flow.kind == "udp_cbr" else "tcp",
            "--local", local, "--peer", peer, "--port", str(BASE_PORT + index),
            "--flow", flow.flow, "--kind", flow.kind, "--path", flow.path,
            "--direction", flow.direction, "--t0-ns", str(ctx.t0_ns),
            "--begin-ns", str(begin_ns + int(flow.start_s * 1e9)),
            "--stop-ns", str(begin_ns + int(flow.stop_s * 1e9)),
            "--log", str(Path(ctx.dir) / LOG_NAME)]  # fmt: skip
    if flow.cc is not None:
        argv += ["--cc", kernel_cc(flow.cc, ctx.spec.cc)]
    if flow.kind == "tcp_onoff":
        argv += ["--on-s", str(flow.on_s), "--off-s", str(flow.off_s)]
    if flow.kind == "udp_cbr":
        argv += ["--rate-bps", str(flow.rate_bps), "--packet-bytes", str(flow.packet_bytes)]
    return argv


def start(ctx) -> list:  # noqa: ANN001  ctx: testbed.trial.TrialContext
    """Start every cross flow's receiver, then its sender (supervised, stopped at teardown)."""
    all_flows = flows(ctx.scenario)
    if not all_flows:
        return []
    begin_ns = _emulator_start_ns(Path(ctx.dir), time.monotonic_ns() - ctx.t0_ns)
    env = {"PYTHONPATH": str(ctx.repo)}
    procs = []
    for flow in all_flows:
        sender_role = "server" if flow.direction == "down" else "client"
        receiver_role = "client" if sender_role == "server" else "server"
        # watch="failure": a flow ends by itself when its time is up (status 0); a crash or
        # a kill fails the trial, naming the flow (testbed/trial.py).
        procs.append(ctx.spawn(receiver_role, f"cross-{flow.flow}-receive",
                               argv_for(ctx, flow, "receive", begin_ns), env=env,
                               watch="failure"))  # fmt: skip
        procs.append(ctx.spawn(sender_role, f"cross-{flow.flow}-send",
                               argv_for(ctx, flow, "send", begin_ns), env=env,
                               watch="failure"))  # fmt: skip
    if ctx.events:
        ctx.events.write("cross_traffic", flows=[f.flow for f in all_flows], begin_ns=begin_ns)
    return procs


# --- the generator itself ---------------------------------------------------------------

_stop = {"now": False}


def _on_term(_signum: int, _frame: object) -> None:
    _stop["now"] = True


class _Log:
    def __init__(self, path: Path, t0_ns: int, base: dict) -> None:
        # O_APPEND: several processes write whole lines to one file.
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.t0_ns = t0_ns
        self.base = base

    def now(self) -> int:
        return time.monotonic_ns() - self.t0_ns

    def write(self, event: str, **fields: object) -> None:
        line = {"t_ns": self.now(), "src": "cross", "event": event, **self.base, **fields}
        os.write(self.fd, (json.dumps(line) + "\n").encode())


def _sleep_until(t_ns: int, log: _Log) -> None:
    while not _stop["now"]:
        left = t_ns - log.now()
        if left <= 0:
            return
        time.sleep(min(left / 1e9, 0.1))


def _send_tcp(args: argparse.Namespace, log: _Log) -> dict:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.cc.encode())
    sock.bind((args.local, 0))
    _sleep_until(args.begin_ns, log)
    deadline = time.monotonic() + CONNECT_RETRY_S
    while True:
        try:
            sock.connect((args.peer, args.port))
            break
        except (ConnectionRefusedError, OSError):
            if time.monotonic() > deadline or _stop["now"]:
                raise
            time.sleep(0.05)
    sock.settimeout(0.1)
    chunk = b"\0" * TCP_CHUNK_BYTES
    sent = 0
    period_ns = int(((args.on_s or 0) + (args.off_s or 0)) * 1e9)
    on_ns = int((args.on_s or 0) * 1e9)
    while not _stop["now"] and log.now() < args.stop_ns:
        if period_ns and (log.now() - args.begin_ns) % period_ns >= on_ns:
            time.sleep(0.01)  # off phase
            continue
        try:
            sent += sock.send(chunk)
        except TimeoutError:
            continue
        except OSError:
            break
    sock.close()
    return {"bytes": sent, "cc": args.cc}


def _send_udp(args: argparse.Namespace, log: _Log) -> dict:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((args.local, 0))
    payload = b"\0" * (args.packet_bytes - IP_UDP_HEADER_BYTES)
    interval_ns = args.packet_bytes * 8 * 1e9 / args.rate_bps
    _sleep_until(args.begin_ns, log)
    first_ns = log.now()
    packets = 0
    while not _stop["now"]:
        due_ns = first_ns + int(packets * interval_ns)
        if due_ns >= args.stop_ns:
            break
        now = log.now()
        if now < due_ns:
            time.sleep((due_ns - now) / 1e9)
            continue
        try:
            sock.sendto(payload, (args.peer, args.port))
        except OSError:
            pass  # a full socket buffer: the packet is lost, as on a real sender
        packets += 1
    ip_bytes = packets * args.packet_bytes
    return {"packets": packets, "ip_bytes": ip_bytes, "first_send_t_ns": first_ns}


def _receive(args: argparse.Namespace, log: _Log) -> dict:
    udp = args.proto == "udp"
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if udp else socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.local, args.port))
    listener.settimeout(0.1)
    conn = listener
    if not udp:
        listener.listen(1)
    buf = bytearray(RECV_BYTES)
    total = packets = interval_bytes = 0
    first_ns = last_ns = None
    next_stats = log.now() + STATS_INTERVAL_NS
    end_ns = args.stop_ns + RECEIVER_GRACE_NS
    while not _stop["now"] and log.now() < end_ns:
        now = log.now()
        if now >= next_stats:
            if interval_bytes:
                log.write("flow_stats", interval_ms=STATS_INTERVAL_NS // 1_000_000,
                          bytes=interval_bytes,
                          goodput_bps=interval_bytes * 8 * 1e9 / STATS_INTERVAL_NS)  # fmt: skip
            interval_bytes = 0
            while next_stats <= now:
                next_stats += STATS_INTERVAL_NS
        try:
            if conn is listener and not udp:
                conn, _ = listener.accept()
                conn.settimeout(0.1)
                continue
            n = conn.recv_into(buf)
        except TimeoutError:
            continue
        except OSError:
            break
        if n == 0 and not udp:
            break  # the sender closed
        now = log.now()
        first_ns = now if first_ns is None else first_ns
        last_ns = now
        total += n
        packets += 1
        interval_bytes += n
    if interval_bytes:
        log.write("flow_stats", interval_ms=STATS_INTERVAL_NS // 1_000_000, bytes=interval_bytes,
                  goodput_bps=interval_bytes * 8 * 1e9 / STATS_INTERVAL_NS)  # fmt: skip
    out: dict = {"bytes": total, "first_byte_t_ns": first_ns, "last_byte_t_ns": last_ns}
    if udp:
        out["packets"] = packets
        out["ip_bytes"] = total + packets * IP_UDP_HEADER_BYTES
    if first_ns is not None and last_ns is not None and last_ns > first_ns:
        out["goodput_bps"] = total * 8 * 1e9 / (last_ns - first_ns)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.crosstraffic")
    parser.add_argument("role", choices=["send", "receive"])
    parser.add_argument("--proto", choices=["tcp", "udp"], required=True)
    parser.add_argument("--local", required=True, help="address to bind")
    parser.add_argument("--peer", required=True, help="the other end's address")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--flow", required=True)
    parser.add_argument("--kind", default="")
    parser.add_argument("--path", default="")
    parser.add_argument("--direction", default="")
    parser.add_argument("--t0-ns", type=int, required=True, help="trial clock origin")
    parser.add_argument("--begin-ns", type=int, required=True, help="start, trial clock")
    parser.add_argument("--stop-ns", type=int, required=True, help="stop, trial clock")
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--cc", default="cubic")
    parser.add_argument("--on-s", type=float, default=None)
    parser.add_argument("--off-s", type=float, default=None)
    parser.add_argument("--rate-bps", type=float, default=None)
    parser.add_argument("--packet-bytes", type=int, default=1200)
    args = parser.parse_args(argv)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _on_term)
    base = {"flow": args.flow, "kind": args.kind, "path": args.path, "dir": args.direction,
            "role": "receiver" if args.role == "receive" else "sender"}  # fmt: skip
    log = _Log(args.log, args.t0_ns, base)
    log.write("flow_start", local=args.local, peer=args.peer, port=args.port, cc=args.cc)
    if args.role == "receive":
        totals = _receive(args, log)
    elif args.proto == "udp":
        totals = _send_udp(args, log)
    else:
        totals = _send_tcp(args, log)
    log.write("flow_totals", **totals)
    return 0


if __name__ == "__main__":
    sys.exit(main())
