"""Packet captures of a trial (`run_trials.sh --pcap`): per path, one dumpcap on each of the
router's two interfaces, so that a packet the emulator drops is in one file and not in the
other.

    pcap/<path>-client-side.pcap   router interface c-<path> (the client's link)
    pcap/<path>-server-side.pcap   router interface s-<path> (the server's link)
    pcap/capture.json              settings, the capture's start on the trial clock, and per
                                   file what dumpcap counted and whether the size cap was hit

Packets are IPv4 only, minus the router's own addresses (ARP, neighbour discovery and
anything addressed to the router are not forwarded, so not the emulator's): every packet
in the files crossed an emulated link, or was dropped by it. A downlink packet enters on
the server side and leaves on the client side; an uplink packet the other way round
(metrics/pcap.py counts both).

Timestamps in the files are the host's wall clock (CLOCK_REALTIME, as every capture tool
writes them); a packet's trial time is `timestamp_unix_ns - clock.t0_unix_ns` of
trial.json (copied into capture.json). Headers only by default: the snap length keeps the
Ethernet, IP, TCP (with its MPTCP options) and UDP headers and the user transport's header
and first frame.

The captures start before the emulator and stop after it, so that nothing the emulator
held when the trial ended is counted as dropped. `--pcap-max-mb` caps each file: dumpcap
stops writing that file when it reaches the cap (the trial goes on); capture.json says
`cap_hit: true` and testbed.jsonl has a `warning` naming the file and the time.

Settings reach trial processes (local jobs, Slurm tasks, interactive mode) through the
environment variable TESTBED_PCAP, as --sched-trace's do: the trial id stays the same with
and without captures.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from common.files import write_json_atomically

if TYPE_CHECKING:
    from testbed.supervisor import Process
    from testbed.trial import TrialContext

PCAP_ENV = "TESTBED_PCAP"
CAPTURE_DIR = "pcap"
CAPTURE_BINARY = "dumpcap"  # Debian package wireshark-common (pulled in by tshark)
PROCESS_PREFIX = "capture-"
# Ethernet 14 + IPv4 20 + TCP 60 (20 + 40 B of options: MPTCP's DSS, MP_JOIN) = 94;
# UDP 8 + the user transport's 19 B header + a DATA frame's 12 B header = 73. 128 B
# keeps both with room for IP options.
DEFAULT_SNAPLEN_BYTES = 128
MIN_SNAPLEN_BYTES = 64
DEFAULT_MAX_MB = 200.0  # per file
CAPTURE_BUFFER_MB = 16  # kernel buffer per capture: bursts must not be dropped by the capture
CAPTURE_READY_TIMEOUT_S = 5.0
# libpcap hands packets to dumpcap a block at a time (TPACKET_V3), at the latest when the
# block's timeout passes; a SIGTERM before that loses the last partial block (the last
# ~25 ms of a trial, measured: 15 packets on a busy path). Waiting this long delivers it.
CAPTURE_DRAIN_S = 1.0
SIDES = ("client", "server")


@dataclass(frozen=True)
class CaptureSettings:
    snaplen_bytes: int = DEFAULT_SNAPLEN_BYTES
    max_mb: float = DEFAULT_MAX_MB

    def problems(self) -> list[str]:
        """What makes these settings invalid (empty: fine), for people."""
        reasons = []
        if not MIN_SNAPLEN_BYTES <= self.snaplen_bytes <= 262_144:
            reasons.append(
                f"--pcap-snaplen {self.snaplen_bytes}: must be {MIN_SNAPLEN_BYTES}..262144 bytes "
                f"(default {DEFAULT_SNAPLEN_BYTES}: headers only)"
            )
        if not 0 < self.max_mb <= 1_000_000:
            reasons.append(f"--pcap-max-mb {self.max_mb:g}: must be above 0 (megabytes per file)")
        return reasons

    def to_env(self) -> str:
        return json.dumps(asdict(self))


def settings_from_env(environ: dict[str, str] | None = None) -> CaptureSettings | None:
    """The run's capture settings, or None when the run captures nothing."""
    raw = (os.environ if environ is None else environ).get(PCAP_ENV)
    if not raw:
        return None
    data = json.loads(raw)
    return CaptureSettings(int(data["snaplen_bytes"]), float(data["max_mb"]))


def capture_file(path_name: str, side: str) -> str:
    """File name of one capture inside the trial's pcap/ folder."""
    return f"{path_name}-{side}-side.pcap"


def capture_filter(router_addrs: list[str]) -> str:
    """BPF: forwarded IPv4 only (not ARP, IPv6, or packets to/from the router itself)."""
    return "ip" + "".join(f" and not host {a}" for a in router_addrs)


def dumpcap_argv(iface: str, out: Path, settings: CaptureSettings, bpf: str) -> list[str]:
    cap_kb = max(1, int(settings.max_mb * 1000))
    return [CAPTURE_BINARY, "-q", "-i", iface, "-s", str(settings.snaplen_bytes), "-P",
            "-B", str(CAPTURE_BUFFER_MB), "-f", bpf, "-a", f"filesize:{cap_kb}",
            "-w", str(out)]  # fmt: skip


_STATS = re.compile(r"Packets received/dropped on interface '[^']*': (\d+)/(\d+)")


def dumpcap_counts(stderr_text: str) -> tuple[int | None, int | None]:
    """(packets received, packets dropped by the capture) from dumpcap's closing line."""
    match = _STATS.search(stderr_text)
    return (int(match[1]), int(match[2])) if match else (None, None)


@dataclass
class _One:
    path: str
    side: str
    iface: str
    file: Path
    process: Process


class Captures:
    """The running captures of one trial; `finish` stops them and writes capture.json."""

    def __init__(self, ctx: TrialContext, settings: CaptureSettings) -> None:
        self.ctx = ctx
        self.settings = settings
        self.dir = Path(ctx.dir) / CAPTURE_DIR
        self.items: list[_One] = []
        self.started_t_ns: int | None = None

    def start(self) -> Captures:
        self.dir.mkdir(parents=True, exist_ok=True)
        for name, plan in self.ctx.topo.plans.items():
            bpf = capture_filter([plan.router_client_side_addr, plan.router_server_side_addr])
            for side in SIDES:
                iface = getattr(plan, f"router_{side}_side_iface")
                out = self.dir / capture_file(name, side)
                argv = dumpcap_argv(iface, out, self.settings, bpf)
                proc = self.ctx.spawn("router", f"{PROCESS_PREFIX}{iface}", argv)
                self.items.append(_One(name, side, iface, out, proc))
        self._wait_ready()
        self.started_t_ns = time.monotonic_ns() - self.ctx.t0_ns
        if self.ctx.events:
            self.ctx.events.write("capture", action="start", dir=CAPTURE_DIR,
                                  snaplen_bytes=self.settings.snaplen_bytes,
                                  max_mb=self.settings.max_mb,
                                  files=[c.file.name for c in self.items])  # fmt: skip
        return self

    def _wait_ready(self) -> None:
        """dumpcap writes the file header once it captures: wait for every file (or exit)."""
        deadline = time.monotonic() + CAPTURE_READY_TIMEOUT_S
        pending = list(self.items)
        while pending and time.monotonic() < deadline:
            pending = [c for c in pending if not c.file.is_file() and c.process.poll() is None]
            time.sleep(0.02)
        for c in self.items:
            if c.process.poll() is not None:
                why = c.process.stderr_path.read_text(errors="replace")[-400:]
                raise RuntimeError(
                    f"capture on {c.iface} ({c.file}) exited at start with status "
                    f"{c.process.returncode}: {why}"
                )

    def finish(self) -> dict:
        """Stop every capture (after the emulator) and write pcap/capture.json."""
        files = []
        cap_bytes = self.settings.max_mb * 1e6
        time.sleep(CAPTURE_DRAIN_S)
        for c in self.items:
            stopped_by_cap = c.process.poll() is not None  # dumpcap's autostop, before us
            c.process.terminate()
            size = c.file.stat().st_size if c.file.is_file() else 0
            received, dropped = dumpcap_counts(c.process.stderr_path.read_text(errors="replace"))
            cap_hit = stopped_by_cap or size >= 0.99 * cap_bytes
            files.append({
                "file": c.file.name, "path": c.path, "side": c.side, "iface": c.iface,
                "bytes": size, "packets_received": received, "packets_dropped_by_capture": dropped,
                "cap_hit": cap_hit,
            })  # fmt: skip
            if cap_hit and self.ctx.events:
                self.ctx.events.write(
                    "warning",
                    message=f"capture {CAPTURE_DIR}/{c.file.name} reached its size cap of "
                    f"{self.settings.max_mb:g} MB (--pcap-max-mb) and stopped; packets after "
                    "its last one are not in it (the trial went on)",
                )
        clock = {"t0_monotonic_ns": self.ctx.t0_ns}
        t0_unix = _trial_t0_unix_ns(Path(self.ctx.dir))
        summary = {
            "schema": 1,
            "tool": CAPTURE_BINARY,
            "snaplen_bytes": self.settings.snaplen_bytes,
            "max_mb_per_file": self.settings.max_mb,
            "started_t_ns": self.started_t_ns,
            "clock": {**clock, "t0_unix_ns": t0_unix},
            "time_note": "packet trial time = pcap timestamp (Unix ns) - clock.t0_unix_ns",
            "files": files,
        }
        write_json_atomically(self.dir / "capture.json", summary)
        if self.ctx.events:
            self.ctx.events.write("capture", action="stop", dir=CAPTURE_DIR,
                                  cap_hit=any(f["cap_hit"] for f in files),
                                  dropped_by_capture=sum(f["packets_dropped_by_capture"] or 0
                                                         for f in files))  # fmt: skip
        return summary


def _trial_t0_unix_ns(trial_dir: Path) -> int | None:
    try:
        return int(json.loads((trial_dir / "trial.json").read_text())["clock"]["t0_unix_ns"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def run_environment(
    snaplen_bytes: int, max_mb: float, simulated: bool
) -> tuple[dict[str, str], list[str]]:
    """`--pcap`: the environment that turns captures on for every trial of the run (the
    caller sets it for the run's duration only), and what is wrong with the options instead
    (non-empty: nothing to set)."""
    settings = CaptureSettings(snaplen_bytes, max_mb)
    problems = settings.problems()
    if simulated:
        problems.append(
            "--pcap captures emulated trials; the simulator (--engine sim, --cross-validate) "
            "sends no packets"
        )
    return ({} if problems else {PCAP_ENV: settings.to_env()}), problems


def start(ctx: TrialContext) -> Captures | None:
    """Start the trial's captures when the run asked for them (TESTBED_PCAP), else None."""
    settings = settings_from_env()
    if settings is None:
        return None
    return Captures(ctx, settings).start()


def is_capture(proc: Process) -> bool:
    """A capture process: stopped after the emulator, not with the other helpers."""
    return proc.name.startswith(PROCESS_PREFIX)
