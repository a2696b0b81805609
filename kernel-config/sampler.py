"""Per-subflow statistics from the kernel, sampled in the server namespace.

    python -m kernel_config.sampler --out kernel-subflows.jsonl --t0-ns <int>
        [--port 8080] [--interval-ms 150]

Every interval it runs `ss -tinH` and writes one `subflow` line (CONTRACTS §5.3) per TCP
socket whose local port is the server's (MPTCP subflows and plain TCP alike). A second
`ss -tinEH` process reports sockets as the kernel destroys them, with their final counters,
so bytes sent after the last sample are not lost (`"final": true` lines). Runs until
SIGTERM/SIGINT, then takes one last sample and exits 0.

The path comes from the client's address (CONTRACTS §3): 10.1.1.2 is wifi, 10.2.1.2 lte.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from kernel_config.ss_parser import SocketRecord, parse_ss

PATH_BY_CLIENT_ADDR = {"10.1.1.2": "wifi", "10.2.1.2": "lte"}
SRC = "kernel-ss"


def path_of(record: SocketRecord, paths: dict[str, str] | None = None) -> str:
    """Path name of a socket, from its client address (`paths`: address -> name)."""
    return (paths or PATH_BY_CLIENT_ADDR).get(record.peer_addr, "other")


def subflow_line(
    record: SocketRecord,
    t_ns: int,
    *,
    cc: str | None,
    token: str | None,
    final: bool,
    mptcp: bool | None,
) -> dict[str, Any]:
    """One CONTRACTS §5.3 line; fields whose meaning differs from mpproxy's are left out.

    `mptcp` is None for a socket destroyed before any sample saw it (ss -E does not say)."""
    mss_bytes = record.integer("mss")
    pacing = record.number("pacing_rate")
    delivery = record.number("delivery_rate")
    return {
        "t_ns": t_ns,
        "src": SRC,
        "event": "subflow",
        "conn": token if token else record.four_tuple,
        "path": path_of(record),
        "mptcp": mptcp,
        "subflow": record.four_tuple,
        "state": record.state,
        "final": final,
        "cwnd_bytes": record.integer("cwnd") * mss_bytes,
        "inflight_bytes": record.integer("unacked") * mss_bytes,
        "srtt_ms": record.srtt_ms,
        "rttvar_ms": record.rttvar_ms,
        "min_rtt_ms": record.number("minrtt"),
        "pacing_rate_bps": None if pacing is None else int(pacing),
        "delivery_rate_bps": None if delivery is None else int(delivery),
        "cc_state": cc,
        "bytes_sent_total": record.integer("bytes_sent"),
        "bytes_acked_total": record.integer("bytes_acked"),
        "bytes_retrans_total": record.integer("bytes_retrans"),
        "pkts_retrans_total": record.pkts_retrans_total,
        "segs_out_total": record.integer("segs_out"),
        "data_segs_out_total": record.integer("data_segs_out"),
        "wire_bytes_sent_total": record.wire_bytes_sent_estimate(mptcp=bool(mptcp)),
    }


class SubflowSampler:
    """Remembers what it saw of each socket so that destroy events get their CC and token."""

    def __init__(self, out: IO[str], t0_ns: int, port: int) -> None:
        self.out = out
        self.t0_ns = t0_ns
        self.port = port
        self.cc_by_socket: dict[str, str | None] = {}
        self.token_by_socket: dict[str, str | None] = {}
        self.lock = threading.Lock()

    def _ours(self, record: SocketRecord) -> bool:
        # TIME-WAIT and other info-less sockets carry no counters: skip rather than log zeros.
        return record.local_port == self.port and record.peer_port != 0 and bool(record.info)

    def write(self, records: list[SocketRecord], *, final: bool) -> None:
        t_ns = time.monotonic_ns() - self.t0_ns
        with self.lock:
            for record in records:
                if not self._ours(record):
                    continue
                key = record.four_tuple
                if not final:
                    self.cc_by_socket[key] = record.cc or self.cc_by_socket.get(key)
                    if record.is_mptcp_subflow:
                        self.token_by_socket[key] = record.mptcp_token
                    elif key not in self.token_by_socket:
                        self.token_by_socket[key] = None
                seen = key in self.token_by_socket
                token = self.token_by_socket.get(key)
                line = subflow_line(
                    record,
                    t_ns,
                    cc=self.cc_by_socket.get(key),
                    token=token,
                    final=final,
                    mptcp=(token is not None) if seen else None,
                )
                self.out.write(json.dumps(line) + "\n")
            self.out.flush()

    def sample(self) -> None:
        done = subprocess.run(["ss", "-tinH"], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"sampler: ss -tinH failed: {done.stderr.strip()}", file=sys.stderr)
            return
        self.write(parse_ss(done.stdout), final=False)

    def follow_destroy_events(self, events: subprocess.Popen[str]) -> None:
        """Read `ss -tinEH` socket by socket (a header line and its info line)."""
        assert events.stdout is not None
        pending: list[str] = []
        for line in events.stdout:
            if line[:1].isspace():
                pending.append(line)
                self.write(parse_ss("".join(pending)), final=True)
                pending = []
            else:
                pending = [line]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kernel_config.sampler", description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="kernel-subflows.jsonl to write")
    parser.add_argument("--t0-ns", type=int, required=True, help="trial clock origin")
    parser.add_argument("--port", type=int, default=8080, help="server port (default 8080)")
    parser.add_argument(
        "--paths", default="", help="client address=path name, comma-separated (default: wifi, lte)"
    )
    parser.add_argument(
        "--interval-ms", type=int, default=150, help="sampling interval (default 150)"
    )
    args = parser.parse_args(argv)
    if args.paths:
        # The trial's address plan (ADDR=NAME,...): names every path, not only wifi/lte.
        PATH_BY_CLIENT_ADDR.clear()
        PATH_BY_CLIENT_ADDR.update(item.split("=", 1) for item in args.paths.split(","))
    if not 20 <= args.interval_ms <= 10_000:
        print(f"--interval-ms {args.interval_ms}: valid is 20..10000", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with args.out.open("a", encoding="utf-8") as out:
        sampler = SubflowSampler(out, args.t0_ns, args.port)
        # stdbuf: ss writes to a pipe, which stdio would buffer until exit.
        events = subprocess.Popen(
            ["stdbuf", "-oL", "ss", "-tinEH"], stdout=subprocess.PIPE, text=True
        )
        reader = threading.Thread(target=sampler.follow_destroy_events, args=(events,))
        reader.daemon = True
        reader.start()
        next_at = time.monotonic()
        while not stop.is_set():
            sampler.sample()
            next_at += args.interval_ms / 1000
            stop.wait(max(next_at - time.monotonic(), 0.0))
        sampler.sample()
        time.sleep(0.2)  # let destroy events already queued be written
        events.terminate()
        events.wait(timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
