"""A UDP probe flow across one emulated path and direction (`linkemu-probe`, built with
emulator/): a receiver, then a paced sender, and the per-packet rows the receiver wrote.

Shared by the emulator's tests (tests/test_emulator_netns.py) and its benchmark
(bench/emulator_bench.py), which measure delay, loss and rate with it.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from testbed.topology import PATHS, Topology

REPO = Path(__file__).resolve().parent.parent
LINKEMU = REPO / "emulator/target/release/linkemu"
PROBE = REPO / "emulator/target/release/linkemu-probe"
PROBE_RT_PRIORITY = 40  # below the emulator's 50: the probe must not delay the emulator
RECEIVER_START_S = 0.2  # the receiver binds before the first packet is sent


def constant_link(
    rate_bps: float,
    delay_ms: float,
    *,
    loss: dict | None = None,
    queue: dict | None = None,
    schedule: list | None = None,
) -> dict:
    """One link of a resolved scenario (docs/CONTRACTS.md §4) at a constant rate, no jitter."""
    return {
        "rate": {"kind": "constant", "bps": rate_bps},
        "delay_ms": delay_ms,
        "jitter_ms": 0.0,
        "loss": loss or {"kind": "none"},
        "queue": queue or {"kind": "packets", "limit": 200},
        "schedule": schedule or [],
    }


def endpoints(path: str, direction: str) -> tuple[str, str, str, str]:
    """(sender role, sender address, receiver role, receiver address) of a path direction."""
    plan = PATHS[path]
    if direction == "up":
        return "client", plan.client_addr, "server", plan.server_addr
    return "server", plan.server_addr, "client", plan.client_addr


class ProbeFlow:
    """`count` datagrams of `payload_bytes` at `pps` from one end of `path` to the other.

    The receiver writes one CSV row per datagram (sequence number, send and receive times in
    ns, ...) to `out` and exits after `idle_s` without traffic."""

    def __init__(
        self,
        topo: Topology,
        name: str,
        path: str,
        direction: str,
        *,
        port: int,
        pps: float,
        count: int,
        out: Path,
        payload_bytes: int = 100,
        idle_s: float = 2.0,
        sender_rt_priority: int | None = PROBE_RT_PRIORITY,
    ) -> None:
        s_role, s_addr, r_role, r_addr = endpoints(path, direction)
        self.name, self.count, self.pps, self.out = name, count, pps, out
        self.receiver = topo.spawn(
            r_role,
            f"recv-{name}",
            [PROBE, "recv", "--bind", f"{r_addr}:{port}", "--out", out, "--idle-s", idle_s],
            rt_priority=PROBE_RT_PRIORITY,
        )
        time.sleep(RECEIVER_START_S)
        self.sender = topo.spawn(
            s_role,
            f"send-{name}",
            [PROBE, "send", "--bind", s_addr, "--to", f"{r_addr}:{port}", "--pps", pps,
             "--count", count, "--bytes", payload_bytes],
            rt_priority=sender_rt_priority,
        )  # fmt: skip

    def rows(self, receiver_timeout_s: float = 30) -> np.ndarray:
        """Waits for both ends; the receiver's rows. RuntimeError naming the stderr of an
        end that failed."""
        self.sender.wait(self.count / self.pps + 60)
        self.receiver.wait(receiver_timeout_s)
        for end in (self.sender, self.receiver):
            if end.poll() != 0:
                raise RuntimeError(
                    f"probe {self.name}: {end.name} exited with {end.poll()}: "
                    f"{end.stderr_path.read_text()[-2000:]}"
                )
        return np.loadtxt(self.out, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)

    def lost(self) -> set[int]:
        """Sequence numbers that never arrived."""
        return set(range(self.count)) - set(self.rows()[:, 0].tolist())
