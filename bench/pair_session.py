"""Player sessions in a minimal namespace pair, without the testbed topology.

    .venv/bin/python bench/pair_session.py --player dashjs --duration-s 60 --reps 3
    .venv/bin/python bench/pair_session.py --player gstreamer --rate-mbit 1 --duration-s 60
    .venv/bin/python bench/pair_session.py --player dashjs --rate-mbit 8 --rate-step 20:1
    .venv/bin/python bench/pair_session.py --player dashjs --only-rung 1920x1080@5240000
    .venv/bin/python bench/pair_session.py --player dashjs --live-latency-s 3 --duration-s 30

Builds the testbed's namespaces with testbed/topology.py (`tb-<hex6>-c`, `-r`, `-s`; one
path, wifi: client 10.1.1.2, server 10.1.2.2, offloads off, no emulator), optionally a tc tbf
rate limit on the server's egress (the download direction), runs nginx in the server namespace
and the player in the client namespace, and prints one JSON line per session: the session summary
(metrics/player_summary.py) plus the CPU time of the player's whole process tree (rusage of
the waited-for tree, so Chromium's renderer and GPU processes are included). Every namespace
and process it starts is removed at exit. This is how docs/PLAYER.md's figures were measured;
the testbed itself uses testbed/players.py."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from common.processes import stop_popen
from metrics.player_summary import summarize
from server import content, live_mpd, nginx
from testbed import players
from testbed.topology import Topology, path_plans

REPO = Path(__file__).resolve().parent.parent

PATH = "wifi"  # the one path; also the server's interface name (testbed/topology.py)
SERVER_ADDR = path_plans((PATH,))[PATH].server_addr
PORT = 8080
# Chromium start-up and the page load come on top of the video; stalls lengthen a session.
TIMEOUT_MARGIN_S = 60


class NamespacePair:
    """Client and server of the testbed's own topology (testbed/topology.py, the one namespace
    builder) with a single path, wifi, and no emulator: the player reaches the server through
    the router, which forwards without a queue of its own. The optional tbf rate limit sits
    on the server's egress, as on the bare veth pair this tool used before: the sender's own
    qdisc, so TCP Small Queues hold the sender back instead of a queue filling at the router
    (a tbf on the router's egress, 300 ms deep, changed what dash.js chose at 8 Mbit/s)."""

    def __init__(self, workdir: Path, rate_mbit: float | None) -> None:
        self.workdir = workdir
        self.rate_mbit = rate_mbit
        self.topo: Topology | None = None
        self.client = self.server = ""

    def __enter__(self) -> NamespacePair:
        self.topo = Topology.create(self.workdir / "topology", path_names=(PATH,))
        try:
            self.client, self.server = self.topo.ns.client, self.topo.ns.server
            if self.rate_mbit:
                self.set_rate(self.rate_mbit)
        except BaseException:
            self.__exit__()
            raise
        return self

    @property
    def namespaces(self) -> list[str]:
        """client, router, server"""
        return list(self.topo.ns.__dict__.values()) if self.topo else []

    def set_rate(self, mbit: float) -> None:
        """tbf on the server's egress (the download direction); replaces the previous one."""
        assert self.topo is not None
        tbf = ["tbf", "rate", f"{mbit}mbit", "burst", "15kb", "latency", "300ms"]
        self.topo.run("server", ["tc", "qdisc", "replace", "dev", PATH, "root", *tbf])

    def __exit__(self, *exc: object) -> None:
        if self.topo is not None:
            self.topo.teardown()


CLK_TCK = os.sysconf("SC_CLK_TCK")


def tree_cpu_ticks(root_pid: int, seen: dict[int, int]) -> None:
    """Adds every live descendant's utime+stime (ticks) to `seen` (pid -> latest value).
    Sampling /proc catches processes that are killed rather than reaped by their parent, which
    rusage of the waited-for tree can miss."""
    children: dict[int, list[int]] = {}
    stats: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        stats[pid] = int(fields[11]) + int(fields[12])
    stack = [root_pid]
    while stack:
        pid = stack.pop()
        if pid in stats:
            seen[pid] = max(seen.get(pid, 0), stats[pid])
        stack.extend(children.get(pid, []))


def run_session(
    pair: NamespacePair,
    player: str,
    content_dir: Path,
    out: Path,
    duration_s: int,
    screenshot: Path | None,
    rate_steps: list[tuple[float, float]] = (),
    live_latency_s: float | None = None,
) -> dict:
    t0_ns = time.monotonic_ns()
    if live_latency_s is not None:
        # The stream goes on air now: nginx serves <out_dir>/nginx/live.mpd (server/nginx.py).
        live_mpd.write_live_mpd(
            content_dir, out.parent / "nginx" / live_mpd.LIVE_MANIFEST, time.time(), live_latency_s
        )
    argv = ["ip", "netns", "exec", pair.client] + players.player_argv(
        player,
        REPO,
        SERVER_ADDR,
        PORT,
        content_dir,
        out,
        t0_ns,
        duration_s + TIMEOUT_MARGIN_S,
        live_latency_s,
    )
    if screenshot and player == "dashjs":
        argv += ["--screenshot", str(screenshot)]
    log = open(out.with_suffix(".stderr"), "w")
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    # The path degrades during the session: tbf rate changes at given seconds after start.
    timers = [threading.Timer(at_s, pair.set_rate, (mbit,)) for at_s, mbit in rate_steps]
    for timer in timers:
        timer.start()
    seen: dict[int, int] = {}
    try:
        while True:
            tree_cpu_ticks(proc.pid, seen)
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.25)
    except BaseException:
        # Interrupted: stop the player (its own SIGTERM handler closes Chromium) before the
        # namespaces go, so nothing is left running.
        stop_popen(proc, grace_s=10.0)
        raise
    finally:
        for timer in timers:
            timer.cancel()
        if rate_steps and pair.rate_mbit:
            pair.set_rate(pair.rate_mbit)  # the next repetition starts as this one did
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall_s = time.monotonic() - start
    log.close()
    cpu_rusage_s = usage.ru_utime + usage.ru_stime
    cpu_s = max(cpu_rusage_s, sum(seen.values()) / CLK_TCK)
    lines = out.read_text().splitlines() if out.exists() else []
    summary = summarize(json.loads(line) for line in lines)
    return {
        "player": player,
        "exit": proc.returncode,
        "rate_mbit": pair.rate_mbit,
        "rate_steps": [{"at_s": at_s, "rate_mbit": mbit} for at_s, mbit in rate_steps],
        "live_latency_s": live_latency_s,
        "namespaces": pair.namespaces,
        "wall_s": round(wall_s, 2),
        "cpu_s": round(cpu_s, 2),
        "cpu_rusage_s": round(cpu_rusage_s, 2),
        "cpu_proc_s": round(sum(seen.values()) / CLK_TCK, 2),
        "cpu_pct_one_core": round(100 * cpu_s / wall_s, 1),
        "log": str(out),
        **summary,
        "reason": summary["end_reason"],
        "ended": summary["end_reason"] == "ended",
    }


def parse_rung(text: str) -> content.Rung:
    try:
        size, bps = text.split("@")
        width, height = (int(x) for x in size.split("x"))
        return content.Rung(width, height, int(bps))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected WIDTHxHEIGHT@BPS, e.g. 640x360@800000"
        ) from None


def parse_step(text: str) -> tuple[float, float]:
    try:
        at_s, mbit = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected SECONDS:MBIT, e.g. 20:1 (1 Mbit/s from 20 s after the start)"
        ) from None
    if at_s < 0 or mbit <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds must be >= 0 and Mbit/s > 0")
    return at_s, mbit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--player", choices=["dashjs", "gstreamer"], required=True)
    parser.add_argument("--duration-s", type=int, default=60, help="video duration (default 60)")
    parser.add_argument("--reps", type=int, default=1, help="sessions in a row (default 1)")
    parser.add_argument("--rate-mbit", type=float, default=None, help="tbf rate limit, downlink")
    parser.add_argument(
        "--rate-step",
        type=parse_step,
        action="append",
        default=[],
        help="SECONDS:MBIT: change the rate limit that long after each session starts (repeat)",
    )
    parser.add_argument(
        "--only-rung",
        type=parse_rung,
        default=None,
        help="single-rendition content WxH@BPS (CPU cost of one resolution)",
    )
    parser.add_argument(
        "--live-latency-s",
        type=float,
        default=None,
        help="play the live stream (dynamic MPD) at this target latency (dashjs only)",
    )
    parser.add_argument("--ladder", choices=sorted(content.LADDERS), default="720p")
    parser.add_argument("--out-dir", type=Path, default=None, help="default /tmp/tbx-media-<pid>")
    parser.add_argument("--screenshot", type=Path, default=None, help="PNG of the page (dashjs)")
    args = parser.parse_args()
    if args.rate_step and not args.rate_mbit:
        parser.error("--rate-step needs --rate-mbit (the rate the session starts with)")
    if args.live_latency_s is not None and (args.player != "dashjs" or args.live_latency_s <= 0):
        parser.error("--live-latency-s: a number of seconds > 0, with --player dashjs only")
    if os.geteuid() != 0:
        print("pair_session.py: needs root (network namespaces)", file=sys.stderr)
        return 2
    ladder = (args.only_rung,) if args.only_rung else content.LADDERS[args.ladder]
    content_dir = content.prepare(args.duration_s, ladder=ladder)
    out_dir = args.out_dir or Path(f"/tmp/tbx-media-{os.getpid()}")
    out_dir.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    failed = 0
    with NamespacePair(out_dir, args.rate_mbit) as pair:
        with nginx.serve(
            [f"{SERVER_ADDR}:{PORT}"], content_dir, netns=pair.server, workdir=out_dir
        ):
            for rep in range(args.reps):
                out = out_dir / f"player-{args.player}-{rep}.jsonl"
                result = run_session(
                    pair,
                    args.player,
                    content_dir,
                    out,
                    args.duration_s,
                    args.screenshot if rep == 0 else None,
                    args.rate_step,
                    args.live_latency_s,
                )
                print(json.dumps(result), flush=True)
                failed += result["exit"] != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
