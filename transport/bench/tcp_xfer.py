"""TCP source/sink for the transport benchmark (transport/bench/bench.py).

serve: accept connections; each sends a decimal byte count and a newline, and gets that many
seeded pseudo-random bytes back (seed = the count), then the server closes its side.
get:   connect, ask for N bytes, read to EOF, check SHA-256 against the same generator and
print one JSON line: {"bytes", "secs", "goodput_bps", "sha_ok"} (secs = connect to last byte);
with --timeline-ms T also "timeline": [[CLOCK_MONOTONIC ns, bytes received so far], ...]
sampled every T ms (the benchmark aligns it with the emulator's schedule).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import socket
import sys
import threading
import time

CHUNK_BYTES = 1 << 16


def stream(n: int):
    rng = random.Random(n)
    left = n
    while left:
        k = min(left, CHUNK_BYTES)
        yield rng.randbytes(k)
        left -= k


def serve(host: str, port: int, cc: str | None) -> None:
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, port))
    srv.listen(64)
    print("listening", flush=True)

    def one(conn: socket.socket) -> None:
        with conn:
            if cc:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
            n = int(conn.makefile("rb").readline())
            for block in stream(n):
                conn.sendall(block)
            conn.shutdown(socket.SHUT_WR)
            conn.recv(1)  # wait for the peer's close

    while True:
        conn, _ = srv.accept()
        threading.Thread(target=one, args=(conn,), daemon=True).start()


def get(host: str, port: int, n: int, cc: str | None, timeline_ms: int) -> None:
    start = time.monotonic()
    timeline: list[list[int]] = []
    next_mark = time.monotonic_ns()
    c = socket.create_connection((host, port))
    if cc:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    c.sendall(f"{n}\n".encode())
    h = hashlib.sha256()
    got = 0
    buf = bytearray(1 << 18)
    view = memoryview(buf)
    while True:
        k = c.recv_into(view)
        if k == 0:
            break
        h.update(view[:k])
        got += k
        if timeline_ms:
            now = time.monotonic_ns()
            if now >= next_mark:
                timeline.append([now, got])
                next_mark = now + timeline_ms * 1_000_000
    secs = time.monotonic() - start
    if timeline_ms:
        timeline.append([time.monotonic_ns(), got])
    c.close()
    expected = hashlib.sha256()
    for block in stream(n):
        expected.update(block)
    out: dict = {"bytes": got, "secs": round(secs, 4), "goodput_bps": round(got * 8 / secs),
                 "sha_ok": got == n and h.digest() == expected.digest()}  # fmt: skip
    if timeline_ms:
        out["timeline"] = timeline
    print(json.dumps(out), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--host", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--cc", default=None, help="TCP congestion control of the sending socket")
    g = sub.add_parser("get")
    g.add_argument("--host", required=True)
    g.add_argument("--port", type=int, required=True)
    g.add_argument("--bytes", type=int, required=True)
    g.add_argument("--cc", default=None)
    g.add_argument("--timeline-ms", type=int, default=0, help="sample received bytes every T ms")
    a = ap.parse_args()
    if a.cmd == "serve":
        serve(a.host, a.port, a.cc)
    else:
        get(a.host, a.port, a.bytes, a.cc, a.timeline_ms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
