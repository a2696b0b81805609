"""Control transfer: measure what each emulated path actually delivers (CONTRACTS §5.6).

For each path of the scenario (the trial's address plan) and direction (up = client→server,
down = server→client):

1. RTT, idle: ECHO_COUNT UDP echoes from the client's path address to the server's path
   address, one every ECHO_INTERVAL_S; min/median/max of the answered ones.
2. Goodput: one TCP connection bound to the client's path address sends for
   TRANSFER_S seconds in that direction; the receiver counts the bytes between the first
   and the last byte it got (so connection set-up and slow start's first RTT are outside
   the clock only as far as the first byte is).

The server side (`python -m testbed.probe server`) runs in the server namespace; the
client side (`python -m testbed.probe client ...`) in the client namespace prints one
JSON line; `run_control(ctx)` drives both and writes control.jsonl and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import sys
import threading
import time

PROBE_PORT = 5201
TRANSFER_S = 3.0
ECHO_COUNT = 20
ECHO_INTERVAL_S = 0.02
ECHO_TIMEOUT_S = 1.0
CHUNK_BYTES = 64 * 1024
HEADER_MAX_BYTES = 1024
# A control trial whose goodput is below this share of the configured rate says the
# machine (or the emulator) could not keep up; the trial is marked invalid.
MIN_GOODPUT_SHARE = 0.8

# The two-path plan's (client address, server address) per path, CONTRACTS §3; a trial
# probes the paths of its own address plan (ctx.topo.plans).
PATH_ADDRESSES = {
    "wifi": ("10.1.1.2", "10.1.2.2"),
    "lte": ("10.2.1.2", "10.2.2.2"),
}


def path_addresses(ctx) -> dict[str, tuple[str, str]]:  # ctx: testbed.trial.TrialContext
    """path -> (client address, server address) of every path of the trial, in file order."""
    plans = getattr(getattr(ctx, "topo", None), "plans", None)
    if not plans:
        return dict(PATH_ADDRESSES)
    return {name: (p.client_addr, p.server_addr) for name, p in plans.items()}


DIRECTIONS = ("up", "down")


# --- server ---------------------------------------------------------------------------------


def _read_header(conn: socket.socket) -> dict:
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(1)
        if not chunk:
            raise ConnectionError("connection closed before the probe header")
        data += chunk
        if len(data) > HEADER_MAX_BYTES:
            raise ValueError("probe header too long")
    return json.loads(data)


def _receive_all(conn: socket.socket) -> tuple[int, float]:
    """Bytes received until EOF, and seconds from the first to the last byte."""
    total = 0
    first = last = None
    while True:
        chunk = conn.recv(CHUNK_BYTES)
        if not chunk:
            break
        now = time.monotonic()
        first = now if first is None else first
        last = now
        total += len(chunk)
    return total, (last - first) if first is not None and last is not None else 0.0


def _send_for(conn: socket.socket, duration_s: float) -> int:
    payload = b"\0" * CHUNK_BYTES
    sent = 0
    deadline = time.monotonic() + duration_s
    while time.monotonic() < deadline:
        sent += conn.send(payload)
    return sent


def _serve_tcp_connection(conn: socket.socket) -> None:
    with conn:
        try:
            header = _read_header(conn)
            if header["dir"] == "up":
                received, duration_s = _receive_all(conn)
                reply = {"bytes": received, "duration_s": duration_s}
                conn.sendall((json.dumps(reply) + "\n").encode())
            else:
                _send_for(conn, float(header["duration_s"]))
                conn.shutdown(socket.SHUT_WR)
                conn.recv(1)  # wait for the client to close
        except (OSError, ValueError, KeyError) as exc:
            print(f"probe server: connection failed: {exc}", file=sys.stderr)


def _serve_udp_echo(sock: socket.socket) -> None:
    while True:
        data, peer = sock.recvfrom(2048)
        sock.sendto(data, peer)


def serve(port: int) -> None:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("0.0.0.0", port))
    threading.Thread(target=_serve_udp_echo, args=(udp,), daemon=True).start()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(16)
    print(f"probe server: listening on TCP and UDP port {port}", flush=True)
    while True:
        conn, _peer = listener.accept()
        threading.Thread(target=_serve_tcp_connection, args=(conn,), daemon=True).start()


# --- client ---------------------------------------------------------------------------------


def echo_rtts_ms(src: str, dst: str, port: int, count: int = ECHO_COUNT) -> tuple[list[float], int]:
    """RTTs of answered echoes and the number lost."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((src, 0))
    sock.settimeout(ECHO_TIMEOUT_S)
    rtts: list[float] = []
    lost = 0
    for seq in range(count):
        sent_ns = time.monotonic_ns()
        sock.sendto(struct.pack("!IQ", seq, sent_ns), (dst, port))
        deadline = time.monotonic() + ECHO_TIMEOUT_S
        while True:
            try:
                data, _ = sock.recvfrom(2048)
            except TimeoutError:
                lost += 1
                break
            got_seq, got_sent_ns = struct.unpack("!IQ", data[:12])
            if got_seq == seq:
                rtts.append((time.monotonic_ns() - got_sent_ns) / 1e6)
                break
            if time.monotonic() > deadline:  # only late answers of earlier probes came
                lost += 1
                break
        time.sleep(ECHO_INTERVAL_S)
    sock.close()
    return rtts, lost


def transfer(src: str, dst: str, port: int, direction: str, duration_s: float) -> tuple[int, float]:
    """Bytes and seconds measured by the receiver of one TCP transfer."""
    conn = socket.create_connection((dst, port), timeout=duration_s + 30, source_address=(src, 0))
    with conn:
        conn.sendall((json.dumps({"dir": direction, "duration_s": duration_s}) + "\n").encode())
        if direction == "up":
            _send_for(conn, duration_s)
            conn.shutdown(socket.SHUT_WR)
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = conn.recv(1024)
                if not chunk:
                    break
                reply += chunk
            data = json.loads(reply)
            return int(data["bytes"]), float(data["duration_s"])
        return _receive_all(conn)


def measure_path(
    path: str, direction: str, port: int, duration_s: float, *, src: str, dst: str
) -> dict:
    rtts, lost = echo_rtts_ms(src, dst, port)
    nbytes, seconds = transfer(src, dst, port, direction, duration_s)
    return {
        "path": path,
        "dir": direction,
        "bytes": nbytes,
        "duration_s": round(seconds, 6),
        "goodput_bps": round(nbytes * 8 / seconds) if seconds > 0 else None,
        "rtt_ms_min": round(min(rtts), 3) if rtts else None,
        "rtt_ms_median": round(statistics.median(rtts), 3) if rtts else None,
        "rtt_ms_max": round(max(rtts), 3) if rtts else None,
        "echo_lost": lost,
    }


# --- orchestration (runs in the testbed process) --------------------------------------------


def _configured(link: dict) -> tuple[int | None, float | None]:
    rate = link.get("rate", {})
    rate_bps = int(rate["bps"]) if rate.get("kind") == "constant" else None
    return rate_bps, link.get("delay_ms")


def run_control(ctx, port: int = PROBE_PORT, duration_s: float | None = None) -> list[dict]:
    """Measure every path and direction; write control.jsonl; print a table; flag shortfalls.

    duration_s: seconds per transfer; default TRANSFER_S, or TESTBED_CONTROL_TRANSFER_S
    from the environment (the tests shorten it).
    """
    if duration_s is None:
        duration_s = float(os.environ.get("TESTBED_CONTROL_TRANSFER_S", TRANSFER_S))
    rows = []
    log_path = ctx.dir / "control.jsonl"
    for path, (src, dst) in path_addresses(ctx).items():
        for direction in DIRECTIONS:
            done = ctx.topo.run(
                "client",
                [sys.executable, "-m", "testbed.probe", "client", "--path", path,
                 "--dir", direction, "--src", src, "--dst", dst, "--port", str(port),
                 "--duration-s", str(duration_s)],
                timeout=duration_s + ECHO_COUNT * (ECHO_TIMEOUT_S + ECHO_INTERVAL_S) + 60,
            )  # fmt: skip
            measured = json.loads(done.stdout.strip().splitlines()[-1])
            link = ctx.scenario["paths"][path][direction]
            rate_bps, delay_ms = _configured(link)
            row = {
                "t_ns": time.monotonic_ns() - ctx.t0_ns,
                "src": "testbed",
                "event": "path_probe",
                **measured,
                "echo_sent": ECHO_COUNT,
                "configured_rate_bps": rate_bps,
                "configured_delay_ms": delay_ms,
            }
            with open(log_path, "a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")
            rows.append(row)
            goodput = measured["goodput_bps"]
            if rate_bps and (goodput is None or goodput < MIN_GOODPUT_SHARE * rate_bps):
                ctx.mark_invalid(
                    f"control transfer {path}/{direction}: goodput {goodput} bit/s is below "
                    f"{MIN_GOODPUT_SHARE:.0%} of the configured {rate_bps} bit/s"
                )
    print(format_table(rows, ctx.scenario), flush=True)
    return rows


def _fmt(value: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "-" if value is None else f"{value / scale:.{digits}f}"


def format_table(rows: list[dict], scenario: dict) -> str:
    header = (
        f"{'path':<5} {'dir':<5} {'cfg Mbit/s':>10} {'cfg RTT ms':>10} {'goodput Mbit/s':>14} "
        f"{'RTT min/med/max ms':>22} {'echo lost':>9}"
    )
    lines = [header]
    for row in rows:
        links = scenario["paths"][row["path"]]
        cfg_rtt = sum(float(links[d].get("delay_ms") or 0.0) for d in DIRECTIONS)
        rtt = "/".join(_fmt(row[k]) for k in ("rtt_ms_min", "rtt_ms_median", "rtt_ms_max"))
        lines.append(
            f"{row['path']:<5} {row['dir']:<5} {_fmt(row['configured_rate_bps'], 1e6):>10} "
            f"{cfg_rtt:>10.1f} {_fmt(row['goodput_bps'], 1e6, 2):>14} {rtt:>22} "
            f"{row.get('echo_lost', '-'):>9}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m testbed.probe", description="Control transfer across one emulated path."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    server = sub.add_parser("server", help="TCP sink/source and UDP echo (server namespace)")
    server.add_argument("--port", type=int, default=PROBE_PORT, help=f"default {PROBE_PORT}")
    client = sub.add_parser("client", help="measure one path and direction; prints JSON")
    client.add_argument("--path", required=True, help="the path's name (for the log line)")
    client.add_argument("--dir", required=True, choices=DIRECTIONS)
    client.add_argument("--src", required=True, help="client address to bind")
    client.add_argument("--dst", required=True, help="server address")
    client.add_argument("--port", type=int, default=PROBE_PORT, help=f"default {PROBE_PORT}")
    client.add_argument(
        "--duration-s", type=float, default=TRANSFER_S, help=f"seconds (default {TRANSFER_S})"
    )
    args = parser.parse_args(argv)
    if args.command == "server":
        serve(args.port)
        return 0
    result = measure_path(
        args.path, args.dir, args.port, args.duration_s, src=args.src, dst=args.dst
    )
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
